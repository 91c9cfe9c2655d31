"""lucid.distributions.transforms, TransformedDistribution and LogNormal against torch's:
each transform's value, inverse and log-det-Jacobian (and their gradients), compositions
and inverses, the cache, and transformed densities, cdfs and samples (float64); and
biject_to / transform_to."""

import pytest
import torch
import torch.distributions as TD
import torch.distributions.transforms as TT

import lucid
import lucid.distributions as LD
import lucid.distributions.transforms as LT
from conftest import assert_close, to_lucid, to_torch


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


SCALE = rand(3, seed=1).exp()
TRANSFORMS = [
    ("exp", lambda m, t: m.ExpTransform()),
    ("sigmoid", lambda m, t: m.SigmoidTransform()),
    ("tanh", lambda m, t: m.TanhTransform()),
    ("affine", lambda m, t: m.AffineTransform(t(rand(3, seed=2)), t(-SCALE))),
    ("affine-number", lambda m, t: m.AffineTransform(1.5, -2.0)),
    ("affine-event", lambda m, t: m.AffineTransform(0.0, t(SCALE), event_dim=1)),
    ("inverse-exp", lambda m, t: m.ExpTransform().inv),
    ("compose", lambda m, t: m.ComposeTransform([m.AffineTransform(0.5, 2.0), m.TanhTransform()])),
    ("softplus", lambda m, t: m.SoftplusTransform()),
    ("reshape", lambda m, t: m.ReshapeTransform((3,), (3, 1))),
    ("independent", lambda m, t: m.IndependentTransform(m.SoftplusTransform(), 1)),
    ("stick-breaking", lambda m, t: m.StickBreakingTransform()),
    ("normal-cdf", lambda m, t: m.CumulativeDistributionTransform(
        (TD if m is TT else LD).Normal(t(rand(3, seed=4)), t(SCALE)))),
]


@pytest.mark.parametrize("name,make", TRANSFORMS, ids=[n for n, _ in TRANSFORMS])
def test_transforms_match_torch(name, make, device):
    tt, lt = make(TT, lambda x: x), make(LT, lambda x: to_lucid(x, device))
    x = rand(4, 3, seed=3) * 0.8
    if name == "inverse-exp":
        x = x.exp()
    tx, lx = x.clone().requires_grad_(), to_lucid(x, device).requires_grad_()
    ty, ly = tt(tx), lt(lx)
    assert_close(ly.detach(), ty.detach(), rtol=1e-12, atol=1e-12)
    assert_close(lt.inv(ly).detach(), tt.inv(ty).detach(), rtol=1e-9, atol=1e-9)
    tj, lj = tt.log_abs_det_jacobian(tx, ty), lt.log_abs_det_jacobian(lx, ly)
    assert_close(lj.detach(), tj.detach(), rtol=1e-10, atol=1e-10)
    (ty.sum() + tj.sum()).backward()
    (ly.sum() + lj.sum()).backward()
    assert_close(lx.grad, tx.grad, rtol=1e-9, atol=1e-9)
    assert lt.inv.inv is lt
    assert lt.bijective == tt.bijective and repr(lt.domain) == repr(tt.domain)
    assert lt.domain.event_dim == tt.domain.event_dim and lt.codomain.event_dim == tt.codomain.event_dim
    assert tuple(lt.forward_shape((4, 3))) == tuple(tt.forward_shape((4, 3)))


def test_cache_inverts_a_sample_without_computing():
    t = LT.TanhTransform(cache_size=1)
    x = lucid.tensor([30.0, -0.5], dtype=lucid.float64)  # tanh(30) rounds to 1: atanh could not get 30 back
    y = t(x)
    assert t.inv(y) is x
    assert LT.TanhTransform().inv(y).tolist()[0] == float("inf")
    with pytest.raises(ValueError, match="cache_size"):
        LT.ExpTransform(cache_size=2)
    assert LT.ExpTransform() == LT.ExpTransform() and LT.ExpTransform() != LT.TanhTransform()
    assert LT.AffineTransform(1.0, 2.0) == LT.AffineTransform(1.0, 2.0)


def test_squashed_gaussian_policy_as_in_sac(device):
    """Normal then tanh (then an affine rescale): log_prob of its own rsample, gradients to loc and scale."""
    loc, log_scale = rand(5, 2, seed=4), rand(5, 2, seed=5) * 0.3
    values = {}
    for name, m, tr, conv in (("torch", TD, TT, lambda t: t.clone().requires_grad_()),
                              ("lucid", LD, LT, lambda t: to_lucid(t, device).requires_grad_())):
        lo, ls = conv(loc), conv(log_scale)
        d = m.TransformedDistribution(m.Normal(lo, ls.exp()), [tr.TanhTransform(), tr.AffineTransform(0.5, 2.0)])
        y = (torch if name == "torch" else lucid).tensor([[0.3, -0.9]], dtype=lo.dtype)
        if name == "lucid":
            y = y.to(device)
        lp = d.log_prob(y)
        lp.sum().backward()
        values[name] = (lp, lo.grad, ls.grad, d)
    for a, b in zip(values["lucid"][:3], values["torch"][:3]):
        assert_close(a.detach(), b.detach(), rtol=1e-10, atol=1e-10)
    d = values["lucid"][3]
    assert tuple(d.batch_shape) == (5, 2) and tuple(d.rsample((3,)).shape) == (3, 5, 2)
    s = d.sample((1000,))
    assert float(s.min()) >= -1.5 and float(s.max()) <= 2.5 and not s.requires_grad


def test_log_normal_and_transformed_shapes(device):
    loc, scale = rand(2, 3, seed=6), rand(2, 3, seed=7).exp()
    tl, ll = TD.LogNormal(loc, scale), LD.LogNormal(to_lucid(loc, device), to_lucid(scale, device))
    v = rand(2, 3, seed=8).exp()
    for t, lo in ((tl.log_prob(v), ll.log_prob(to_lucid(v, device))), (tl.cdf(v), ll.cdf(to_lucid(v, device))),
                  (tl.mean, ll.mean), (tl.variance, ll.variance), (tl.mode, ll.mode), (tl.entropy(), ll.entropy())):
        assert_close(lo, t, rtol=1e-10, atol=1e-10)
    q = torch.full((2, 3), 0.3, dtype=torch.float64)
    assert_close(ll.icdf(to_lucid(q, device)), tl.icdf(q), rtol=1e-8, atol=1e-8)
    assert repr(ll) == repr(tl) and tuple(ll.expand((4, 2, 3)).batch_shape) == (4, 2, 3)
    assert isinstance(ll.expand((4, 2, 3)), LD.LogNormal)
    # an affine map over the event dim makes the base's batch dim an event dim, as torch's
    base_t, base_l = TD.Normal(loc, scale), LD.Normal(to_lucid(loc, device), to_lucid(scale, device))
    at = TD.TransformedDistribution(base_t, TT.AffineTransform(0.0, SCALE, event_dim=1))
    al = LD.TransformedDistribution(base_l, LT.AffineTransform(0.0, to_lucid(SCALE, device), event_dim=1))
    assert tuple(al.batch_shape) == tuple(at.batch_shape) == (2,) and tuple(al.event_shape) == (3,)
    assert_close(al.log_prob(to_lucid(v, device)), at.log_prob(v), rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="Expected value argument"):
        ll.log_prob(lucid.tensor(-1.0, dtype=lucid.float64, device=device))
    with pytest.raises(ValueError, match="transforms must be"):
        LD.TransformedDistribution(base_l, "exp")
    lucid.manual_seed(0)
    s = to_torch(LD.LogNormal(0.5, 0.25).sample((100_000,)).log())
    assert abs(float(s.mean()) - 0.5) < 0.01 and abs(float(s.std()) - 0.25) < 0.01


def test_the_transforms_are_also_at_the_top_level_as_in_torch():
    for name in LT.__all__:
        if name[0].isupper():
            assert getattr(LD, name) is getattr(LT, name)
            assert hasattr(TD, name)  # (torch has each there too)


def test_the_non_bijective_matrix_and_simplex_transforms_match_torch(device):
    x = rand(2, 3, 3, seed=5)
    for name in ("LowerCholeskyTransform", "PositiveDefiniteTransform", "SoftmaxTransform"):
        tt, lt = getattr(TT, name)(), getattr(LT, name)()
        ty, ly = tt(x), lt(to_lucid(x, device))
        assert_close(ly, ty, rtol=1e-12, atol=1e-12)
        assert_close(lt.inv(ly), tt.inv(ty), rtol=1e-9, atol=1e-9)
        assert repr(lt.codomain) == repr(tt.codomain) and lt.bijective == tt.bijective
    with pytest.raises(ValueError, match="different numbers of elements"):
        LT.ReshapeTransform((3,), (2, 2))
    with pytest.raises(ValueError, match="Shape mismatch"):
        LT.ReshapeTransform((3,), (3, 1)).forward_shape((4, 2))


@pytest.mark.parametrize("make", [
    lambda c: c.real, lambda c: c.positive, lambda c: c.nonnegative, lambda c: c.greater_than(1.5),
    lambda c: c.less_than(-0.5), lambda c: c.unit_interval, lambda c: c.interval(-1.0, 3.0),
    lambda c: c.simplex, lambda c: c.real_vector, lambda c: c.independent(c.positive, 1),
    lambda c: c.lower_cholesky, lambda c: c.positive_definite])
def test_biject_to_and_transform_to_give_torchs_transforms(make):
    import torch.distributions.constraints as TC
    import lucid.distributions.constraints as LC
    x = rand(3, 3, seed=6)
    for t_registry, l_registry in ((TD.biject_to, LD.biject_to), (TD.transform_to, LD.transform_to)):
        try:
            tt = t_registry(make(TC))
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                l_registry(make(LC))
            continue
        lt = l_registry(make(LC))
        assert repr(lt).replace("lucid.", "torch.") == repr(tt)
        ty, ly = tt(x), lt(to_lucid(x))
        assert_close(ly, ty, rtol=1e-12, atol=1e-12)
        assert bool(make(LC).check(ly).all())


def test_a_registry_takes_new_constraints():
    import lucid.distributions.constraints as LC
    from lucid.distributions.constraint_registry import ConstraintRegistry
    registry = ConstraintRegistry()
    registry.register(LC.positive, lambda c: LT.ExpTransform())
    assert isinstance(registry(LC.greater_than(3.0)), LT.ExpTransform)  # (looked up by class)
    with pytest.raises(NotImplementedError, match="Cannot transform _Simplex constraints"):
        registry(LC.simplex)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        registry.register(3, lambda c: None)


@pytest.mark.parametrize("kind", ["cat", "cat-lengths", "stack"])
def test_slice_by_slice_transforms_match_torch(kind, device):
    def build(m):
        if kind == "stack":
            return m.StackTransform([m.ExpTransform(), m.SoftplusTransform(), m.AffineTransform(1.0, 2.0)], dim=1)
        lengths = [2, 1] if kind == "cat-lengths" else None
        parts = [m.ExpTransform(), m.SigmoidTransform()] if lengths else \
            [m.ExpTransform(), m.SigmoidTransform(), m.AffineTransform(0.5, -3.0)]
        return m.CatTransform(parts, dim=-1, lengths=lengths)

    tt, lt = build(TT), build(LT)
    x = rand(4, 3, seed=7)
    tx, lx = x.clone().requires_grad_(), to_lucid(x, device).requires_grad_()
    ty, ly = tt(tx), lt(lx)
    assert_close(ly.detach(), ty.detach(), rtol=1e-12, atol=1e-12)
    assert_close(lt.inv(ly).detach(), tt.inv(ty).detach(), rtol=1e-9, atol=1e-9)
    tj, lj = tt.log_abs_det_jacobian(tx, ty), lt.log_abs_det_jacobian(lx, ly)
    assert_close(lj.detach(), tj.detach(), rtol=1e-10, atol=1e-10)
    (ty.sum() + tj.sum()).backward()
    (ly.sum() + lj.sum()).backward()
    assert_close(lx.grad, tx.grad, rtol=1e-9, atol=1e-9)
    assert lt.bijective == tt.bijective
    assert bool(lt.codomain.check(ly).all()) and lt.codomain.event_dim == tt.codomain.event_dim
    with pytest.raises(ValueError, match="must equal"):
        lt(to_lucid(rand(4, 5, seed=8), device))
