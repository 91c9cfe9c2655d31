"""lucid.backends.mkl, as torch.backends.mkl. lucid's matrix products use OpenBLAS (or its own
GEMM), not Intel MKL, so is_available() is False."""

__all__ = ["is_available"]


def is_available():
    """Whether lucid was built with MKL: it was not."""
    return False
