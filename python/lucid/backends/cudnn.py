"""lucid.backends.cudnn, as torch.backends.cudnn. lucid's GPU convolutions (conv, conv_transpose
and their gradients) call cuDNN 9, opened at the first one: is_available() says whether lucid has
a GPU and can load it, version() gives its version as torch reports it.

allow_tf32 lets float32 convolutions and their gradients round to TF32 on the GPU's tensor
cores. Its default is False, exact, where torch's is True: lucid keeps float32 convolutions and
products alike exact unless asked (docs/ENGINE.md, GPU). deterministic=True (or
lucid.use_deterministic_algorithms(True)) makes GPU convolutions take only the algorithms cuDNN
marks deterministic, the same bits every run; by default, as torch's, they take cuDNN's fastest,
whose backward passes may add with atomics. The other switches keep what is set, with torch's
defaults (enabled=True, benchmark=False), and lucid's convolutions read none of them: they choose
by cuDNN's heuristics (benchmark=False).
"""

import sys

from .. import _C, _dtype
from . import _flags

__all__ = ["is_available", "version", "flags"]

# torch's benchmark_limit exists only where cuDNN does
benchmark_limit = None


def _sync_determinism(cudnn_deterministic=None):
    """Tells the engine whether convolutions must be deterministic: this module's switch or
    use_deterministic_algorithms (called when either changes)."""
    from . import _global
    if cudnn_deterministic is None:
        cudnn_deterministic = sys.modules[__name__].deterministic
    _C._set_conv_deterministic(bool(cudnn_deterministic) or _global.are_deterministic_algorithms_enabled())


def is_available():
    """Whether lucid's GPU convolutions can run through cuDNN: a GPU, and libcudnn.so.9 loads."""
    from .. import gpu  # lucid.gpu imports lucid.backends
    return gpu.is_available() and _C._cudnn_version() > 0


def version():
    """cuDNN's version as torch reports it (e.g. 90100), or None where it cannot be loaded."""
    return _C._cudnn_version() or None


def is_acceptable(tensor):
    """Whether cuDNN would run an op on `tensor`, as torch's: a float32/float64 GPU tensor (the
    dtypes of lucid's convolutions) with cuDNN available."""
    return tensor.device.type == "gpu" and tensor.dtype in (_dtype.float32, _dtype.float64) and is_available()


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """`with flags(...):` sets the switches for the block and restores them after, as torch's
    (benchmark_limit is ignored, as torch ignores it without cuDNN)."""
    return _flags.overridden(sys.modules[__name__], enabled=enabled, benchmark=benchmark,
                             deterministic=deterministic, allow_tf32=allow_tf32)


_flags.install(__name__,
               enabled=_flags.Flag(True, "set_enabled_cudnn"),
               benchmark=_flags.Flag(False, "set_benchmark_cudnn"),
               deterministic=_flags.Flag(False, "set_deterministic_cudnn",
                                         on_set=lambda on: _sync_determinism(cudnn_deterministic=on)),
               allow_tf32=_flags.Flag(False, "set_allow_tf32_cudnn", on_set=_C._set_cudnn_allow_tf32))
