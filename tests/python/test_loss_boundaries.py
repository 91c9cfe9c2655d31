"""Every loss in lucid.nn.functional (and its nn.*Loss module) at its boundary inputs,
against PyTorch: probabilities of exactly 0 and 1, exact matches (the kinks of l1,
smooth_l1 and huber), log(0) (-inf log-probabilities, zero targets), infinite and
huge logits, variances at and below eps, empty batches (a mean of nothing is nan),
all-ignored targets, label smoothing, margin losses exactly at the margin, zero
vectors, impossible CTC alignments. Forward values, first and second derivatives are
compared with torch's, nan and inf positions included (issue 18: BCE's backward gave
NaN where the input was exactly 0 or 1). The registry runs on every device: on the GPU
the losses and their derivatives are on the GPU and match torch's (CPU) values."""

import math

import pytest
import torch

import lucid
from conftest import TORCH_VERSION, to_lucid, to_torch, default_device

INF, NAN = math.inf, math.nan

# torch warns that kl_div's 'mean' is not 'batchmean'; both are compared here
pytestmark = pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")


class G:
    """An input: values (a torch tensor or a nested list), and whether it takes a gradient."""

    def __init__(self, values, grad=True, dtype=None):
        self.values = values if isinstance(values, torch.Tensor) else torch.tensor(values, dtype=dtype)
        self.grad = grad and self.values.dtype.is_floating_point


def I(values):  # noqa: E743  an integer input (class indices, lengths)
    return G(values, grad=False, dtype=torch.int64)


def _rand(*shape, seed=0, scale=1.0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale


def _log_probs(*shape, seed=0):
    return torch.log_softmax(_rand(*shape, seed=seed), -1)


R3 = ("none", "mean", "sum")

# (id, loss(F, inputs, reduction), inputs, reductions); F is torch's or lucid's nn.functional
CASES = [
    # -- binary cross entropy: input exactly 0 / 1, right and wrong targets, soft targets
    ("bce_boundaries", lambda F, a, r: F.binary_cross_entropy(a["p"], a["t"], reduction=r),
     {"p": G([1., 0., 1., 0., 0.5, 1e-8, 1 - 1e-7, 0.3]), "t": G([1., 0., 0., 1., 0.5, 0., 1., 0.3])}, R3),
    ("bce_weight", lambda F, a, r: F.binary_cross_entropy(a["p"], a["t"], a["w"], reduction=r),
     {"p": G([[1., 0.], [0., 0.25]]), "t": G([[1., 0.], [1., 1.]]), "w": G([2., 0.5], grad=False)}, R3),
    ("bce_empty", lambda F, a, r: F.binary_cross_entropy(a["p"], a["t"], reduction=r),
     {"p": G(torch.zeros(0)), "t": G(torch.zeros(0))}, R3),
    # -- with logits: infinite and huge logits, pos_weight, weight
    ("bce_logits_inf", lambda F, a, r: F.binary_cross_entropy_with_logits(a["x"], a["t"], reduction=r),
     {"x": G([INF, -INF, 1e30, -1e30, 0., 50., -50., 100., -100.]), "t": G([1., 0., 1., 0., 1., 0., 1., .5, .5])},
     R3),
    ("bce_logits_pos_weight", lambda F, a, r: F.binary_cross_entropy_with_logits(
        a["x"], a["t"], a["w"], reduction=r, pos_weight=a["pw"]),
     {"x": G([[INF, -INF, 0.], [1e4, -1e4, 2.]]), "t": G([[1., 0., 1.], [0., 1., .5]]),
      "w": G([1., 2., .5], grad=False), "pw": G([3., .5, 0.], grad=False)}, R3),
    ("bce_logits_empty", lambda F, a, r: F.binary_cross_entropy_with_logits(a["x"], a["t"], reduction=r),
     {"x": G(torch.zeros(0, 3)), "t": G(torch.zeros(0, 3))}, R3),
    # -- regression losses at exact matches (the kinks)
    ("mse_exact", lambda F, a, r: F.mse_loss(a["x"], a["y"], reduction=r),
     {"x": G([1., 2., 3., -1., INF]), "y": G([1., 0., 3., -1., 0.])}, R3),
    ("mse_empty", lambda F, a, r: F.mse_loss(a["x"], a["y"], reduction=r),
     {"x": G(torch.zeros(0)), "y": G(torch.zeros(0))}, R3),
    ("l1_exact", lambda F, a, r: F.l1_loss(a["x"], a["y"], reduction=r),
     {"x": G([1., 2., 3., -1., 0.]), "y": G([1., 0., 3., -1., -0.])}, R3),
    ("l1_empty", lambda F, a, r: F.l1_loss(a["x"], a["y"], reduction=r),
     {"x": G(torch.zeros(0)), "y": G(torch.zeros(0))}, R3),
    ("smooth_l1_kinks", lambda F, a, r: F.smooth_l1_loss(a["x"], a["y"], reduction=r, beta=1.0),
     {"x": G([1., 2., 3., -1., .5, 4.]), "y": G([1., 1., 2., 0., 0., 0.])}, R3),
    ("smooth_l1_beta_half", lambda F, a, r: F.smooth_l1_loss(a["x"], a["y"], reduction=r, beta=0.5),
     {"x": G([1., 1.5, 0.25, -.5]), "y": G([1., 1., 0., 0.])}, R3),
    ("smooth_l1_beta_zero", lambda F, a, r: F.smooth_l1_loss(a["x"], a["y"], reduction=r, beta=0.0),
     {"x": G([1., 2., -1.]), "y": G([1., 0., 0.])}, R3),
    ("huber_kinks", lambda F, a, r: F.huber_loss(a["x"], a["y"], reduction=r, delta=1.0),
     {"x": G([1., 2., 3., -1., .5, 4.]), "y": G([1., 1., 2., 0., 0., 0.])}, R3),
    ("huber_delta", lambda F, a, r: F.huber_loss(a["x"], a["y"], reduction=r, delta=0.5),
     {"x": G([1., 1.5, 0.25, -.5]), "y": G([1., 1., 0., 0.])}, R3),
    # -- nll / cross entropy: -inf log-probabilities, ignore_index, label smoothing
    ("nll_neg_inf", lambda F, a, r: F.nll_loss(a["lp"], a["t"], reduction=r),
     {"lp": G([[0., -INF, -INF], [-INF, -.5, -1.], [-1., -INF, -2.]]), "t": I([0, 0, 2])}, R3),
    ("nll_all_ignored", lambda F, a, r: F.nll_loss(a["lp"], a["t"], reduction=r, ignore_index=1),
     {"lp": G(_log_probs(3, 4)), "t": I([1, 1, 1])}, R3),
    ("nll_weight_ignored", lambda F, a, r: F.nll_loss(a["lp"], a["t"], a["w"], reduction=r, ignore_index=0),
     {"lp": G(_log_probs(4, 3)), "t": I([0, 1, 2, 0]), "w": G([1., 0., 2.], grad=False)}, R3),
    ("nll_weight_zero_total", lambda F, a, r: F.nll_loss(a["lp"], a["t"], a["w"], reduction=r),
     {"lp": G(_log_probs(2, 3)), "t": I([1, 1]), "w": G([1., 0., 2.], grad=False)}, R3),
    ("nll_empty", lambda F, a, r: F.nll_loss(a["lp"], a["t"], reduction=r),
     {"lp": G(torch.zeros(0, 3)), "t": I(torch.zeros(0, dtype=torch.int64))}, R3),
    ("ce_neg_inf_logits", lambda F, a, r: F.cross_entropy(a["x"], a["t"], reduction=r),
     {"x": G([[0., -INF, 1.], [-INF, 2., -1.], [3., -INF, -INF]]), "t": I([2, 1, 1])}, R3),
    ("ce_all_neg_inf_row", lambda F, a, r: F.cross_entropy(a["x"], a["t"], reduction=r),
     {"x": G([[-INF, -INF], [1., 2.]]), "t": I([0, 1])}, R3),
    ("ce_huge_logits", lambda F, a, r: F.cross_entropy(a["x"], a["t"], reduction=r),
     {"x": G([[1e30, -1e30, 0.], [88., 88., -88.]]), "t": I([1, 0])}, R3),
    ("ce_all_ignored", lambda F, a, r: F.cross_entropy(a["x"], a["t"], reduction=r),
     {"x": G(_rand(3, 4)), "t": I([-100, -100, -100])}, R3),
    ("ce_label_smoothing", lambda F, a, r: F.cross_entropy(a["x"], a["t"], reduction=r, label_smoothing=0.2),
     {"x": G(_rand(4, 5, seed=2)), "t": I([0, 4, -100, 2])}, R3),
    ("ce_label_smoothing_weight", lambda F, a, r: F.cross_entropy(a["x"], a["t"], a["w"], reduction=r,
                                                                  ignore_index=3, label_smoothing=0.3),
     {"x": G(_rand(4, 5, seed=3)), "t": I([0, 3, 1, 4]), "w": G([1., 2., .5, 0., 3.], grad=False)}, R3),
    ("ce_label_smoothing_all_ignored", lambda F, a, r: F.cross_entropy(a["x"], a["t"], reduction=r,
                                                                       label_smoothing=0.1),
     {"x": G(_rand(2, 3)), "t": I([-100, -100])}, R3),
    ("ce_label_smoothing_neg_inf", lambda F, a, r: F.cross_entropy(a["x"], a["t"], reduction=r,
                                                                   label_smoothing=0.1),
     {"x": G([[0., -INF, 1.], [2., 1., 0.]]), "t": I([0, 1])}, R3),
    ("ce_probabilities_zero", lambda F, a, r: F.cross_entropy(a["x"], a["p"], reduction=r),
     {"x": G([[0., -INF, 1.], [2., 1., 0.]]), "p": G([[.5, 0., .5], [0., 1., 0.]])}, R3),
    ("ce_probabilities_smoothing", lambda F, a, r: F.cross_entropy(a["x"], a["p"], reduction=r,
                                                                   label_smoothing=0.25),
     {"x": G(_rand(3, 4, seed=4)), "p": G(torch.softmax(_rand(3, 4, seed=5), 1))}, R3),
    ("ce_probabilities_empty", lambda F, a, r: F.cross_entropy(a["x"], a["p"], reduction=r),
     {"x": G(torch.zeros(0, 3)), "p": G(torch.zeros(0, 3))}, R3),
    ("ce_probabilities_weight_smoothing", lambda F, a, r: F.cross_entropy(a["x"], a["p"], a["w"], reduction=r,
                                                                          label_smoothing=0.1),
     {"x": G([[0., -INF, 1.], [2., 1., 0.]]), "p": G([[.5, 0., .5], [0., 1., 0.]]), "w": G([1., 2., 0.], grad=False)},
     R3),
    ("ce_spatial_ignored", lambda F, a, r: F.cross_entropy(a["x"], a["t"], reduction=r, ignore_index=0),
     {"x": G(_rand(2, 3, 2, seed=6)), "t": I([[0, 1], [2, 0]])}, R3),
    ("ce_empty", lambda F, a, r: F.cross_entropy(a["x"], a["t"], reduction=r),
     {"x": G(torch.zeros(0, 3)), "t": I(torch.zeros(0, dtype=torch.int64))}, R3),
    # -- kl_div: zero targets (0 log 0 = 0), -inf inputs and log-targets
    ("kl_div_zero_target", lambda F, a, r: F.kl_div(a["x"], a["t"], reduction=r),
     {"x": G([[-1., -INF, -2.], [-.5, -1., -INF]]), "t": G([[0., 0., 1.], [.5, .5, 0.]])},
     ("none", "mean", "sum", "batchmean")),
    ("kl_div_log_target", lambda F, a, r: F.kl_div(a["x"], a["t"], reduction=r, log_target=True),
     {"x": G([[-1., -INF, -2.], [-.5, -1., 0.]]), "t": G([[-INF, 0., -1.], [-INF, -INF, 0.]])},
     ("none", "mean", "sum", "batchmean")),
    ("kl_div_empty", lambda F, a, r: F.kl_div(a["x"], a["t"], reduction=r),
     {"x": G(torch.zeros(0, 3)), "t": G(torch.zeros(0, 3))}, ("none", "mean", "sum", "batchmean")),
    # -- poisson / gaussian nll
    ("poisson_log_input", lambda F, a, r: F.poisson_nll_loss(a["x"], a["t"], reduction=r),
     {"x": G([0., -INF, 2., -30., 80.]), "t": G([0., 0., 3., 1., 0.])}, R3),
    ("poisson_rate_input", lambda F, a, r: F.poisson_nll_loss(a["x"], a["t"], log_input=False, reduction=r),
     {"x": G([0., 0., 2., 1e-9, 5.]), "t": G([0., 1., 3., 1., 0.])}, R3),
    ("poisson_full", lambda F, a, r: F.poisson_nll_loss(a["x"], a["t"], full=True, reduction=r),
     {"x": G([0., .5, 2., -1.]), "t": G([0., 1., 2., 7.])}, R3),
    ("poisson_full_rate", lambda F, a, r: F.poisson_nll_loss(a["x"], a["t"], log_input=False, full=True,
                                                             reduction=r),
     {"x": G([0., .5, 2., 1.]), "t": G([0., 1., 2., 7.])}, R3),
    ("gaussian_var_eps", lambda F, a, r: F.gaussian_nll_loss(a["x"], a["y"], a["v"], reduction=r, eps=1e-6),
     {"x": G([1., 2., 3., 4.]), "y": G([1., 0., 3.5, 4.]), "v": G([0., 1e-6, 1e-8, 2.])}, R3),
    ("gaussian_float_var_zero", lambda F, a, r: F.gaussian_nll_loss(a["x"], a["y"], 0.0, reduction=r),
     {"x": G([1., 2.]), "y": G([1., 0.])}, R3),
    ("gaussian_full_broadcast", lambda F, a, r: F.gaussian_nll_loss(a["x"], a["y"], a["v"], full=True,
                                                                    reduction=r),
     {"x": G(_rand(3, 2)), "y": G(_rand(3, 2, seed=1)), "v": G([[0.], [1e-7], [.5]])}, R3),
    ("gaussian_empty", lambda F, a, r: F.gaussian_nll_loss(a["x"], a["y"], a["v"], reduction=r),
     {"x": G(torch.zeros(0, 2)), "y": G(torch.zeros(0, 2)), "v": G(torch.ones(0, 2))}, R3),
    # -- margin losses exactly at their margins
    ("margin_ranking_at_margin", lambda F, a, r: F.margin_ranking_loss(a["a"], a["b"], a["y"], margin=0.5,
                                                                       reduction=r),
     {"a": G([1., 1., 0., 2.]), "b": G([.5, 1.5, 0., 0.]), "y": G([1., -1., 1., -1.], grad=False)}, R3),
    ("hinge_embedding_at_margin", lambda F, a, r: F.hinge_embedding_loss(a["x"], a["y"], margin=1.0, reduction=r),
     {"x": G([1., .5, 2., 0., -1.]), "y": G([-1., -1., 1., -1., 0.], grad=False)}, R3),
    ("soft_margin_zero", lambda F, a, r: F.soft_margin_loss(a["x"], a["y"], reduction=r),
     {"x": G([0., 2., -3., 50.]), "y": G([1., -1., 1., 1.], grad=False)}, R3),
    ("multilabel_soft_margin_inf", lambda F, a, r: F.multilabel_soft_margin_loss(a["x"], a["y"], reduction=r),
     {"x": G([[INF, 0., -3.], [-50., 50., 0.]]), "y": G([[1., 0., 1.], [0., 1., .5]], grad=False)}, R3),
    ("multi_margin_at_margin", lambda F, a, r: F.multi_margin_loss(a["x"], a["t"], reduction=r),
     {"x": G([[1., 0., 2.], [1., 1., 0.], [0., 1., 2.]]), "t": I([0, 1, 2])}, R3),
    ("multi_margin_p2_weight", lambda F, a, r: F.multi_margin_loss(a["x"], a["t"], p=2, margin=0.5, weight=a["w"],
                                                                   reduction=r),
     {"x": G([[1., .5, 2.], [1., 1., 0.]]), "t": I([0, 2]), "w": G([1., 2., 3.], grad=False)}, R3),
    ("multilabel_margin_at_margin", lambda F, a, r: F.multilabel_margin_loss(a["x"], a["t"], reduction=r),
     {"x": G([[1., 0., 2., 1.], [0., 1., 1., 3.]]), "t": I([[0, -1, 1, 2], [3, 1, -1, 0]])}, R3),
    ("triplet_at_margin", lambda F, a, r: F.triplet_margin_loss(a["a"], a["p"], a["n"], margin=1.0, reduction=r),
     {"a": G([[0., 0.], [1., 1.]]), "p": G([[0., 0.], [1., 1.]]), "n": G([[0., 0.], [2., 1.]])}, R3),
    ("cosine_embedding_zero_vectors", lambda F, a, r: F.cosine_embedding_loss(a["a"], a["b"], a["y"], reduction=r),
     {"a": G([[0., 0.], [1., 0.], [0., 0.], [1., 2.]]), "b": G([[0., 0.], [0., 0.], [1., 1.], [2., 4.]]),
      "y": G([1., -1., 1., -1.], grad=False)}, R3),
    ("cosine_embedding_margin", lambda F, a, r: F.cosine_embedding_loss(a["a"], a["b"], a["y"], margin=0.6,
                                                                        reduction=r),
     {"a": G([[1., 0.], [3., 4.], [1., 1.]]), "b": G([[.6, .8], [3., 4.], [-1., 2.]]),
      "y": G([-1., -1., 1.], grad=False)}, R3),
    ("cosine_embedding_other_targets", lambda F, a, r: F.cosine_embedding_loss(a["a"], a["b"], a["y"], reduction=r),
     {"a": G([[1., 2.], [0., 1.]]), "b": G([[2., 1.], [0., 0.]]), "y": G([0., 2.], grad=False)}, R3),
    ("multilabel_margin_no_labels", lambda F, a, r: F.multilabel_margin_loss(a["x"], a["t"], reduction=r),
     {"x": G([[1., 0., 2.], [0., 1., 1.]]), "t": I([[-1, 0, 1], [2, -1, 0]])}, R3),
    ("multi_margin_unbatched", lambda F, a, r: F.multi_margin_loss(a["x"], a["t"], reduction=r),
     {"x": G([1., 0., 2.]), "t": I(2)}, R3),
    ("triplet_swap_p1", lambda F, a, r: F.triplet_margin_loss(a["a"], a["p"], a["n"], margin=0.5, p=1, swap=True,
                                                              reduction=r),
     {"a": G([[0., 0.], [1., 1.]]), "p": G([[0., 0.], [1., 2.]]), "n": G([[0., 0.], [1., 1.5]])}, R3),
    ("nll_unbatched_neg_inf", lambda F, a, r: F.nll_loss(a["lp"], a["t"], reduction=r),
     {"lp": G([-INF, -.1, -3.]), "t": I(0)}, R3),
    ("nll_spatial_ignored", lambda F, a, r: F.nll_loss(a["lp"], a["t"], reduction=r, ignore_index=2),
     {"lp": G([[[0., -INF], [-INF, -1.], [-2., 0.]]]), "t": I([[2, 2]])}, R3),
    # -- empty batches of the remaining losses: a mean of nothing is nan
    *[(f"{name}_empty", fn, spec, R3) for name, fn, spec in [
        ("smooth_l1", lambda F, a, r: F.smooth_l1_loss(a["x"], a["y"], reduction=r),
         {"x": G(torch.zeros(0)), "y": G(torch.zeros(0))}),
        ("huber", lambda F, a, r: F.huber_loss(a["x"], a["y"], reduction=r),
         {"x": G(torch.zeros(0)), "y": G(torch.zeros(0))}),
        ("soft_margin", lambda F, a, r: F.soft_margin_loss(a["x"], a["y"], reduction=r),
         {"x": G(torch.zeros(0)), "y": G(torch.zeros(0), grad=False)}),
        ("margin_ranking", lambda F, a, r: F.margin_ranking_loss(a["a"], a["b"], a["y"], reduction=r),
         {"a": G(torch.zeros(0)), "b": G(torch.zeros(0)), "y": G(torch.zeros(0), grad=False)}),
        ("hinge_embedding", lambda F, a, r: F.hinge_embedding_loss(a["x"], a["y"], reduction=r),
         {"x": G(torch.zeros(0)), "y": G(torch.zeros(0), grad=False)}),
        ("poisson", lambda F, a, r: F.poisson_nll_loss(a["x"], a["y"], reduction=r),
         {"x": G(torch.zeros(0)), "y": G(torch.zeros(0))}),
        ("multilabel_soft_margin", lambda F, a, r: F.multilabel_soft_margin_loss(a["x"], a["y"], reduction=r),
         {"x": G(torch.zeros(0, 3)), "y": G(torch.zeros(0, 3), grad=False)}),
        ("cosine_embedding", lambda F, a, r: F.cosine_embedding_loss(a["a"], a["b"], a["y"], reduction=r),
         {"a": G(torch.zeros(0, 2)), "b": G(torch.zeros(0, 2)), "y": G(torch.zeros(0), grad=False)}),
        ("triplet", lambda F, a, r: F.triplet_margin_loss(a["a"], a["p"], a["n"], reduction=r),
         {"a": G(torch.zeros(0, 2)), "p": G(torch.zeros(0, 2)), "n": G(torch.zeros(0, 2))}),
    ]],
    # torch's kernels return uninitialised memory for these two reduced over an empty
    # batch; test_margin_kernels_reduce_empty_batches checks lucid's 0 and nan
    ("multi_margin_empty", lambda F, a, r: F.multi_margin_loss(a["x"], a["t"], reduction=r),
     {"x": G(torch.zeros(0, 3)), "t": I(torch.zeros(0, dtype=torch.int64))}, ("none",)),
    ("multilabel_margin_empty", lambda F, a, r: F.multilabel_margin_loss(a["x"], a["t"], reduction=r),
     {"x": G(torch.zeros(0, 3)), "t": I(torch.zeros(0, 3, dtype=torch.int64))}, ("none",)),
    # -- CTC: an impossible alignment (target longer than the input), with and without zero_infinity
    ("ctc_impossible", lambda F, a, r: F.ctc_loss(a["lp"], a["t"], [4, 2], [2, 3], reduction=r),
     {"lp": G(_log_probs(4, 2, 5)), "t": I([[1, 2, 0], [3, 3, 4]])}, R3),
    ("ctc_impossible_zero_infinity", lambda F, a, r: F.ctc_loss(a["lp"], a["t"], [4, 2], [2, 3], reduction=r,
                                                                zero_infinity=True),
     {"lp": G(_log_probs(4, 2, 5)), "t": I([[1, 2, 0], [3, 3, 4]])}, R3),
    ("ctc_repeats_need_blanks", lambda F, a, r: F.ctc_loss(a["lp"], a["t"], [3, 3], [2, 2], reduction=r,
                                                           zero_infinity=True),
     {"lp": G(_log_probs(3, 2, 4, seed=1)), "t": I([[1, 1], [1, 2]])}, R3),
    ("ctc_empty_target", lambda F, a, r: F.ctc_loss(a["lp"], a["t"], [3, 2], [0, 0], reduction=r),
     {"lp": G(_log_probs(3, 2, 4, seed=2)), "t": I([[0], [0]])}, R3),
]

IDS = {c[0]: c for c in CASES}


def _inputs(lib, spec, dtype=None, device=None):
    device = device or default_device()
    out = {}
    for k, g in spec.items():
        v = g.values if dtype is None or not g.values.dtype.is_floating_point else g.values.to(dtype)
        t = v.clone() if lib is torch else to_lucid(v, device)
        if g.grad:
            t.requires_grad_(True)
        out[k] = t
    return out


def _as_torch(t):
    return to_torch(t.detach()) if isinstance(t, lucid.Tensor) else t.detach()


def _assert_close(l_, t, what, tol=1e-4, device=None):
    if device is not None:
        assert l_.device.type == device, (what, l_.device, device)
    t = _as_torch(t)
    l_ = _as_torch(l_)
    assert l_.shape == t.shape, (what, l_.shape, t.shape)
    torch.testing.assert_close(l_.to(t.dtype), t, rtol=tol, atol=1e-6, equal_nan=True, msg=lambda m: f"{what}: {m}")


def _grads(loss, inputs):
    """d(sum of loss)/d(each input that takes a gradient): zeros where none reaches it."""
    lib = torch if isinstance(loss, torch.Tensor) else lucid
    names = [k for k, t in inputs.items() if t.requires_grad]
    if not loss.requires_grad:
        return {k: None for k in names}
    gs = lib.autograd.grad(loss.sum(), [inputs[k] for k in names], allow_unused=True, create_graph=True)
    return dict(zip(names, gs))


def _compare_grads(lg, tg, inputs_t, what, device=None):
    device = device or default_device()
    for k, t in tg.items():
        ref = t if t is not None else torch.zeros_like(inputs_t[k])
        got = lg[k] if lg[k] is not None else lucid.zeros_like(to_lucid(inputs_t[k].detach(), device))
        _assert_close(got, ref, f"{what} d/d{k}", device=device)


def _cases():
    return [pytest.param(c[0], r, id=f"{c[0]}-{r}") for c in CASES for r in c[3]]


# torch before 2.15 (the GPU machine's 2.11) differentiates these losses at their
# margins and at zero vectors the other way; lucid follows 2.15's ATen formulas.
_MARGIN_CHANGED_IN_215 = {"margin_ranking_at_margin", "cosine_embedding_margin", "hinge_embedding_at_margin",
                          "cosine_embedding_zero_vectors"}
_TORCH_BEFORE_215 = TORCH_VERSION < (2, 15)


def _skip_where_torch_differs(case):
    if _TORCH_BEFORE_215 and case in _MARGIN_CHANGED_IN_215:
        pytest.skip(f"torch {torch.__version__} differentiates {case} as torch before 2.15 did")


@pytest.mark.parametrize("case, reduction", _cases())
def test_forward_and_backward_match_torch(case, reduction, device):
    _skip_where_torch_differs(case)
    _, fn, spec, _ = IDS[case]
    lt, tt = _inputs(lucid, spec, device=device), _inputs(torch, spec)
    l_loss = fn(lucid.nn.functional, lt, reduction)
    t_loss = fn(torch.nn.functional, tt, reduction)
    _assert_close(l_loss, t_loss, "loss", device=device)
    _compare_grads(_grads(l_loss, lt), _grads(t_loss, tt), tt, "grad", device)


# Second derivatives, for the losses whose gradient is not piecewise constant in the
# inputs; each is d/dinput of (gradient . v) for a fixed v.
SECOND_ORDER = ["bce_boundaries", "bce_weight", "bce_logits_inf", "bce_logits_pos_weight", "mse_exact",
                "smooth_l1_kinks", "huber_kinks", "kl_div_zero_target", "kl_div_log_target", "poisson_log_input",
                "poisson_rate_input", "gaussian_var_eps", "ce_label_smoothing", "ce_probabilities_smoothing",
                "soft_margin_zero", "multilabel_soft_margin_inf", "cosine_embedding_margin"]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", SECOND_ORDER)
def test_double_backward_matches_torch(case, reduction, device):
    _skip_where_torch_differs(case)
    _, fn, spec, _ = IDS[case]
    results = {}
    for lib in (torch, lucid):
        inputs = _inputs(lib, spec, device=device)
        loss = fn(lib.nn.functional, inputs, reduction)
        first = _grads(loss, inputs)
        terms = []  # gradient . v for a fixed v that differs per element, so that cross terms show
        for k, g in first.items():
            if g is None or not g.requires_grad:
                continue
            v = torch.linspace(0.5, 1.5, g.numel()).reshape(tuple(g.shape))
            terms.append((g * (v if lib is torch else to_lucid(v, device))).sum())
        if not terms:
            results[lib] = None
            continue
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        names = [k for k, t in inputs.items() if t.requires_grad]
        second = lib.autograd.grad(total, [inputs[k] for k in names], allow_unused=True)
        results[lib] = (dict(zip(names, second)), inputs)
    if results[torch] is None:
        assert results[lucid] is None
        return
    (lg, _), (tg, tin) = results[lucid], results[torch]
    _compare_grads(lg, tg, tin, "second derivative", device)


# The modules pass their arguments on to the functional forms: a boundary case each.
MODULES = [
    ("BCELoss", {}, "bce_boundaries", ("p", "t")),
    ("BCEWithLogitsLoss", {}, "bce_logits_inf", ("x", "t")),
    ("MSELoss", {}, "mse_exact", ("x", "y")),
    ("L1Loss", {}, "l1_exact", ("x", "y")),
    ("SmoothL1Loss", {"beta": 1.0}, "smooth_l1_kinks", ("x", "y")),
    ("HuberLoss", {"delta": 0.5}, "huber_delta", ("x", "y")),
    ("NLLLoss", {"ignore_index": 1}, "nll_all_ignored", ("lp", "t")),
    ("CrossEntropyLoss", {"label_smoothing": 0.2}, "ce_label_smoothing", ("x", "t")),
    ("KLDivLoss", {"reduction": "batchmean"}, "kl_div_zero_target", ("x", "t")),
    ("PoissonNLLLoss", {"log_input": False, "full": True}, "poisson_full_rate", ("x", "t")),
    ("GaussianNLLLoss", {}, "gaussian_var_eps", ("x", "y", "v")),
    ("MarginRankingLoss", {"margin": 0.5}, "margin_ranking_at_margin", ("a", "b", "y")),
    ("HingeEmbeddingLoss", {}, "hinge_embedding_at_margin", ("x", "y")),
    ("SoftMarginLoss", {}, "soft_margin_zero", ("x", "y")),
    ("MultiLabelSoftMarginLoss", {}, "multilabel_soft_margin_inf", ("x", "y")),
    ("MultiMarginLoss", {}, "multi_margin_at_margin", ("x", "t")),
    ("MultiLabelMarginLoss", {}, "multilabel_margin_at_margin", ("x", "t")),
    ("TripletMarginLoss", {}, "triplet_at_margin", ("a", "p", "n")),
    ("CosineEmbeddingLoss", {}, "cosine_embedding_zero_vectors", ("a", "b", "y")),
]


@pytest.mark.parametrize("name, kwargs, case, args", MODULES, ids=[m[0] for m in MODULES])
def test_loss_modules_match_torch(name, kwargs, case, args, device):
    _skip_where_torch_differs(case)
    spec = IDS[case][2]
    lt, tt = _inputs(lucid, spec, device=device), _inputs(torch, spec)
    l_loss = getattr(lucid.nn, name)(**kwargs)(*[lt[a] for a in args])
    t_loss = getattr(torch.nn, name)(**kwargs)(*[tt[a] for a in args])
    _assert_close(l_loss, t_loss, "loss", device=device)
    _compare_grads(_grads(l_loss, lt), _grads(t_loss, tt), tt, "grad", device)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_module_impossible_alignment(zero_infinity, device):
    spec = IDS["ctc_impossible"][2]
    lt, tt = _inputs(lucid, spec, device=device), _inputs(torch, spec)
    l_loss = lucid.nn.CTCLoss(zero_infinity=zero_infinity)(lt["lp"], lt["t"], [4, 2], [2, 3])
    t_loss = torch.nn.CTCLoss(zero_infinity=zero_infinity)(tt["lp"], tt["t"], [4, 2], [2, 3])
    _assert_close(l_loss, t_loss, "loss", device=device)
    _compare_grads(_grads(l_loss, lt), _grads(t_loss, tt), tt, "grad", device)


@pytest.mark.parametrize("fn", [
    lambda F, r: F.multi_margin_loss(lucid.zeros(0, 3, requires_grad=True), lucid.zeros(0, dtype=lucid.int64),
                                     reduction=r),
    lambda F, r: F.multilabel_margin_loss(lucid.zeros(0, 3, requires_grad=True),
                                          lucid.zeros(0, 3, dtype=lucid.int64), reduction=r),
], ids=["multi_margin", "multilabel_margin"])
def test_margin_kernels_reduce_empty_batches(fn):
    # a sum of nothing is 0 and a mean of nothing nan, as every other torch loss gives
    assert fn(lucid.nn.functional, "sum").item() == 0.0
    assert math.isnan(fn(lucid.nn.functional, "mean").item())


def test_soft_margin_past_float_range_stays_finite():
    # torch's float32 kernel computes log1p(exp(100)) = inf and a NaN gradient; lucid's
    # log(1 + e^z) is the stable form, so it gives what torch gives in float64
    x = lucid.tensor([-100., 100.], requires_grad=True)
    loss = lucid.nn.functional.soft_margin_loss(x, lucid.tensor([1., 1.]))
    loss.backward()
    tx = torch.tensor([-100., 100.], dtype=torch.float64, requires_grad=True)
    t_loss = torch.nn.functional.soft_margin_loss(tx, torch.tensor([1., 1.], dtype=torch.float64))
    t_loss.backward()
    _assert_close(loss, t_loss.float(), "loss")
    _assert_close(x.grad, tx.grad.float(), "grad")


def test_bce_issue_example():
    # the report of issue 18: [nan, nan] before, torch's [0, 0] now
    p = lucid.tensor([1., 0.], requires_grad=True)
    lucid.nn.functional.binary_cross_entropy(p, lucid.tensor([1., 0.])).backward()
    assert p.grad.tolist() == [0.0, 0.0]
    p = lucid.tensor([1., 0.], requires_grad=True)
    lucid.nn.BCELoss()(p, lucid.tensor([0., 1.])).backward()
    tp = torch.tensor([1., 0.], requires_grad=True)
    torch.nn.BCELoss()(tp, torch.tensor([0., 1.])).backward()
    _assert_close(p.grad, tp.grad, "wrong-target gradient")  # large and finite: +-5e11
    assert all(math.isfinite(v) for v in p.grad.tolist())


@pytest.mark.parametrize("make, match", [
    (lambda L: L.nn.functional.binary_cross_entropy(L.tensor([1.5]), L.tensor([1.])), "input should be between"),
    (lambda L: L.nn.functional.binary_cross_entropy(L.tensor([math.nan]), L.tensor([1.])), "between 0 and 1"),
    (lambda L: L.nn.functional.binary_cross_entropy(L.tensor([.5]), L.tensor([-1.])), "target should be"),
    (lambda L: L.nn.functional.binary_cross_entropy(L.tensor([.5]), L.tensor([1.]),
                                                    weight=L.tensor([2.], requires_grad=True)), "not differentiable"),
    (lambda L: L.nn.functional.binary_cross_entropy_with_logits(L.tensor([.5]), L.tensor([1.]),
                                                                pos_weight=L.tensor([2.], requires_grad=True)),
     "not differentiable"),
])
def test_bce_bad_inputs_raise_as_torch(make, match):
    with pytest.raises(RuntimeError, match=match):
        make(torch)
    with pytest.raises(RuntimeError, match=match):
        make(lucid)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_bce_second_derivative_through_the_target(reduction):
    # d/dt of the input gradient, and d/dp of the target gradient, at the boundary
    res = {}
    for L in (torch, lucid):
        p = L.tensor([1., 0., .5, 1e-3], requires_grad=True)
        t = L.tensor([1., 1., .5, 0.], requires_grad=True)
        loss = L.nn.functional.binary_cross_entropy(p, t, reduction=reduction)
        gp, gt = L.autograd.grad(loss.sum(), [p, t], create_graph=True)
        res[L] = (L.autograd.grad(gp.sum(), [t])[0], L.autograd.grad(gt[2:].sum(), [p])[0])
    for a, b, what in zip(res[lucid], res[torch], ("d2/dp dt", "d2/dt dp")):
        _assert_close(a, b, what)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_bce_gradcheck_inside_the_interval(reduction, device):
    # the hand-written first and second derivatives against numerical differences
    p = lucid.tensor([0.2, 0.7, 0.45], dtype=lucid.float64, requires_grad=True, device=device)
    t = lucid.tensor([0.1, 0.9, 0.3], dtype=lucid.float64, requires_grad=True, device=device)
    w = lucid.tensor([1.0, 0.5, 2.0], dtype=lucid.float64, device=device)
    fn = lambda a, b: lucid.nn.functional.binary_cross_entropy(a, b, w, reduction=reduction)  # noqa: E731
    assert lucid.autograd.gradcheck(fn, (p, t))
    assert lucid.autograd.gradgradcheck(fn, (p, t))


@pytest.mark.parametrize("kind", ["smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["mean", "none", "sum"])
def test_piecewise_quadratic_losses_first_and_second_derivatives(kind, reduction):
    # smooth_l1_loss / huber_loss take torch's backward formulas (a clamp of x - t times
    # the output's gradient); their gradients, and the gradients of those, are torch's.
    import numpy as np
    gen = torch.Generator().manual_seed(7)
    xt = torch.randn(50, generator=gen, dtype=torch.float64) * 2
    tt = torch.randn(50, generator=gen, dtype=torch.float64)
    xt[:3] = tt[:3] + torch.tensor([0.7, -0.7, 0.0], dtype=torch.float64)  # on the band's edges
    kw = dict(beta=0.7) if kind == "smooth_l1_loss" else dict(delta=0.7)
    res = []
    for m, x, t in ((torch, xt.clone(), tt.clone()), (lucid, lucid.tensor(xt.numpy()), lucid.tensor(tt.numpy()))):
        x.requires_grad_()
        t.requires_grad_()
        y = getattr(m.nn.functional, kind)(x, t, reduction=reduction, **kw)
        gx, gt = m.autograd.grad(y, (x, t), m.ones_like(y) * 1.3, create_graph=True)
        h = m.autograd.grad((gx * gx).sum() + gt.sum(), x)[0]
        res.append([np.array(v.tolist()) for v in (y, gx, gt, h)])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


LEGACY = [(None, False), (False, None), (True, True), (False, True), (True, None)]


@pytest.mark.parametrize("size_average, reduce", LEGACY)
def test_legacy_size_average_and_reduce_pick_the_reduction_as_torch(size_average, reduce):
    x, y = torch.tensor([[1.0, -2.0], [0.5, 3.0]]), torch.tensor([[0.0, 2.0], [1.0, 1.0]])
    p = torch.sigmoid(x)
    for name, args in [("mse_loss", (x, y)), ("l1_loss", (x, y)), ("smooth_l1_loss", (x, y)),
                       ("binary_cross_entropy", (p, y / 3)), ("binary_cross_entropy_with_logits", (x, y / 3)),
                       ("soft_margin_loss", (x, y.sign())), ("kl_div", (x, p))]:
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            got = getattr(lucid.nn.functional, name)(*map(to_lucid, args), size_average=size_average,
                                                     reduce=reduce)
        want = getattr(torch.nn.functional, name)(*args, size_average=size_average, reduce=reduce)
        assert torch.allclose(to_torch(got), want), name
    target = torch.tensor([1, 0])
    # positional, as older code passes them, and through the modules' constructors
    assert torch.allclose(to_torch(lucid.nn.functional.cross_entropy(to_lucid(x), to_lucid(target), None,
                                                                     size_average, -100, reduce)),
                          torch.nn.functional.cross_entropy(x, target, None, size_average, -100, reduce))
    for module, args in [("MSELoss", (x, y)), ("CrossEntropyLoss", (x, target)), ("BCELoss", (p, y / 3)),
                         ("SmoothL1Loss", (x, y)), ("MarginRankingLoss", (x[0], x[1], y[0].sign()))]:
        got = getattr(lucid.nn, module)(size_average=size_average, reduce=reduce)(*map(to_lucid, args))
        want = getattr(torch.nn, module)(size_average=size_average, reduce=reduce)(*args)
        assert torch.allclose(to_torch(got), want), module
    assert lucid.nn.BCELoss(None, False).reduction == torch.nn.BCELoss(None, False).reduction == "sum"


def test_mse_and_l1_weights_and_loss_modules_called_by_keyword():
    x, y, w = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.0, 2.0, 2.0]), torch.tensor([1.0, 0.0, 2.0])
    for name in ("mse_loss", "l1_loss"):
        for reduction in ("mean", "sum", "none"):
            got = getattr(lucid.nn.functional, name)(to_lucid(x), to_lucid(y), reduction=reduction, weight=to_lucid(w))
            want = getattr(torch.nn.functional, name)(x, y, reduction=reduction, weight=w)
            assert torch.allclose(to_torch(got), want), (name, reduction)
        with pytest.raises(ValueError, match="Weights and input must have the same size"):
            getattr(lucid.nn.functional, name)(to_lucid(x), to_lucid(y), weight=lucid.ones(2))
    got = lucid.nn.BCEWithLogitsLoss()(input=to_lucid(x), target=to_lucid(y / 3))
    assert torch.allclose(to_torch(got), torch.nn.BCEWithLogitsLoss()(input=x, target=y / 3))
