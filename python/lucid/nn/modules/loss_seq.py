"""CTCLoss, as torch.nn.CTCLoss."""

from .._functional_seq import ctc_loss
from .module import Module

__all__ = ["CTCLoss"]


class CTCLoss(Module):
    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__()
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                        self.zero_infinity)
