"""lucid.compile's compiled functions and modules.

A compiled call runs its Python as an eager call does, inside a region of the lazy GPU
(_region.py): the whole call (forward, backward, optimizer update) becomes one list of
recorded kernels, which the flush at its end fuses as one (Note [Elementwise fusion])
and, from the second call with the same launches on, replays as one CUDA graph (Note
[Flush graphs]). A call with a signature not seen before (_signature.py) is a trace:
its fused kernels are compiled before it returns rather than in the background, so that
every later call with that signature runs compiled kernels from the start. Traces are
counted (`stats`), so a test can see that recompiling happens only when a signature
changes.

Because the Python runs at every call, a compiled call means what the eager call means,
whatever the function does: side effects, Python state it reads, data-dependent
control flow and host reads all behave as in eager mode (a host read splits the call's
work in two at that point: a break, which `diagnose` names). On the CPU a compiled call
runs op by op, as eager code does.
"""

import functools
import weakref

from .. import _C
from ..nn.modules.module import Module
from . import _region
from ._signature import shapes_only_differ, spec

_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def _check_options(mode, options):
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode!r}, should be one of: "
                           f"{', '.join(repr(m) for m in _MODES[1:])}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"lucid.compile: options must be a dict, got {type(options).__name__}")


_compiled = weakref.WeakSet()  # every CompiledFunction alive (lucid.compiler.reset)
_tracing = 0                   # traces running (lucid.compiler.is_compiling)


def reset():
    """Forgets every compiled function's traces (torch.compiler.reset)."""
    for c in list(_compiled):
        c.reset()


def is_compiling():
    """True while a compiled call traces a new signature (torch.compiler.is_compiling)."""
    return _tracing > 0


class CompiledFunction:
    """`fn` compiled: call it as `fn`. `dynamic`: True keeps sizes out of the signature
    (one trace for every size), False keeps them in, None (the default, as torch's)
    starts static and turns dynamic at the first call that differs only in sizes.
    `fullgraph`: a trace that breaks (a host read inside the call) raises."""

    def __init__(self, fn, *, dynamic=None, fullgraph=False, mode=None, options=None, state=None):
        if not callable(fn):
            raise TypeError(f"lucid.compile: expected a function or a Module, got {type(fn).__name__}")
        if dynamic not in (None, True, False):
            raise TypeError(f"lucid.compile: dynamic must be True, False or None, got {dynamic!r}")
        _check_options(mode, options)
        self._fn = fn
        self._dynamic = dynamic
        self._fullgraph = bool(fullgraph)
        self._mode = mode
        self._state = state  # extra signature state of a module (its training flag)
        self._signatures = {}  # signature -> {"calls": n, "breaks": breaks of its trace}
        self._calls = 0
        functools.update_wrapper(self, fn, updated=())
        _compiled.add(self)

    @property
    def dynamic(self):
        return self._dynamic

    def signature(self, args, kwargs):
        dynamic = bool(self._dynamic)
        key = (spec(args, dynamic), spec(kwargs, dynamic) if kwargs else (), _C.is_grad_enabled())
        return key + (self._state(),) if self._state else key

    def __call__(self, *args, **kwargs):
        key = self.signature(args, kwargs)
        known = self._signatures.get(key)
        if known is None and self._dynamic is None and any(
                shapes_only_differ(key, seen) for seen in self._signatures):
            self._dynamic = True  # torch's automatic dynamic shapes: sizes changed, so trace them symbolically
            key = self.signature(args, kwargs)
            known = self._signatures.get(key)
        self._calls += 1
        if known is not None:
            known["calls"] += 1
            return self._run_known(key, args, kwargs)
        return self._trace(key, args, kwargs)

    def _run_known(self, key, args, kwargs):
        """A call of a signature already traced (`key`: the signature)."""
        with _region.region():
            return self._fn(*args, **kwargs)

    def _trace(self, key, args, kwargs):
        global _tracing
        before = _region.region_breaks()
        _tracing += 1
        try:
            with _region.kernels_compiled_now(), _region.region():
                out = self._fn(*args, **kwargs)
        finally:
            _tracing -= 1
        breaks = _region.region_breaks() - before
        self._signatures[key] = {"calls": 1, "breaks": breaks}
        if breaks and self._fullgraph:
            raise RuntimeError(
                f"lucid.compile(fullgraph=True): a call of {_name(self._fn)} read the GPU's results before its "
                f"end {breaks} time(s) (item(), tolist(), printing, a data-dependent shape such as nonzero or a "
                f"boolean mask), which splits its compiled work; lucid.compile.diagnose(fn, *args) names the lines")
        return out

    @property
    def stats(self):
        """{"calls", "traces" (signatures traced), "dynamic", "breaks" (host reads that split
        traced calls, summed over signatures)}."""
        return {"calls": self._calls, "traces": len(self._signatures), "dynamic": bool(self._dynamic),
                "breaks": sum(s["breaks"] for s in self._signatures.values())}

    def signatures(self):
        """The signatures traced so far, in order."""
        return list(self._signatures)

    def reset(self):
        """Forgets every trace: the next call of each signature traces again."""
        self._signatures.clear()
        self._calls = 0

    def __repr__(self):
        return f"CompiledFunction({_name(self._fn)}, dynamic={self._dynamic})"


def _name(fn):
    return getattr(fn, "__qualname__", None) or type(fn).__name__


class CompiledModule(Module):
    """`model` compiled (torch's OptimizedModule): calling it runs the model's __call__
    (its hooks included) as a compiled call. The model is the submodule `_orig_mod`,
    so parameters() are the model's and state_dict() keys carry torch's "_orig_mod."
    prefix; attributes the wrapper lacks are the model's."""

    def __init__(self, model, *, dynamic=None, fullgraph=False, mode=None, options=None):
        if not isinstance(model, Module):
            raise TypeError(f"CompiledModule: expected an nn.Module, got {type(model).__name__}")
        super().__init__()
        self._orig_mod = model
        self.__dict__["_compiled"] = CompiledFunction(model, dynamic=dynamic, fullgraph=fullgraph, mode=mode,
                                                      options=options, state=lambda: model.training)

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    @property
    def stats(self):
        return self._compiled.stats

    @property
    def dynamic(self):
        return self._compiled.dynamic

    def signatures(self):
        return self._compiled.signatures()

    def reset(self):
        self._compiled.reset()

    def __repr__(self):
        return f"CompiledModule({self._orig_mod!r})"


def compile(target=None, *, dynamic=None, fullgraph=False, backend=None, mode=None, options=None, disable=False):
    """torch.compile / upstream Lucid's lucid.compile: `target` (a function or an
    nn.Module) compiled; with no target, a decorator. disable=True returns the target
    itself. `backend` is accepted for torch's signature (lucid has one)."""
    if target is None:
        return lambda t: compile(t, dynamic=dynamic, fullgraph=fullgraph, backend=backend, mode=mode,
                                 options=options, disable=disable)
    _check_options(mode, options)
    if disable or getattr(target, "_lucid_compile_disabled", False):
        return target
    if isinstance(target, Module):
        return CompiledModule(target, dynamic=dynamic, fullgraph=fullgraph, mode=mode, options=options)
    return CompiledFunction(target, dynamic=dynamic, fullgraph=fullgraph, mode=mode, options=options)
