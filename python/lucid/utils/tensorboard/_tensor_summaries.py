"""Summaries whose payload is a TensorProto: add_tensor, PR curves and the custom
scalars layout, built as torch.utils.tensorboard.summary builds them.

Field numbers: tensorboard/compat/proto/{tensor,tensor_shape,types}.proto,
tensorboard/plugins/pr_curve/plugin_data.proto, plugins/custom_scalar/layout.proto.
"""

import lucid

from . import _proto as pb
from ._convert import to_tensor
from ._summaries import _metadata, _summary, _value

_DT_FLOAT, _DT_STRING = 1, 7


def _packed_varints(field, values):
    return pb.bytes_field(field, b"".join(pb.varint(v) for v in values)) if values else b""


def _shape(dims):
    """TensorProto.tensor_shape = 2: TensorShapeProto(dim = 2: Dim(size = 1) per
    dimension); written (empty) even for a scalar, as torch sets it explicitly."""
    body = b"".join(pb.bytes_field(2, pb.optional(pb.int_field, 1, d)) for d in dims)
    return pb.bytes_field(2, body)


# lucid dtype -> (tensorboard DataType, TensorProto value field, encoder), torch's map.
_TENSOR_TYPES = {
    lucid.float32: (1, lambda v: pb.packed_floats(5, v) if v else b""),
    lucid.float64: (2, lambda v: pb.packed_doubles(6, v) if v else b""),
    lucid.int32: (3, lambda v: _packed_varints(7, v)),
    lucid.uint8: (4, lambda v: _packed_varints(16, v)),     # uint32_val, as torch
    lucid.int16: (5, lambda v: _packed_varints(7, v)),
    lucid.int8: (6, lambda v: _packed_varints(7, v)),
    lucid.int64: (9, lambda v: _packed_varints(10, v)),
    lucid.bool: (10, lambda v: _packed_varints(11, [int(b) for b in v])),
}


def tensor_summary(tag, value):
    tensor = to_tensor(value)
    if tensor.numel() * tensor.element_size() >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if tensor.dtype not in _TENSOR_TYPES:
        # torch stores half values as the bit pattern of their float32 value, which
        # TensorBoard misreads, and complex values need view_as_real: left out.
        supported = ", ".join(str(d) for d in _TENSOR_TYPES)
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}; "
                         f"supported: {supported}")
    dtype, encode = _TENSOR_TYPES[tensor.dtype]
    proto = (pb.int_field(1, dtype) + _shape(tensor.shape)
             + encode(tensor.reshape(-1).tolist()))
    return _summary(_value(tag, pb.bytes_field(8, proto), metadata=_metadata("tensor")))


def _float_rows_summary(tag, rows, plugin_name, content):
    # DT_FLOAT tensor of shape (len(rows), len(rows[0])), flattened row-major.
    flat = [v for row in rows for v in row]
    proto = (pb.int_field(1, _DT_FLOAT) + _shape([len(rows), len(rows[0])])
             + (pb.packed_floats(5, flat) if flat else b""))
    return _summary(_value(tag, pb.bytes_field(8, proto), metadata=_metadata(plugin_name, content)))


def _pr_metadata(num_thresholds):
    # PrCurvePluginData: version = 1 (0, omitted), num_thresholds = 2.
    return pb.optional(pb.int_field, 2, num_thresholds)


def _float_list(value):
    if isinstance(value, (list, tuple)):  # np.stack in torch takes plain sequences too
        return [float(v) for v in value]
    return [float(v) for v in to_tensor(value).reshape(-1).tolist()]


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127):
    rows = [_float_list(r) for r in (tp, fp, tn, fn, precision, recall)]
    if len({len(r) for r in rows}) != 1:
        raise ValueError("the six PR-curve inputs must all have the same length")
    return _float_rows_summary(tag, rows, "pr_curves", _pr_metadata(min(num_thresholds, 127)))


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    """torch's compute_curve: bucket predictions into num_thresholds bins, then
    reverse-cumulate weighted true and false positives (in float64, element order)."""
    num_thresholds = min(num_thresholds, 127)
    preds = to_tensor(predictions)
    if not preds.is_floating_point():
        preds = preds.to(lucid.float64)
    buckets = (preds * (num_thresholds - 1)).floor().reshape(-1).tolist()
    label_values = to_tensor(labels).to(lucid.float64).reshape(-1).tolist()
    if len(label_values) != len(buckets):
        raise ValueError(f"labels has {len(label_values)} elements, predictions {len(buckets)}")
    if weights is None:
        weight_values = [1.0] * len(buckets)
    elif isinstance(weights, (int, float)):
        weight_values = [float(weights)] * len(buckets)
    else:
        weight_values = _float_list(weights)
    tp_buckets = [0.0] * num_thresholds
    fp_buckets = [0.0] * num_thresholds
    for bucket, label, weight in zip(buckets, label_values, weight_values):
        if 0 <= bucket <= num_thresholds - 1:  # np.histogram drops out-of-range values
            tp_buckets[int(bucket)] += label * weight
            fp_buckets[int(bucket)] += (1.0 - label) * weight
    tp = _reverse_cumsum(tp_buckets)
    fp = _reverse_cumsum(fp_buckets)
    tn = [fp[0] - v for v in fp]
    fn = [tp[0] - v for v in tp]
    precision = [t / max(1e-7, t + f) for t, f in zip(tp, fp)]
    recall = [t / max(1e-7, t + f) for t, f in zip(tp, fn)]
    return _float_rows_summary(tag, [tp, fp, tn, fn, precision, recall], "pr_curves",
                               _pr_metadata(num_thresholds))


def _reverse_cumsum(values):
    out, total = [], 0.0
    for v in reversed(values):
        total += v
        out.append(total)
    return out[::-1]


def custom_scalars(layout):
    """layout: {category: {chart title: ["Multiline", tags] or ["Margin", [value, lower, upper]]}}."""
    categories = b""
    for category, charts in layout.items():
        encoded_charts = b""
        for chart_name, (kind, tags) in charts.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = b"".join(pb.optional(pb.bytes_field, i + 1, t) for i, t in enumerate(tags))
                content = pb.bytes_field(3, pb.bytes_field(1, series))  # Chart.margin = 3
            else:
                content = pb.bytes_field(2, b"".join(pb.bytes_field(1, t) for t in tags))
            encoded_charts += pb.bytes_field(2, pb.optional(pb.bytes_field, 1, chart_name) + content)
        categories += pb.bytes_field(2, pb.optional(pb.bytes_field, 1, category) + encoded_charts)
    # A DT_STRING scalar (empty shape) holding the serialized Layout (category = 2).
    proto = pb.int_field(1, _DT_STRING) + _shape([]) + pb.bytes_field(8, categories)
    return _summary(_value("custom_scalars__config__", pb.bytes_field(8, proto),
                           metadata=_metadata("custom_scalars")))
