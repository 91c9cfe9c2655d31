"""lucid.nn.intrinsic.qat: trainable Conv+BatchNorm(+ReLU) for quantization-aware
training, built by fuse_modules_qat and converted by convert into a quantized conv with
the BatchNorm folded in."""

from .modules import ConvBn1d, ConvBn2d, ConvBn3d, ConvBnReLU1d, ConvBnReLU2d, ConvBnReLU3d  # noqa: F401

__all__ = ["ConvBn1d", "ConvBn2d", "ConvBn3d", "ConvBnReLU1d", "ConvBnReLU2d", "ConvBnReLU3d"]
