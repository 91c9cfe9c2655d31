"""lucid.nn.quantized.dynamic: int8-weight layers that quantize their input on the fly
from its own range each call, so they need no calibration (quantize_dynamic)."""

from .linear import Linear  # noqa: F401
from .rnn import LSTM  # noqa: F401

__all__ = ["Linear", "LSTM"]
