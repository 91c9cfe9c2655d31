"""torch's top-level neural-network aliases (torch.conv2d, torch.batch_norm, torch.kl_div
with an int reduction, ...) and top-level in-place forms (torch.sin_) against PyTorch:
values, dtypes, gradients (float64) and errors (python/lucid/_toplevel_nn.py,
_toplevel_copies.py)."""

import pytest
import torch

import lucid
import lucid.nn.functional as F
from conftest import assert_close, to_lucid, to_torch


def pair(t, device="cpu", grad=False):
    """(lucid, torch) leaves with t's values; float64 inputs for gradient checks."""
    lt = to_lucid(t, device)
    tt = t.clone()
    if grad:
        lt.requires_grad_(True)
        tt.requires_grad_(True)
    return lt, tt


def randn(*shape, seed=0):
    return torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


def check_grads(lout, tout, lins, tins, rtol=1e-7, atol=1e-9):
    """Backward of a fixed weighting of both outputs, then the leaves' gradients agree."""
    wt = randn(*tout.shape, seed=99)
    (tout * wt).sum().backward()
    (lout * to_lucid(wt, lout.device.type)).sum().backward()
    for lt, tt in zip(lins, tins):
        assert_close(lt.grad.cpu(), tt.grad, rtol=rtol, atol=atol)


# ---- convolution and pooling -------------------------------------------------------------
@pytest.mark.parametrize("name", ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                                  "conv_transpose3d", "adaptive_avg_pool1d", "bilinear", "pixel_shuffle",
                                  "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
                                  "cosine_similarity", "pairwise_distance", "pdist"])
def test_same_signature_names_are_nn_functional(name):
    assert getattr(lucid, name) is getattr(F, name)


def test_conv2d_top_level(device):
    (x, tx), (w, tw), (b, tb) = pair(randn(2, 3, 6, 5), device, True), pair(randn(4, 3, 3, 3, seed=1), device, True), \
        pair(randn(4, seed=2), device, True)
    lout, tout = lucid.conv2d(x, w, b, 2, 1), torch.conv2d(tx, tw, tb, 2, 1)
    assert_close(lout.cpu(), tout, rtol=1e-10, atol=1e-10)
    check_grads(lout, tout, [x, w, b], [tx, tw, tb])


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nd", [1, 2])
def test_convolution(nd, transposed, device):
    spatial = (5,) * nd
    wshape = (3, 4) + (3,) * nd if transposed else (4, 3) + (3,) * nd
    (x, tx), (w, tw) = pair(randn(2, 3, *spatial), device, True), pair(randn(*wshape, seed=1), device, True)
    args = ([2], [1], [1], transposed, [1] if transposed else [0], 1)
    lout, tout = lucid.convolution(x, w, None, *args), torch.convolution(tx, tw, None, *args)
    assert tuple(lout.shape) == tuple(tout.shape)
    assert_close(lout.cpu(), tout, rtol=1e-10, atol=1e-10)
    check_grads(lout, tout, [x, w], [tx, tw])


def test_convolution_errors():
    x, w = lucid.randn(1, 2, 5), lucid.randn(3, 2, 3)
    with pytest.raises(TypeError, match="stride"):
        lucid.convolution(x, w, None, 1, [0], [1], False, [0], 1)
    with pytest.raises(RuntimeError, match="expected stride to be a single integer value or a list of 1"):
        lucid.convolution(x, w, None, [1, 1], [0], [1], False, [0], 1)
    with pytest.raises(TypeError, match="groups"):
        lucid.convolution(x, w, None, [1], [0], [1], False, [0], 1.5)


def test_pooling_default_stride_is_kernel(device):
    x, tx = pair(randn(2, 3, 9), device)
    assert_close(lucid.avg_pool1d(x, 3).cpu(), torch.avg_pool1d(tx, 3))
    assert_close(lucid.avg_pool1d(x, 3, (), 1, True, False).cpu(), torch.avg_pool1d(tx, 3, (), 1, True, False))
    assert_close(lucid.max_pool1d(x, 2).cpu(), torch.max_pool1d(tx, 2))
    x2, tx2 = pair(randn(1, 2, 6, 7), device)
    assert_close(lucid.max_pool2d(x2, 3, 2, 1).cpu(), torch.max_pool2d(tx2, 3, 2, 1))
    x3, tx3 = pair(randn(1, 2, 4, 5, 6), device)
    assert_close(lucid.max_pool3d(x3, 2, (), 0, 1, True).cpu(), torch.max_pool3d(tx3, 2, (), 0, 1, True))


def test_pool_with_indices_are_tuples(device):
    (x, tx) = pair(randn(2, 3, 9), device, True)
    lv, li = lucid.max_pool1d_with_indices(x, 3, 2)
    tv, ti = torch.max_pool1d_with_indices(tx, 3, 2)
    assert type(lucid.max_pool1d_with_indices(x, 3)) is tuple
    assert_close(lv.cpu(), tv)
    assert li.cpu().tolist() == ti.tolist()
    check_grads(lv, tv, [x], [tx])
    out = lucid.adaptive_max_pool1d(x.detach(), 4)
    ref = torch.adaptive_max_pool1d(tx.detach(), 4)
    assert type(out) is tuple and len(out) == 2
    assert_close(out[0].cpu(), ref[0])
    assert out[1].cpu().tolist() == ref[1].tolist()
    assert_close(lucid.adaptive_avg_pool1d(x.detach(), 4).cpu(), torch.adaptive_avg_pool1d(tx.detach(), 4))


# ---- normalisation ------------------------------------------------------------------------
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_argument_order_and_running_stats(training, device):
    (x, tx), (w, tw), (b, tb) = pair(randn(4, 3, 5), device, True), pair(randn(3, seed=1), device, True), \
        pair(randn(3, seed=2), device, True)
    rm, trm = pair(randn(3, seed=3), device)
    rv, trv = pair(randn(3, seed=4).abs() + 0.5, device)
    lout = lucid.batch_norm(x, w, b, rm, rv, training, 0.3, 1e-5, False)
    tout = torch.batch_norm(tx, tw, tb, trm, trv, training, 0.3, 1e-5, False)
    assert_close(lout.cpu(), tout, rtol=1e-10, atol=1e-10)
    assert_close(rm.cpu(), trm, rtol=1e-10, atol=1e-12)
    assert_close(rv.cpu(), trv, rtol=1e-10, atol=1e-12)
    check_grads(lout, tout, [x, w, b], [tx, tw, tb])


def test_batch_norm_single_value_per_channel_is_allowed():
    # ATen's op, unlike nn.functional's, takes a training batch of one
    x, tx = pair(randn(1, 3))
    out = lucid.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False)
    assert_close(out, torch.batch_norm(tx, None, None, None, None, True, 0.1, 1e-5, False), atol=1e-4)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(x, None, None, training=True)


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm(use_input_stats, device):
    (x, tx), (w, tw) = pair(randn(2, 3, 4), device, True), pair(randn(3, seed=1), device, True)
    rm, trm = pair(randn(3, seed=3), device)
    rv, trv = pair(randn(3, seed=4).abs() + 0.5, device)
    lout = lucid.instance_norm(x, w, None, rm, rv, use_input_stats, 0.2, 1e-5, False)
    tout = torch.instance_norm(tx, tw, None, trm, trv, use_input_stats, 0.2, 1e-5, False)
    assert_close(lout.cpu(), tout, rtol=1e-10, atol=1e-10)
    assert_close(rm.cpu(), trm, rtol=1e-10, atol=1e-12)
    assert_close(rv.cpu(), trv, rtol=1e-10, atol=1e-12)
    check_grads(lout, tout, [x, w], [tx, tw])


def test_instance_norm_one_spatial_element_allowed():
    x, tx = pair(randn(2, 3, 1))
    out = lucid.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False)
    assert_close(out, torch.instance_norm(tx, None, None, None, None, True, 0.1, 1e-5, False), atol=1e-6)


def test_layer_group_rms_norm(device):
    (x, tx), (w, tw), (b, tb) = pair(randn(2, 4, 3), device, True), pair(randn(3, seed=1), device, True), \
        pair(randn(3, seed=2), device, True)
    lout, tout = lucid.layer_norm(x, [3], w, b, 1e-5, True), torch.layer_norm(tx, [3], tw, tb, 1e-5, True)
    assert_close(lout.cpu(), tout, rtol=1e-10, atol=1e-10)
    check_grads(lout, tout, [x, w, b], [tx, tw, tb])
    assert_close(lucid.rms_norm(x.detach(), [3], w.detach()).cpu(), torch.rms_norm(tx.detach(), [3], tw.detach()),
                 rtol=1e-10, atol=1e-10)
    g, tg = pair(randn(2, 4, 3), device)
    assert_close(lucid.group_norm(g, 2, None, None, 1e-5, True).cpu(), torch.group_norm(tg, 2, None, None, 1e-5, True),
                 rtol=1e-10, atol=1e-10)
    one, tone = pair(randn(1, 3))  # one value per group: allowed at top level
    assert_close(lucid.group_norm(one, 3), torch.group_norm(tone, 3), atol=1e-6)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        lucid.group_norm(g, 3)


# ---- dropout -------------------------------------------------------------------------------
DROPOUTS = ["dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout"]


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_identity_and_errors(name):
    x = lucid.randn(3, 4)
    assert getattr(lucid, name)(x, 0.5, False) is x
    assert getattr(lucid, name)(x, 0.0, True) is x
    assert getattr(lucid, name + "_")(x, 0.5, False) is x
    for p in (1.5, -0.1):
        with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1"):
            getattr(lucid, name)(x, p, True)


def test_dropout_values_and_in_place(device):
    lucid.manual_seed(0)
    x = lucid.ones(200, 50, device=device)
    out = lucid.dropout(x, 0.3, True)
    vals = set(out.cpu().reshape(-1).tolist())
    assert len(vals) == 2 and 0.0 in vals and max(vals) == pytest.approx(1 / 0.7)
    zeros = (out == 0).float().mean().item()
    assert 0.25 < zeros < 0.35
    y = lucid.ones(10, 10, device=device)
    assert lucid.dropout_(y, 0.5, True) is y
    assert set(y.cpu().reshape(-1).tolist()) <= {0.0, 2.0}
    assert lucid.dropout(x, 1.0, True).abs().sum().item() == 0


@pytest.mark.parametrize("fn,kept", [(lambda x: lucid.alpha_dropout_(x, 0.5, True), None),
                                     (lambda x: lucid.feature_dropout_(x, 0.5, True), 2.0),
                                     (lambda x: lucid.feature_alpha_dropout_(x, 0.5, True), None)])
def test_inplace_dropouts_write_input(fn, kept):
    lucid.manual_seed(3)
    x = lucid.ones(40, 30, 2)
    before = x.clone()
    assert fn(x) is x
    changed = (x != before).reshape(1200, 2)
    assert changed.any().item()
    if kept:  # feature dropout: one draw per (sample, channel), shared by its two elements
        assert (changed[:, 0] == changed[:, 1]).all().item()
        assert set(x.reshape(-1).tolist()) == {0.0, kept}


@pytest.mark.parametrize("name", ["feature_dropout", "feature_alpha_dropout"])
def test_feature_dropout_drops_whole_channels(name):
    lucid.manual_seed(1)
    out = getattr(lucid, name)(lucid.ones(8, 6, 5), 0.5, True)
    per_channel = out.reshape(48, 5)
    assert (per_channel == per_channel[:, :1]).all().item()
    assert len(set(per_channel[:, 0].tolist())) == 2
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        getattr(lucid, name)(lucid.ones(5), 0.5, True)


def test_alpha_dropout_keeps_mean_and_variance():
    lucid.manual_seed(2)
    out = lucid.alpha_dropout(lucid.randn(200000), 0.2, True)
    assert abs(out.mean().item()) < 0.02
    assert abs(out.var().item() - 1) < 0.03


# ---- embedding -------------------------------------------------------------------------------
@pytest.mark.parametrize("padding_idx", [-1, -2, 3, 7])
@pytest.mark.parametrize("freq", [False, True])
def test_embedding_padding_idx_is_atens(padding_idx, freq, device):
    (w, tw) = pair(randn(5, 2), device, True)
    idx = torch.tensor([0, 1, 3, 4, 4, 3])
    lout = lucid.embedding(w, to_lucid(idx, device), padding_idx, freq)
    tout = torch.embedding(tw, idx, padding_idx, freq)
    assert_close(lout.cpu(), tout)
    check_grads(lout, tout, [w], [tw])


def test_embedding_errors_and_renorm():
    with pytest.raises(RuntimeError, match="indices"):
        lucid.embedding(lucid.randn(5, 2), lucid.tensor([0.0, 1.0]))
    with pytest.raises(NotImplementedError, match="sparse"):
        lucid.embedding(lucid.randn(5, 2), lucid.tensor([0]), -1, False, True)
    w0 = randn(5, 3) * 3
    lw, tw = to_lucid(w0), w0.clone()
    idx = torch.tensor([0, 2, 2])
    assert lucid.embedding_renorm_(lw, to_lucid(idx), 1.0, 2.0) is lw
    torch.embedding_renorm_(tw, idx, 1.0, 2.0)
    assert_close(lw, tw, rtol=1e-12, atol=1e-12)


# ---- losses with an int reduction ---------------------------------------------------------
@pytest.mark.parametrize("reduction", [0, 1, 2, 5])
def test_losses_int_reduction(reduction, device):
    (a, ta), (b, tb) = pair(randn(4, 3), device, True), pair(randn(4, 3, seed=1), device, True)
    y = torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=torch.float64)
    ly = to_lucid(y, device)
    cases = [
        (lucid.cosine_embedding_loss(a, b, ly, 0.1, reduction), torch.cosine_embedding_loss(ta, tb, y, 0.1, reduction)),
        (lucid.margin_ranking_loss(a[:, 0], b[:, 0], ly, 0.2, reduction),
         torch.margin_ranking_loss(ta[:, 0], tb[:, 0], y, 0.2, reduction)),
        (lucid.hinge_embedding_loss(a[:, 0], ly, 0.5, reduction), torch.hinge_embedding_loss(ta[:, 0], y, 0.5, reduction)),
        (lucid.triplet_margin_loss(a, b, a * 2, 1.0, 2, 1e-6, True, reduction),
         torch.triplet_margin_loss(ta, tb, ta * 2, 1.0, 2, 1e-6, True, reduction)),
        (lucid.kl_div(a, b.exp(), reduction), torch.kl_div(ta, tb.exp(), reduction)),
        (lucid.kl_div(a, b, reduction, log_target=True), torch.kl_div(ta, tb, reduction, log_target=True)),
        (lucid.poisson_nll_loss(a, b.exp(), True, True, 1e-8, reduction),
         torch.poisson_nll_loss(ta, tb.exp(), True, True, 1e-8, reduction)),
        (lucid.binary_cross_entropy_with_logits(a, b.sigmoid(), None, to_lucid(randn(3, seed=5).abs(), device),
                                                reduction),
         torch.binary_cross_entropy_with_logits(ta, tb.sigmoid(), None, randn(3, seed=5).abs(), reduction)),
    ]
    for lout, tout in cases:
        assert tuple(lout.shape) == tuple(tout.shape)
        assert_close(lout.cpu(), tout, rtol=1e-9, atol=1e-10)
    lsum = sum(lo.sum() for lo, _ in cases)
    tsum = sum(to.sum() for _, to in cases)
    check_grads(lsum, tsum, [a, b], [ta, tb], rtol=1e-7, atol=1e-8)


def test_loss_reduction_must_be_int():
    with pytest.raises(TypeError, match="reduction"):
        lucid.kl_div(lucid.randn(3), lucid.rand(3), "mean")


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_ctc_loss_int_reduction(reduction):
    g = torch.Generator().manual_seed(3)
    logp = torch.randn(6, 2, 4, dtype=torch.float64, generator=g).log_softmax(2)
    targets = torch.tensor([[1, 2], [3, 3]])
    lp, tlp = pair(logp, grad=True)
    lout = lucid.ctc_loss(lp, to_lucid(targets), [6, 5], [2, 2], 0, reduction, False)
    tout = torch.ctc_loss(tlp, targets, [6, 5], [2, 2], 0, reduction, False)
    assert_close(lout, tout, rtol=1e-9, atol=1e-10)
    check_grads(lout, tout, [lp], [tlp])


# ---- padding and sampling -------------------------------------------------------------------
@pytest.mark.parametrize("pad", [[1, 2], [0, 1, 2, 0], [-1, 1], [1, -2, 2, 1]])
def test_constant_pad_nd(pad, device):
    (x, tx) = pair(randn(3, 4), device, True)
    lout, tout = lucid.constant_pad_nd(x, pad, 2.5), torch.constant_pad_nd(tx, pad, 2.5)
    assert_close(lout.cpu(), tout)
    check_grads(lout, tout, [x], [tx])


def test_constant_pad_nd_errors():
    x = lucid.randn(1, 3)
    with pytest.raises(RuntimeError, match="Length of pad must be even but instead it equals 3"):
        lucid.constant_pad_nd(x, [1, 2, 3])
    with pytest.raises(RuntimeError, match="no more than twice the number of dimensions"):
        lucid.constant_pad_nd(x, [1] * 6)
    with pytest.raises(RuntimeError):
        lucid.constant_pad_nd(x, [-2, -2])


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sampler_int_modes(mode, padding, align, device):
    (x, tx) = pair(randn(1, 2, 4, 5), device, True)
    grid = torch.rand(1, 3, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(4)) * 2.4 - 1.2
    lout = lucid.grid_sampler(x, to_lucid(grid, device), mode, padding, align)
    tout = torch.grid_sampler(tx, grid, mode, padding, align)
    assert_close(lout.cpu(), tout, rtol=1e-9, atol=1e-10)
    check_grads(lout, tout, [x], [tx])


def test_grid_sampler_mode_out_of_range():
    # (ATen takes any int here; lucid refuses the ones its enums lack)
    x, grid = lucid.randn(1, 1, 3, 3), lucid.zeros(1, 2, 2, 2)
    with pytest.raises(RuntimeError, match="interpolation_mode"):
        lucid.grid_sampler(x, grid, 3, 0, False)
    with pytest.raises(RuntimeError, match="padding_mode"):
        lucid.grid_sampler(x, grid, 0, 3, False)


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_generator(align, device):
    theta, ttheta = pair(randn(2, 2, 3), device, True)
    lout = lucid.affine_grid_generator(theta, [2, 1, 3, 4], align)
    tout = torch.affine_grid_generator(ttheta, [2, 1, 3, 4], align)
    assert_close(lout.cpu(), tout, rtol=1e-10, atol=1e-10)
    check_grads(lout, tout, [theta], [ttheta])


# ---- top-level in-place forms ---------------------------------------------------------------
UNARY_INPLACE = ["abs_", "acos_", "arccos_", "asin_", "arcsin_", "atan_", "arctan_", "asinh_", "arcsinh_",
                 "atanh_", "arctanh_", "ceil_", "cos_", "cosh_", "deg2rad_", "erf_", "erfc_", "exp2_", "exp_",
                 "expm1_", "fix_", "floor_", "frac_", "i0_", "log10_", "log1p_", "log2_", "log_", "logit_", "neg_",
                 "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_",
                 "sqrt_", "square_", "tan_", "tanh_", "trunc_", "zero_", "relu_", "nan_to_num_", "conj_physical_"]


@pytest.mark.parametrize("name", UNARY_INPLACE)
def test_unary_inplace_top_level(name, device):
    t = torch.tensor([0.15, 0.5, 0.85, 0.3], dtype=torch.float64)
    lt = to_lucid(t, device)
    out = getattr(lucid, name)(lt)
    assert out is lt
    assert_close(lt.cpu(), getattr(torch, name)(t), rtol=1e-12, atol=1e-12)


def test_acosh_inplace_top_level():
    lt, t = to_lucid(torch.tensor([1.5, 3.0], dtype=torch.float64)), torch.tensor([1.5, 3.0], dtype=torch.float64)
    assert lucid.acosh_(lt) is lt and lucid.arccosh_(lucid.tensor([2.0])).item() == pytest.approx(1.3169578969)
    assert_close(lt, torch.acosh_(t))


@pytest.mark.parametrize("name,args", [("clamp_", (0.2, 0.6)), ("clip_", (None, 0.4)), ("clamp_min_", (0.5,)),
                                       ("clamp_max_", (0.5,)), ("xlogy_", (3.0,)), ("fill_", (7.0,)),
                                       ("logit_", (0.2,))])
def test_inplace_with_arguments(name, args):
    t = torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64)
    lt = to_lucid(t)
    assert getattr(lucid, name)(lt, *args) is lt
    assert_close(lt, getattr(torch, name)(t, *args))


def test_binary_integer_inplace():
    a, b = torch.tensor([12, 18, 7]), torch.tensor([8, 12, 5])
    for name in ("gcd_", "lcm_"):
        la = to_lucid(a)
        assert getattr(lucid, name)(la, to_lucid(b)) is la
        assert la.tolist() == getattr(torch, name)(a.clone(), b).tolist()
    lx = lucid.tensor([1.0, 2.0])
    lucid.ldexp_(lx, lucid.tensor([2, 3]))
    assert lx.tolist() == torch.ldexp_(torch.tensor([1.0, 2.0]), torch.tensor([2, 3])).tolist()


def test_other_inplace_top_level():
    x = lucid.randn(2, 3, requires_grad=True)
    y = x * 2
    assert lucid.detach_(y) is y and not y.requires_grad
    z = lucid.zeros(4)
    assert lucid.resize_as_(z, lucid.zeros(2, 2)) is z and tuple(z.shape) == (2, 2)
    v = lucid.arange(6.0)
    assert lucid.as_strided_(v, (2, 2), (1, 2)) is v and v.tolist() == [[0.0, 2.0], [1.0, 3.0]]
    acc = lucid.ones(2)
    lucid.addmv_(acc, lucid.eye(2), lucid.tensor([1.0, 2.0]), beta=2, alpha=3)
    assert acc.tolist() == [5.0, 8.0]


def test_inplace_needs_a_tensor():
    with pytest.raises(TypeError, match=r"sin_\(\): argument 'input' \(position 1\) must be Tensor, not float"):
        lucid.sin_(1.0)


def test_inplace_on_leaf_requiring_grad_is_refused():
    with pytest.raises(RuntimeError, match="leaf"):
        lucid.exp_(lucid.randn(3, requires_grad=True))


def test_fill(device):
    t = torch.tensor([1.5, -2.0, 3.0])
    lt = to_lucid(t, device)
    out = lucid.fill(lt, 4)
    assert out is not lt and lt.cpu().tolist() == t.tolist()
    assert_close(out.cpu(), torch.fill(t, 4))
    assert lucid.fill(lucid.arange(3), 2.7).tolist() == torch.fill(torch.arange(3), 2.7).tolist()
    v = lucid.tensor(2.0, requires_grad=True)
    r = lucid.fill(lucid.randn(3), v)
    (r * lucid.arange(3.0)).sum().backward()
    assert v.grad.item() == 3.0
    with pytest.raises(RuntimeError, match="0-dimension"):
        lucid.fill(lucid.randn(2), lucid.ones(2))
    assert to_torch(lucid.fill(lucid.randn(2), lucid.tensor(3))).dtype == torch.float32
