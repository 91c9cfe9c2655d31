"""Loss modules over the nn.functional losses: each stores torch's constructor
arguments and passes them on."""

from .. import functional as F
from .module import Module

__all__ = ["BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "HuberLoss", "SmoothL1Loss", "SoftMarginLoss",
           "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss", "MultiMarginLoss", "CosineEmbeddingLoss",
           "MarginRankingLoss", "HingeEmbeddingLoss", "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss"]


def _loss(name, fn, params, buffers=()):
    """params: [(name, default)] after the legacy size_average/reduce, as in torch."""

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        names = [p for p, _ in params]
        values = dict(params)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in values and k not in ("size_average", "reduce"):
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{k}'")
            if k in values:
                values[k] = v
        for k in names:
            if k in buffers:
                self.register_buffer(k, values[k])
            else:
                setattr(self, k, values[k])

    def forward(self, *inputs):
        return fn(*inputs, **{p: getattr(self, p) for p, _ in params})

    return type(name, (Module,), {"__init__": __init__, "forward": forward, "__module__": __name__})


BCELoss = _loss("BCELoss", F.binary_cross_entropy, [("weight", None), ("reduction", "mean")], ("weight",))
BCEWithLogitsLoss = _loss("BCEWithLogitsLoss", F.binary_cross_entropy_with_logits,
                          [("weight", None), ("reduction", "mean"), ("pos_weight", None)], ("weight", "pos_weight"))
KLDivLoss = _loss("KLDivLoss", F.kl_div, [("reduction", "mean"), ("log_target", False)])
HuberLoss = _loss("HuberLoss", F.huber_loss, [("reduction", "mean"), ("delta", 1.0)])
SmoothL1Loss = _loss("SmoothL1Loss", F.smooth_l1_loss, [("reduction", "mean"), ("beta", 1.0)])
SoftMarginLoss = _loss("SoftMarginLoss", F.soft_margin_loss, [("reduction", "mean")])
MultiLabelSoftMarginLoss = _loss("MultiLabelSoftMarginLoss", F.multilabel_soft_margin_loss,
                                 [("weight", None), ("reduction", "mean")], ("weight",))
MultiLabelMarginLoss = _loss("MultiLabelMarginLoss", F.multilabel_margin_loss, [("reduction", "mean")])
MultiMarginLoss = _loss("MultiMarginLoss", F.multi_margin_loss,
                        [("p", 1), ("margin", 1.0), ("weight", None), ("reduction", "mean")], ("weight",))
CosineEmbeddingLoss = _loss("CosineEmbeddingLoss", F.cosine_embedding_loss, [("margin", 0.0), ("reduction", "mean")])
MarginRankingLoss = _loss("MarginRankingLoss", F.margin_ranking_loss, [("margin", 0.0), ("reduction", "mean")])
HingeEmbeddingLoss = _loss("HingeEmbeddingLoss", F.hinge_embedding_loss, [("margin", 1.0), ("reduction", "mean")])
TripletMarginLoss = _loss("TripletMarginLoss", F.triplet_margin_loss,
                          [("margin", 1.0), ("p", 2.0), ("eps", 1e-6), ("swap", False), ("reduction", "mean")])
PoissonNLLLoss = _loss("PoissonNLLLoss", F.poisson_nll_loss,
                       [("log_input", True), ("full", False), ("eps", 1e-8), ("reduction", "mean")])
GaussianNLLLoss = _loss("GaussianNLLLoss", F.gaussian_nll_loss, [("full", False), ("eps", 1e-6), ("reduction", "mean")])
