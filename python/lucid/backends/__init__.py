"""lucid.backends, as torch.backends: what lucid was built with and can use (each query answers
for lucid, not for torch), and the switches programs set for the GPU libraries. Which
switches change behaviour today is said in each module's docstring (none does yet: the GPU
kernels to come consult them)."""

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
