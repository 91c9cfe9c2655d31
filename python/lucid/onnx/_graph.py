"""The graph an export builds, and the trace that builds it.

The trace runs the model once on the example inputs with every native entry point of
lucid wrapped: the functions of lucid._C and the methods of _C.Tensor that are not
Python (the layer every Python op of lucid ends in: nn.functional.linear is
_C._linear, Tensor.reshape is Tensor._reshape, and so on). A wrapped call that is given
a traced tensor (an input of the graph, or a result of a traced call) runs, then asks
its emitter (_emitters.py) for the ONNX nodes computing the same result from the
inputs' ONNX values. A call with no emitter, or one that reads a traced tensor's values
on the host (item(), tolist(), bool(), a data-dependent shape), raises
UnsupportedOperatorError naming it: a graph that silently computed something else
would be worse than none. Tensors no traced call produced are constants (parameters,
buffers, values made from nothing traced) and become initializers; a tensor that shares
memory with a traced one without having been produced by a traced call (a view made by
something the trace did not see) is refused."""

import sys
import types

import numpy as np

from .. import _C
from ._errors import UnsupportedOperatorError

_op_count = _C._op_tally_count  # (bound before the trace wraps _C's functions)
_NativeFunction = type(_C._op_tally_count)  # nanobind's function type

_Tensor = _C.Tensor


# Native calls that read a tensor's values on the host: a graph cannot.
_HOST_READS = {"_item", "to_bytes", "tolist", "__bool__", "__float__", "__int__", "__index__", "__complex__"}

class Graph:
    """ONNX nodes, initializers and the map from traced tensors to their value names."""

    def __init__(self, opset, param_names, reference=None, symbols=()):
        self.opset = opset
        # Note [Dynamic sizes]: the sizes a trace bakes in (reshape targets, split sizes,
        # constants' shapes), in order; `reference` is the same list from a second trace
        # run with every dynamic axis grown by its own factor, and `symbols` the dynamic
        # axes: (input name, axis, this trace's size, the reference's size).
        self.sizes_log = []
        self.constant_shapes = []
        self._reference = reference
        self._symbols = list(symbols)
        self._symbol_values = {}
        self.nodes = []
        self.initializers = {}      # name -> numpy array
        self._values = {}           # id(tensor) -> value name
        self._kept = []             # the traced tensors (so their ids stay theirs)
        self._storages = set()      # storage keys of traced tensors
        self._constants = {}        # id(tensor) -> initializer name
        self._param_names = param_names  # id(parameter or buffer) -> its name in the model
        self._count = 0

    def fresh(self, hint):
        self._count += 1
        return f"{hint}_{self._count}"

    def is_traced(self, t):
        return isinstance(t, _Tensor) and id(t) in self._values

    def bind(self, t, name):
        self._values[id(t)] = name
        self._kept.append(t)
        self._storages.add(t._storage_key)

    def value(self, t):
        """The ONNX value of a tensor: its traced value, or an initializer holding it."""
        name = self._values.get(id(t))
        if name is not None:
            return name
        if t._storage_key in self._storages:
            raise UnsupportedOperatorError(
                "lucid.onnx.export: a tensor shares memory with a traced one but was not made by an operation the "
                "exporter saw (a view or an in-place write it does not follow); use a plain op (reshape, "
                "transpose, slicing) on the traced tensor instead")
        name = self._constants.get(id(t))
        if name is None:
            self.constant_shapes.append(tuple(t.shape))
            ref = self._reference
            if ref is not None and len(ref.constant_shapes) >= len(self.constant_shapes) and \
                    ref.constant_shapes[len(self.constant_shapes) - 1] != tuple(t.shape):
                filled = self._filled(t, ref.constant_shapes[len(self.constant_shapes) - 1])
                if filled is not None:
                    self._constants[id(t)] = filled
                    self._kept.append(t)
                    return filled
                raise UnsupportedOperatorError(
                    f"lucid.onnx.export: a constant of shape {list(t.shape)} depends on the size of a dynamic axis "
                    "(a buffer sliced to the input's length, a tensor made with the input's size); the graph would "
                    "fix that size: compute it from the input instead, or leave the axis static")
            name = self._param_names.get(id(t)) or self.fresh("const")
            self._constants[id(t)] = name
            self._kept.append(t)
            self.initializers[name] = t.detach().cpu().numpy()
        return name

    def _filled(self, t, other_shape):
        """A tensor of one value all over whose shape follows dynamic axes (an RNN's
        zero initial state, made with the input's batch size), as ConstantOfShape of
        a shape computed from the inputs' (Note [Dynamic sizes]); None for any other
        tensor (a parameter, a tensor of several values, sizes it cannot write)."""
        from onnx import numpy_helper

        if id(t) in self._param_names or t.numel() == 0 or len(other_shape) != t.ndim:
            return None
        values = t.detach().cpu().numpy()
        first = values.reshape(-1)[:1]
        if not (values == first[0]).all():
            return None
        try:
            dims = [self.ints([a]) if a == b else self._dynamic_size(a, b) for a, b in zip(t.shape, other_shape)]
        except UnsupportedOperatorError:
            return None
        shape = self.node("Concat", dims, axis=0)[0] if dims else self.ints([])
        return self.node("ConstantOfShape", [shape], value=numpy_helper.from_array(first))[0]

    def const(self, array, hint="const"):
        name = self.fresh(hint)
        self.initializers[name] = np.asarray(array)
        return name

    def ints(self, values, hint="shape"):
        return self.const(np.asarray(list(values), dtype=np.int64), hint)

    def sizes(self, values, hint="shape"):
        """A 1-D int64 value of sizes taken from the traced shapes (a reshape's target,
        a split's sizes): constants, except those that follow a dynamic axis, which are
        computed from the graph's input shapes (Note [Dynamic sizes])."""
        values = [int(v) for v in values]
        self.sizes_log.append(values)
        ref = self._reference
        if ref is None:
            return self.ints(values, hint)
        if len(ref.sizes_log) < len(self.sizes_log) or len(ref.sizes_log[len(self.sizes_log) - 1]) != len(values):
            raise UnsupportedOperatorError("lucid.onnx.export: the model runs different operations when a dynamic "
                                           "axis changes size, which one graph cannot follow")
        other = ref.sizes_log[len(self.sizes_log) - 1]
        if other == values:
            return self.ints(values, hint)
        parts = [self.ints([a]) if a == b else self._dynamic_size(a, b) for a, b in zip(values, other)]
        return self.node("Concat", parts, axis=0)[0]

    def _dynamic_size(self, a, b):
        """The value of a size that was `a` in this trace and `b` in the reference: a
        constant times one or two dynamic axes' sizes, read from the inputs' shapes."""
        syms = self._symbols
        candidates = [(s,) for s in syms] + [(s, t) for i, s in enumerate(syms) for t in syms[i:]]
        for combo in candidates:
            here = int(np.prod([s[2] for s in combo]))
            there = int(np.prod([s[3] for s in combo]))
            if a % here == 0 and b % there == 0 and a // here == b // there:
                k = a // here
                value = self._symbol_value(combo[0])
                for s in combo[1:]:
                    value = self.node("Mul", [value, self._symbol_value(s)])[0]
                return value if k == 1 else self.node("Mul", [value, self.ints([k])])[0]
        raise UnsupportedOperatorError(f"lucid.onnx.export: a size ({a}) depends on the dynamic axes in a way the "
                                       "exporter cannot write (not a whole multiple of one or two of them)")

    def _symbol_value(self, symbol):
        name = self._symbol_values.get(symbol[:2])
        if name is None:
            name = self.node("Shape", [symbol[0]], start=symbol[1], end=symbol[1] + 1)[0]
            self._symbol_values[symbol[:2]] = name
        return name

    def scalar_like(self, value, t):
        """A number as a 0-d constant of t's dtype (a Python number operand)."""
        return self.const(np.asarray(value, dtype=numpy_dtype(t)), "scalar")

    def node(self, op, inputs, outputs=1, **attrs):
        """Adds one node; returns its output names (a list)."""
        from onnx import helper

        names = [self.fresh(op.lower()) for _ in range(outputs)] if isinstance(outputs, int) else list(outputs)
        self.nodes.append(helper.make_node(op, list(inputs), names, **attrs))
        return names


def numpy_dtype(t):
    """The NumPy dtype of a lucid tensor's elements (float32, int64, bool...)."""
    name = str(t.dtype).split(".")[-1]
    try:
        return np.dtype(name)
    except TypeError:
        raise UnsupportedOperatorError(f"lucid.onnx.export: {name} tensors cannot be written (NumPy, which the onnx "
                                       "package builds initializers from, has no such type); convert the model "
                                       "and inputs with .float() first") from None


class Trace:
    """Wraps lucid's native entry points while a model runs (see the module's note).
    The engine's op tally (csrc/ops/op_tally.h) counts every op launched meanwhile;
    ops launched outside the native calls the trace saw (a path it does not wrap) are
    named by unaccounted(), so that no work escapes the graph unnoticed."""

    def __init__(self, graph, emitters):
        self.g = graph
        self._emitters = emitters
        self._depth = 0
        self._saved = []
        self._cells = []      # (closure cell, the native function it held)
        self._originals = {}  # id(native function) -> it (for the aliases' identity check)
        self._seen = []       # (first, end) indices in the op tally of each native call the trace saw

    def __enter__(self):
        wrapped = {}  # id(native function) -> its wrapper
        for name, f in list(vars(_C).items()):
            if callable(f) and not isinstance(f, (type, types.FunctionType)) and not name.startswith("__"):
                w = self._patch(_C, name, f, "_C." + name)
                if w is not None:
                    wrapped[id(f)] = w
        # lucid's own names for native functions (lucid.exp is _C.exp, bound at import),
        # and the ones its functions keep in closures (lucid.addmm's dense_addmm)
        for module_name, module in list(sys.modules.items()):
            if (module is None or module is _C or module_name.startswith("lucid.onnx")
                    or not (module_name == "lucid" or module_name.startswith("lucid."))):
                continue
            for name, f in list(vars(module).items()):
                w = wrapped.get(id(f))
                if w is not None and f is self._originals.get(id(f)):
                    setattr(module, name, w)
                    self._saved.append((module, name, f))
                elif isinstance(f, types.FunctionType):
                    self._wrap_closures(f, wrapped, set())
        for name, f in list(vars(_Tensor).items()):
            if callable(f) and not isinstance(f, (type, types.FunctionType, staticmethod, classmethod)) and (
                    not name.startswith("__") or name in _DUNDERS):
                self._patch(_Tensor, name, f, name)
        return self

    def __exit__(self, *exc):
        for owner, name, f in reversed(self._saved):
            setattr(owner, name, f)
        for cell, f in reversed(self._cells):
            cell.cell_contents = f
        self._saved.clear()
        self._cells.clear()

    def _wrap_closures(self, f, wrapped, visited):
        """Wraps the native functions f's closures hold, through closures of closures
        (lucid.addmm keeps a Python wrapper that keeps the native addmm)."""
        if id(f) in visited or not f.__closure__:
            return
        visited.add(id(f))
        for cell in f.__closure__:
            try:
                inner = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if isinstance(inner, types.FunctionType):
                self._wrap_closures(inner, wrapped, visited)
            elif type(inner) is _NativeFunction:
                w = wrapped.get(id(inner))
                if w is None:  # a native function lucid replaced in _C, kept by its wrapper
                    w = wrapped[id(inner)] = self._wrapper(inner.__name__, inner, "_C." + inner.__name__)
                cell.cell_contents = w
                self._cells.append((cell, inner))

    def _patch(self, owner, name, f, key):
        traced = self._wrapper(name, f, key)
        try:
            setattr(owner, name, traced)
        except (AttributeError, TypeError):
            return None
        self._saved.append((owner, name, f))
        self._originals[id(f)] = f
        return traced

    def _wrapper(self, name, f, key):
        """f, which the trace follows under `key` (its emitter's name)."""
        trace = self

        def traced(*args, **kwargs):
            if trace._depth:
                return f(*args, **kwargs)
            touched = trace._touches(args) or trace._touches(kwargs.values())
            if touched and name in _HOST_READS:
                raise UnsupportedOperatorError(
                    f"lucid.onnx.export: {_pretty(key)} reads a traced tensor's values on the host (item(), "
                    "tolist(), bool(), a data-dependent branch or shape), which an ONNX graph cannot; make the "
                    "model's control flow independent of its input values")
            trace._depth += 1
            before = _op_count()
            try:
                out = f(*args, **kwargs)
            finally:
                trace._depth -= 1
                trace._seen.append((before, _op_count()))
            if touched and _holds_tensor(out):
                emit = trace._emitters.get(key)
                if emit is None:
                    raise UnsupportedOperatorError(
                        f"lucid.onnx.export: {_pretty(key)} has no ONNX form in lucid's exporter (it was called on "
                        "a traced tensor); the supported operations are listed in lucid/onnx/_emitters.py")
                emit(trace.g, out, *args, **kwargs)
            return out

        return traced

    @property
    def calls_seen(self):
        """The native calls the trace followed, in order (each as its op tally span)."""
        return self._seen

    def unaccounted(self, calls):
        """The names of the ops of `calls` (the tally's list) that no native call the
        trace saw launched."""
        seen = set()
        for first, end in self._seen:
            seen.update(range(first, end))
        return [calls[i][0] for i in range(len(calls)) if i not in seen]

    def _touches(self, values):
        for v in values:
            if isinstance(v, _Tensor):
                if self.g.is_traced(v):
                    return True
            elif isinstance(v, (list, tuple)) and self._touches(v):
                return True
        return False


# The operator methods of Tensor the trace follows (the others are Python's machinery).
_DUNDERS = {"__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__", "__imul__",
            "__truediv__", "__rtruediv__", "__itruediv__", "__matmul__", "__rmatmul__", "__neg__", "__pow__",
            "__getitem__", "__bool__", "__float__", "__int__", "__index__", "__complex__", "__gt__", "__lt__",
            "__ge__", "__le__", "__eq__", "__ne__", "__and__", "__or__", "__invert__"}


def _holds_tensor(out):
    if isinstance(out, _Tensor):
        return True
    return isinstance(out, (list, tuple)) and any(_holds_tensor(o) for o in out)


def _pretty(key):
    """A native entry point's name as a user knows it: `_C._linear` -> `linear`."""
    name = key.split(".")[-1]
    return "`" + (name.strip("_") if name.startswith("__") else name.lstrip("_")) + "`"
