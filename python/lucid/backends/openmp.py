"""lucid.backends.openmp, as torch.backends.openmp. lucid is not built with OpenMP: its CPU
kernels run on its own thread pool (csrc/core/parallel.cpp, Note [Thread pool]), which reads
OMP_NUM_THREADS for its size as torch does; so is_available() is False."""

__all__ = ["is_available"]


def is_available():
    """Whether lucid was built with OpenMP: it was not (it has its own thread pool)."""
    return False
