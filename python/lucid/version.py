"""torch.version's names: the build's version and the CUDA it was built with (None without one)."""

from . import _C

__version__ = "0.1.0"
cuda = f"{_C._cuda_version // 1000}.{_C._cuda_version % 1000 // 10}" if _C._built_with_cuda else None
hip = None
debug = False
git_version = "unknown"
