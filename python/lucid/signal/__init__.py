"""lucid.signal, as torch.signal: the window functions (lucid.signal.windows)."""

from . import windows  # noqa: F401

__all__ = ["windows"]
