"""lucid.fast (MLX's mx.fast names): rope against a float64 NumPy reference of MLX's
definition (both pairings, partial dims, offsets, scale), its gradient by float64
numerical differentiation and as the inverse rotation, the GPU against the CPU;
rms_norm, layer_norm and scaled_dot_product_attention against torch; the argument
errors."""

import numpy as np
import pytest
import torch

import lucid
from conftest import to_lucid


def rope_reference(x, dims, traditional, base, scale, offset):
    """MLX's rope in float64: features of row l (axis -2) turned in pairs by
    (offset + l) * scale * base^(-2i / dims)."""
    x = np.asarray(x, dtype=np.float64)
    out = x.copy()
    L = x.shape[-2]
    half = dims // 2
    theta = base ** (-2.0 * np.arange(half) / dims)
    angle = (offset + np.arange(L))[:, None] * scale * theta[None, :]  # [L, half]
    c, s = np.cos(angle), np.sin(angle)
    if traditional:
        x0, x1 = x[..., 0:dims:2], x[..., 1:dims:2]
        out[..., 0:dims:2] = x0 * c - x1 * s
        out[..., 1:dims:2] = x0 * s + x1 * c
    else:
        x0, x1 = x[..., :half], x[..., half:dims]
        out[..., :half] = x0 * c - x1 * s
        out[..., half:dims] = x0 * s + x1 * c
    return out


@pytest.mark.parametrize("traditional", [False, True])
@pytest.mark.parametrize("shape,dims,offset,scale,base", [
    ((2, 3, 5, 8), 8, 0, 1.0, 10000.0),
    ((4, 6, 16), 10, 7, 0.5, 500.0),
    ((1, 1, 3, 4), 2, 1023, 2.0, 10000.0),
])
def test_rope_matches_the_reference(device, traditional, shape, dims, offset, scale, base):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    want = rope_reference(x, dims, traditional, base, scale, offset)
    for dtype, tol in ((lucid.float64, 1e-12), (lucid.float32, 2e-5)):
        lx = lucid.tensor(x, dtype=dtype, device=device)
        got = lucid.fast.rope(lx, dims, traditional=traditional, base=base, scale=scale, offset=offset)
        assert got.dtype == dtype and got.shape == lx.shape
        np.testing.assert_allclose(got.cpu().numpy(), want, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_rope_of_half_types(device, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 6, 8)).astype(np.float32)
    lx = lucid.tensor(x, device=device).to(getattr(lucid, dtype))
    got = lucid.fast.rope(lx, 8, traditional=False, base=10000.0, scale=1.0, offset=3)
    assert got.dtype == getattr(lucid, dtype)
    want = rope_reference(lx.float().cpu().numpy(), 8, False, 10000.0, 1.0, 3)
    np.testing.assert_allclose(got.float().cpu().numpy(), want, rtol=2e-2, atol=2e-2)


def test_rope_gpu_matches_cpu():
    if not lucid.gpu.is_available():
        pytest.skip("lucid has no GPU here")
    x = lucid.randn(3, 2, 17, 64)
    for traditional in (False, True):
        args = dict(traditional=traditional, base=10000.0, scale=1.0, offset=5)
        cpu = lucid.fast.rope(x, 48, **args)
        gpu = lucid.fast.rope(x.to("gpu"), 48, **args)
        np.testing.assert_allclose(gpu.cpu().numpy(), cpu.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("traditional", [False, True])
def test_rope_gradient(device, traditional):
    x = lucid.randn(2, 3, 6, dtype=lucid.float64, device=device, requires_grad=True)
    assert lucid.autograd.gradcheck(
        lambda t: lucid.fast.rope(t, 4, traditional=traditional, base=100.0, scale=1.5, offset=2), (x,))
    # the gradient is the opposite rotation: a rotation's transpose
    y = lucid.fast.rope(x, 4, traditional=traditional, base=100.0, scale=1.5, offset=2)
    g = lucid.randn(*y.shape, dtype=lucid.float64, device=device)
    (gx,) = lucid.autograd.grad(y, x, g)
    back = rope_reference(g.cpu().numpy(), 4, traditional, 100.0, -1.5, 2)  # scale -1.5: every angle negated
    np.testing.assert_allclose(gx.cpu().numpy(), back, rtol=1e-12, atol=1e-12)


def test_rope_of_a_non_contiguous_input_and_a_tensor_offset(device):
    x = lucid.randn(6, 8, 4, device=device).transpose(0, 1)  # [8, 6, 4], not contiguous
    got = lucid.fast.rope(x, 4, traditional=False, base=10000.0, scale=1.0, offset=lucid.tensor(2))
    want = rope_reference(x.cpu().numpy(), 4, False, 10000.0, 1.0, 2)
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-5, atol=1e-5)


def test_rope_errors(device):
    x = lucid.randn(2, 4, 8, device=device)
    kw = dict(traditional=False, base=10000.0, scale=1.0, offset=0)
    with pytest.raises(ValueError, match="dims must be even"):
        lucid.fast.rope(x, 3, **kw)
    with pytest.raises(ValueError, match="dims must be even"):
        lucid.fast.rope(x, 10, **kw)
    with pytest.raises(ValueError, match="at least 2 dims"):
        lucid.fast.rope(lucid.randn(8, device=device), 8, **kw)
    with pytest.raises(TypeError, match="float16, bfloat16, float32 or float64"):
        lucid.fast.rope(lucid.ones(2, 4, dtype=lucid.int64, device=device), 4, **kw)
    with pytest.raises(ValueError, match="offset must be >= 0"):
        lucid.fast.rope(x, 8, traditional=False, base=10000.0, scale=1.0, offset=-1)
    with pytest.raises(ValueError, match="base must be positive"):
        lucid.fast.rope(x, 8, traditional=False, base=0.0, scale=1.0, offset=0)
    with pytest.raises(NotImplementedError, match="custom freqs"):
        lucid.fast.rope(x, 8, traditional=False, base=None, scale=1.0, offset=0, freqs=lucid.ones(4))
    with pytest.raises(TypeError, match="dims must be an int"):
        lucid.fast.rope(x, 8.0, **kw)


def test_norms_match_torch(device):
    x = torch.randn(4, 5, 16)
    w, b = torch.randn(16), torch.randn(16)
    lx, lw, lb = (to_lucid(t, device) for t in (x, w, b))
    got = lucid.fast.rms_norm(lx, lw, 1e-5)
    np.testing.assert_allclose(got.cpu().numpy(), torch.nn.functional.rms_norm(x, (16,), w, 1e-5).numpy(),
                               rtol=1e-5, atol=1e-5)
    got = lucid.fast.layer_norm(lx, lw, lb, 1e-5)
    np.testing.assert_allclose(got.cpu().numpy(), torch.nn.functional.layer_norm(x, (16,), w, b, 1e-5).numpy(),
                               rtol=1e-5, atol=1e-5)
    got = lucid.fast.layer_norm(lx, None, None, 1e-5)
    np.testing.assert_allclose(got.cpu().numpy(), torch.nn.functional.layer_norm(x, (16,), eps=1e-5).numpy(),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mask", [None, "causal", "bool", "additive"])
def test_attention_matches_torch(device, mask):
    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8)  # grouped-query heads
    tmask = None
    if mask == "bool":
        tmask = torch.rand(5, 5) > 0.3
        tmask[:, 0] = True
    elif mask == "additive":
        tmask = torch.randn(5, 5)
    lmask = mask if mask in (None, "causal") else to_lucid(tmask, device)
    got = lucid.fast.scaled_dot_product_attention(*(to_lucid(t, device) for t in (q, k, v)), scale=0.3, mask=lmask)
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=tmask, is_causal=mask == "causal",
                                                            scale=0.3, enable_gqa=True)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match='"causal"'):
        lucid.fast.scaled_dot_product_attention(*(to_lucid(t, device) for t in (q, k, v)), scale=0.3, mask="upper")
