"""torch.nn.utils.stateless: functional_call's first home (torch now points to
torch.func.functional_call, which this is)."""

from ...func import functional_call

__all__ = ["functional_call"]
