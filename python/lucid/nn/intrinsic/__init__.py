"""lucid.nn.intrinsic: fused float modules (a layer and the ReLU after it) that
fuse_modules produces, so quantization observes the post-ReLU range."""

from .modules import ConvReLU1d, ConvReLU2d, ConvReLU3d, LinearReLU  # noqa: F401

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU"]


def __getattr__(name):
    # nn.intrinsic.qat needs nn.qat; load it on first use rather than with nn.intrinsic.
    if name == "qat":
        import importlib
        return importlib.import_module(f"{__name__}.qat")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
