"""Complex numbers against torch (complex64): view_as_real / view_as_complex and the
real and imag views (shared storage, writes through them, errors), complex, polar,
angle, the conjugates, and their gradients (torch's conjugate Wirtinger convention)."""

import math

import pytest
import torch

import lucid
from conftest import to_torch


def _z(device, requires_grad=False):
    t = torch.tensor([1 + 2j, 3 - 1j, -2 + 0.5j, -0.0 - 4j], dtype=torch.complex64)
    return t, lucid.tensor(t.tolist(), dtype=lucid.complex64, device=device).requires_grad_(requires_grad)


def _same(l, t, tol=1e-6):
    torch.testing.assert_close(torch.tensor(l.detach().cpu().tolist(), dtype=t.dtype).reshape(t.shape), t.detach(),
                               rtol=tol, atol=tol)


def test_view_as_real_and_complex_share_storage(device):
    t, z = _z(device)
    r = lucid.view_as_real(z)
    assert r.dtype == lucid.float32 and tuple(r.shape) == (4, 2)
    _same(r, torch.view_as_real(t))
    back = lucid.view_as_complex(r)
    assert back.dtype == lucid.complex64
    _same(back, t)
    r[0, 1] = 7.0  # a write through the view reaches the complex tensor
    assert z.tolist()[0] == complex(1, 7)
    m = lucid.view_as_complex(lucid.arange(12, dtype=lucid.float32, device=device).reshape(2, 3, 2))
    _same(m, torch.view_as_complex(torch.arange(12, dtype=torch.float32).reshape(2, 3, 2)))


def test_view_errors(device):
    x = lucid.zeros(3, 4, device=device)
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        lucid.view_as_complex(x)
    with pytest.raises(RuntimeError, match="last dimension with stride 1"):
        lucid.view_as_complex(lucid.zeros(2, 4, device=device)[:, ::2].t().contiguous().t())
    with pytest.raises(RuntimeError, match="storage_offset divisible by 2"):
        lucid.view_as_complex(lucid.zeros(5, device=device)[1:].reshape(2, 2))
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        lucid.view_as_real(x)
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        lucid.imag(x)
    assert lucid.real(x) is x


def test_real_imag_views_and_writes(device):
    t, z = _z(device)
    _same(z.real, t.real)
    _same(lucid.imag(z), t.imag)
    _same(lucid.real(z), t.real)
    z.imag.mul_(2.0)
    t.imag.mul_(2.0)
    _same(z, t)
    z.real.fill_(1.0)
    t.real.fill_(1.0)
    _same(z, t)
    z.real = lucid.tensor([4.0, 3.0, 2.0, 1.0], device=device)  # assignment copies into the view, as torch's
    t.real = torch.tensor([4.0, 3.0, 2.0, 1.0])
    z.imag = 0.5
    t.imag = 0.5
    _same(z, t)
    x = lucid.zeros(2, device=device)
    x.real = lucid.ones(2, device=device)
    assert x.tolist() == [1.0, 1.0]


def test_complex_polar_angle_conj_match_torch(device):
    re, im = torch.tensor([1.0, -2.0, 0.0, 3.5]), torch.tensor([0.5, 1.0, -1.0, 0.0])
    lre, lim = (lucid.tensor(x.tolist(), device=device) for x in (re, im))
    _same(lucid.complex(lre, lim), torch.complex(re, im))
    _same(lucid.complex(lre, lucid.tensor(0.25, device=device)), torch.complex(re, torch.tensor(0.25).expand(4)))
    _same(lucid.polar(lre.abs(), lim), torch.polar(re.abs(), im))
    t, z = _z(device)
    _same(lucid.angle(z), torch.angle(t))
    _same(z.angle(), t.angle())
    _same(lucid.angle(lre), torch.angle(re))
    _same(lucid.angle(lucid.tensor([-1, 0, 2], device=device)), torch.angle(torch.tensor([-1, 0, 2])))
    _same(lucid.conj(z), torch.conj(t).resolve_conj())
    zero = torch.tensor([0j, 3 - 4j], dtype=torch.complex64)
    _same(lucid.sgn(lucid.tensor(zero.tolist(), dtype=lucid.complex64, device=device)), torch.sgn(zero))
    _same(z.sgn(), t.sgn())
    _same(lucid.sgn(lre), torch.sgn(re))
    _same(lucid.conj_physical(z), torch.conj_physical(t))
    _same(z.conj(), t.conj().resolve_conj())
    assert lucid.conj(lre) is lre
    assert not lucid.is_conj(lucid.conj(z)) and not z.is_conj() and lucid.resolve_conj(z) is z
    assert not lucid.is_neg(z) and lucid.resolve_neg(z) is z and z.conj_physical().dtype == lucid.complex64
    assert z.resolve_conj() is z and z.resolve_neg() is z and not z.is_neg()
    z128 = lucid.complex(lre.double(), lim.double())
    assert z128.dtype == lucid.complex128
    _same(z128, torch.complex(re.double(), im.double()), tol=1e-12)
    with pytest.raises(RuntimeError, match="Expected object of scalar type"):
        lucid.complex(lre, lim.double())


def test_gradients_match_torch(device):
    """Conjugate Wirtinger gradients as torch's through the views, abs, angle, conj and
    complex/polar."""
    t, z = _z(device, True)
    t.requires_grad_()
    w = torch.tensor([1.0, -2.0, 0.5, 3.0])
    lw = lucid.tensor(w.tolist(), device=device)

    def loss(m, x, wt):
        return ((m.real(x) * wt).sum() + (m.imag(x) * wt * 2).sum() + (x.abs() * wt).sum()
                + (m.view_as_real(m.sgn(x))[:, 0] * wt).sum()
                + (m.angle(x) * wt).sum() + (m.view_as_real(m.conj(x).resolve_conj())[:, 1] * wt).sum())

    loss(torch, t, w).backward()
    loss(lucid, z, lw).backward()
    _same(z.grad, t.grad, 1e-5)
    re, im = (torch.tensor([1.0, -2.0, 0.5]).requires_grad_(), torch.tensor([0.5, 1.0, -1.5]).requires_grad_())
    lre, lim = (lucid.tensor(x.tolist(), device=device).requires_grad_() for x in (re, im))
    g = torch.tensor([1 + 1j, 2 - 1j, -0.5 + 3j], dtype=torch.complex64)
    lg = lucid.tensor(g.tolist(), dtype=lucid.complex64, device=device)
    # (polar's abs is non-negative by definition; torch's gradient assumes it)
    (torch.view_as_real(torch.polar(re.abs(), im) * g).sum() + torch.complex(re, im).abs().sum()).backward()
    (lucid.view_as_real(lucid.polar(lre.abs(), lim) * lg).sum() + lucid.complex(lre, lim).abs().sum()).backward()
    _same(lre.grad, re.grad, 1e-5)
    _same(lim.grad, im.grad, 1e-5)


@pytest.mark.parametrize("to", ["int32", "float16", "float64", "complex64", "uint8", "bfloat16"])
def test_view_dtype_matches_torch(device, to):
    """Tensor.view(dtype): the same bytes (shared: writes go through), the last dim split
    or merged for another element size, torch's errors; not differentiable."""
    t = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) * 1.5
    x = lucid.tensor(t.tolist(), device=device).reshape(2, 3, 4)
    got, want = x.view(getattr(lucid, to)), t.view(getattr(torch, to))
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype).split(".")[-1] == to
    if want.dtype.is_complex:
        _same(got, want)
    else:
        assert got.cpu().tolist() == want.tolist()
    assert not x.requires_grad_().view(getattr(lucid, to)).requires_grad


def test_view_dtype_shares_storage_and_errors(device):
    x = lucid.zeros(2, 4, device=device)
    x.view(lucid.int32)[0, 0] = 1065353216  # the bits of 1.0f
    assert x.tolist()[0][0] == 1.0
    with pytest.raises(RuntimeError, match=r"self.size\(-1\) must be divisible by 2"):
        lucid.zeros(4, 3, device=device).view(lucid.float64)
    with pytest.raises(RuntimeError, match=r"self.stride\(-1\) must be 1"):
        lucid.zeros(4, 4, device=device)[:, ::2].view(lucid.float16)
    with pytest.raises(RuntimeError, match=r"self.dim\(\) cannot be 0"):
        lucid.tensor(1.0, device=device).view(lucid.float16)
    with pytest.raises(RuntimeError, match=r"self.storage_offset\(\) must be divisible by 2"):
        lucid.zeros(9, device=device)[1:].view(lucid.float64)


HOLOMORPHIC = ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "sigmoid", "reciprocal", "square",
               "log1p", "expm1", "rsqrt", "asin", "acos", "atan", "asinh", "acosh", "atanh", "log2", "log10", "exp2"]


@pytest.mark.parametrize("name", HOLOMORPHIC)
def test_holomorphic_gradients_match_torch(device, name):
    """g * conj(f'(z)), torch's convention, for the holomorphic unary ops of complex input."""
    z = torch.tensor([0.3 + 0.4j, -0.5 + 0.2j, 0.7 - 0.6j, 1.5 + 0.1j], dtype=torch.complex64)
    w = torch.tensor([1 + 0.5j, -2 + 1j, 0.3 - 0.7j, 0.2 + 0.2j], dtype=torch.complex64)
    t = z.clone().requires_grad_()
    lz = lucid.tensor(z.tolist(), dtype=lucid.complex64, device=device).requires_grad_()
    lw = lucid.tensor(w.tolist(), dtype=lucid.complex64, device=device)
    torch.view_as_real(getattr(torch, name)(t) * w).sum().backward()
    lucid.view_as_real(getattr(lucid, name)(lz) * lw).sum().backward()
    _same(lz.grad, t.grad, 2e-5)


@pytest.mark.parametrize("case", ["square", "tensor", "number_base", "real_exponent"])
def test_pow_gradients_match_torch(device, case):
    """pow's gradients in base and exponent for complex operands (torch's conjugates; a
    real exponent's gradient is the real part)."""
    z = torch.tensor([0.3 + 0.4j, -0.5 + 0.2j, 0.7 - 0.6j], dtype=torch.complex64)
    e = torch.tensor([2.0 + 0.5j, 1.5 - 0.3j, -0.7 + 0.1j], dtype=torch.complex64)
    r = torch.tensor([2.0, 1.5, 3.0])
    w = torch.tensor([1 + 0.5j, -2 + 1j, 0.3 - 0.7j], dtype=torch.complex64)
    fn = {"square": lambda a, b: a ** 2, "tensor": lambda a, b: a ** b, "number_base": lambda a, b: 2 ** a,
          "real_exponent": lambda a, b: a ** b}[case]
    other = r if case == "real_exponent" else e
    t, to = z.clone().requires_grad_(), other.clone().requires_grad_()
    lz = lucid.tensor(z.tolist(), dtype=lucid.complex64, device=device).requires_grad_()
    lo = lucid.tensor(other.tolist(), dtype=getattr(lucid, str(other.dtype).split(".")[-1]),
                      device=device).requires_grad_()
    torch.view_as_real(fn(t, to) * w).sum().backward()
    lucid.view_as_real(fn(lz, lo) * lucid.tensor(w.tolist(), dtype=lucid.complex64, device=device)).sum().backward()
    _same(lz.grad, t.grad, 2e-5)
    if to.grad is not None:
        _same(lo.grad, to.grad, 2e-5)


@pytest.mark.parametrize("dim", [None, 1])
def test_prod_gradient_matches_torch(device, dim):
    """g * conj(product of the others), zeros included (one zero in a row, and two)."""
    zt = torch.tensor([[1 + 1j, 2 - 1j, 0.5 + 0.2j], [0j, -1 + 3j, 2 + 0j], [0j, 0j, 1 + 1j]], dtype=torch.complex64)
    t = zt.clone().requires_grad_()
    lz = lucid.tensor(zt.tolist(), dtype=lucid.complex64, device=device).requires_grad_()
    w = torch.tensor([1 + 0.5j, -2 + 1j, 0.3 - 0.2j], dtype=torch.complex64)
    lw = lucid.tensor(w.tolist(), dtype=lucid.complex64, device=device)
    tp, lp = (t.prod(), lz.prod()) if dim is None else (t.prod(dim), lz.prod(dim))
    torch.view_as_real((tp * w).reshape(-1)).sum().backward()
    lucid.view_as_real((lp * lw).reshape(-1)).sum().backward()
    _same(lz.grad, t.grad, 1e-5)


@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_gradient_matches_torch(device, dim):
    zt = torch.tensor([[1 + 1j, 2 - 1j, 0.5 + 0.2j, 1 - 1j], [0.3j, -1 + 3j, 0j, 2 + 0j], [0j, 0j, 1 + 1j, 2j]],
                      dtype=torch.complex64)
    w = torch.tensor([[1 + 0.5j, -2 + 1j, 0.3 - 0.2j, 1j]] * 3, dtype=torch.complex64)
    t = zt.clone().requires_grad_()
    lz = lucid.tensor(zt.tolist(), dtype=lucid.complex64, device=device).requires_grad_()
    torch.view_as_real(t.cumprod(dim) * w).sum().backward()
    lucid.view_as_real(lz.cumprod(dim) * lucid.tensor(w.tolist(), dtype=lucid.complex64, device=device)).sum().backward()
    _same(lz.grad, t.grad, 1e-5)


@pytest.mark.parametrize("case", ["var", "std_dim", "var_biased", "std"])
def test_var_std_of_complex_match_torch(device, case):
    """Real results |z - mean|^2 (float32) and torch's gradients 2 (z - mean) / dof and
    (z - mean) / (dof std)."""
    fn = {"var": lambda x: x.var(), "std_dim": lambda x: x.std(1), "var_biased": lambda x: x.var(0, correction=0),
          "std": lambda x: x.std()}[case]
    zt = torch.tensor([[1 + 1j, 2 - 1j, 0.5 + 0.2j, 1 - 1j], [0.3j, -1 + 3j, 0j, 2 + 0j]], dtype=torch.complex64)
    t = zt.clone().requires_grad_()
    lz = lucid.tensor(zt.tolist(), dtype=lucid.complex64, device=device).requires_grad_()
    want, got = fn(t), fn(lz)
    assert got.dtype == lucid.float32
    _same(got, want, 1e-6)
    (want * torch.arange(1, want.numel() + 1).reshape(want.shape)).sum().backward()
    (got * lucid.arange(1, got.numel() + 1, device=device).reshape(tuple(got.shape))).sum().backward()
    _same(lz.grad, t.grad, 1e-5)


@pytest.mark.parametrize("p", [2, 1, 3, float("inf"), 0.5])
@pytest.mark.parametrize("dim", [None, 1])
def test_vector_norm_of_complex_matches_torch(device, p, dim):
    """The magnitudes' norm (float32) and torch's gradients sgn(z) |z|^(p-1) / norm^(p-1),
    0 at a zero element (p < 1 included)."""
    zt = torch.tensor([[1 + 1j, 2 - 1j, 0.5 + 0.2j, 0j], [0.3j, -1 + 3j, 0j, 2 + 0j]], dtype=torch.complex64)
    t = zt.clone().requires_grad_()
    lz = lucid.tensor(zt.tolist(), dtype=lucid.complex64, device=device).requires_grad_()
    want, got = torch.linalg.vector_norm(t, p, dim), lucid.linalg.vector_norm(lz, p, dim)
    _same(got, want, 1e-5)
    (want * 1.5).sum().backward()
    (got * 1.5).sum().backward()
    _same(lz.grad, t.grad, 1e-5)


def test_real_norm_gradient_is_zero_at_zero_for_p_below_one(device):
    x = lucid.tensor([1.0, 0.0, -2.0], device=device, requires_grad=True)
    t = torch.tensor([1.0, 0.0, -2.0], requires_grad=True)
    lucid.linalg.vector_norm(x, 0.5).backward()
    torch.linalg.vector_norm(t, 0.5).backward()
    _same(x.grad, t.grad, 1e-6)


def test_sinc_of_complex_matches_torch(device):
    zt = torch.tensor([0.3 + 0.4j, 0j, 2 - 1j], dtype=torch.complex64)
    t = zt.clone().requires_grad_()
    lz = lucid.tensor(zt.tolist(), dtype=lucid.complex64, device=device).requires_grad_()
    w = torch.tensor([1 + 1j, 2 - 1j, 0.5j], dtype=torch.complex64)
    _same(lucid.sinc(lz), torch.sinc(t))
    torch.view_as_real(torch.sinc(t) * w).sum().backward()
    lucid.view_as_real(lucid.sinc(lz) * lucid.tensor(w.tolist(), dtype=lucid.complex64, device=device)).sum().backward()
    _same(lz.grad, t.grad, 1e-5)


def test_logaddexp_of_complex_with_its_gradient(device):
    """torch's conjugate derivative (1 / conj(1 + exp(b - a)) for a); the real-only
    binary ops refuse complex operands, as torch's do."""
    a = torch.tensor([0.3 + 0.4j, -1 + 2j, 2 - 1j], dtype=torch.complex128)
    b = torch.tensor([1 - 1j, 0.5j, -2 + 0.1j], dtype=torch.complex128)
    ta, tb = a.clone().requires_grad_(), b.clone().requires_grad_()
    la, lb = (lucid.tensor(t.tolist(), dtype=lucid.complex128, device=device).requires_grad_() for t in (a, b))
    w = torch.tensor([1 + 1j, 2 - 1j, 0.5j], dtype=torch.complex128)
    _same(lucid.logaddexp(la, lb), torch.logaddexp(ta, tb), 1e-12)
    torch.view_as_real(torch.logaddexp(ta, tb) * w).sum().backward()
    lw = lucid.tensor(w.tolist(), dtype=lucid.complex128, device=device)
    lucid.view_as_real(lucid.logaddexp(la, lb) * lw).sum().backward()
    _same(la.grad, ta.grad, 1e-12)
    _same(lb.grad, tb.grad, 1e-12)
    for name in ("logaddexp2", "hypot", "atan2", "copysign"):
        with pytest.raises(NotImplementedError, match=f"{name} is not implemented for dtype complex"):
            getattr(lucid, name)(la, lb)


def test_out_arguments(device):
    re, im = lucid.tensor([1.0, 2.0], device=device), lucid.tensor([3.0, -1.0], device=device)
    out = lucid.empty(0, dtype=lucid.complex64, device=device)
    assert lucid.complex(re, im, out=out) is out and out.tolist() == [1 + 3j, 2 - 1j]
    a = lucid.empty(0, device=device)
    assert lucid.angle(out, out=a) is a and tuple(a.shape) == (2,)
    with pytest.raises(RuntimeError, match="dtype"):
        lucid.polar(re, im, out=lucid.empty(2, device=device))


def test_complex128_matches_torch(device):
    """complex128 as torch's: creation, promotion (complex64 with float64 gives
    complex128), arithmetic and the holomorphic functions, abs (float64), reductions,
    products, scans, views, casts both ways and gradients, to float64 rounding."""
    g = torch.Generator().manual_seed(0)
    t = torch.complex(torch.randn(3, 4, generator=g, dtype=torch.float64),
                      torch.randn(3, 4, generator=g, dtype=torch.float64))
    z = lucid.tensor(t.tolist(), dtype=lucid.complex128, device=device)
    assert z.dtype == lucid.complex128 and lucid.cdouble is lucid.complex128

    def same(l, r):
        assert str(l.dtype).split(".")[-1] == str(r.dtype).split(".")[-1], (l.dtype, r.dtype)
        torch.testing.assert_close(torch.tensor(l.detach().cpu().tolist(), dtype=r.dtype).reshape(r.shape),
                                   r.detach(), rtol=1e-12, atol=1e-12)

    same(z * (2 - 1j) + z.exp() / (z + 3), t * (2 - 1j) + t.exp() / (t + 3))
    same(z.abs(), t.abs())
    same(z.sqrt().log().sin(), t.sqrt().log().sin())
    same(z.sum(0), t.sum(0)), same(z.mean(), t.mean()), same(z.prod(1), t.prod(1))
    same(z.var(1), t.var(1)), same(z.cumsum(1), t.cumsum(1)), same(z.cumprod(0), t.cumprod(0))
    same(z @ z.mT, t @ t.mT)
    same(lucid.linalg.vector_norm(z, dim=1), torch.linalg.vector_norm(t, dim=1))
    same(lucid.view_as_real(z), torch.view_as_real(t))
    same(lucid.view_as_complex(lucid.view_as_real(z)), t)
    same(z.conj(), t.conj().resolve_conj())
    same(z.to(lucid.complex64), t.to(torch.complex64))
    same(z.to(lucid.complex64).to(lucid.complex128), t.to(torch.complex64).to(torch.complex128))
    same(lucid.ones(2, device=device, dtype=lucid.complex64) + lucid.ones(2, device=device, dtype=lucid.float64),
         torch.ones(2, dtype=torch.complex64) + torch.ones(2, dtype=torch.float64))
    same(lucid.where(z.real > 0, z, 1j), torch.where(t.real > 0, t, 1j))
    same(lucid.zeros(2, device=device, dtype=lucid.float64) + 1j, torch.zeros(2, dtype=torch.float64) + 1j)
    same(lucid.randn(3, device=device, dtype=lucid.complex128).abs() * 0, torch.zeros(3, dtype=torch.float64))
    zl = z.detach().requires_grad_()
    tl = t.clone().requires_grad_()
    (zl.exp() * zl.conj()).abs().sum().backward()
    (tl.exp() * tl.conj()).abs().sum().backward()
    same(zl.grad, tl.grad)
    with pytest.raises(TypeError, match="complex"):
        lucid.sort(z)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_nan_to_num_of_complex_with_its_gradient(device, dtype):
    """Each part replaced as a real tensor's; the gradient is torch's: zero for an
    element with a non-finite part, passed through elsewhere (non-contiguous input)."""
    inf, nan = float("inf"), float("nan")
    t = torch.tensor([[complex(inf, 1), complex(2, nan)], [complex(-1, -inf), 3 - 4j]], dtype=getattr(torch, dtype))
    a = lucid.tensor(t.tolist(), dtype=getattr(lucid, dtype), device=device).mT.requires_grad_()
    out_l, out_t = lucid.nan_to_num(a, nan=0.5, posinf=9.0), torch.nan_to_num(t.mT, nan=0.5, posinf=9.0)
    assert out_l.dtype == a.dtype and out_l.tolist() == out_t.tolist()
    g = torch.tensor([[1 + 1j, 2 - 1j], [0.5j, 3]], dtype=t.dtype)
    out_l.backward(lucid.tensor(g.tolist(), dtype=a.dtype, device=device))
    assert a.grad.tolist() == torch.where(t.mT.isfinite(), g, 0).tolist()
    b = t.mT.clone().requires_grad_()
    try:  # (torch before 2.12 has no complex gradient here)
        torch.nan_to_num(b, nan=0.5, posinf=9.0).backward(g)
    except RuntimeError:
        return
    assert a.grad.tolist() == b.grad.tolist()
