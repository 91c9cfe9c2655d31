"""lucid.device: "cpu", "gpu", "gpu:N", with "cuda" / "cuda:N" as aliases (PyTorch's
names) and "metal" / "metal:N" too: upstream Lucid called its GPU device "metal", so its
programs run unchanged on an NVIDIA GPU."""

from __future__ import annotations

import threading as _threading

__all__ = ["device"]

_ALIASES = {"cpu": "cpu", "gpu": "gpu", "cuda": "gpu", "metal": "gpu"}


class device:
    """A device: type "cpu" or "gpu", and for a GPU an optional index."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            type, index = "gpu", type  # torch.device(1) means cuda:1
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string such as 'cpu' or 'gpu:0', but got "
                            f"{type.__class__.__name__}")
        name, sep, idx = type.partition(":")
        kind = _ALIASES.get(name)
        if kind is None or (sep and not idx.isdigit()):
            raise RuntimeError(f"Invalid device string: '{type}' (expected 'cpu', 'gpu', 'gpu:N', "
                               "'cuda', 'cuda:N' or 'metal')")
        if sep:
            if index is not None:
                raise RuntimeError(f"device(): index given twice, in '{type}' and as index={index}")
            index = int(idx)
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int):
                raise TypeError(f"device index must be an int, but got {index!r}")
            if index < 0:
                raise RuntimeError(f"Device index must not be negative, got {index}")
            if kind == "cpu" and index != 0:
                raise RuntimeError(f"CPU device index must be 0, got {index}")
        self.type = kind
        self.index = index  # (device("cpu", 0).index is 0, as torch's)

    @property
    def _code(self):
        """The engine's device code: -1 for the CPU, the index for a GPU (the current
        GPU, lucid.cuda.set_device's, for "gpu" without one)."""
        if self.type == "cpu":
            return -1
        return getattr(_CURRENT_GPU, "index", 0) if self.index is None else self.index

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, TypeError):
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and (self.index or 0) == (other.index or 0)

    def __hash__(self):
        return hash((self.type, self.index or 0))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self):
        return (device, (self.type, self.index))

    # `with lucid.device("gpu"):` makes this the default device inside the block, as
    # torch's device context manager does.
    def __enter__(self):
        _ENTERED.append(_DEFAULT[0])
        _DEFAULT[0] = self
        return self

    def __exit__(self, *exc):
        _DEFAULT[0] = _ENTERED.pop()
        return False


_CPU = device("cpu")
# The GPU of "gpu" without an index (lucid.cuda.set_device): per thread, as CUDA's
# current device is (a new thread starts on gpu:0).
_CURRENT_GPU = _threading.local()
_DEFAULT = [None]  # set_default_device's device; None: the CPU
_ENTERED = []      # the defaults that enclosing `with device(...)` blocks replaced


def set_default_device(device):
    """The device of tensors that factory functions (zeros, randn, tensor of data, ...)
    make without a device argument; None restores the CPU. Per process, as torch's."""
    _DEFAULT[0] = None if device is None else _resolve(device)


def get_default_device():
    return _DEFAULT[0] or _CPU


def _from_code(code):
    return _CPU if code < 0 else device("gpu", code)


def _resolve(d):
    """A device argument (None, str, int or device) as a device; None means the default
    device (the CPU unless set_default_device or a `with device(...)` block says otherwise)."""
    if d is None:
        return _DEFAULT[0] or _CPU
    return d if isinstance(d, device) else device(d)
