"""lucid.backends.cudnn, as torch.backends.cudnn. lucid does not use cuDNN: is_available() is
False and version() None, as torch answers without it.

The switches keep what is set (torch's defaults: enabled=True, benchmark=False,
deterministic=False, allow_tf32=True). None of them changes what lucid computes today: the
GPU convolution and normalisation kernels to come consult them (benchmark: time the
algorithms and keep the fastest per shape; deterministic: only algorithms that give the same
bits every run; allow_tf32: TF32 tensor cores for float32 convolutions; enabled: the vendor
library at all).
"""

import sys

from . import _flags

__all__ = ["is_available", "version", "flags"]

# torch's benchmark_limit exists only where cuDNN does
benchmark_limit = None


def is_available():
    """Whether lucid can use cuDNN: it cannot (it has no cuDNN backend)."""
    return False


def version():
    """cuDNN's version as torch reports it (e.g. 90100), or None: lucid has no cuDNN."""
    return None


def is_acceptable(tensor):
    """Whether cuDNN would run an op on `tensor`: never in lucid."""
    return False


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """`with flags(...):` sets the switches for the block and restores them after, as torch's
    (benchmark_limit is ignored, as torch ignores it without cuDNN)."""
    return _flags.overridden(sys.modules[__name__], enabled=enabled, benchmark=benchmark,
                             deterministic=deterministic, allow_tf32=allow_tf32)


_flags.install(__name__,
               enabled=_flags.Flag(True, "set_enabled_cudnn"),
               benchmark=_flags.Flag(False, "set_benchmark_cudnn"),
               deterministic=_flags.Flag(False, "set_deterministic_cudnn"),
               allow_tf32=_flags.Flag(True, "set_allow_tf32_cudnn"))
