"""lucid.onnx: torch.onnx.export for lucid models.

    lucid.onnx.export(model, (x,), "model.onnx", input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})

The model runs once on the example inputs, in eval mode and without gradients, while a
trace (_graph.py) records every native operation its traced tensors go through and
writes each as ONNX nodes (_emitters.py): a real ONNX file, built with the `onnx`
package (pip install onnx), that onnxruntime runs. Parameters and buffers are
initializers named as in the model's state_dict. An operation the exporter has no ONNX
form for, or a host read of a traced value (data-dependent control flow), raises
UnsupportedOperatorError naming it.

Note [Dynamic sizes]
A trace sees concrete sizes, and some become part of the graph: a reshape's target, a
split's sizes. With dynamic_axes, the model is traced twice: once on the example
inputs, once on inputs grown along each dynamic axis by its own factor (2, 3, 5, ...:
the example repeated). A size equal in both traces is a constant; one that differs is
k times one or two dynamic axes' sizes (the factors tell which), read at run time from
the inputs' shapes (Shape, Mul, Concat). A constant of one value whose shape differs
between the traces (an RNN's zero initial state, made with the batch's size) becomes
ConstantOfShape of such a computed shape. A size that fits neither, any other constant
whose shape differs (a buffer sliced to the input's length), a model that runs a
different number of operations at the other size (a loop over a dynamic axis: a plain
RNN or an LSTM with proj_size, which export unrolled over their sequence) or other
operations raises UnsupportedOperatorError instead of writing a graph that only works at
the example's size."""

from .. import Tensor, _C
from ..nn.modules.module import Module
from ._errors import UnsupportedOperatorError

__all__ = ["export", "UnsupportedOperatorError", "is_in_onnx_export"]

_MIN_OPSET = 17  # LayerNormalization is an operator from opset 17
_exporting = False


def is_in_onnx_export():
    """True while lucid.onnx.export runs the model (torch.onnx.is_in_onnx_export)."""
    return _exporting


def _flatten(value, where):
    """The tensors of a (possibly nested) tuple or list of tensors, in order."""
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flatten(v, where)]
    if value is None:
        return []
    raise TypeError(f"lucid.onnx.export: {where} must be tensors (or tuples and lists of them), got "
                    f"{type(value).__name__}")


def _dynamic_dims(dynamic_axes, names):
    """{value name: {axis: dim name}} from torch's dynamic_axes forms."""
    out = {}
    for name, axes in (dynamic_axes or {}).items():
        if name not in names:
            raise ValueError(f"lucid.onnx.export: dynamic_axes names {name!r}, which is neither an input nor an "
                             f"output name ({', '.join(names)})")
        if isinstance(axes, dict):
            out[name] = {int(a): str(n) for a, n in axes.items()}
        elif isinstance(axes, (list, tuple)):
            out[name] = {int(a): f"{name}_dynamic_axes_{int(a) + 1}" for a in axes}
        else:
            raise TypeError(f"lucid.onnx.export: dynamic_axes[{name!r}] must be a dict or a list of axes, got "
                            f"{type(axes).__name__}")
    return out


_FACTORS = (2, 3, 5, 7, 11, 13, 17, 19)


def _replace(value, mapping):
    """args with the tensors in `mapping` (by identity) replaced."""
    if isinstance(value, Tensor):
        return mapping.get(id(value), value)
    if isinstance(value, (tuple, list)):
        return type(value)(_replace(v, mapping) for v in value)
    if isinstance(value, dict):
        return {k: _replace(v, mapping) for k, v in value.items()}
    return value


def _run_traced(model, graph, args, kwargs):
    """model(*args, **kwargs) under a Trace writing into `graph`; (output, trace)."""
    from .. import no_grad
    from ._emitters import EMITTERS
    from ._graph import Trace

    with no_grad(), Trace(graph, EMITTERS) as trace:
        return model(*args, **kwargs), trace


def _value_info(name, t, dynamic):
    from onnx import helper

    from ._graph import numpy_dtype

    dims = list(t.shape)
    for axis, dim_name in dynamic.get(name, {}).items():
        if not -len(dims) <= axis < len(dims):
            raise ValueError(f"lucid.onnx.export: dynamic axis {axis} of {name!r}, which has {len(dims)} dims")
        dims[axis] = dim_name
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(numpy_dtype(t)), dims)


def export(model, args, f, *, kwargs=None, export_params=True, verbose=False, training=None, input_names=None,
           output_names=None, opset_version=None, dynamic_axes=None, do_constant_folding=True,
           keep_initializers_as_inputs=False, **unsupported):
    """Writes `model` (an nn.Module or a function of tensors) run on `args` (a tensor or
    a tuple of them; a trailing dict is keyword arguments, as torch's) to `f` (a path or
    a binary file) as an ONNX model of opset `opset_version` (default 17)."""
    global _exporting
    try:
        import onnx
        from onnx import helper, numpy_helper
    except ImportError as e:
        raise ImportError("lucid.onnx.export writes files with the onnx package: pip install onnx") from e
    from ._graph import Graph
    if unsupported:
        raise TypeError(f"lucid.onnx.export got unexpected keyword arguments {sorted(unsupported)}")
    if not callable(model):
        raise TypeError(f"lucid.onnx.export: model must be an nn.Module or a function, got {type(model).__name__}")
    opset = _MIN_OPSET if opset_version is None else opset_version
    newest = onnx.defs.onnx_opset_version()
    if isinstance(opset, bool) or not isinstance(opset, int) or not _MIN_OPSET <= opset <= newest:
        raise ValueError(f"lucid.onnx.export: opset_version must be an int from {_MIN_OPSET} to {newest} (this onnx "
                         f"package's newest), got {opset_version!r}")
    if not export_params:
        raise ValueError("lucid.onnx.export: export_params=False (a graph without its weights) is not supported")
    if isinstance(args, Tensor):
        args = (args,)
    if not isinstance(args, tuple):
        raise TypeError(f"lucid.onnx.export: args must be a tensor or a tuple of them, got {type(args).__name__}")
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        kwargs.update(args[-1])
        args = args[:-1]
    inputs = _flatten(list(args) + list(kwargs.values()), "the inputs")
    input_names = list(input_names or [])
    if len(input_names) > len(inputs):
        raise ValueError(f"lucid.onnx.export: {len(input_names)} input names for {len(inputs)} inputs")
    input_names += [f"input_{i}" for i in range(len(input_names), len(inputs))]

    param_names = {}
    if isinstance(model, Module):
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            param_names.setdefault(id(t), name)
    input_axes = {n: a for n, a in _dynamic_dims(
        {k: v for k, v in (dynamic_axes or {}).items() if k in input_names}, input_names).items()}
    factors, symbols, grown = {}, [], {}
    for t, name in zip(inputs, input_names):
        bigger = t
        for axis, dim_name in sorted(input_axes.get(name, {}).items()):
            if dim_name not in factors:
                if len(factors) == len(_FACTORS):
                    raise ValueError(f"lucid.onnx.export: more than {len(_FACTORS)} distinct dynamic axes")
                factors[dim_name] = _FACTORS[len(factors)]
            axis = axis + t.ndim if axis < 0 else axis
            bigger = _C._cat([bigger] * factors[dim_name], axis)
            symbols.append((name, axis, t.shape[axis], t.shape[axis] * factors[dim_name]))
        grown[id(t)] = bigger

    was_training = model.training if isinstance(model, Module) else None
    if isinstance(model, Module) and training is not True:
        model.eval()
    calls = []
    _exporting = True
    try:
        reference = None
        if symbols:  # Note [Dynamic sizes]
            reference = Graph(opset, param_names)
            for t, name in zip(inputs, input_names):
                reference.bind(grown[id(t)], name)
            _, reference_trace = _run_traced(model, reference, _replace(args, grown), _replace(kwargs, grown))
        graph = Graph(opset, param_names, reference, symbols)
        for t, name in zip(inputs, input_names):
            graph.bind(t, name)
        _C._op_tally_begin()
        try:
            out, trace = _run_traced(model, graph, args, kwargs)
        finally:
            calls = _C._op_tally_end()
    finally:
        _exporting = False
        if was_training is not None:
            model.train(was_training)
    if reference is not None and len(reference_trace.calls_seen) != len(trace.calls_seen):
        raise UnsupportedOperatorError(
            "lucid.onnx.export: the model runs a different number of operations when a dynamic axis changes size "
            "(a loop over it, as an LSTM with proj_size runs over its sequence), which one graph cannot follow; "
            "leave that axis static")
    escaped = trace.unaccounted(calls)
    if escaped:
        raise UnsupportedOperatorError(
            f"lucid.onnx.export: the model ran {', '.join(sorted(set(escaped)))} through a path the exporter does "
            "not follow, so the graph would miss them")
    outputs = _flatten(out, "the model's outputs")
    output_names = list(output_names or [])
    if len(output_names) > len(outputs):
        raise ValueError(f"lucid.onnx.export: {len(output_names)} output names for {len(outputs)} outputs")
    output_names += [f"output_{i}" for i in range(len(output_names), len(outputs))]
    dynamic = _dynamic_dims(dynamic_axes, input_names + output_names)
    for t, name in zip(outputs, output_names):
        graph.node("Identity", [graph.value(t)], outputs=[name])

    onnx_graph = helper.make_graph(
        graph.nodes, type(model).__name__ if isinstance(model, Module) else getattr(model, "__name__", "model"),
        [_value_info(n, t, dynamic) for t, n in zip(inputs, input_names)],
        [_value_info(n, t, dynamic) for t, n in zip(outputs, output_names)],
        [numpy_helper.from_array(a, name) for name, a in graph.initializers.items()])
    opsets = [helper.make_opsetid("", opset)]
    proto = helper.make_model(onnx_graph, opset_imports=opsets, producer_name="lucid")
    # The oldest IR version that carries the opset (8 for opset 17), not the installed
    # onnx package's newest: a runtime refuses an IR version newer than its own whatever
    # the opset (onnx 1.23 writes 14; the H100 machine's onnxruntime reads up to 13).
    proto.ir_version = helper.find_min_ir_version_for(opsets)
    onnx.checker.check_model(proto)
    if verbose:
        print(helper.printable_graph(proto.graph))
    onnx.save_model(proto, f)
