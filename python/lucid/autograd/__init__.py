"""lucid.autograd: reverse-mode differentiation (the engine is csrc/autograd).

backward() and grad() run the engine; Function defines ops in Python with their
own backward; gradcheck/gradgradcheck compare against finite differences; and
lucid.autograd.functional has jacobian, hessian, vjp, jvp, vhp and hvp.
"""

from .. import _C
from ..import _tensor as _T
from .grad_mode import (  # noqa: F401
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled, is_inference_mode_enabled,
)
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly  # noqa: F401
from . import functional, graph  # noqa: F401
# upstream Lucid's names: torch.autograd.functional's transforms and graph's handle here too
from .functional import hessian, jacobian, jvp, vjp  # noqa: F401,E402
from .graph import RemovableHandle  # noqa: F401,E402
from .variable import Variable  # noqa: F401,E402

__all__ = ["backward", "grad", "Function", "FunctionCtx", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "gradcheck", "gradgradcheck", "functional", "graph", "once_differentiable",
           "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "jacobian", "hessian", "jvp", "vjp",
           "RemovableHandle"]


def _as_tuple(x, what):
    if x is None:
        return ()
    if isinstance(x, _T.Tensor):
        return (x,)
    if isinstance(x, (tuple, list)):
        for i, t in enumerate(x):
            if t is not None and not isinstance(t, _T.Tensor):
                raise TypeError(f"{what}[{i}] must be a Tensor or None, not {type(t).__name__}")
        return tuple(x)
    raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, not {type(x).__name__}")


def _grad_outputs(outputs, grads, what):
    grads = _as_tuple(grads, what)
    if not grads:
        return (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"{what} should be a sequence of length {len(outputs)}, but got {len(grads)}")
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Adds the gradients of `tensors` into the .grad of the leaves (or of `inputs`)."""
    tensors = _as_tuple(tensors, "tensors")
    if inputs is not None:
        inputs = _as_tuple(inputs, "inputs")
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grads = _grad_outputs(tensors, grad_tensors, "grad_tensors")
    if retain_graph is None:
        retain_graph = create_graph
    _C._run_backward(tensors, grads, inputs or (), bool(retain_graph), bool(create_graph), True, False)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, returned (not accumulated)."""
    if is_grads_batched:
        raise NotImplementedError("grad(): is_grads_batched=True is not supported by lucid yet")
    outputs = _as_tuple(outputs, "outputs")
    single = isinstance(inputs, _T.Tensor)
    inputs = _as_tuple(inputs, "inputs")
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    grads = _grad_outputs(outputs, grad_outputs, "grad_outputs")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if retain_graph is None:
        retain_graph = create_graph
    result = _C._run_backward(outputs, grads, inputs, bool(retain_graph), bool(create_graph), False,
                              bool(allow_unused))
    if materialize_grads:
        from .._creation import zeros_like
        result = tuple(zeros_like(i) if r is None else r for i, r in zip(inputs, result))
    return tuple(result)


def checkpoint(function, *args, **kwargs):
    """Upstream Lucid's place for activation checkpointing: lucid.utils.checkpoint.checkpoint."""
    from ..utils.checkpoint import checkpoint as run
    return run(function, *args, **kwargs)


def __getattr__(name):
    if name == "profiler":  # (loads lucid.profiler on first use)
        import importlib
        return importlib.import_module(f"{__name__}.profiler")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
