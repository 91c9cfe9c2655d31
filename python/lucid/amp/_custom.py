"""torch.amp.custom_fwd / custom_bwd: decorators for an autograd.Function's forward and
backward under autocast. The backward runs in the autocast state its forward ran in;
with cast_inputs, the forward runs with autocast off and its floating-point tensor
arguments cast to that dtype (when autocast was on at the call)."""

from __future__ import annotations

import functools

from ._autocast import autocast, get_autocast_dtype, is_autocast_enabled


def _cast(value, dtype):
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorates forward(ctx, *args): records the autocast state on ctx for custom_bwd;
    with cast_inputs, runs forward with autocast off and its float tensors in that dtype."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._fwd_used_autocast = is_autocast_enabled(device_type)
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None or not ctx._fwd_used_autocast:
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        with autocast(device_type=device_type, enabled=False):
            return fwd(ctx, *_cast(args[1:], cast_inputs), **_cast(kwargs, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorates backward(ctx, *grads): runs it in the autocast state of its forward."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=getattr(ctx, "_fwd_used_autocast", False),
                      dtype=getattr(ctx, "_dtype", None)):
            return bwd(*args, **kwargs)
    return decorate_bwd
