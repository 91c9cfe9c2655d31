"""lucid.nn.qat: quantization-aware-training layers. Each is the float layer with its
weight fake-quantized on every forward and its output passed through a FakeQuantize, so
training sees int8 rounding while gradients flow by the straight-through estimator.
prepare_qat swaps float layers for these; convert turns them into nn.quantized layers."""

from .linear import Linear, LinearReLU  # noqa: F401
from .conv import Conv1d, Conv2d, Conv3d, ConvReLU1d, ConvReLU2d, ConvReLU3d  # noqa: F401
from .embedding import Embedding  # noqa: F401

__all__ = ["Linear", "LinearReLU", "Conv1d", "Conv2d", "Conv3d", "ConvReLU1d", "ConvReLU2d",
           "ConvReLU3d", "Embedding"]
