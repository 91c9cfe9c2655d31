"""Encoded `Summary` messages for each kind of data SummaryWriter logs, field for
field what torch.utils.tensorboard.summary builds with the tensorboard protos.

Field numbers are those of tensorboard/compat/proto/{summary,tensor,tensor_shape}.proto
and tensorboard/plugins/hparams/{api,plugin_data}.proto.
"""

from . import _proto as pb
from ._png import encode_png

_DT_FLOAT, _DT_DOUBLE, _DT_STRING = 1, 2, 7  # tensorboard.DataType


def _summary(*values):
    # Summary.value = 1 (repeated Summary.Value)
    return b"".join(pb.bytes_field(1, v) for v in values)


def _metadata(plugin_name, content=b""):
    # SummaryMetadata.plugin_data = 1 -> PluginData(plugin_name = 1, content = 2)
    plugin = pb.bytes_field(1, plugin_name) + pb.optional(pb.bytes_field, 2, content)
    return pb.bytes_field(1, plugin)


def _value(tag, *fields, metadata=None):
    # Summary.Value: tag = 1, metadata = 9, then one of the value fields.
    out = pb.optional(pb.bytes_field, 1, tag)
    if metadata is not None:
        out += pb.bytes_field(9, metadata)
    return out + b"".join(fields)


def scalar(tag, value, new_style=False, double_precision=False):
    if not new_style:
        return _summary(_value(tag, pb.float_field(2, value)))  # simple_value = 2
    # TensorProto: dtype = 1, float_val = 5 / double_val = 6 (packed); no shape, as torch.
    if double_precision:
        tensor = pb.int_field(1, _DT_DOUBLE) + pb.packed_doubles(6, [value])
    else:
        tensor = pb.int_field(1, _DT_FLOAT) + pb.packed_floats(5, [value])
    return _summary(_value(tag, pb.bytes_field(8, tensor), metadata=_metadata("scalars")))


def histogram(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    # HistogramProto: min..sum_squares = 1..5 (double), bucket_limit = 6, bucket = 7.
    histo = (pb.optional(pb.double_field, 1, min) + pb.optional(pb.double_field, 2, max)
             + pb.optional(pb.double_field, 3, num) + pb.optional(pb.double_field, 4, sum)
             + pb.optional(pb.double_field, 5, sum_squares))
    if len(bucket_limits):
        histo += pb.packed_doubles(6, bucket_limits)
    if len(bucket_counts):
        histo += pb.packed_doubles(7, bucket_counts)
    return _summary(_value(tag, pb.bytes_field(5, histo)))  # Summary.Value.histo = 5


def image(tag, hwc_uint8):
    """`hwc_uint8`: a contiguous (H, W, C) uint8 lucid tensor."""
    height, width, channels = hwc_uint8.shape
    png = encode_png(bytes(hwc_uint8.reshape(-1).tolist()), height, width, channels)
    # Summary.Image: height = 1, width = 2, colorspace = 3, encoded_image_string = 4.
    img = (pb.optional(pb.int_field, 1, height) + pb.optional(pb.int_field, 2, width)
           + pb.optional(pb.int_field, 3, channels) + pb.bytes_field(4, png))
    return _summary(_value(tag, pb.bytes_field(4, img)))  # Summary.Value.image = 4


def text(tag, text_string):
    # The text plugin's TextPluginData(version=0) serializes to no bytes at all.
    shape = pb.bytes_field(2, pb.int_field(1, 1))  # TensorShapeProto.dim = 2 (size = 1)
    tensor = (pb.int_field(1, _DT_STRING) + pb.bytes_field(2, shape)
              + pb.bytes_field(8, text_string.encode("utf-8")))  # string_val = 8
    return _summary(_value(tag + "/text_summary", pb.bytes_field(8, tensor),
                           metadata=_metadata("text")))
