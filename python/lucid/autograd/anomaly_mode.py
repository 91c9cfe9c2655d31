"""Anomaly detection: detect_anomaly and set_detect_anomaly, as in PyTorch.

While the mode is on, every graph node records the stack of the forward call that
made it (csrc/autograd/anomaly.h). In backward, a node that raises gets a warning
showing that stack before the error propagates, and, with check_nan, a node that
returns a gradient holding NaN raises RuntimeError naming itself and the output:
"Function 'DivBackward0' returned nan values in its 0th output." The mode is
process-wide, as PyTorch's is, and slows the graph down (a stack per node, a NaN
scan per gradient): it is for debugging.
"""

import warnings

from .. import _C
from .grad_mode import _DecoratorContextManager

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled"]

is_anomaly_enabled = _C.is_anomaly_enabled
is_anomaly_check_nan_enabled = _C.is_anomaly_check_nan_enabled


def set_anomaly_enabled(enabled, check_nan=True):
    """Turns anomaly mode on or off (torch.set_anomaly_enabled)."""
    _C._set_anomaly_enabled(bool(enabled), bool(check_nan))


class detect_anomaly(_DecoratorContextManager):
    """Anomaly mode for a scope; a context manager and a decorator."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only "
                      "be enabled for debugging.", stacklevel=2)

    def clone(self):
        clone = self.__class__.__new__(self.__class__)  # without a second warning
        clone.check_nan = self.check_nan
        return clone

    def __enter__(self):
        self._prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        set_anomaly_enabled(*self._prev)
        return False


class set_detect_anomaly:
    """Sets anomaly mode on construction; as a context manager, restores it on exit."""

    def __init__(self, mode, check_nan=True):
        self._prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        set_anomaly_enabled(*self._prev)
        return False
