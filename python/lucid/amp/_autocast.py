"""lucid.autocast: a context manager and decorator over the engine's per-thread autocast
state (csrc/ops/autocast.h), and the policy hook of the ops written in Python."""

from __future__ import annotations

import functools
import warnings

from .. import _C
from .._dtype import _from_code, bfloat16, float16
from .._tensor import Tensor

_DEVICE_TYPES = {"cpu": False, "gpu": True, "cuda": True, "metal": True}
_DEFAULT_DTYPE = {False: bfloat16, True: float16}  # torch's: bfloat16 on the CPU, float16 on CUDA


def _is_gpu(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    try:
        return _DEVICE_TYPES[device_type]
    except KeyError:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}' "
                           "(expected 'cpu', 'cuda', 'gpu' or 'metal')") from None


def is_autocast_available(device_type):
    """True for the device types autocast supports here: "cpu", and the GPU's names."""
    return device_type in _DEVICE_TYPES


def is_autocast_enabled(device_type="cuda"):
    return _C._autocast_get(_is_gpu(device_type))[0]


def get_autocast_dtype(device_type):
    return _from_code(_C._autocast_get(_is_gpu(device_type))[1])


class autocast:
    """Runs the ops of a region in mixed precision, as torch.autocast.

    device_type: "cuda" / "gpu" / "metal" or "cpu". dtype: float16 or bfloat16 (by default
    float16 on the GPU and bfloat16 on the CPU, as torch). enabled=False turns autocast off
    inside the region. Nests; works as a decorator; per thread. cache_enabled is accepted
    for torch's signature (every region casts each use afresh).
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        self.device_type = device_type
        self._gpu = _is_gpu(device_type)
        self.fast_dtype = _DEFAULT_DTYPE[self._gpu] if dtype is None else dtype
        self._enabled = bool(enabled)
        if self._enabled and self.fast_dtype not in (float16, bfloat16):
            where = "CUDA" if self._gpu else "CPU"
            warnings.warn(f"In {where} autocast, but the target dtype is not supported. Disabling autocast.\n"
                          f"{where} Autocast only supports dtypes of lucid.float16, lucid.bfloat16 currently.",
                          UserWarning, stacklevel=2)
            self._enabled = False
        self._saved = []

    def __enter__(self):
        self._saved.append(_C._autocast_get(self._gpu))
        previous_dtype = self._saved[-1][1]
        code = self.fast_dtype._code if self._enabled else previous_dtype
        _C._autocast_set(self._gpu, self._enabled, code)
        return self

    def __exit__(self, *exc):
        enabled, code = self._saved.pop()
        _C._autocast_set(self._gpu, enabled, code)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)
        return run


def policy(name):
    """Decorator for an op written in Python: under autocast its tensor arguments are cast
    by op `name`'s policy (Note [Autocast]), then it runs with autocast off, as torch's
    native op would: the ops it is built from see the dtypes it was given (an attention
    in bfloat16 would otherwise run its softmax in float32 and its product in bfloat16
    again, twice the memory of its largest tensor). Without autocast: one check."""
    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            return run_by_policy(name, fn, *args, **kwargs)
        return run
    return wrap


def run_by_policy(name, fn, *args, **kwargs):
    """fn(*args, **kwargs) as `policy(name)` runs it, for callers whose op name is known
    only at the call (nn.LSTM / GRU / RNN and their cells)."""
    if not _C._autocast_any():
        return fn(*args, **kwargs)
    args, kwargs = _cast_arguments(name, args, kwargs)
    modes = _C._autocast_get(False), _C._autocast_get(True)
    _C._autocast_set(False, False, modes[0][1])
    _C._autocast_set(True, False, modes[1][1])
    try:
        return fn(*args, **kwargs)
    finally:
        _C._autocast_set(False, *modes[0])
        _C._autocast_set(True, *modes[1])


def _cast_arguments(name, args, kwargs):
    slots = [(i, a) for i, a in enumerate(args) if isinstance(a, Tensor)]
    kslots = [(k, v) for k, v in kwargs.items() if isinstance(v, Tensor)]
    cast = _C._autocast_cast(name, [t for _, t in slots] + [t for _, t in kslots])
    args = list(args)
    for (i, _), t in zip(slots, cast):
        args[i] = t
    kwargs = dict(kwargs)
    for (k, _), t in zip(kslots, cast[len(slots):]):
        kwargs[k] = t
    return tuple(args), kwargs
