"""torch's functions and methods from python/lucid/_ops_more.py and nn.functional's in-place
activations, gumbel_softmax and triplet_margin_with_distance_loss: values and gradients
against torch (float64), the random fills' distributions, and torch's errors."""

import math
import warnings

import pytest
import torch

import lucid
from conftest import assert_close, assert_same, to_lucid, to_torch

F, TF = lucid.nn.functional, torch.nn.functional


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def grads_match(lfn, tfn, inputs, device, tol=1e-10):
    """lfn and tfn of the same float64 inputs: values, and gradients of their sum of squares."""
    ts = [t.clone().requires_grad_() for t in inputs]
    ls = [to_lucid(t, device).requires_grad_() for t in inputs]
    want, got = tfn(*ts), lfn(*ls)
    assert_close(got.detach(), want.detach(), rtol=tol, atol=tol)
    (want * want).sum().backward()
    (got * got).sum().backward()
    for lt, tt in zip(ls, ts):
        assert_close(lt.grad, tt.grad, rtol=tol, atol=tol)


def test_angle_conversions_and_fix(device):
    x = rand(3, 4) * 200
    for name in ("deg2rad", "rad2deg", "fix"):
        assert_close(getattr(lucid, name)(to_lucid(x, device)), getattr(torch, name)(x), rtol=1e-12, atol=1e-12)
        lx = to_lucid(x, device)
        assert getattr(lx, name + "_")() is lx
        assert_close(lx, getattr(torch, name)(x), rtol=1e-12, atol=1e-12)
    ints = torch.tensor([180, -90])
    assert_close(lucid.deg2rad(to_lucid(ints, device)), torch.deg2rad(ints))  # float32, as torch's
    with pytest.raises(RuntimeError, match="can't be cast"):
        to_lucid(ints, device).deg2rad_()
    grads_match(lucid.deg2rad, torch.deg2rad, [x], device)


def test_cross_dist_renorm_gradients(device):
    a, b = rand(4, 3, seed=1), rand(4, 3, seed=2)
    grads_match(lambda x, y: lucid.cross(x, y, dim=1), lambda x, y: torch.cross(x, y, dim=1), [a, b], device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(lucid.cross(to_lucid(a, device), to_lucid(b, device)), torch.cross(a, b), rtol=1e-12, atol=1e-12)
        with pytest.raises(RuntimeError, match="size 3"):
            lucid.cross(lucid.ones(2, 2, device=device), lucid.ones(2, 2, device=device))
    for p in (2, 1, 3.5, math.inf):
        grads_match(lambda x, y: lucid.dist(x, y, p), lambda x, y: torch.dist(x, y, p), [a, b[:1]], device)
    x = rand(3, 4, 2, seed=3)
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 1, 0.5), (3, -1, 100.0)):  # (the gradient through the norms too)
        grads_match(lambda t: lucid.renorm(t, p, dim, maxnorm), lambda t: torch.renorm(t, p, dim, maxnorm), [x],
                    device)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        lucid.renorm(lucid.ones(3, device=device), 2, 0, 1.0)
    with pytest.raises(RuntimeError, match="maxnorm"):
        lucid.renorm(lucid.ones(3, 3, device=device), 2, 0, -1.0)


def test_aminmax_diagflat_vander(device):
    x = torch.tensor([[1, 5, -2], [3, 2, 9]])
    lx = to_lucid(x, device)
    for kw in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"keepdim": True}):
        got, want = lucid.aminmax(lx, **kw), torch.aminmax(x, **kw)
        assert_same(got.min, want.min, strides=False)
        assert_same(got.max, want.max, strides=False)
    with pytest.raises(RuntimeError, match="empty"):
        lucid.aminmax(lucid.ones(0, device=device))
    for offset in (0, 1, -2):
        assert_same(lucid.diagflat(lx, offset), torch.diagflat(x, offset))
    v = torch.tensor([1, 2, 3])
    for kw in ({}, {"N": 4}, {"N": 2, "increasing": True}, {"N": 0}):
        assert_same(lucid.vander(to_lucid(v, device), **kw), torch.vander(v, **kw), strides=False)
    vf = rand(4, seed=4)
    assert_close(lucid.vander(to_lucid(vf, device), increasing=True), torch.vander(vf, increasing=True),
                 rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="one-dimensional"):
        lucid.vander(lx)


def test_unravel_index(device):
    idx = torch.tensor([[4, 7], [8, -1]])
    for shape in ((2, 4), (3, 1, 5), 6):
        got, want = lucid.unravel_index(to_lucid(idx, device), shape), torch.unravel_index(idx, shape)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, strides=False)
    with pytest.raises(TypeError, match="integer dtype"):
        lucid.unravel_index(lucid.ones(2, device=device), (2, 2))
    with pytest.raises(ValueError, match="negative"):
        lucid.unravel_index(lucid.tensor([1], device=device), (2, -1))
    with pytest.raises(ValueError, match="zero dimensions"):
        lucid.unravel_index(lucid.tensor([1], device=device), (2, 0))


def test_trapezoid_family(device):
    y, x = rand(3, 5, seed=5), rand(5, seed=6).cumsum(0)
    xs = rand(3, 5, seed=7).cumsum(1)
    cases = [((), {}), ((), {"dx": 0.5}), ((x,), {}), ((xs,), {}), ((), {"dim": 0})]
    for args, kw in cases:
        largs = [to_lucid(a, device) for a in args]
        for name in ("trapezoid", "cumulative_trapezoid"):
            assert_close(getattr(lucid, name)(to_lucid(y, device), *largs, **kw), getattr(torch, name)(y, *args, **kw),
                         rtol=1e-12, atol=1e-12)
    assert_close(lucid.trapz(to_lucid(y, device), dx=2.0), torch.trapz(y, dx=2.0), rtol=1e-12, atol=1e-12)
    ints = torch.tensor([1, 2, 4])
    assert_close(lucid.trapezoid(to_lucid(ints, device)), torch.trapezoid(ints))
    grads_match(lambda y, x: lucid.trapezoid(y, x), lambda y, x: torch.trapezoid(y, x), [y, x], device)
    with pytest.raises(RuntimeError, match="one `x` value"):
        lucid.trapezoid(to_lucid(y, device), lucid.ones(4, dtype=lucid.float64, device=device))


def test_scatters_into_views(device):
    base = rand(4, 5, seed=8)
    for lfn, tfn, src in (
            (lambda a, s: lucid.slice_scatter(a, s, 1, 1, 5, 2), lambda a, s: torch.slice_scatter(a, s, 1, 1, 5, 2),
             rand(4, 2, seed=9)),
            (lambda a, s: lucid.select_scatter(a, s, 0, -1), lambda a, s: torch.select_scatter(a, s, 0, -1),
             rand(5, seed=10)),
            (lambda a, s: a.diagonal_scatter(s, 1), lambda a, s: torch.diagonal_scatter(a, s, 1), rand(4, seed=11))):
        grads_match(lfn, tfn, [base, src], device)
    with pytest.raises(RuntimeError, match="src to have a size"):
        lucid.select_scatter(to_lucid(base, device), lucid.ones(4, dtype=lucid.float64, device=device), 0, 0)


def test_random_fills_have_their_distributions(device):
    n = 200_000
    lucid.manual_seed(0)
    e = lucid.empty(n, device=device).exponential_(2.0)
    assert float(e.min()) >= 0 and abs(float(e.mean()) - 0.5) < 0.01 and abs(float(e.std()) - 0.5) < 0.01
    g = lucid.empty(n, dtype=lucid.int64, device=device).geometric_(0.25)
    assert g.dtype == lucid.int64 and int(g.min()) >= 1 and abs(float(g.double().mean()) - 4.0) < 0.05
    c = lucid.empty(n, dtype=lucid.float64, device=device).cauchy_(1.0, 2.0)
    quartiles = torch.quantile(to_torch(c.cpu()), torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64))
    assert torch.allclose(quartiles, torch.tensor([-1.0, 1.0, 3.0], dtype=torch.float64), atol=0.05)
    ln = lucid.empty(n, device=device).log_normal_(0.5, 0.25).log()
    assert abs(float(ln.mean()) - 0.5) < 0.01 and abs(float(ln.std()) - 0.25) < 0.01
    gen = lucid.Generator(device=device).manual_seed(3)
    a = lucid.empty(5, device=device).exponential_(generator=gen)
    gen.manual_seed(3)
    assert a.tolist() == lucid.empty(5, device=device).exponential_(generator=gen).tolist()


def test_random_fills_refuse_bad_arguments(device):
    f, i = lucid.empty(3, device=device), lucid.empty(3, dtype=lucid.int64, device=device)
    for call, err, match in ((lambda: i.exponential_(), RuntimeError, "continuous"),
                             (lambda: f.exponential_(-1), RuntimeError, "lambda > 0"),
                             (lambda: f.geometric_(1.5), RuntimeError, r"\(0, 1\)"),
                             (lambda: f.geometric_(0), RuntimeError, r"\(0, 1\)"),
                             (lambda: i.cauchy_(), RuntimeError, "continuous"),
                             (lambda: f.cauchy_(0, -1), RuntimeError, "sigma > 0"),
                             (lambda: f.log_normal_(1, -2), RuntimeError, "std > 0"),
                             (lambda: i.log_normal_(), NotImplementedError, "Long")):
        with pytest.raises(err, match=match):
            call()


@pytest.mark.parametrize("name,args", [("relu_", ()), ("leaky_relu_", (0.2,)), ("elu_", (0.7,)), ("selu_", ()),
                                       ("celu_", (1.5,)), ("hardtanh_", (-0.5, 0.5)), ("threshold_", (0.1, -3.0)),
                                       ("rrelu_", ())])
def test_in_place_functional_activations(name, args, device):
    x = rand(3, 4, seed=12)
    want = getattr(TF, name)(x.clone(), *args)
    lx = to_lucid(x, device)
    got = getattr(F, name)(lx, *args)
    assert got is lx
    assert_close(lx, want, rtol=1e-12, atol=1e-12)
    if hasattr(torch, name):  # torch.relu_, torch.selu_, ...
        ly = to_lucid(x, device)
        assert getattr(lucid, name)(ly, *args) is ly
        assert_close(ly, want, rtol=1e-12, atol=1e-12)


def test_top_level_activation_names(device):
    x = rand(3, 4, seed=13)
    lx = to_lucid(x, device)
    for name, args in (("selu", ()), ("celu", (0.5,)), ("threshold", (0.2, 1.0)), ("hardshrink", (0.3,))):
        assert_close(getattr(lucid, name)(lx, *args), getattr(torch, name)(x, *args), rtol=1e-12, atol=1e-12)
    w = torch.tensor([0.25], dtype=torch.float64)
    assert_close(lucid.prelu(lx, to_lucid(w, device)), torch.prelu(x, w), rtol=1e-12, atol=1e-12)
    assert_close(lx.hardshrink(0.3), x.hardshrink(0.3), rtol=1e-12, atol=1e-12)
    assert_close(lx.prelu(to_lucid(w, device)), x.prelu(w), rtol=1e-12, atol=1e-12)


def test_gumbel_softmax(device):
    logits = to_lucid(rand(64, 6, seed=14), device).requires_grad_()
    soft = F.gumbel_softmax(logits, tau=0.5)
    assert torch.allclose(to_torch(soft.detach().sum(-1).cpu()), torch.ones(64, dtype=torch.float64))
    hard = F.gumbel_softmax(logits, hard=True, dim=-1)
    h = to_torch(hard.detach().cpu())
    assert ((h == 0) | (h == 1)).all() and (h.sum(-1) == 1).all()
    hard.backward(lucid.ones_like(hard))  # straight through: the soft sample's gradient, which sums to 0 a row
    assert torch.allclose(to_torch(logits.grad.sum(-1).cpu()), torch.zeros(64, dtype=torch.float64), atol=1e-12)
    # the samples follow softmax(logits): category frequencies over many draws
    base = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64)
    lucid.manual_seed(1)
    draws = F.gumbel_softmax(to_lucid(base, device).expand(20000, 3), hard=True)
    freq = to_torch(draws.cpu()).mean(0)
    assert torch.allclose(freq, base.softmax(0), atol=0.02)
    with pytest.warns(UserWarning, match="deprecated"):
        F.gumbel_softmax(logits.detach(), eps=1e-5)


def test_triplet_margin_with_distance_loss(device):
    a, p, n = rand(5, 4, seed=15), rand(5, 4, seed=16), rand(5, 4, seed=17)
    cos = (lambda x, y: 1.0 - TF.cosine_similarity(x, y), lambda x, y: 1.0 - F.cosine_similarity(x, y))
    for kw in ({}, {"margin": 0.5, "swap": True}, {"reduction": "sum"}, {"reduction": "none"}):
        grads_match(lambda *t: F.triplet_margin_with_distance_loss(*t, **kw),
                    lambda *t: TF.triplet_margin_with_distance_loss(*t, **kw), [a, p, n], device)
        grads_match(lambda *t: lucid.nn.TripletMarginWithDistanceLoss(distance_function=cos[1], **kw)(*t),
                    lambda *t: torch.nn.TripletMarginWithDistanceLoss(distance_function=cos[0], **kw)(*t),
                    [a, p, n], device)
    la = to_lucid(a, device)
    with pytest.raises(ValueError, match="greater than 0"):
        F.triplet_margin_with_distance_loss(la, la, la, margin=0.0)
    with pytest.raises(ValueError, match="greater than 0"):
        lucid.nn.TripletMarginWithDistanceLoss(margin=-1.0)
    with pytest.raises(ValueError, match="not a valid value"):
        F.triplet_margin_with_distance_loss(la, la, la, reduction="avg")
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_with_distance_loss(la, la, la[0])


def test_nll_loss_2d_is_nll_loss(device):
    x, t = rand(2, 3, 4, 4, seed=18).log_softmax(1), torch.randint(0, 3, (2, 4, 4))
    with pytest.warns(UserWarning, match="deprecated"):
        loss = lucid.nn.NLLLoss2d()
    assert_close(loss(to_lucid(x, device), to_lucid(t, device)), torch.nn.NLLLoss()(x, t), rtol=1e-12, atol=1e-12)


def test_fill_diagonal(device):
    for shape, kw in (((3, 4), {}), ((7, 3), {"wrap": True}), ((7, 3), {}), ((3, 3, 3), {}), ((4, 2), {"wrap": True})):
        want = torch.zeros(shape).fill_diagonal_(5.0, **kw)
        lx = lucid.zeros(*shape, device=device)
        assert lx.fill_diagonal_(5.0, **kw) is lx
        assert_same(lx, want)
    t = to_lucid(rand(4, 6, seed=19), device).t()  # strided
    want = rand(4, 6, seed=19).t().clone().fill_diagonal_(-1.0)
    assert_close(t.fill_diagonal_(-1.0), want, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="larger than 1"):
        lucid.zeros(3, device=device).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="equal length"):
        lucid.zeros(2, 3, 2, device=device).fill_diagonal_(1)


def test_sum_to_size_split_with_sizes_and_in_place_products(device):
    x = rand(2, 3, 4, seed=20)
    for size in ((3, 1), (1, 4), (2, 3, 4), (1, 1, 1), ()):
        grads_match(lambda t: t.sum_to_size(size), lambda t: t.sum_to_size(size), [x], device)
    with pytest.raises(RuntimeError, match="not expandable"):
        to_lucid(x, device).sum_to_size(3)
    a = torch.arange(10)
    for got, want in zip(lucid.split_with_sizes(to_lucid(a, device), [3, 7]), torch.split_with_sizes(a, [3, 7])):
        assert_same(got, want)
    with pytest.raises(RuntimeError, match="sum exactly to 10"):
        to_lucid(a, device).split_with_sizes([3, 3])
    m, v, b1, b2 = rand(3, 4, seed=21), rand(4, seed=22), rand(2, 3, 5, seed=23), rand(2, 5, 4, seed=24)
    for name, self_, args in (("addmm_", rand(3, 5, seed=25), (m, rand(4, 5, seed=26))),
                              ("addmv_", rand(3, seed=27), (m, v)), ("baddbmm_", rand(2, 3, 4, seed=28), (b1, b2))):
        ls = to_lucid(self_, device)
        want = getattr(self_.clone(), name)(*args, beta=0.5, alpha=2.0)
        assert getattr(ls, name)(*[to_lucid(t.contiguous(), device) for t in args], beta=0.5, alpha=2.0) is ls
        assert_close(ls, want, rtol=1e-12, atol=1e-12)
    c = to_lucid(rand(3, 4, seed=29), device)
    assert c.cumsum_(1) is c and c.cumprod_(0) is c
    assert_close(c, rand(3, 4, seed=29).cumsum(1).cumprod(0), rtol=1e-12, atol=1e-12)


def test_empty_strided_and_scalar_tensor(device):
    e = lucid.empty_strided((2, 3), (1, 2), device=device)
    assert tuple(e.shape) == (2, 3) and e.stride() == (1, 2) and e.device.type == device
    assert lucid.empty_strided((0, 3), (3, 1), device=device).numel() == 0
    n = to_lucid(rand(2), device).new_empty_strided((4, 2), (1, 4))
    assert n.dtype == lucid.float64 and n.stride() == (1, 4)
    with pytest.raises(RuntimeError, match="length of strides"):
        lucid.empty_strided((2, 3), (1,))
    assert_same(lucid.scalar_tensor(3, device=device), torch.scalar_tensor(3))
    assert_same(lucid.scalar_tensor(2.5, dtype=lucid.float64, device=device),
                torch.scalar_tensor(2.5, dtype=torch.float64))


def test_upstream_autograd_names_and_deprecated_inits():
    assert lucid.autograd.jacobian is lucid.autograd.functional.jacobian
    assert lucid.autograd.RemovableHandle is lucid.autograd.graph.RemovableHandle
    assert lucid.autograd.is_anomaly_enabled() is False
    w = lucid.empty(3, 4)
    with pytest.warns(FutureWarning, match="nn.init.constant_"):
        lucid.nn.init.constant(w, 0.5)
    assert w.tolist() == [[0.5] * 4] * 3
    for name in ("uniform", "normal", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
                 "orthogonal", "eye"):
        with pytest.warns(FutureWarning):
            getattr(lucid.nn.init, name)(w)


@pytest.mark.parametrize("name,args", [("unsqueeze_", (1,)), ("squeeze_", ()), ("squeeze_", (0,)), ("t_", ()),
                                       ("transpose_", (0, 2)), ("swapaxes_", (1, 2)), ("swapdims_", (0, 1)),
                                       ("as_strided_", ((2, 3), (1, 2), 0))])
def test_in_place_view_ops(name, args, device):
    shape = (2, 3) if name == "t_" else (1, 2, 3)
    x = rand(*shape, seed=30)
    lx = to_lucid(x, device)
    before = lx._version
    assert getattr(lx, name)(*args) is lx
    want = getattr(x.clone(), name)(*args)
    assert_same(lx, want)
    assert lx._version == before + 1
    # with history: the gradient reaches the tensor it came from through the new view
    t = x.clone().requires_grad_()
    lt = to_lucid(x, device).requires_grad_()
    ty, ly = t * 2, lt * 2
    getattr(ty, name)(*args)
    getattr(ly, name)(*args)
    g = rand(*ty.shape, seed=31)
    (ty * g).sum().backward()
    (ly * to_lucid(g, device)).sum().backward()
    assert_close(lt.grad, t.grad, rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(to_lucid(x, device).requires_grad_(), name)(*args)


def test_in_place_view_then_write_through_it(device):
    t = rand(3, 4, seed=32).requires_grad_()
    lt = to_lucid(t.detach(), device).requires_grad_()
    for a, m in ((t, torch), (lt, lucid)):
        base = a * 1.0
        v = base[1]
        v.unsqueeze_(0)
        v.mul_(3.0)
        (base * base).sum().backward()
    assert_close(lt.grad, t.grad, rtol=1e-12, atol=1e-12)
    with lucid.no_grad():
        e = lucid.ones(3, device=device).expand(2, 3)
        e.unsqueeze_(0)  # an expanded tensor may change its view
        assert tuple(e.shape) == (1, 2, 3) and e.stride() == (0, 0, 1)  # (torch's)


def test_resize(device):
    x = lucid.arange(12.0, device=device)
    assert x.resize_(2, 3) is x and tuple(x.shape) == (2, 3) and x.tolist() == [[0, 1, 2], [3, 4, 5]]
    x.resize_((4, 5))  # grows: the old elements first
    assert tuple(x.shape) == (4, 5) and x.flatten()[:12].tolist() == [float(i) for i in range(12)]
    y = lucid.arange(24.0, device=device)[4:]
    y.resize_(2, 2)
    assert y.storage_offset() == 4 and y.tolist() == [[4, 5], [6, 7]]
    cl = lucid.empty(1, device=device).resize_(2, 3, 4, 5, memory_format=lucid.channels_last)
    assert cl.stride() == torch.empty(1).resize_(2, 3, 4, 5, memory_format=torch.channels_last).stride()
    z = lucid.zeros(2, 3, device=device)
    assert z.resize_as_(lucid.ones(3, 2)).shape == (3, 2)
    with pytest.raises(RuntimeError, match="require grad"):
        lucid.ones(2, device=device, requires_grad=True).resize_(3)
    with pytest.raises(RuntimeError, match="negative dimension"):
        lucid.ones(2, device=device).resize_(-1)
