"""GPU legs of the sequence layers (ops/prims/seq.h on the GPU: backend/cuda/seq_cells.cu,
seq_layers.cpp, ctc.cu): nn.LSTM / GRU / LSTMCell / GRUCell and ctc_loss on lucid's GPU
against torch on CUDA and against lucid's own CPU, forward and backward, float32 and
float64; float64 gradcheck of the fused cell, layer and CTC ops on the GPU; empty
batches, determinism and a bad CTC label."""

import pytest
import torch

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF
import torch.nn.functional as TF
from conftest import to_lucid, to_torch
from lucid.nn.utils import rnn as lrnn
from torch.nn.utils import rnn as trnn

needs_gpu = pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")


@pytest.fixture(autouse=True)
def _exact_torch_float32():
    """torch's cuDNN RNNs and products may use TF32; lucid's float32 is exact."""
    before = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = before

F64 = lucid.float64
# float32: the GPU's products and transcendentals round differently from the CPU's and
# from cuDNN's (which may also use TF32); float64 is compared tightly.
TOL = {torch.float64: 1e-9, torch.float32: 2e-4}


def close(l, t, tol):
    """lucid tensor l (any device) matches tensor t (torch on any device, or lucid)."""
    if isinstance(t, lucid.Tensor):
        t = to_torch(t.detach())
    assert tuple(l.shape) == tuple(t.shape), (l.shape, t.shape)
    a, b = to_torch(l.detach()).double(), t.detach().cpu().double()
    assert torch.allclose(a, b, atol=tol, rtol=tol, equal_nan=True), (a - b).abs().max()


def on(t, device, grad=True):
    """A leaf lucid copy of torch tensor t on `device`."""
    x = to_lucid(t.detach().cpu(), device)
    return x.requires_grad_() if grad else x


def copy_weights(lm, tm, device):
    lm.load_state_dict({k: to_lucid(v.detach().cpu(), device) for k, v in tm.state_dict().items()})


MODULES = [
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"bias": False, "batch_first": True}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("GRU", {"bias": False}),
]


@needs_gpu
@pytest.mark.parametrize("kind,kw", MODULES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
def test_rnn_module_matches_torch_cuda_and_cpu(kind, kw, dtype):
    """The fused layer primitives (LstmLayer, GruLayer and their backward) on the GPU."""
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(4, 6, **kw).to(dtype).cuda()
    bf = kw.get("batch_first", False)
    dirs = 2 if kw.get("bidirectional") else 1
    T, B = 7, 3
    x = torch.randn(*((B, T, 4) if bf else (T, B, 4)), dtype=dtype, device="cuda", requires_grad=True)
    h0 = torch.randn(kw.get("num_layers", 1) * dirs, B, 6, dtype=dtype, device="cuda", requires_grad=True)
    c0 = torch.randn(kw.get("num_layers", 1) * dirs, B, 6, dtype=dtype, device="cuda", requires_grad=True)
    thx = (h0, c0) if kind == "LSTM" else h0
    to, th = tm(x, thx)
    th = th if kind == "LSTM" else (th,)
    tloss = to.pow(2).sum() + sum(s.pow(2).sum() * (i + 1) for i, s in enumerate(th))
    tloss.backward()
    results = {}
    for device in ("gpu", "cpu"):
        lm = getattr(lnn, kind)(4, 6, **kw)
        lm = lm.double() if dtype == torch.float64 else lm
        lm = lm.to(device)
        copy_weights(lm, tm, device)
        lx, lh0, lc0 = on(x, device), on(h0, device), on(c0, device)
        lo, lh = lm(lx, (lh0, lc0) if kind == "LSTM" else lh0)
        assert lo.device == lx.device
        lh = lh if kind == "LSTM" else (lh,)
        lloss = lo.pow(2).sum() + sum(s.pow(2).sum() * (i + 1) for i, s in enumerate(lh))
        lloss.backward()
        results[device] = (lo, lh, lx.grad, lh0.grad, lc0.grad if kind == "LSTM" else None,
                           [p.grad for p in lm.parameters()])
    tol = TOL[dtype]
    tgrads = [p.grad for p in tm.parameters()]
    for device, (lo, lh, gx, gh0, gc0, pgrads) in results.items():
        close(lo, to, tol)
        for a, b in zip(lh, th):
            close(a, b, tol)
        close(gx, x.grad, tol)
        close(gh0, h0.grad, tol)
        if kind == "LSTM":
            close(gc0, c0.grad, tol)
        for a, b in zip(pgrads, tgrads):
            close(a, b, tol)
    # the GPU against lucid's CPU: the same algorithm, so closer than against cuDNN
    gpu, cpu = results["gpu"], results["cpu"]
    close(gpu[0], cpu[0], tol)
    close(gpu[2], cpu[2], tol)
    for a, b in zip(gpu[5], cpu[5]):
        close(a, b, tol)


@needs_gpu
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_rnn_packed_sequence_on_gpu(kind):
    torch.manual_seed(3)
    tm = getattr(torch.nn, kind)(3, 4, bidirectional=True).double().cuda()
    lm = getattr(lnn, kind)(3, 4, bidirectional=True).double().to("gpu")
    copy_weights(lm, tm, "gpu")
    x = torch.randn(5, 3, 3, dtype=torch.float64, device="cuda", requires_grad=True)
    lengths = [3, 5, 2]
    tp = trnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
    lx = on(x, "gpu")
    lp = lrnn.pack_padded_sequence(lx, lengths, enforce_sorted=False)
    to, _ = tm(tp)
    lo, _ = lm(lp)
    tpad, tlen = trnn.pad_packed_sequence(to)
    lpad, llen = lrnn.pad_packed_sequence(lo)
    close(lpad, tpad, 1e-9)
    assert llen.tolist() == tlen.tolist()
    tpad.pow(2).sum().backward()
    lpad.pow(2).sum().backward()
    close(lx.grad, x.grad, 1e-9)


@needs_gpu
@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("bias", [True, False])
def test_cells_match_torch_cuda(kind, dtype, bias):
    """The pointwise cell primitives (LstmCell, GruCell and their backward) on the GPU."""
    torch.manual_seed(1)
    tm = getattr(torch.nn, kind)(4, 5, bias=bias).to(dtype).cuda()
    lm = getattr(lnn, kind)(4, 5, bias=bias)
    lm = (lm.double() if dtype == torch.float64 else lm).to("gpu")
    copy_weights(lm, tm, "gpu")
    x = torch.randn(3, 4, dtype=dtype, device="cuda", requires_grad=True)
    h = torch.randn(3, 5, dtype=dtype, device="cuda", requires_grad=True)
    c = torch.randn(3, 5, dtype=dtype, device="cuda", requires_grad=True)
    lx, lh, lc = on(x, "gpu"), on(h, "gpu"), on(c, "gpu")
    tol = TOL[dtype]
    if kind == "LSTMCell":
        th, tc = tm(x, (h, c))
        lh2, lc2 = lm(lx, (lh, lc))
        close(lh2, th, tol)
        close(lc2, tc, tol)
        (th.sum() + tc.pow(2).sum()).backward()
        (lh2.sum() + lc2.pow(2).sum()).backward()
        close(lc.grad, c.grad, tol)
    else:
        th = tm(x, h)
        lh2 = lm(lx, lh)
        close(lh2, th, tol)
        th.pow(2).sum().backward()
        lh2.pow(2).sum().backward()
    close(lx.grad, x.grad, tol)
    close(lh.grad, h.grad, tol)
    for a, b in zip(lm.parameters(), tm.parameters()):
        close(a.grad, b.grad, tol)
    # no state given: zeros made on the input's device
    lo = lm(lx)
    assert (lo[0] if kind == "LSTMCell" else lo).device == lx.device


def test_fused_cells_gradcheck(device):
    g = lucid.randn(3, 12, dtype=F64, device=device, requires_grad=True)
    c = lucid.randn(3, 3, dtype=F64, device=device, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda g, c: lucid._C._lstm_cell_fused(g, c), (g, c))
    gx = lucid.randn(3, 9, dtype=F64, device=device, requires_grad=True)
    gh = lucid.randn(3, 9, dtype=F64, device=device, requires_grad=True)
    h = lucid.randn(3, 3, dtype=F64, device=device, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda a, b, c: lucid._C._gru_cell_fused(a, b, c), (gx, gh, h))


@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_layer_op_gradcheck(reverse, device):
    gx = lucid.randn(4, 2, 12, dtype=F64, device=device, requires_grad=True)
    h0 = lucid.randn(2, 3, dtype=F64, device=device, requires_grad=True)
    c0 = lucid.randn(2, 3, dtype=F64, device=device, requires_grad=True)
    w = lucid.randn(12, 3, dtype=F64, device=device, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda *a: lucid._C._lstm_layer(*a, reverse), (gx, h0, c0, w))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_gru_layer_op_gradcheck(reverse, bias, device):
    gx = lucid.randn(4, 2, 9, dtype=F64, device=device, requires_grad=True)
    h0 = lucid.randn(2, 3, dtype=F64, device=device, requires_grad=True)
    w = lucid.randn(9, 3, dtype=F64, device=device, requires_grad=True)
    if bias:
        b = lucid.randn(9, dtype=F64, device=device, requires_grad=True)
        assert lucid.autograd.gradcheck(lambda gx, h, w, b: lucid._C._gru_layer(gx, h, w, b, reverse), (gx, h0, w, b))
    else:
        assert lucid.autograd.gradcheck(lambda gx, h, w: lucid._C._gru_layer(gx, h, w, None, reverse), (gx, h0, w))


@needs_gpu
@pytest.mark.parametrize("reverse", [False, True])
def test_layer_ops_match_cpu_with_a_long_sequence_and_are_deterministic(reverse):
    """Many steps, wide enough for several blocks per cell launch; run twice, bitwise equal."""
    gen = torch.Generator().manual_seed(7)
    T, B, H = 40, 9, 70
    gx = torch.randn(T, B, 4 * H, generator=gen, dtype=torch.float64)
    h0, c0 = torch.randn(B, H, generator=gen, dtype=torch.float64), torch.randn(B, H, generator=gen, dtype=torch.float64)
    w = torch.randn(4 * H, H, generator=gen, dtype=torch.float64) * 0.1
    gru_x, gru_w = gx[:, :, :3 * H].contiguous(), w[:3 * H].contiguous()
    b = torch.randn(3 * H, generator=gen, dtype=torch.float64)

    def run(device):
        args = [on(t, device) for t in (gx, h0, c0, w)]
        out, hn, cn = lucid._C._lstm_layer(*args, reverse)
        (out.pow(2).sum() + hn.sum() + cn.pow(2).sum()).backward()
        gargs = [on(t, device) for t in (gru_x, h0, gru_w, b)]
        gout, ghn = lucid._C._gru_layer(*gargs, reverse)
        (gout.pow(2).sum() + ghn.sum()).backward()
        return [out, hn, cn, gout, ghn] + [a.grad for a in args + gargs]

    cpu, gpu, again = run("cpu"), run("gpu"), run("gpu")
    for c, g, g2 in zip(cpu, gpu, again):
        close(g, c, 1e-9)
        assert to_torch(g).equal(to_torch(g2))


def test_layer_ops_with_an_empty_batch(device):
    gx = lucid.randn(3, 0, 8, dtype=F64, device=device, requires_grad=True)
    h0 = lucid.randn(0, 2, dtype=F64, device=device, requires_grad=True)
    c0 = lucid.randn(0, 2, dtype=F64, device=device, requires_grad=True)
    w = lucid.randn(8, 2, dtype=F64, device=device, requires_grad=True)
    out, hn, cn = lucid._C._lstm_layer(gx, h0, c0, w, False)
    assert tuple(out.shape) == (3, 0, 2)
    (out.sum() + hn.sum() + cn.sum()).backward()
    assert w.grad.tolist() == [[0.0, 0.0]] * 8
    gw = lucid.randn(6, 2, dtype=F64, device=device, requires_grad=True)
    gout, ghn = lucid._C._gru_layer(lucid.randn(3, 0, 6, dtype=F64, device=device), h0, gw, None, True)
    gout.sum().backward()
    assert gw.grad.tolist() == [[0.0, 0.0]] * 6


# ---- CTC --------------------------------------------------------------------------------

def ctc_case(seed, T, N, C, smax, dtype):
    gen = torch.Generator().manual_seed(seed)
    lp = torch.randn(T, N, C, generator=gen, dtype=dtype).log_softmax(2)
    tl = torch.randint(0, smax + 1, (N,), generator=gen)
    tl[0] = smax
    il = torch.randint(max(1, 2 * smax + 1), T + 1, (N,), generator=gen)
    il[-1] = T
    targets = torch.randint(1, C, (N, smax), generator=gen)
    targets[0, 1] = targets[0, 0]  # a repeated label: no skip there
    return lp, targets, il, tl


@needs_gpu
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss_matches_torch_cuda_and_cpu(dtype, reduction):
    lp, targets, il, tl = ctc_case(4, 12, 5, 6, 4, dtype)
    tlp = lp.cuda().requires_grad_()
    t = TF.ctc_loss(tlp, targets.cuda(), il.cuda(), tl.cuda(), reduction=reduction)
    t.sum().backward()
    tol = TOL[dtype]
    grads = {}
    for device in ("gpu", "cpu"):
        llp = on(lp, device)
        l = LF.ctc_loss(llp, to_lucid(targets, device), il.tolist(), tl.tolist(), reduction=reduction)
        assert l.device == llp.device
        close(l, t, tol)
        l.sum().backward()
        close(llp.grad, tlp.grad, tol)
        grads[device] = llp.grad
    close(grads["gpu"], grads["cpu"], 1e-12 if dtype == torch.float64 else 1e-5)


@needs_gpu
def test_ctc_loss_many_entries_long_targets_matches_cpu():
    """More entries than one launch takes, targets longer than a block's threads."""
    lp, targets, il, tl = ctc_case(5, 300, 131, 40, 140, torch.float64)
    out = {}
    for device in ("gpu", "cpu"):
        llp = on(lp, device)
        l = LF.ctc_loss(llp, to_lucid(targets, device), il.tolist(), tl.tolist(), reduction="none")
        (l * lucid.arange(131, dtype=F64, device=device)).sum().backward()
        out[device] = (l, llp.grad)
    close(out["gpu"][0], out["cpu"][0], 1e-9)
    close(out["gpu"][1], out["cpu"][1], 1e-9)
    # deterministic: the same bits again
    llp = on(lp, "gpu")
    l = LF.ctc_loss(llp, to_lucid(targets, "gpu"), il.tolist(), tl.tolist(), reduction="none")
    (l * lucid.arange(131, dtype=F64, device="gpu")).sum().backward()
    assert to_torch(l).equal(to_torch(out["gpu"][0]))
    assert to_torch(llp.grad).equal(to_torch(out["gpu"][1]))


@needs_gpu
def test_ctc_loss_impossible_alignments_blank_and_empty_targets_on_gpu():
    lp = torch.randn(3, 4, 5, dtype=torch.float64).log_softmax(2)
    # entry 0 needs 4 steps (impossible), 1 has an empty target, 2 a zero-length input,
    # 3 uses blank = 4 with label 0 in its target
    targets = torch.tensor([[1, 1, 2], [0, 0, 0], [0, 0, 0], [0, 3, 0]])
    il, tl = [3, 3, 0, 3], [3, 0, 0, 2]
    res = {}
    for device in ("gpu", "cpu"):
        llp = on(lp, device)
        l = LF.ctc_loss(llp, to_lucid(targets, device), il, tl, blank=4, reduction="none")
        l.sum().backward()  # NaN gradient for the impossible entry, as torch and the CPU
        res[device] = (l, llp.grad)
        z = on(lp, device)
        LF.ctc_loss(z, to_lucid(targets, device), il, tl, blank=4, zero_infinity=True).backward()
        res[device + "z"] = z.grad
    close(res["gpu"][0], res["cpu"][0], 1e-12)
    close(res["gpu"][1], res["cpu"][1], 1e-12)
    close(res["gpuz"], res["cpuz"], 1e-12)


def test_ctc_loss_gradcheck(device):
    x = lucid.randn(5, 2, 4, dtype=F64, device=device, requires_grad=True)
    tg = lucid.tensor([[1, 2, 2], [3, 0, 0]], device=device)
    assert lucid.autograd.gradcheck(lambda x: LF.ctc_loss(x.log_softmax(2), tg, [5, 4], [3, 1]), (x,))


def test_ctc_loss_bad_label_raises(device):
    # on the GPU at the next synchronisation (item()), as the CPU at once
    lp = lucid.randn(4, 2, 3, dtype=F64, device=device).log_softmax(2)
    with pytest.raises(RuntimeError, match=r"target label 7 is out of the class range \[0, 3\)"):
        LF.ctc_loss(lp, lucid.tensor([[1, 7], [1, 2]], device=device), [4, 4], [2, 2]).item()
    # the device keeps working
    ok = LF.ctc_loss(lp, lucid.tensor([[1, 2], [1, 2]], device=device), [4, 4], [2, 2])
    assert ok.item() == pytest.approx(LF.ctc_loss(lp.cpu(), lucid.tensor([[1, 2], [1, 2]]), [4, 4], [2, 2]).item())
