"""lucid.fft against torch.fft: every transform on odd, prime and power-of-two lengths,
padded and trimmed (n, s), over chosen and negative dims of non-contiguous input, in
the three norm modes; the gradients (the adjoint transforms) against torch's,
differentiable again; fftfreq, rfftfreq, fftshift, ifftshift; torch's errors; stft and
istft (lucid.stft, Tensor.stft) against torch's, round trips and their gradients."""

import os

import pytest
import torch

import lucid
from conftest import to_lucid, to_torch


@pytest.fixture(autouse=True)
def _cpu_legs_need_mkl(request):
    # The CPU's transforms are MKL's. The lent GPU machine has none and cannot install it,
    # so scripts/gpu_check.sh sets LUCID_TEST_NO_MKL there; everywhere else (CI included)
    # the CPU legs run, and fail without MKL.
    params = getattr(request.node, "callspec", None)
    if os.environ.get("LUCID_TEST_NO_MKL") and params is not None and params.params.get("device") == "cpu":
        pytest.skip("LUCID_TEST_NO_MKL: this machine has no MKL for the CPU's transforms")


def _close(l, t, tol=2e-5):
    """l matches t to tol relative to t's largest magnitude."""
    t = t.resolve_conj().detach()
    got = to_torch(l.detach().cpu())
    assert tuple(got.shape) == tuple(t.shape) and got.dtype == t.dtype, (got.shape, t.shape, got.dtype, t.dtype)
    scale = max(1.0, float(t.abs().max())) if t.numel() else 1.0
    torch.testing.assert_close(got, t, rtol=0, atol=tol * scale)


def _complex(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(*shape, generator=g), torch.randn(*shape, generator=g))


def _real(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


COMPLEX_CASES = [  # (function, shape, kwargs)
    ("fft", (7,), {}),
    ("fft", (3, 97), {"n": 64}),
    ("fft", (4, 10), {"n": 13, "dim": 0, "norm": "ortho"}),
    ("ifft", (2, 11), {"norm": "forward"}),
    ("ifft", (1,), {}),
    ("fft2", (3, 5, 6), {}),
    ("ifft2", (3, 5, 6), {"s": (4, 9), "dim": (0, 2)}),
    ("fftn", (2, 3, 4, 5), {}),  # four dims: more than one engine transform
    ("fftn", (6, 7), {"s": (3,)}),
    ("ifftn", (2, 3, 4, 5, 3), {"dim": (-1, 1, 0, 3), "norm": "ortho"}),
]

REAL_CASES = [
    ("rfft", (7,), {}),
    ("rfft", (3, 16), {"n": 11, "norm": "ortho"}),
    ("rfft", (5, 4), {"dim": 0}),
    ("rfft2", (3, 5, 7), {"norm": "forward"}),
    ("rfftn", (2, 3, 4, 5), {}),
    ("rfftn", (4, 6), {"s": (5, 9)}),
    ("ihfft", (13,), {}),
    ("ihfft2", (3, 5, 8), {"norm": "ortho"}),
    ("ihfftn", (2, 3, 5), {"s": (4, 6)}),
]

HALF_CASES = [  # complex input, real output
    ("irfft", (6,), {}),
    ("irfft", (3, 9), {"n": 17}),
    ("irfft", (9, 2), {"dim": 0, "n": 4, "norm": "ortho"}),
    ("irfft2", (3, 5, 4), {"s": (5, 7)}),
    ("irfftn", (2, 3, 4, 5), {}),
    ("hfft", (7,), {}),
    ("hfft", (3, 8), {"n": 9, "norm": "forward"}),
    ("hfft2", (2, 5, 6), {}),
    ("hfftn", (3, 4, 5), {"s": (2, 3, 8), "norm": "ortho"}),
]


@pytest.mark.parametrize("name,shape,kwargs", COMPLEX_CASES + HALF_CASES)
def test_complex_input_transforms_match_torch(device, name, shape, kwargs):
    t = _complex(*shape)
    _close(getattr(lucid.fft, name)(to_lucid(t, device), **kwargs), getattr(torch.fft, name)(t, **kwargs))


@pytest.mark.parametrize("name,shape,kwargs", REAL_CASES + [c for c in COMPLEX_CASES if not c[0].startswith("i")])
def test_real_input_transforms_match_torch(device, name, shape, kwargs):
    t = _real(*shape)
    _close(getattr(lucid.fft, name)(to_lucid(t, device), **kwargs), getattr(torch.fft, name)(t, **kwargs))


def test_non_contiguous_and_integer_input(device):
    t = _complex(6, 8)
    _close(lucid.fft.fft(to_lucid(t, device).mT, dim=0), torch.fft.fft(t.mT, dim=0))
    _close(lucid.fft.fft2(to_lucid(t, device)[::2, 1::3]), torch.fft.fft2(t[::2, 1::3]))
    i = torch.arange(10)
    _close(lucid.fft.rfft(to_lucid(i, device)), torch.fft.rfft(i))
    _close(lucid.fft.fft(to_lucid(torch.tensor([True, False, True]), device)),
           torch.fft.fft(torch.tensor([True, False, True])))


def test_round_trips(device):
    t = _real(4, 37)
    x = to_lucid(t, device)
    _close(lucid.fft.irfft(lucid.fft.rfft(x), n=37), t)
    _close(lucid.fft.ifftn(lucid.fft.fftn(x)).real, t)
    _close(lucid.fft.hfft(lucid.fft.ihfft(x), n=37), t)


def test_empty_batch(device):
    y = lucid.fft.fft(lucid.zeros(0, 8, dtype=lucid.complex64, device=device))
    assert tuple(y.shape) == (0, 8) and y.dtype == lucid.complex64
    assert tuple(lucid.fft.rfft(lucid.zeros(3, 0, 8, device=device)).shape) == (3, 0, 5)
    assert tuple(lucid.fft.irfft(lucid.zeros(0, 5, dtype=lucid.complex64, device=device)).shape) == (0, 8)


@pytest.mark.parametrize("name,shape,kwargs,real", [
    ("fft", (3, 10), {"n": 13}, False),
    ("fft", (3, 10), {"norm": "ortho"}, True),
    ("ifft", (9,), {"n": 5, "norm": "forward"}, False),
    ("fft2", (3, 4, 5), {}, True),
    ("fftn", (2, 3, 4, 5), {}, False),
    ("rfft", (3, 10), {}, True),
    ("rfft", (11,), {"n": 8, "norm": "ortho"}, True),
    ("rfftn", (2, 3, 4, 5), {}, True),
    ("irfft", (3, 6), {}, False),
    ("irfft", (7,), {"n": 9, "norm": "forward"}, False),
    ("irfftn", (3, 4, 5), {"s": (3, 4, 9)}, False),
    ("hfft", (6,), {}, False),
    ("ihfft", (2, 9), {}, True),
    ("hfft2", (3, 5), {"norm": "ortho"}, False),
    ("ihfftn", (3, 4, 6), {}, True),
])
def test_gradients_match_torch(device, name, shape, kwargs, real):
    t = _real(*shape) if real else _complex(*shape)
    a = to_lucid(t, device).requires_grad_()
    b = t.clone().requires_grad_()
    oa, ob = getattr(lucid.fft, name)(a, **kwargs), getattr(torch.fft, name)(b, **kwargs)
    w = _real(*ob.shape, seed=1)
    wa = to_lucid(w, device)
    (oa.abs() * wa if oa.dtype.is_complex else oa * wa).sum().backward()
    (ob.abs() * w if ob.is_complex() else ob * w).sum().backward()
    _close(a.grad, b.grad, tol=1e-4)


@pytest.mark.parametrize("name,real", [("fft", False), ("rfft", True), ("irfft", False)])
def test_double_backward_matches_torch(device, name, real):
    t = _real(2, 8) if real else _complex(2, 8)
    a = to_lucid(t, device).requires_grad_()
    b = t.clone().requires_grad_()
    outs = []
    for m, x, dev in ((lucid, a, device), (torch, b, "cpu")):
        y = getattr(m.fft, name)(x)
        loss = (y.abs() ** 2).sum() if y.dtype.is_complex else (y ** 3).sum()
        (g,) = m.autograd.grad(loss, x, create_graph=True)
        ((g.abs() if g.dtype.is_complex else g) ** 2).sum().backward()
        outs.append(x.grad)
    _close(outs[0], outs[1], tol=1e-4)


def test_frequencies_and_shifts(device):
    for n, d in ((1, 1.0), (5, 1.0), (8, 0.25)):
        _close(lucid.fft.fftfreq(n, d, device=device), torch.fft.fftfreq(n, d))
        _close(lucid.fft.rfftfreq(n, d, device=device), torch.fft.rfftfreq(n, d))
    f = lucid.fft.fftfreq(4, dtype=lucid.float64, device=device, requires_grad=True)
    assert f.dtype == lucid.float64 and f.requires_grad and f.device.type == device
    t = torch.arange(30).reshape(5, 6)
    x = to_lucid(t, device)
    for dim in (None, 0, (1,), (-1, 0)):
        _close(lucid.fft.fftshift(x, dim), torch.fft.fftshift(t, dim))
        _close(lucid.fft.ifftshift(x, dim), torch.fft.ifftshift(t, dim))
    _close(lucid.fft.ifftshift(lucid.fft.fftshift(x)), t)


def test_out_argument(device):
    t = _complex(3, 8)
    out = lucid.empty(0, dtype=lucid.complex64, device=device)
    r = lucid.fft.fft(to_lucid(t, device), out=out)
    assert r is out
    _close(out, torch.fft.fft(t))
    with pytest.raises(RuntimeError, match="dtype"):
        lucid.fft.rfft(to_lucid(_real(8), device), out=lucid.empty(5, device=device))
    freq = lucid.empty(4, device=device)
    lucid.fft.fftfreq(4, out=freq)
    _close(freq, torch.fft.fftfreq(4))


def test_errors(device):
    x = to_lucid(_complex(4, 8), device)
    r = to_lucid(_real(4, 8), device)
    with pytest.raises(RuntimeError, match='Invalid normalization mode: "sideways"'):
        lucid.fft.fft(x, norm="sideways")
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        lucid.fft.fft(x, n=0)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        lucid.fft.fft(lucid.zeros(3, 0, dtype=lucid.complex64, device=device))
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        lucid.fft.fftn(x, dim=(0, -2))
    with pytest.raises(RuntimeError, match="same length"):
        lucid.fft.fftn(x, s=(4,), dim=(0, 1))
    with pytest.raises(RuntimeError, match="only has 2 dimensions"):
        lucid.fft.fftn(x, s=(1, 2, 3))
    with pytest.raises(IndexError, match="Dimension out of range"):
        lucid.fft.fft(x, dim=2)
    with pytest.raises(TypeError, match="rfft expects a real input tensor, but got ComplexFloat"):
        lucid.fft.rfft(x)
    with pytest.raises(TypeError, match="ihfft expects a real input tensor"):
        lucid.fft.ihfft(x)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        lucid.fft.irfft(to_lucid(_complex(1), device))
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        lucid.fft.fft(r.half())


def test_engine_op_checks():
    x = lucid.zeros(4, 8, dtype=lucid.complex64)
    with pytest.raises(RuntimeError, match="1 to 3 dims"):
        lucid._C._fft(x, "c2c", False, 4)
    with pytest.raises(NotImplementedError, match="takes float32 or float64 input"):
        lucid._C._fft(x, "r2c", False, 1)
    with pytest.raises(RuntimeError, match="needs 6 entries"):
        lucid._C._fft(x, "c2r", True, 1, 10)
    with pytest.raises(ValueError, match="kind must be"):
        lucid._C._fft(x, "r2r", False, 1)


# ---- stft / istft ----------------------------------------------------------------------

STFT_CASES = [
    {"n_fft": 512, "hop_length": 128, "win_length": 400},
    {"n_fft": 256},
    {"n_fft": 256, "center": False, "normalized": True},
    {"n_fft": 64, "hop_length": 16, "onesided": False},
    {"n_fft": 100, "hop_length": 25, "pad_mode": "constant"},
]


@pytest.mark.parametrize("kwargs", STFT_CASES)
def test_stft_and_istft_match_torch(device, kwargs):
    t = _real(2, 1000)
    # (without centring, a Hann window's zero at the edge leaves the first sample unrecoverable)
    make = torch.hann_window if kwargs.get("center", True) else torch.hamming_window
    window = make(kwargs.get("win_length", kwargs["n_fft"]))
    lw = to_lucid(window, device)
    spec_l = lucid.stft(to_lucid(t, device), window=lw, return_complex=True, **kwargs)
    spec_t = torch.stft(t, window=window, return_complex=True, **kwargs)
    _close(spec_l, spec_t, tol=5e-5)
    inverse = {k: v for k, v in kwargs.items() if k != "pad_mode"}
    length = 1000 if kwargs.get("center", True) else None
    back_l = lucid.istft(spec_l, window=lw, length=length, **inverse)
    back_t = torch.istft(spec_t, window=window, length=length, **inverse)
    _close(back_l, back_t, tol=5e-5)
    if length:
        _close(back_l, t, tol=5e-5)  # a Hann window at these hops overlaps to a lossless inverse


def test_stft_forms_and_method(device):
    t = _real(300)
    x = to_lucid(t, device)
    _close(x.stft(64, return_complex=False), torch.stft(t, 64, window=torch.ones(64), return_complex=False))
    spec = lucid.stft(x, 64, return_complex=True)
    _close(spec.istft(64), torch.istft(torch.stft(t, 64, window=torch.ones(64), return_complex=True), 64,
                                       window=torch.ones(64)))
    z = _complex(200)
    _close(lucid.stft(to_lucid(z, device), 32, return_complex=True),
           torch.stft(z, 32, window=torch.ones(32), return_complex=True))


def test_stft_gradient_matches_torch(device):
    t = _real(2, 500)
    a = to_lucid(t, device).requires_grad_()
    b = t.clone().requires_grad_()
    lucid.stft(a, 128, window=lucid.hann_window(128, device=device), return_complex=True).abs().sum().backward()
    torch.stft(b, 128, window=torch.hann_window(128), return_complex=True).abs().sum().backward()
    _close(a.grad, b.grad, tol=1e-4)


def test_stft_errors(device):
    x = lucid.zeros(100, device=device)
    with pytest.raises(RuntimeError, match="return_complex parameter be given"):
        lucid.stft(x, 16)
    with pytest.raises(RuntimeError, match="1D or 2D"):
        lucid.stft(lucid.zeros(2, 2, 100, device=device), 16, return_complex=True)
    with pytest.raises(RuntimeError, match="win_length"):
        lucid.stft(x, 16, win_length=32, return_complex=True)
    with pytest.raises(RuntimeError, match="n_fft"):
        lucid.stft(x, 400, center=False, return_complex=True)
    with pytest.raises(RuntimeError, match="window overlap add min"):
        spec = lucid.stft(x, 16, hop_length=16, window=lucid.hann_window(16, device=device), return_complex=True)
        lucid.istft(spec, 16, hop_length=16, window=lucid.hann_window(16, device=device), center=False)
    with pytest.raises(TypeError, match="complex-valued input"):
        lucid.istft(lucid.zeros(9, 4, device=device), 16)


@pytest.mark.parametrize("name,shape,kwargs", [
    ("fft", (3, 97), {}), ("ifft2", (4, 6, 5), {"norm": "ortho"}), ("fftn", (2, 3, 4, 5), {}),
])
def test_double_precision_complex_transforms(device, name, shape, kwargs):
    """complex128 in, complex128 out, to float64 rounding."""
    t = _complex(*shape).to(torch.complex128)
    got = getattr(lucid.fft, name)(to_lucid(t, device), **kwargs)
    assert got.dtype == lucid.complex128
    _close(got, getattr(torch.fft, name)(t, **kwargs), tol=1e-12)


@pytest.mark.parametrize("name,kwargs", [("rfft", {}), ("rfftn", {}), ("ihfft", {"n": 12}), ("fft", {})])
def test_double_precision_real_transforms(device, name, kwargs):
    t = _real(4, 11).double()
    got = getattr(lucid.fft, name)(to_lucid(t, device), **kwargs)
    assert got.dtype == lucid.complex128
    _close(got, getattr(torch.fft, name)(t, **kwargs), tol=1e-12)
    spec = torch.fft.rfft(t)
    _close(lucid.fft.irfft(to_lucid(spec, device), n=11), torch.fft.irfft(spec, n=11), tol=1e-12)


def test_double_precision_gradients(device):
    t = _real(3, 10).double()
    a = to_lucid(t, device).requires_grad_()
    b = t.clone().requires_grad_()
    lucid.fft.irfft(lucid.fft.rfft(a) * 1j, n=10).pow(2).sum().backward()
    torch.fft.irfft(torch.fft.rfft(b) * 1j, n=10).pow(2).sum().backward()
    _close(a.grad, b.grad, tol=1e-12)
