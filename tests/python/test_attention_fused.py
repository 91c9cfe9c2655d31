"""The fused attention op (lucid._C._fused_attention: the AttentionForward and
AttentionBackward primitives). On the CPU its reference loops against torch's attention
in float64 (outputs, the log-sum-exp statistics, gradients); on the GPU cuDNN's flash
attention in float16/bfloat16, which scaled_dot_product_attention takes, against torch's
on CUDA and against lucid's own CPU loops on the same rounded inputs."""

import math

import pytest
import torch

import lucid
import lucid.nn.functional as LF
import torch.nn.functional as TF
from conftest import to_lucid, to_torch

# The CPU loops, and the GPU's kernel against them: a tensor made here without a device
# is the loops' operand, whatever the run's default device (LUCID_TEST_DEFAULT_DEVICE).
pytestmark = pytest.mark.usefixtures("cpu_default")

requires_gpu = pytest.mark.skipif(lucid.gpu.device_count() == 0, reason="no GPU")

# (B, Hq, Hk, Sq, Skv, D, Dv): plain, grouped-query, cross-attention with Dv != D
SHAPES = [(2, 4, 4, 7, 7, 8, 8), (1, 6, 2, 5, 9, 16, 16), (2, 2, 1, 9, 4, 8, 24)]


def _qkv(shape, dtype=torch.float64, seed=0, bshd=False):
    """Torch q, k, v; bshd: [B, H, S, D] views of [B, S, H, D] memory (as MultiheadAttention's head split)."""
    b, hq, hk, sq, skv, d, dv = shape
    g = torch.Generator().manual_seed(seed)
    dims = [(b, hq, sq, d), (b, hk, skv, d), (b, hk, skv, dv)]
    if bshd:
        return [torch.randn(n, s, h, e, generator=g, dtype=dtype).transpose(1, 2) for n, h, s, e in dims]
    return [torch.randn(*s, generator=g, dtype=dtype) for s in dims]


def _torch_attention(q, k, v, causal, scale):
    hq, hk = q.shape[1], k.shape[1]
    return TF.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, enable_gqa=hq != hk)


def _close(l, t, tol):
    assert tuple(l.shape) == tuple(t.shape)
    torch.testing.assert_close(to_torch(l.detach().cpu()).double(), t.detach().cpu().double(), rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("bshd", [False, True])
def test_cpu_loops_match_torch(shape, causal, bshd):
    tq, tk, tv = [t.requires_grad_() for t in _qkv(shape, bshd=bshd)]
    lq, lk, lv = [to_lucid(t.detach()).requires_grad_() for t in (tq, tk, tv)]
    if bshd:  # the same [B, S, H, D] memory order on lucid's side
        lq, lk, lv = [to_lucid(t.detach().transpose(1, 2).contiguous()).transpose(1, 2).detach().requires_grad_()
                      for t in (tq, tk, tv)]
    scale = 0.3
    out, stats = lucid._C._fused_attention(lq, lk, lv, scale, causal)
    want = _torch_attention(tq, tk, tv, causal, scale)
    _close(out, want, 1e-12)
    # the statistics: each query's log-sum-exp of its (masked) scaled scores
    r = tq.shape[1] // tk.shape[1]
    scores = tq.detach() @ tk.detach().repeat_interleave(r, 1).transpose(-2, -1) * scale
    if causal:
        scores = scores.masked_fill(~torch.ones(scores.shape[-2:], dtype=torch.bool).tril(), float("-inf"))
    _close(stats, torch.logsumexp(scores, -1), 1e-12)
    g = torch.randn(want.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    want.backward(g)
    out.backward(to_lucid(g))
    for l, t in ((lq, tq), (lk, tk), (lv, tv)):
        _close(l.grad, t.grad, 1e-11)


def test_cpu_loops_gradcheck():
    """Float64 numerical gradients of the fused op (grouped-query, causal)."""
    q, k, v = [to_lucid(t).requires_grad_() for t in _qkv((1, 4, 2, 3, 5, 4, 6), seed=3)]
    fn = lambda a, b, c: lucid._C._fused_attention(a, b, c, 0.7, True)[0]  # noqa: E731
    assert lucid.autograd.gradcheck(fn, (q, k, v), eps=1e-6, atol=1e-7)


def test_output_keeps_the_query_memory_order():
    q, k, v = [to_lucid(t.transpose(1, 2).contiguous()).transpose(1, 2) for t in _qkv(SHAPES[0])]
    out, _ = lucid._C._fused_attention(q, k, v, 0.5, False)
    assert out.transpose(1, 2).is_contiguous()


def test_bad_operands_raise():
    q, k, v = [to_lucid(t) for t in _qkv(SHAPES[0])]
    with pytest.raises(RuntimeError, match="query's last dim"):
        lucid._C._fused_attention(q, k[..., :4], v, 1.0, False)
    with pytest.raises(RuntimeError, match="same heads and sequence length"):
        lucid._C._fused_attention(q, k, v[:, :, :3], 1.0, False)
    with pytest.raises(RuntimeError, match="multiple of the key/value heads"):
        lucid._C._fused_attention(q, k[:, :3], v[:, :3], 1.0, False)
    with pytest.raises(RuntimeError, match="4 dims"):
        lucid._C._fused_attention(q[0], k[0], v[0], 1.0, False)
    with pytest.raises(RuntimeError, match="one floating dtype"):
        lucid._C._fused_attention(q, k.float(), v, 1.0, False)


def test_cpu_takes_the_composite_form():
    """On the CPU scaled_dot_product_attention keeps its composite (its products are
    BLAS's); the fused op is not reported as supported there."""
    q, k, v = [to_lucid(t).requires_grad_() for t in _qkv(SHAPES[0])]
    assert not lucid._C._fused_attention_supported(q, k, v, False)
    assert LF.scaled_dot_product_attention(q, k, v).grad_fn.name() == "BmmBackward0"


# -- the GPU: cuDNN's flash attention --

GPU_SHAPES = [(2, 4, 4, 128, 128, 64, 64), (1, 8, 2, 96, 160, 128, 128), (2, 2, 2, 33, 70, 32, 32)]


@requires_gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", GPU_SHAPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("bshd", [False, True])
def test_gpu_fused_attention_matches_torch(dtype, shape, causal, bshd):
    tdt = getattr(torch, dtype)
    tq, tk, tv = [t.to(tdt).cuda().detach().requires_grad_() for t in _qkv(shape, bshd=bshd)]
    lq, lk, lv = [to_lucid(t.detach().cpu().float(), "gpu").to(getattr(lucid, dtype)) for t in (tq, tk, tv)]
    if bshd:
        lq, lk, lv = [t.transpose(1, 2).contiguous().transpose(1, 2) for t in (lq, lk, lv)]
    lq, lk, lv = [t.requires_grad_() for t in (lq, lk, lv)]
    assert lucid._C._fused_attention_supported(lq, lk, lv, causal)
    gqa = shape[1] != shape[2]
    out = LF.scaled_dot_product_attention(lq, lk, lv, is_causal=causal, enable_gqa=gqa)
    assert out.grad_fn.name() == "ScaledDotProductFlashAttentionBackward0"
    want = TF.scaled_dot_product_attention(tq, tk, tv, is_causal=causal, enable_gqa=gqa)
    tol = 2e-2 if dtype == "bfloat16" else 4e-3
    _close(out, want, tol)
    g = torch.randn(want.shape, generator=torch.Generator().manual_seed(1)).to(tdt).cuda()
    want.backward(g)
    out.backward(to_lucid(g.cpu().float(), "gpu").to(out.dtype))
    for l, t in ((lq, tq), (lk, tk), (lv, tv)):
        assert l.grad.dtype == l.dtype
        _close(l.grad, t.grad, 4 * tol)


@requires_gpu
@pytest.mark.parametrize("causal", [False, True])
def test_gpu_fused_attention_matches_the_cpu_loops(causal):
    """cuDNN's result against lucid's CPU loops on the same bfloat16 operands (both
    accumulate in float32; each rounds its output once)."""
    shape = (2, 4, 2, 64, 80, 64, 64)
    q, k, v = [to_lucid(t.float()).to(lucid.bfloat16) for t in _qkv(shape, seed=5)]
    cpu = lucid._C._fused_attention(q, k, v, 0.125, causal)
    gpu = lucid._C._fused_attention(q.to("gpu"), k.to("gpu"), v.to("gpu"), 0.125, causal)
    _close(gpu[0], to_torch(cpu[0].float()), 1.6e-2)
    _close(gpu[1], to_torch(cpu[1]), 1e-3)


@requires_gpu
def test_gpu_float32_takes_the_exact_composite():
    q, k, v = [to_lucid(t.float(), "gpu") for t in _qkv(GPU_SHAPES[0])]
    assert not lucid._C._fused_attention_supported(q, k, v, False)
    out = LF.scaled_dot_product_attention(q, k, v)
    want = TF.scaled_dot_product_attention(*[to_torch(t.cpu()).double() for t in (q, k, v)])
    _close(out, want, 1e-5)
    with pytest.raises(NotImplementedError, match="no fused GPU kernel"):
        lucid._C._fused_attention(q, k, v, 1 / math.sqrt(64), False)


@requires_gpu
def test_gpu_fused_attention_has_no_double_backward():
    q, k, v = [to_lucid(t.float(), "gpu").to(lucid.bfloat16).requires_grad_() for t in _qkv(GPU_SHAPES[0])]
    out = LF.scaled_dot_product_attention(q, k, v)
    with pytest.raises(NotImplementedError, match="create_graph"):
        lucid.autograd.grad(out.float().sum(), q, create_graph=True)


def _graph_names(t):
    """The names of every node of t's autograd graph."""
    seen, todo, names = set(), [t.grad_fn], set()
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        names.add(fn.name())
        todo.extend(f for f, _ in fn.next_functions)
    return names


@requires_gpu
@pytest.mark.parametrize("batch_first", [False, True])
def test_gpu_multihead_attention_in_bfloat16_runs_fused(batch_first):
    """nn.MultiheadAttention's [batch * heads, L, head_dim] operands reach the fused
    kernel without a copy; outputs and gradients as torch's in bfloat16."""
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(64, 4, batch_first=batch_first).cuda().to(torch.bfloat16)
    lm = lucid.nn.MultiheadAttention(64, 4, batch_first=batch_first)
    lm.load_state_dict({k: to_lucid(v.float().cpu()) for k, v in tm.state_dict().items()})
    lm = lm.to("gpu").to(lucid.bfloat16)
    x = torch.randn(8, 48, 64).to(torch.bfloat16).cuda().requires_grad_()
    lx = to_lucid(x.detach().float().cpu(), "gpu").to(lucid.bfloat16).requires_grad_()
    want, _ = tm(x, x, x, need_weights=False)
    got, _ = lm(lx, lx, lx, need_weights=False)
    assert "ScaledDotProductFlashAttentionBackward0" in _graph_names(got)
    _close(got, want, 3e-2)
    g = torch.randn(want.shape).to(torch.bfloat16).cuda()
    want.backward(g)
    got.backward(to_lucid(g.float().cpu(), "gpu").to(lucid.bfloat16))
    _close(lx.grad, x.grad, 6e-2)


# -- additive masks (the fused op's optional bias) --

def _mask(shape_bhls, seed, hide_rows=False, dtype=torch.float64):
    """A float mask of -inf and finite values; hide_rows: query 1 sees no key."""
    g = torch.Generator().manual_seed(seed)
    m = torch.randn(*shape_bhls, generator=g, dtype=dtype)
    m = m.masked_fill(torch.rand(*shape_bhls, generator=g) < 0.3, float("-inf"))
    m[..., 0] = 0.0  # every query sees key 0 ...
    if hide_rows:
        m[..., 1, :] = float("-inf")  # ... but query 1, which sees none
    return m


@pytest.mark.parametrize("mask_shape", ["full", "heads_broadcast", "batch_broadcast"])
@pytest.mark.parametrize("causal", [False, True])
def test_cpu_loops_with_a_mask_match_torch(mask_shape, causal):
    shape = (2, 4, 2, 6, 6, 8, 8)
    tq, tk, tv = [t.requires_grad_() for t in _qkv(shape, seed=7)]
    lq, lk, lv = [to_lucid(t.detach()).requires_grad_() for t in (tq, tk, tv)]
    dims = {"full": (2, 4, 6, 6), "heads_broadcast": (2, 1, 6, 6), "batch_broadcast": (1, 4, 6, 6)}[mask_shape]
    m = _mask(dims, 8)
    out, _ = lucid._C._fused_attention(lq, lk, lv, 0.4, causal, to_lucid(m))
    bias = m if not causal else m.masked_fill(~torch.ones(6, 6, dtype=torch.bool).tril(), float("-inf"))
    want = TF.scaled_dot_product_attention(tq, tk, tv, attn_mask=bias, scale=0.4, enable_gqa=True)
    _close(out, want, 1e-12)
    g = torch.randn(want.shape, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    want.backward(g)
    out.backward(to_lucid(g))
    for l, t in ((lq, tq), (lk, tk), (lv, tv)):
        _close(l.grad, t.grad, 1e-11)


def test_fused_mask_errors():
    q, k, v = [to_lucid(t) for t in _qkv(SHAPES[0])]
    with pytest.raises(RuntimeError, match="expected a mask of shape"):
        lucid._C._fused_attention(q, k, v, 1.0, False, lucid.zeros(2, 4, 7, 6, dtype=lucid.float64))
    with pytest.raises(RuntimeError, match="query's dtype"):
        lucid._C._fused_attention(q, k, v, 1.0, False, lucid.zeros(2, 4, 7, 7))
    with pytest.raises(NotImplementedError, match="no gradient for its mask"):
        lucid._C._fused_attention(q, k, v, 1.0, False, lucid.zeros(1, 1, 7, 7, dtype=lucid.float64,
                                                                    requires_grad=True))


@requires_gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("kind", ["float_full", "float_heads_broadcast", "bool_2d", "key_padding", "hidden_row"])
def test_gpu_fused_attention_with_a_mask_matches_torch(dtype, kind):
    """scaled_dot_product_attention with a mask takes the fused kernel on the GPU: float
    masks of every broadcast form, boolean ones, a key-padding mask [B, 1, 1, S], and
    a query that sees no key (zeros, torch's safe softmax, with zero gradients)."""
    shape = (2, 4, 4, 64, 96, 64, 64)
    tdt, ldt = getattr(torch, dtype), getattr(lucid, dtype)
    tq, tk, tv = [t.to(tdt).cuda().detach().requires_grad_() for t in _qkv(shape, seed=11)]
    lq, lk, lv = [to_lucid(t.detach().cpu().float(), "gpu").to(ldt).requires_grad_() for t in (tq, tk, tv)]
    if kind == "bool_2d":
        tm = torch.rand(64, 96, generator=torch.Generator().manual_seed(12)) > 0.3
        tm[:, 0] = True
        lm = to_lucid(tm, "gpu")
    elif kind == "key_padding":
        tm = torch.zeros(2, 1, 1, 96)
        tm[0, ..., 80:] = float("-inf")
        lm = to_lucid(tm, "gpu").to(ldt)
        tm = tm.to(tdt)
    else:
        dims = (2, 1, 64, 96) if kind == "float_heads_broadcast" else (2, 4, 64, 96)
        tm = _mask(dims, 13, hide_rows=kind == "hidden_row", dtype=torch.float32)
        lm = to_lucid(tm, "gpu").to(ldt)
        tm = tm.to(tdt)
    tm = tm.cuda()
    out = LF.scaled_dot_product_attention(lq, lk, lv, attn_mask=lm)
    assert "ScaledDotProductFlashAttentionBackward0" in _graph_names(out)
    want = TF.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm)
    if kind == "hidden_row":  # torch's math form gives NaN there; the safe softmax gives zeros
        want = want.masked_fill(torch.isnan(want), 0.0)
        assert to_torch(out[:, :, 1].float().cpu()).abs().max() == 0
    tol = 2e-2 if dtype == "bfloat16" else 4e-3
    _close(out, want, tol)
    g = torch.randn(want.shape, generator=torch.Generator().manual_seed(14)).to(tdt).cuda()
    out.backward(to_lucid(g.cpu().float(), "gpu").to(out.dtype))
    if kind == "hidden_row":
        assert not lq.grad.float().isnan().any() and lq.grad[:, :, 1].float().abs().max().item() == 0
        return
    want.backward(g)
    for l, t in ((lq, tq), (lk, tk), (lv, tv)):
        _close(l.grad, t.grad, 4 * tol)


@requires_gpu
def test_gpu_fused_attention_with_a_mask_matches_the_cpu_loops():
    shape = (2, 4, 2, 64, 80, 64, 64)
    q, k, v = [to_lucid(t.float()).to(lucid.bfloat16) for t in _qkv(shape, seed=15)]
    m = to_lucid(_mask((2, 1, 64, 80), 16, dtype=torch.float32)).to(lucid.bfloat16)
    cpu = lucid._C._fused_attention(q, k, v, 0.125, False, m)
    gpu = lucid._C._fused_attention(q.to("gpu"), k.to("gpu"), v.to("gpu"), 0.125, False, m.to("gpu"))
    _close(gpu[0], to_torch(cpu[0].float()), 1.6e-2)
    _close(gpu[1], to_torch(cpu[1]), 1e-3)


# -- dropout inside the kernel (AttentionDropout: the CPU's Philox rule, cuDNN's RNG node) --

def _dropout_case(device, dtype, causal, p=0.3, seed=11):
    """The fused op with dropout p, run twice from the same generator state: once with
    v = the identity (so that its output is the dropped, rescaled weights, which names
    the kept ones: M = out != 0) and once with a random v of the same shape. Returns
    torch's float64 q, k, v, the kept mask, the second run's lucid tensors and output."""
    b, h, s, d = 2, 4, 64, 64
    g = torch.Generator().manual_seed(3)
    tq, tk, tv = [torch.randn(b, h, s, d, generator=g, dtype=torch.float64) for _ in range(3)]
    ldt = getattr(lucid, dtype)
    if dtype != "float64":  # the same rounded operands on both sides
        tq, tk, tv = [to_torch(to_lucid(t.float()).to(ldt).float()).double() for t in (tq, tk, tv)]
    lq, lk, lv = [to_lucid(t.float() if dtype != "float64" else t, device).to(ldt) for t in (tq, tk, tv)]
    eye = to_lucid(torch.eye(s, dtype=torch.float64).expand(b, h, s, s).contiguous(), device).to(ldt)
    scale = 1 / math.sqrt(d)
    lucid.manual_seed(seed)
    weights, _ = lucid._C._fused_attention(lq, lk, eye, scale, causal, None, p)
    kept = to_torch(weights.cpu().double()) != 0
    lq, lk, lv = [t.requires_grad_() for t in (lq, lk, lv)]
    lucid.manual_seed(seed)
    out, stats = lucid._C._fused_attention(lq, lk, lv, scale, causal, None, p)
    return (tq, tk, tv), kept, weights, (lq, lk, lv), out, scale


def _dropped_attention(q, k, v, kept, p, scale, causal):
    """softmax(q k^T scale [causal]) * kept / (1 - p) @ v, in torch."""
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        scores = scores.masked_fill(~torch.ones(scores.shape[-2:], dtype=torch.bool).tril(), float("-inf"))
    return (scores.softmax(-1) * kept / (1 - p)) @ v


@pytest.mark.parametrize("causal", [False, True])
def test_dropout_outputs_and_gradients(device, causal):
    """Dropout drops about p of the weights, rescales the rest by 1 / (1 - p), and the
    backward drops the same ones: outputs and the three gradients as torch's composite
    with that mask (float64 loops on the CPU; bfloat16 cuDNN on the GPU)."""
    dtype = "float64" if device == "cpu" else "bfloat16"
    p = 0.3
    (tq, tk, tv), kept, weights, (lq, lk, lv), out, scale = _dropout_case(device, dtype, causal, p)
    seen = torch.ones(kept.shape[-2:], dtype=torch.bool).tril() if causal else torch.ones(kept.shape[-2:], dtype=torch.bool)
    fraction = kept.sum().item() / (seen.sum().item() * kept.shape[0] * kept.shape[1])
    assert abs(fraction - (1 - p)) < 0.02, fraction
    assert not kept[..., ~seen].any()  # (a causal mask's hidden keys have no weight to keep)
    tol = 1e-12 if dtype == "float64" else 2e-2
    _close(weights, _dropped_attention(tq, tk, torch.eye(64, dtype=torch.float64), kept, p, scale, causal), tol)
    tq, tk, tv = [t.requires_grad_() for t in (tq, tk, tv)]
    want = _dropped_attention(tq, tk, tv, kept, p, scale, causal)
    _close(out, want, tol)
    grad = torch.randn(want.shape, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    want.backward(grad)
    out.backward(to_lucid(grad.float() if dtype != "float64" else grad, device).to(out.dtype))
    for l, t in ((lq, tq), (lk, tk), (lv, tv)):
        _close(l.grad, t.grad, 1e-11 if dtype == "float64" else 1e-1)


def test_dropout_follows_the_generator(device):
    """The same generator state drops the same weights; the next call draws anew."""
    dtype = "float64" if device == "cpu" else "float16"
    q, k, v = [to_lucid(t, device).to(getattr(lucid, dtype)) for t in _qkv((2, 4, 4, 64, 64, 64, 64), seed=2)]
    lucid.manual_seed(5)
    a = lucid._C._fused_attention(q, k, v, 0.125, False, None, 0.5)[0]
    b = lucid._C._fused_attention(q, k, v, 0.125, False, None, 0.5)[0]
    lucid.manual_seed(5)
    c = lucid._C._fused_attention(q, k, v, 0.125, False, None, 0.5)[0]
    assert lucid.equal(a, c)
    assert not lucid.equal(a, b)
    with pytest.raises(RuntimeError, match=r"dropout probability in \[0, 1\)"):
        lucid._C._fused_attention(q, k, v, 0.125, False, None, 1.0)


@requires_gpu
@pytest.mark.parametrize("masked", [False, True])
def test_gpu_sdpa_with_dropout_runs_fused(masked):
    """scaled_dot_product_attention with dropout_p in bfloat16 on the GPU runs cuDNN's
    kernel (dropout inside it), with a mask too; dropout_p = 1 keeps the composite,
    which gives zeros."""
    q, k, v = [to_lucid(t.float(), "gpu").to(lucid.bfloat16).requires_grad_()
               for t in _qkv((2, 4, 4, 64, 64, 64, 64), seed=3)]
    mask = to_lucid(_mask((2, 1, 64, 64), 1), "gpu").to(lucid.bfloat16) if masked else None
    assert lucid._C._fused_attention_supported(q, k, v, False, None, 0.2)
    out = LF.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.2)
    assert "ScaledDotProductFlashAttentionBackward0" in _graph_names(out)
    out.float().sum().backward()
    assert bool(lucid.isfinite(q.grad.float()).all())
    zero = LF.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    assert float(zero.float().abs().max()) == 0.0
