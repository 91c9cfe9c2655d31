"""The loss modules (torch.nn.modules.loss) over the nn.functional losses: each stores
torch's constructor arguments and passes them on."""

from .. import functional as F
from .._reduction import reduction_of as _reduction_of
from .._functional_seq import ctc_loss
from .module import Module

__all__ = ["MSELoss", "L1Loss", "NLLLoss", "CrossEntropyLoss", "CTCLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
           "HuberLoss", "SmoothL1Loss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss",
           "MultiMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss", "PoissonNLLLoss", "GaussianNLLLoss", "NLLLoss2d"]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = _reduction_of(size_average, reduce, reduction)


class MSELoss(_Loss):
    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_Loss):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """NLLLoss's deprecated name for [N, C, H, W] inputs (NLLLoss takes them)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        import warnings
        warnings.warn("NLLLoss2d has been deprecated. Please use NLLLoss instead as a drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.", stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class CrossEntropyLoss(NLLLoss):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class CTCLoss(Module):
    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__()
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                        self.zero_infinity)



_LEGACY = ("size_average", "reduce")


def _loss(name, fn, params, buffers=()):
    """params: torch's constructor parameters [(name, default)] in its order, the legacy size_average / reduce
    among them (they set the reduction, and are not kept)."""
    kept = [p for p, _ in params if p not in _LEGACY]

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        names = [p for p, _ in params]
        if len(args) > len(names):
            raise TypeError(f"{name}.__init__() takes at most {len(names)} positional arguments ({len(args)} given)")
        values = dict(params)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{k}'")
            values[k] = v
        if "reduction" in values:
            values["reduction"] = _reduction_of(values.get("size_average"), values.get("reduce"), values["reduction"])
        for k in kept:
            if k in buffers:
                self.register_buffer(k, values[k])
            else:
                setattr(self, k, values[k])

    def forward(self, *inputs, **named_inputs):
        return fn(*inputs, **named_inputs, **{p: getattr(self, p) for p in kept})

    return type(name, (Module,), {"__init__": __init__, "forward": forward, "__module__": __name__})


BCELoss = _loss("BCELoss", F.binary_cross_entropy,
                [("weight", None), ("size_average", None), ("reduce", None), ("reduction", "mean")], ("weight",))
BCEWithLogitsLoss = _loss("BCEWithLogitsLoss", F.binary_cross_entropy_with_logits,
                          [("weight", None), ("size_average", None), ("reduce", None), ("reduction", "mean"),
                           ("pos_weight", None)], ("weight", "pos_weight"))
KLDivLoss = _loss("KLDivLoss", F.kl_div,
                  [("size_average", None), ("reduce", None), ("reduction", "mean"), ("log_target", False)])
HuberLoss = _loss("HuberLoss", F.huber_loss, [("reduction", "mean"), ("delta", 1.0)])
SmoothL1Loss = _loss("SmoothL1Loss", F.smooth_l1_loss,
                     [("size_average", None), ("reduce", None), ("reduction", "mean"), ("beta", 1.0)])
SoftMarginLoss = _loss("SoftMarginLoss", F.soft_margin_loss,
                       [("size_average", None), ("reduce", None), ("reduction", "mean")])
MultiLabelSoftMarginLoss = _loss("MultiLabelSoftMarginLoss", F.multilabel_soft_margin_loss,
                                 [("weight", None), ("size_average", None), ("reduce", None), ("reduction", "mean")],
                                 ("weight",))
MultiLabelMarginLoss = _loss("MultiLabelMarginLoss", F.multilabel_margin_loss,
                             [("size_average", None), ("reduce", None), ("reduction", "mean")])
MultiMarginLoss = _loss("MultiMarginLoss", F.multi_margin_loss,
                        [("p", 1), ("margin", 1.0), ("weight", None), ("size_average", None), ("reduce", None),
                         ("reduction", "mean")], ("weight",))
CosineEmbeddingLoss = _loss("CosineEmbeddingLoss", F.cosine_embedding_loss,
                            [("margin", 0.0), ("size_average", None), ("reduce", None), ("reduction", "mean")])
MarginRankingLoss = _loss("MarginRankingLoss", F.margin_ranking_loss,
                          [("margin", 0.0), ("size_average", None), ("reduce", None), ("reduction", "mean")])
HingeEmbeddingLoss = _loss("HingeEmbeddingLoss", F.hinge_embedding_loss,
                           [("margin", 1.0), ("size_average", None), ("reduce", None), ("reduction", "mean")])
TripletMarginLoss = _loss("TripletMarginLoss", F.triplet_margin_loss,
                          [("margin", 1.0), ("p", 2.0), ("eps", 1e-6), ("swap", False), ("size_average", None),
                           ("reduce", None), ("reduction", "mean")])
PoissonNLLLoss = _loss("PoissonNLLLoss", F.poisson_nll_loss,
                       [("log_input", True), ("full", False), ("size_average", None), ("eps", 1e-8), ("reduce", None),
                        ("reduction", "mean")])
GaussianNLLLoss = _loss("GaussianNLLLoss", F.gaussian_nll_loss, [("full", False), ("eps", 1e-6), ("reduction", "mean")])


class TripletMarginWithDistanceLoss(Module):
    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__()
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        self.distance_function = distance_function
        self.margin, self.swap, self.reduction = margin, swap, reduction

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)
