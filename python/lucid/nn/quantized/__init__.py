"""lucid.nn.quantized: inference layers produced by lucid.quantization.convert.

As upstream Lucid: weights are integer codes with scale / zero_point beside them, and
activations travel as float tensors whose values lie on the calibrated quantization grid
(each layer dequantizes its weight, runs the float op, and re-quantizes its output).
"""

from .activation import ELU, Hardsigmoid, Hardswish, LeakyReLU, Sigmoid, Tanh  # noqa: F401
from .conv import Conv1d, Conv2d, Conv3d, ConvReLU1d, ConvReLU2d, ConvReLU3d  # noqa: F401
from .conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: F401
from .embedding import Embedding, EmbeddingBag  # noqa: F401
from .functional_modules import FloatFunctional, QFunctional  # noqa: F401
from .group_linear import QuantizedLinearMLX  # noqa: F401
from .linear import Linear, LinearReLU  # noqa: F401
from .stubs import DeQuantize, DeQuantStub, Quantize, QuantStub, QuantWrapper  # noqa: F401
from . import dynamic  # noqa: F401

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "ConvTranspose1d",
           "ConvTranspose2d", "ConvTranspose3d", "DeQuantStub", "DeQuantize", "ELU", "Embedding",
           "EmbeddingBag", "FloatFunctional", "Hardsigmoid", "Hardswish", "LeakyReLU", "Linear",
           "LinearReLU", "QFunctional", "QuantStub", "QuantWrapper", "Quantize", "QuantizedLinearMLX",
           "Sigmoid", "Tanh", "dynamic"]
