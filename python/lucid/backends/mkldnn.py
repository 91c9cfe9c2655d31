"""lucid.backends.mkldnn, as torch.backends.mkldnn. lucid does not use oneDNN (MKL-DNN): its
CPU kernels are its own (csrc/backend/cpu/) and its products OpenBLAS's, so is_available() is
False. The switches keep what is set (torch's defaults: enabled=True, deterministic=False)
and change nothing: there is no oneDNN path for them to select."""

from . import _flags

__all__ = ["is_available"]


def is_available():
    """Whether lucid can use oneDNN: it cannot (it is not built with it)."""
    return False


_flags.install(__name__,
               enabled=_flags.Flag(True, "set_enabled_mkldnn"),
               deterministic=_flags.Flag(False, "set_deterministic_mkldnn"))
