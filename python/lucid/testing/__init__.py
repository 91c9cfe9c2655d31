"""lucid.testing: torch.testing's assert_close, assert_allclose (deprecated) and
make_tensor, for lucid tensors. (torch.testing.FileCheck, TorchScript's IR checker,
has no counterpart: lucid has no TorchScript.)"""

from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor

__all__ = ["assert_close", "assert_allclose", "make_tensor"]
