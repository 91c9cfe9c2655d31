"""lucid.compile.diagnose: what a compiled call of a function covers.

diagnose runs the function once, as a compiled call, with launch() noting every op it is
given (csrc/ops/op_tally.h) and the lazy GPU naming every break of the region (a flush
before the call's end, csrc/core/pending.h). An op is covered when the compiled call
records it for its one fused list (a GPU op); it is uncovered when it runs at once (a CPU
op, or a GPU op that must run when called); a break is a line whose host read split the
call's work."""

import os
import traceback
from collections import OrderedDict

from .. import _C
from . import _region

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class OpInfo:
    """One op of a diagnosed function: its name, how many times it ran, and the shape and
    dtype of its first call's output."""

    __slots__ = ("name", "count", "sample_shape", "sample_dtype")

    def __init__(self, name, count, sample_shape, sample_dtype):
        self.name, self.count, self.sample_shape, self.sample_dtype = name, count, sample_shape, sample_dtype

    def __eq__(self, other):
        return isinstance(other, OpInfo) and (self.name, self.count, self.sample_shape, self.sample_dtype) == (
            other.name, other.count, other.sample_shape, other.sample_dtype)

    def __repr__(self):
        return (f"OpInfo(name={self.name!r}, count={self.count}, sample_shape={self.sample_shape}, "
                f"sample_dtype={self.sample_dtype!r})")


class DiagnosisReport:
    """total_ops: op calls the function made; registered: the calls a compiled call
    records into its fused list; grad_sinks: gradients accumulated into leaves (.grad) by
    backward passes inside the function; uncovered: the ops that ran at once instead, as
    OpInfo; recommendation: what to change, in words. Also: ops (every op, as OpInfo) and
    breaks (the "file:line: code" of each host read that split the compiled work)."""

    def __init__(self, total_ops, registered, grad_sinks, uncovered, recommendation, ops=(), breaks=()):
        self.total_ops = total_ops
        self.registered = registered
        self.grad_sinks = grad_sinks
        self.uncovered = list(uncovered)
        self.recommendation = recommendation
        self.ops = list(ops)
        self.breaks = list(breaks)

    @property
    def coverage(self):
        """The fraction of op calls a compiled call records (1.0 for a function with none)."""
        return self.registered / self.total_ops if self.total_ops else 1.0

    def __repr__(self):
        return (f"DiagnosisReport(total_ops={self.total_ops}, registered={self.registered}, "
                f"grad_sinks={self.grad_sinks}, uncovered={self.uncovered!r}, "
                f"recommendation={self.recommendation!r})")

    def __str__(self):
        lines = [f"{self.total_ops} op calls, {self.registered} recorded for the compiled call "
                 f"({self.coverage:.0%}), {self.grad_sinks} gradient(s) accumulated into leaves"]
        lines += [f"  runs at once: {o.name} x{o.count} ({o.sample_dtype}, {tuple(o.sample_shape)})"
                  for o in self.uncovered]
        lines += [f"  break: {b}" for b in self.breaks]
        lines.append(self.recommendation)
        return "\n".join(lines)


def _caller_line():
    """The innermost frame outside lucid's own package: the user's line that read."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE):
            return f"{frame.filename}:{frame.lineno}: {(frame.line or '').strip()}"
    return "(inside lucid)"


def _infos(calls):
    table = OrderedDict()
    for name, shape, dtype, _device, _recorded in calls:
        info = table.get(name)
        if info is None:
            table[name] = OpInfo(name, 1, tuple(shape), dtype)
        else:
            info.count += 1
    return list(table.values())


def _recommend(calls, uncovered, breaks):
    if not calls:
        return "The function ran no tensor op: there is nothing to compile."
    on_gpu = any(device == "gpu" for _, _, _, device, _ in calls)
    if not on_gpu:
        return ("Every op ran on the CPU, where a compiled call runs op by op as eager code does; move the model "
                "and inputs to the GPU (.to('cuda')) for one fused, graph-replayed call.")
    advice = []
    if breaks:
        advice.append(f"{len(breaks)} host read(s) split the compiled work (listed as breaks): keep values on the "
                      "device (no item(), tolist(), printing or data-dependent shapes such as nonzero or boolean "
                      "masks inside the function), or read them after the call.")
    cpu = [o.name for o in uncovered]
    if cpu:
        advice.append(f"These ops ran at once instead of in the compiled list: {', '.join(cpu)} (CPU tensors in a "
                      "GPU function, or ops that must run when called).")
    return " ".join(advice) or "Every op is recorded into one compiled call: nothing to change."


def diagnose(fn, *example_inputs):
    """Runs fn(*example_inputs) once as a compiled call and reports what it covers (a
    DiagnosisReport). The call really runs (its side effects and updates happen)."""
    if not callable(fn):
        raise TypeError(f"diagnose: fn must be callable, got {type(fn).__name__}")
    breaks = []
    _C._op_tally_begin()
    _C._set_region_break_callback(lambda device: breaks.append(_caller_line()))
    grad_sinks_before = _C._grad_sinks()
    try:
        with _region.region():
            fn(*example_inputs)
    finally:
        _C._set_region_break_callback(None)
        calls = _C._op_tally_end()
    grad_sinks = _C._grad_sinks() - grad_sinks_before
    uncovered_calls = [c for c in calls if not c[4]]
    uncovered = _infos(uncovered_calls)
    return DiagnosisReport(len(calls), len(calls) - len(uncovered_calls), grad_sinks, uncovered,
                           _recommend(calls, uncovered, breaks), _infos(calls), breaks)
