"""lucid.amp against torch.amp: the dtype each op runs in under autocast (PyTorch's
policy per device type), the values, gradients through the casts, the context manager's
semantics, and GradScaler step by step. On the CPU autocast's low dtype is bfloat16 by
default, on the GPU float16 (torch's defaults); the GPU legs compare with torch on cuda."""

import copy

import pytest
import torch

import lucid
import lucid.nn.functional as LF
import torch.nn.functional as TF
from conftest import to_lucid, to_torch


def tdev(device):
    return "cuda" if device == "gpu" else "cpu"


def ac_type(device):
    """The autocast device_type string, as a torch program spells it."""
    return "cuda" if device == "gpu" else "cpu"


def L(m):
    """lucid or torch's nn.functional for module m."""
    return LF if m is lucid else TF


# (name, fn(m, a, b, w) on float32 [8, 8] tensors a, b and a weight-like [4, 8] w)
OPS = [
    ("matmul", lambda m, a, b, w: a @ b),
    ("mm", lambda m, a, b, w: m.mm(a, b)),
    ("bmm", lambda m, a, b, w: m.bmm(a[None], b[None])),
    ("addmm", lambda m, a, b, w: m.addmm(a, a, b)),
    ("baddbmm", lambda m, a, b, w: m.baddbmm(a[None], a[None], b[None])),
    ("linear", lambda m, a, b, w: L(m).linear(a, w, w[:, 0])),
    ("einsum", lambda m, a, b, w: m.einsum("ij,jk->ik", a, b)),
    ("tensordot", lambda m, a, b, w: m.tensordot(a, b, 1)),
    ("mv", lambda m, a, b, w: m.mv(a, b[0])),
    ("outer", lambda m, a, b, w: m.outer(a[0], b[0])),
    ("conv2d", lambda m, a, b, w: L(m).conv2d(a.reshape(1, 2, 4, 8), w.reshape(2, 2, 2, 4)[:, :, :, :3], padding=1)),
    ("conv1d", lambda m, a, b, w: L(m).conv1d(a.reshape(2, 4, 8), w.reshape(8, 4, 1)[:, :, :1])),
    ("conv_transpose2d", lambda m, a, b, w: L(m).conv_transpose2d(a.reshape(1, 2, 4, 8), w.reshape(2, 2, 2, 4))),
    ("softmax", lambda m, a, b, w: a.softmax(1)),
    ("log_softmax", lambda m, a, b, w: L(m).log_softmax(a, 0)),
    ("layer_norm", lambda m, a, b, w: L(m).layer_norm(a, (8,), w[0], w[1])),
    ("group_norm", lambda m, a, b, w: L(m).group_norm(a.reshape(2, 4, 8), 2, w[0, :4], w[1, :4])),
    ("mse_loss", lambda m, a, b, w: L(m).mse_loss(a, b)),
    ("l1_loss", lambda m, a, b, w: L(m).l1_loss(a, b)),
    ("smooth_l1_loss", lambda m, a, b, w: L(m).smooth_l1_loss(a, b)),
    ("kl_div", lambda m, a, b, w: L(m).kl_div(a.log_softmax(1), b.softmax(1), reduction="batchmean")),
    ("bce_with_logits", lambda m, a, b, w: L(m).binary_cross_entropy_with_logits(a, b.sigmoid())),
    ("cross_entropy", lambda m, a, b, w: L(m).cross_entropy(a, (b[0].abs() * 3).long())),
    ("exp", lambda m, a, b, w: a.exp()),
    ("log", lambda m, a, b, w: m.log(a.abs() + 1)),
    ("rsqrt", lambda m, a, b, w: (a.abs() + 1).rsqrt()),
    ("sum", lambda m, a, b, w: a.sum()),
    ("sum dim", lambda m, a, b, w: a.sum(1)),
    ("cumsum", lambda m, a, b, w: a.cumsum(0)),
    ("logsumexp", lambda m, a, b, w: a.logsumexp(1)),
    ("pow of float16", lambda m, a, b, w: a.half() ** 2),          # float32 under the GPU's autocast
    ("lucid.pow of bfloat16", lambda m, a, b, w: m.pow(a.bfloat16(), 3)),
    ("softplus of bfloat16", lambda m, a, b, w: L(m).softplus(a.bfloat16())),
    ("exp of float16", lambda m, a, b, w: a.half().exp()),
    ("max_pool3d of bfloat16", lambda m, a, b, w: L(m).max_pool3d(a.bfloat16().reshape(1, 1, 4, 4, 4), 2)),
    ("avg_pool3d of bfloat16", lambda m, a, b, w: L(m).avg_pool3d(a.bfloat16().reshape(1, 1, 4, 4, 4), 2)),
    ("relu", lambda m, a, b, w: a.relu()),
    ("add", lambda m, a, b, w: a + b),
    ("mean", lambda m, a, b, w: a.mean()),
    # mixed: a product's low-precision output meets float32 operands
    ("linear + bias add", lambda m, a, b, w: L(m).linear(a, w) + b[:, :4]),
    ("matmul then softmax", lambda m, a, b, w: (a @ b).softmax(1)),
    ("matmul then layer_norm", lambda m, a, b, w: L(m).layer_norm(a @ b, (8,))),
    ("matmul then mse", lambda m, a, b, w: L(m).mse_loss(a @ b, b)),
]


def _inputs(device, seed=0):
    g = torch.Generator().manual_seed(seed)
    ts = [torch.randn(8, 8, generator=g), torch.randn(8, 8, generator=g), torch.randn(4, 8, generator=g)]
    return [to_lucid(t, device) for t in ts], [t.to(tdev(device)) for t in ts]


def _close(l, t, tol):
    lt = to_torch(l.detach()).double()
    torch.testing.assert_close(lt, t.detach().cpu().double(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,fn", OPS, ids=[o[0] for o in OPS])
def test_op_runs_in_torchs_dtype_under_autocast(name, fn, device):
    ls, ts = _inputs(device)
    with torch.autocast(ac_type(device)):
        t = fn(torch, *ts)
    with lucid.autocast(ac_type(device)):
        out = fn(lucid, *ls)
    assert str(out.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (name, out.dtype, t.dtype)
    assert out.device.type == device
    # the same inputs rounded the same way: products in 16 bits differ in their sums' order
    _close(out, t, 5e-2 if t.dtype in (torch.bfloat16, torch.float16) else 2e-3)


def test_outside_autocast_nothing_is_cast(device):
    ls, _ = _inputs(device)
    a, b, _ = ls
    assert (a @ b).dtype == lucid.float32
    with lucid.autocast(ac_type(device), enabled=False):
        assert (a @ b).dtype == lucid.float32
    assert not lucid.is_autocast_enabled(ac_type(device))


def test_float64_and_integer_inputs_are_not_cast(device):
    a = lucid.randn(4, 4, dtype=lucid.float64, device=device)
    i = lucid.ones(4, 4, dtype=lucid.int64, device=device)
    with lucid.autocast(ac_type(device)):
        assert (a @ a).dtype == lucid.float64  # torch leaves float64 alone too
        assert (i @ i).dtype == lucid.int64


def test_autocast_of_another_device_type_leaves_these_tensors(device):
    other = "cpu" if device == "gpu" else "cuda"
    a = lucid.randn(4, 4, device=device)
    with lucid.autocast(other, dtype=lucid.bfloat16):
        assert (a @ a).dtype == lucid.float32
        assert lucid.is_autocast_enabled(other) and not lucid.is_autocast_enabled(ac_type(device))


def test_state_nests_restores_and_decorates():
    assert not lucid.is_autocast_enabled("cpu")
    with lucid.autocast("cpu", dtype=lucid.float16):
        assert lucid.get_autocast_dtype("cpu") == lucid.float16
        with lucid.autocast("cpu", enabled=False):
            assert not lucid.is_autocast_enabled("cpu")
            with lucid.autocast("cpu", dtype=lucid.bfloat16):
                assert lucid.get_autocast_dtype("cpu") == lucid.bfloat16
            assert not lucid.is_autocast_enabled("cpu")
        assert lucid.is_autocast_enabled("cpu") and lucid.get_autocast_dtype("cpu") == lucid.float16
    assert not lucid.is_autocast_enabled("cpu")
    with pytest.raises(ZeroDivisionError):  # restored on the way out of an exception too
        with lucid.autocast("cpu"):
            1 / 0
    assert not lucid.is_autocast_enabled("cpu")

    @lucid.autocast("cpu")
    def product(a, b):
        return a @ b

    a = lucid.randn(3, 3, device="cpu")  # the CPU's autocast casts CPU tensors only
    assert product(a, a).dtype == lucid.bfloat16 and (a @ a).dtype == lucid.float32
    assert lucid.autocast is lucid.amp.autocast
    assert lucid.amp.is_autocast_available("cuda") and lucid.amp.is_autocast_available("cpu")


def test_an_op_written_in_python_runs_its_own_ops_without_autocast(device):
    """As torch's native ops: an attention given bfloat16 computes its softmax and second
    product in bfloat16 (not the softmax in float32, then a cast back for the product)."""
    from lucid.amp._autocast import policy

    @policy("scaled_dot_product_attention")
    def probe(q):
        return lucid.is_autocast_enabled(ac_type(device)), q.dtype, q.softmax(-1).dtype  # (float32 on the GPU)

    x = lucid.randn(4, 4, device=device)
    with lucid.autocast(ac_type(device), dtype=lucid.bfloat16):
        assert probe(x) == (False, lucid.bfloat16, lucid.bfloat16)
        assert lucid.is_autocast_enabled(ac_type(device))  # restored
        out = LF.scaled_dot_product_attention(x[None], x[None], x[None])
    assert out.dtype == lucid.bfloat16 and not lucid.is_autocast_enabled(ac_type(device))


def test_bad_arguments():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type"):
        lucid.autocast("tpu")
    with pytest.raises(ValueError, match="device_type"):
        lucid.autocast(0)
    with pytest.warns(UserWarning, match="not supported. Disabling autocast"):
        ctx = lucid.autocast("cpu", dtype=lucid.float64)
    with ctx:
        assert not lucid.is_autocast_enabled("cpu")


def test_gradients_flow_through_the_casts_in_float32(device):
    g = torch.Generator().manual_seed(3)
    x, w1, w2 = torch.randn(16, 8, generator=g), torch.randn(32, 8, generator=g), torch.randn(4, 32, generator=g)
    target = torch.randint(0, 4, (16,), generator=g)
    tw1, tw2 = (t.to(tdev(device)).requires_grad_() for t in (w1, w2))
    lw1, lw2 = (to_lucid(t, device).requires_grad_() for t in (w1, w2))
    with torch.autocast(ac_type(device)):
        tl = TF.cross_entropy(TF.linear(TF.relu(TF.linear(x.to(tdev(device)), tw1)), tw2), target.to(tdev(device)))
    with lucid.autocast(ac_type(device)):
        ll = LF.cross_entropy(LF.linear(LF.relu(LF.linear(to_lucid(x, device), lw1)), lw2), to_lucid(target, device))
    assert ll.dtype == lucid.float32
    tl.backward()
    ll.backward()
    for lw, tw in ((lw1, tw1), (lw2, tw2)):
        assert lw.grad.dtype == lucid.float32 and lw.grad.device.type == device
        _close(lw.grad, tw.grad, 3e-2)
    _close(ll, tl, 1e-2)


@pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")
def test_binary_cross_entropy_is_refused_under_gpu_autocast():
    p, y = lucid.rand(4, device="gpu"), lucid.rand(4, device="gpu")
    with lucid.autocast("cuda"):
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            LF.binary_cross_entropy(p, y)
        LF.binary_cross_entropy_with_logits(p, y)  # the safe form


# ---- GradScaler -------------------------------------------------------------------------

def _pair_models(device, seed=0):
    torch.manual_seed(seed)
    tm = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).to(tdev(device))
    lm = lucid.nn.Sequential(lucid.nn.Linear(8, 16), lucid.nn.ReLU(), lucid.nn.Linear(16, 4))
    lm.load_state_dict({k: to_lucid(v.cpu()) for k, v in tm.state_dict().items()})
    return tm, lm.to(device)


def test_grad_scaler_matches_torch_over_twenty_steps(device):
    """Same model, same batches: the losses, the scale after each update, the growth
    tracker and which steps were skipped (two steps with an inf in the loss) match."""
    tm, lm = _pair_models(device)
    topt = torch.optim.SGD(tm.parameters(), lr=0.05, momentum=0.9)
    lopt = lucid.optim.SGD(lm.parameters(), lr=0.05, momentum=0.9)
    kw = dict(init_scale=2.0 ** 10, growth_factor=2.0, backoff_factor=0.25, growth_interval=3)
    tscaler = torch.amp.GradScaler(ac_type(device), **kw)
    lscaler = lucid.amp.GradScaler(ac_type(device), **kw)
    g = torch.Generator().manual_seed(7)
    for step in range(20):
        x, y = torch.randn(16, 8, generator=g), torch.randint(0, 4, (16,), generator=g)
        poison = float("inf") if step in (4, 11) else 1.0
        topt.zero_grad()
        lopt.zero_grad()
        with torch.autocast(ac_type(device)):
            tl = TF.cross_entropy(tm(x.to(tdev(device))), y.to(tdev(device))) * poison
        with lucid.autocast(ac_type(device)):
            ll = LF.cross_entropy(lm(to_lucid(x, device)), to_lucid(y, device)) * poison
        tscaler.scale(tl).backward()
        lscaler.scale(ll).backward()
        tscaler.step(topt)
        lscaler.step(lopt)
        tscaler.update()
        lscaler.update()
        assert lscaler.get_scale() == tscaler.get_scale(), step
        assert lscaler._get_growth_tracker() == tscaler._get_growth_tracker(), step
        if poison == 1.0:
            assert ll.item() == pytest.approx(tl.item(), rel=2e-2, abs=2e-2), step
    for (name, tp), lp in zip(tm.named_parameters(), lm.parameters()):
        _close(lp, tp, 5e-2)
    assert lscaler.state_dict() == tscaler.state_dict()


def test_grad_scaler_unscale_then_clip_then_step(device):
    tm, lm = _pair_models(device, seed=1)
    lopt = lucid.optim.SGD(lm.parameters(), lr=0.1)
    scaler = lucid.amp.GradScaler(ac_type(device), init_scale=256.0)
    x = lucid.randn(4, 8, device=device)
    with lucid.autocast(ac_type(device)):
        loss = lm(x).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaled = [p.grad.clone() for p in lm.parameters()]
    scaler.unscale_(lopt)
    for p, s in zip(lm.parameters(), scaled):
        _close(p.grad, to_torch(s) / 256.0, 1e-6)
    lucid.nn.utils.clip_grad_norm_(lm.parameters(), 0.5)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(lopt)
    before = [p.detach().clone() for p in lm.parameters()]
    scaler.step(lopt)  # does not unscale again
    for p, b, grad in zip(lm.parameters(), before, (p.grad for p in lm.parameters())):
        _close(p, to_torch(b) - 0.1 * to_torch(grad), 1e-6)
    scaler.update()
    assert scaler.get_scale() == 256.0


def test_grad_scaler_checkpoint_and_disabled():
    s = lucid.amp.GradScaler("cpu", init_scale=64.0, growth_interval=5)
    assert s.get_scale() == 64.0 and s.is_enabled()
    state = s.state_dict()
    assert state == torch.amp.GradScaler("cpu", init_scale=64.0, growth_interval=5).state_dict()
    s2 = lucid.amp.GradScaler("cpu")
    s2.load_state_dict(state)
    assert s2.get_scale() == 64.0 and s2.get_growth_interval() == 5
    off = lucid.amp.GradScaler("cpu", enabled=False)
    loss = lucid.ones(1, requires_grad=True).sum()
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    with pytest.raises(ValueError, match="growth factor"):
        lucid.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(RuntimeError, match="did not use"):
        lucid.amp.GradScaler("cpu").unscale_(lucid.optim.SGD([lucid.ones(1, requires_grad=True)], lr=1))


def test_torch_cuda_amp_and_cpu_amp_spellings_warn_and_work():
    # torch.cuda.amp.autocast() / GradScaler() and torch.cpu.amp.autocast(): deprecated there, kept
    with pytest.warns(FutureWarning, match=r"lucid.amp.autocast\('cpu'"):
        ctx = lucid.cpu.amp.autocast()
    with ctx:
        assert (lucid.ones(2, 2, device="cpu") @ lucid.ones(2, 2, device="cpu")).dtype == lucid.bfloat16
    with pytest.warns(FutureWarning, match=r"lucid.amp.autocast\('cuda'"):
        assert lucid.cuda.amp.autocast(enabled=False).device_type == "cuda"
    with pytest.warns(FutureWarning, match="GradScaler"):
        scaler = lucid.cuda.amp.GradScaler(init_scale=8.0, enabled=lucid.gpu.is_available())
    assert scaler.get_scale() == (8.0 if lucid.gpu.is_available() else 1.0)
    import lucid.cuda.amp as cuda_amp
    assert cuda_amp is lucid.gpu.amp


# torch's dtypes for the recurrent modules under autocast: on CUDA every cell is lowered;
# on the CPU the LSTM (mkldnn_rnn_layer) and the plain RNNs are, while GRU, LSTMCell and
# GRUCell run in float32 (their float32 state promotes the lowered products back).
# (torch's own CPU LSTM fails under bfloat16 autocast without AVX-512 BF16, so the table
# is written out rather than asked of torch; its LSTM with projections gives bfloat16.)
RECURRENT = [
    ("LSTM", lambda nn: nn.LSTM(4, 6, batch_first=True), (2, 5, 4), "low"),
    ("LSTM proj", lambda nn: nn.LSTM(4, 6, proj_size=3, num_layers=2), (5, 2, 4), "low"),
    ("GRU", lambda nn: nn.GRU(4, 6, bidirectional=True), (5, 2, 4), "float32 on the CPU"),
    ("RNN", lambda nn: nn.RNN(4, 6), (5, 2, 4), "low"),
    ("RNN relu", lambda nn: nn.RNN(4, 6, nonlinearity="relu"), (5, 2, 4), "low"),
    ("LSTMCell", lambda nn: nn.LSTMCell(4, 6), (3, 4), "float32 on the CPU"),
    ("GRUCell", lambda nn: nn.GRUCell(4, 6), (3, 4), "float32 on the CPU"),
    ("RNNCell", lambda nn: nn.RNNCell(4, 6), (3, 4), "low"),
]


@pytest.mark.parametrize("name,make,shape,rule", RECURRENT, ids=[r[0] for r in RECURRENT])
def test_recurrent_modules_under_autocast(name, make, shape, rule, device):
    low = lucid.bfloat16 if device == "cpu" else lucid.float16
    want = lucid.float32 if rule == "float32 on the CPU" and device == "cpu" else low
    lucid.manual_seed(0)
    module = make(lucid.nn).to(device)
    x = lucid.randn(*shape, device=device)
    plain = module(x)
    with lucid.autocast(device, dtype=low):
        out = module(x)
    first, reference = (out[0], plain[0]) if isinstance(out, tuple) else (out, plain)
    assert first.dtype == want, (name, first.dtype)
    assert bool(lucid.allclose(first.float(), reference, rtol=0.05, atol=0.05))
    first.float().sum().backward()  # the gradients reach the float32 parameters
    assert all(p.grad is not None and p.grad.dtype == lucid.float32 for p in module.parameters())
