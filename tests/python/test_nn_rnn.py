"""RNN / LSTM / GRU and their cells, nn.utils.rnn and CTC loss against torch: state
dicts transfer (same parameter names), outputs, final states, input / state /
parameter gradients; batch_first, bidirectional, proj_size, packed sequences,
unbatched input, gradcheck, bad input."""

import pytest
import torch

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF
import torch.nn.functional as TF
from conftest import to_lucid, to_torch
from lucid.nn.utils import rnn as lrnn
from torch.nn.utils import rnn as trnn


def same(l, t, tol=1e-9):
    assert tuple(l.shape) == tuple(t.shape)
    assert torch.allclose(to_torch(l.detach()).double(), t.detach().double(), atol=tol, rtol=tol), (l, t)


def leaf(t):
    return to_lucid(t.detach()).requires_grad_()


def copy_weights(lm, tm):
    sd = {k: to_lucid(v) for k, v in tm.state_dict().items()}
    assert list(lm.state_dict()) == list(sd)
    lm.load_state_dict(sd)


def check_param_grads(lm, tm, tol=1e-8):
    for (n, lp), (_, tp) in zip(lm.named_parameters(), tm.named_parameters()):
        same(lp.grad, tp.grad, tol)


D = torch.float64
CONFIGS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 3, "num_layers": 2}),
    ("LSTM", {"proj_size": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"bias": False}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("GRU", {"bias": False, "num_layers": 3}),
]


def run_pair(kind, kw, x, hx=None):
    tm = getattr(torch.nn, kind)(4, 5, **kw).double()
    lm = getattr(lnn, kind)(4, 5, **kw).double()
    copy_weights(lm, tm)
    return tm, lm


@pytest.mark.parametrize("kind,kw", CONFIGS)
@pytest.mark.parametrize("with_hx", [False, True])
def test_rnn_matches_torch(kind, kw, with_hx):
    torch.manual_seed(0)
    tm, lm = run_pair(kind, kw, None)
    assert repr(lm) == repr(tm)
    bf = kw.get("batch_first", False)
    x = torch.randn(*((3, 6, 4) if bf else (6, 3, 4)), dtype=D, requires_grad=True)
    lx = leaf(x)
    dirs = 2 if kw.get("bidirectional") else 1
    nl = kw.get("num_layers", 1)
    hout = kw.get("proj_size", 0) or 5
    thx = lhx = None
    if with_hx:
        h0 = torch.randn(nl * dirs, 3, hout, dtype=D, requires_grad=True)
        lh0 = leaf(h0)
        if kind == "LSTM":
            c0 = torch.randn(nl * dirs, 3, 5, dtype=D, requires_grad=True)
            lc0 = leaf(c0)
            thx, lhx = (h0, c0), (lh0, lc0)
        else:
            thx, lhx = h0, lh0
    to, th = tm(x, thx)
    lo, lh = lm(lx, lhx)
    same(lo, to)
    if kind == "LSTM":
        same(lh[0], th[0])
        same(lh[1], th[1])
        tloss = to.pow(2).sum() + th[0].sum() + th[1].pow(2).sum()
        lloss = lo.pow(2).sum() + lh[0].sum() + lh[1].pow(2).sum()
    else:
        same(lh, th)
        tloss = to.pow(2).sum() + th.sum()
        lloss = lo.pow(2).sum() + lh.sum()
    tloss.backward()
    lloss.backward()
    same(lx.grad, x.grad, 1e-8)
    check_param_grads(lm, tm)
    if with_hx:
        pairs = zip(lhx, thx) if kind == "LSTM" else [(lhx, thx)]
        for a, b in pairs:
            same(a.grad, b.grad, 1e-8)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_rnn_unbatched_and_float32(kind):
    tm = getattr(torch.nn, kind)(4, 5, num_layers=2)
    lm = getattr(lnn, kind)(4, 5, num_layers=2)
    copy_weights(lm, tm)
    x = torch.randn(7, 4)
    to, th = tm(x)
    lo, lh = lm(to_lucid(x))
    same(lo, to, 1e-5)
    assert lo.dtype == lucid.float32
    if kind == "LSTM":
        same(lh[0], th[0], 1e-5)
    else:
        same(lh, th, 1e-5)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("bias", [True, False])
def test_rnn_float32_sizes_for_packed_recurrent_weight(kind, bias):
    # batch and hidden sizes large enough that the per-step products run on lucid's
    # own GEMM with the recurrent weight packed once per layer (blas.h RepeatedRhs)
    g = torch.Generator().manual_seed(0)
    tm = getattr(torch.nn, kind)(20, 64, num_layers=2, bidirectional=True, bias=bias).double()
    lm = getattr(lnn, kind)(20, 64, num_layers=2, bidirectional=True, bias=bias)
    copy_weights(lm, tm.float())
    tm.double()
    x = torch.randn(5, 32, 20, generator=g)
    xd = x.double().requires_grad_()
    to = tm(xd)[0]
    lx = to_lucid(x).requires_grad_()
    lo = lm(lx)[0]
    assert lo.dtype == lucid.float32
    torch.testing.assert_close(to_torch(lo.detach()).double(), to.detach(), rtol=1e-4, atol=1e-5)
    gy = torch.randn(to.shape, generator=g)
    to.backward(gy.double())
    lo.backward(to_lucid(gy))
    torch.testing.assert_close(to_torch(lx.grad).double(), xd.grad, rtol=1e-4, atol=1e-5)
    for (name, lp), tp in zip(lm.named_parameters(), tm.parameters()):
        torch.testing.assert_close(to_torch(lp.grad).double(), tp.grad, rtol=1e-4, atol=1e-4, msg=name)


def test_rnn_dropout_eval_and_train_with_zero():
    tm = torch.nn.LSTM(4, 5, num_layers=2, dropout=0.0).double()
    lm = lnn.LSTM(4, 5, num_layers=2, dropout=0.0).double()
    copy_weights(lm, tm)
    x = torch.randn(5, 2, 4, dtype=D)
    same(lm(to_lucid(x))[0], tm(x)[0])
    lm2 = lnn.LSTM(4, 5, num_layers=2, dropout=0.5).double()
    lm2.load_state_dict(lm.state_dict())
    lm2.eval()
    same(lm2(to_lucid(x))[0], tm(x)[0])
    lm2.train()
    assert not torch.allclose(to_torch(lm2(to_lucid(x))[0].detach()), tm(x)[0].detach())


@pytest.mark.parametrize("kind,kw", [("LSTM", {"bidirectional": True, "num_layers": 2}), ("GRU", {}),
                                     ("RNN", {"bidirectional": True}),
                                     ("LSTM", {"proj_size": 2, "batch_first": True})])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_rnn_packed_sequence_matches_torch(kind, kw, enforce_sorted):
    torch.manual_seed(3)
    tm, lm = run_pair(kind, kw, None)
    bf = kw.get("batch_first", False)
    lengths = [6, 4, 4, 1] if enforce_sorted else [4, 6, 1, 4]
    x = torch.randn(*((4, 6, 4) if bf else (6, 4, 4)), dtype=D, requires_grad=True)
    lx = leaf(x)
    tp = trnn.pack_padded_sequence(x, lengths, batch_first=bf, enforce_sorted=enforce_sorted)
    lp = lrnn.pack_padded_sequence(lx, lengths, batch_first=bf, enforce_sorted=enforce_sorted)
    same(lp.data, tp.data)
    assert lp.batch_sizes.tolist() == tp.batch_sizes.tolist()
    to, th = tm(tp)
    lo, lh = lm(lp)
    assert isinstance(lo, lrnn.PackedSequence)
    same(lo.data, to.data)
    tpad, tlen = trnn.pad_packed_sequence(to, batch_first=bf)
    lpad, llen = lrnn.pad_packed_sequence(lo, batch_first=bf)
    same(lpad, tpad)
    assert llen.tolist() == tlen.tolist()
    if kind == "LSTM":
        same(lh[0], th[0])
        same(lh[1], th[1])
        th, lh = th[0] + th[1].sum(), lh[0] + lh[1].sum()
    else:
        same(lh, th)
    (tpad.pow(2).sum() + th.sum()).backward()
    (lpad.pow(2).sum() + lh.sum()).backward()
    same(lx.grad, x.grad, 1e-8)
    check_param_grads(lm, tm)


def test_rnn_utils_match_torch():
    seqs = [torch.randn(n, 3, dtype=D) for n in (2, 5, 3)]
    lseqs = [to_lucid(s) for s in seqs]
    for bf in (False, True):
        same(lrnn.pad_sequence(lseqs, batch_first=bf, padding_value=-1.0),
             trnn.pad_sequence(seqs, batch_first=bf, padding_value=-1.0))
    same(lrnn.pad_sequence(lseqs, batch_first=True, padding_side="left"),
         trnn.pad_sequence(seqs, batch_first=True, padding_side="left"))
    tp = trnn.pack_sequence(seqs, enforce_sorted=False)
    lp = lrnn.pack_sequence(lseqs, enforce_sorted=False)
    same(lp.data, tp.data)
    assert lp.sorted_indices.tolist() == tp.sorted_indices.tolist()
    assert lp.unsorted_indices.tolist() == tp.unsorted_indices.tolist()
    for a, b in zip(lrnn.unpack_sequence(lp), trnn.unpack_sequence(tp)):
        same(a, b)
    pad, lens = lrnn.pad_packed_sequence(lp, total_length=7, padding_value=2.0)
    tpad, tlens = trnn.pad_packed_sequence(tp, total_length=7, padding_value=2.0)
    same(pad, tpad)
    with pytest.raises(ValueError, match="total_length"):
        lrnn.pad_packed_sequence(lp, total_length=2)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        lrnn.pack_sequence(lseqs)
    with pytest.raises(RuntimeError, match="greater than 0"):
        lrnn.pack_padded_sequence(lucid.randn(3, 2, 1), [2, 0])


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("bias", [True, False])
def test_cells_match_torch(kind, bias):
    tm = getattr(torch.nn, kind)(4, 5, bias=bias).double()
    lm = getattr(lnn, kind)(4, 5, bias=bias).double()
    copy_weights(lm, tm)
    x = torch.randn(3, 4, dtype=D, requires_grad=True)
    h = torch.randn(3, 5, dtype=D, requires_grad=True)
    lx, lh = leaf(x), leaf(h)
    if kind == "LSTMCell":
        c = torch.randn(3, 5, dtype=D, requires_grad=True)
        lc = leaf(c)
        th, tc = tm(x, (h, c))
        lh2, lc2 = lm(lx, (lh, lc))
        same(lh2, th)
        same(lc2, tc)
        (th.sum() + tc.pow(2).sum()).backward()
        (lh2.sum() + lc2.pow(2).sum()).backward()
        same(lc.grad, c.grad)
    else:
        th = tm(x, h)
        lh2 = lm(lx, lh)
        same(lh2, th)
        th.pow(2).sum().backward()
        lh2.pow(2).sum().backward()
    same(lx.grad, x.grad)
    same(lh.grad, h.grad)
    check_param_grads(lm, tm)
    # unbatched, no state
    x1 = torch.randn(4, dtype=D)
    to = tm(x1)
    lo = lm(to_lucid(x1))
    if kind == "LSTMCell":
        same(lo[0], to[0])
    else:
        same(lo, to)


def test_fused_cells_gradcheck_and_double_backward():
    g = lucid.randn(2, 12, dtype=lucid.float64, requires_grad=True)
    c = lucid.randn(2, 3, dtype=lucid.float64, requires_grad=True)
    f = lambda g, c: lucid._C._lstm_cell_fused(g, c)  # noqa: E731
    assert lucid.autograd.gradcheck(f, (g, c))
    assert lucid.autograd.gradgradcheck(f, (g, c))
    gx = lucid.randn(2, 9, dtype=lucid.float64, requires_grad=True)
    gh = lucid.randn(2, 9, dtype=lucid.float64, requires_grad=True)
    h = lucid.randn(2, 3, dtype=lucid.float64, requires_grad=True)
    f2 = lambda a, b, c: lucid._C._gru_cell_fused(a, b, c)  # noqa: E731
    assert lucid.autograd.gradcheck(f2, (gx, gh, h))
    assert lucid.autograd.gradgradcheck(f2, (gx, gh, h))


def test_lstm_module_gradcheck_small():
    m = lnn.LSTM(2, 2, bidirectional=True, proj_size=1).double()
    x = lucid.randn(3, 1, 2, dtype=lucid.float64, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda x: m(x)[0], (x,))
    m2 = lnn.GRU(2, 2).double()
    assert lucid.autograd.gradcheck(lambda x: m2(x)[0], (x,))


def test_rnn_bad_input():
    with pytest.raises(ValueError, match="dropout"):
        lnn.LSTM(2, 3, dropout=1.5)
    with pytest.raises(ValueError, match="proj_size"):
        lnn.LSTM(2, 3, proj_size=3)
    with pytest.raises(ValueError, match="proj_size"):
        lnn.GRU(2, 3, proj_size=1)
    with pytest.raises(ValueError, match="nonlinearity"):
        lnn.RNN(2, 3, nonlinearity="sigmoid")
    m = lnn.LSTM(2, 3)
    with pytest.raises(RuntimeError, match="input_size"):
        m(lucid.randn(4, 1, 5))
    with pytest.raises(ValueError, match="2D or 3D"):
        m(lucid.randn(4, 1, 2, 1))
    with pytest.raises(RuntimeError, match="hidden"):
        m(lucid.randn(4, 2, 2), (lucid.zeros(1, 3, 3), lucid.zeros(1, 2, 3)))
    with pytest.raises(RuntimeError, match="2-D"):
        m(lucid.randn(4, 2), (lucid.zeros(1, 1, 3), lucid.zeros(1, 1, 3)))
    with pytest.raises(RuntimeError):
        lnn.GRUCell(2, 3)(lucid.randn(4, 3))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("padded", [True, False])
def test_ctc_loss_matches_torch(reduction, padded):
    torch.manual_seed(4)
    T, N, C = 8, 3, 5
    lp = torch.randn(T, N, C, dtype=D).log_softmax(2).detach().requires_grad_()
    tl = [3, 1, 2]
    il = [8, 6, 5]
    if padded:
        targets = torch.randint(1, C, (N, 3))
        targets[0, :] = torch.tensor([2, 2, 3])
    else:
        targets = torch.randint(1, C, (sum(tl),))
    llp = leaf(lp)
    t = TF.ctc_loss(lp, targets, torch.tensor(il), torch.tensor(tl), reduction=reduction)
    l = LF.ctc_loss(llp, to_lucid(targets), to_lucid(torch.tensor(il)), tl, reduction=reduction)
    same(l, t)
    t.sum().backward()
    l.sum().backward()
    same(llp.grad, lp.grad, 1e-8)


def test_ctc_loss_zero_infinity_module_and_blank():
    T, C = 2, 4
    lp = torch.randn(T, 2, C, dtype=D).log_softmax(2)
    targets = torch.tensor([[1, 1, 2], [3, 0, 0]])  # first needs >= 4 steps: impossible
    tl, il = torch.tensor([3, 1]), torch.tensor([2, 2])
    t = TF.ctc_loss(lp, targets, il, tl, reduction="none")
    l = LF.ctc_loss(to_lucid(lp), to_lucid(targets), to_lucid(il), to_lucid(tl), reduction="none")
    same(l, t)
    t = torch.nn.CTCLoss(zero_infinity=True)(lp, targets, il, tl)
    l = lnn.CTCLoss(zero_infinity=True)(to_lucid(lp), to_lucid(targets), to_lucid(il), to_lucid(tl))
    same(l, t)
    targets2 = torch.tensor([[0, 1], [2, 2]])
    t = TF.ctc_loss(lp, targets2, il, torch.tensor([2, 1]), blank=3, reduction="sum")
    l = LF.ctc_loss(to_lucid(lp), to_lucid(targets2), to_lucid(il), [2, 1], blank=3, reduction="sum")
    same(l, t)
    # torch's gradient is the one for logits followed by log_softmax: gradcheck that composition
    x = lucid.randn(4, 1, 3, dtype=lucid.float64, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda x: LF.ctc_loss(x.log_softmax(2), lucid.tensor([[1, 2]]), [4], [2]), (x,))


def test_packed_unsorted_with_initial_state():
    torch.manual_seed(5)
    tm, lm = run_pair("LSTM", {"num_layers": 2}, None)
    lengths = [2, 5, 3]
    x = torch.randn(5, 3, 4, dtype=D)
    h0 = torch.randn(2, 3, 5, dtype=D, requires_grad=True)
    c0 = torch.randn(2, 3, 5, dtype=D)
    lh0 = leaf(h0)
    to, (th, tc) = tm(trnn.pack_padded_sequence(x, lengths, enforce_sorted=False), (h0, c0))
    lo, (lh, lc) = lm(lrnn.pack_padded_sequence(to_lucid(x), lengths, enforce_sorted=False), (lh0, to_lucid(c0)))
    same(lo.data, to.data)
    same(lh, th)
    same(lc, tc)
    (th.sum() + tc.sum()).backward()
    (lh.sum() + lc.sum()).backward()
    same(lh0.grad, h0.grad)


def test_rnn_positional_arguments_and_parameter_names():
    tm = torch.nn.RNN(3, 4, 2, "relu", False, True, 0.0, True)
    lm = lnn.RNN(3, 4, 2, "relu", False, True, 0.0, True)
    assert [n for n, _ in lm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert repr(lm) == repr(tm)
    tm = torch.nn.LSTM(3, 4, 1, True, False, 0.0, True, 2)
    lm = lnn.LSTM(3, 4, 1, True, False, 0.0, True, 2)
    assert [(n, tuple(p.shape)) for n, p in lm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]


def test_ctc_loss_unbatched_float32_grads_and_bad_input():
    torch.manual_seed(6)
    lp = torch.randn(6, 4).log_softmax(1).requires_grad_()
    tg = torch.tensor([1, 3, 3])
    t = TF.ctc_loss(lp, tg, torch.tensor(6), torch.tensor(3))
    llp = leaf(lp)
    l = LF.ctc_loss(llp, to_lucid(tg), 6, 3)
    same(l, t, 1e-5)
    t.backward()
    l.backward()
    same(llp.grad, lp.grad, 1e-5)
    # zero_infinity: the impossible entry's loss and gradient are zero
    lp2 = torch.randn(2, 2, 4, dtype=D).log_softmax(2).requires_grad_()
    tg2, il, tl = torch.tensor([[1, 1, 2], [3, 0, 0]]), torch.tensor([2, 2]), torch.tensor([3, 1])
    t = TF.ctc_loss(lp2, tg2, il, tl, zero_infinity=True, reduction="sum")
    llp2 = leaf(lp2)
    l = LF.ctc_loss(llp2, to_lucid(tg2), to_lucid(il), to_lucid(tl), zero_infinity=True, reduction="sum")
    same(l, t)
    t.backward()
    l.backward()
    same(llp2.grad, lp2.grad)
    with pytest.raises(RuntimeError, match="label"):
        LF.ctc_loss(to_lucid(lp2), lucid.tensor([[1, 9], [1, 1]]), [2, 2], [2, 2])
    with pytest.raises(RuntimeError, match="input_lengths"):
        LF.ctc_loss(to_lucid(lp2), lucid.tensor([[1, 2], [1, 1]]), [3, 2], [2, 2])
    with pytest.raises(ValueError):
        LF.ctc_loss(to_lucid(lp2), lucid.tensor([[1, 2], [1, 1]]), [2, 2], [2, 2], reduction="avg")


@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_layer_op_gradcheck_and_double_backward(reverse):
    f64 = lucid.float64
    gx = lucid.randn(3, 2, 8, dtype=f64, requires_grad=True)
    h0 = lucid.randn(2, 2, dtype=f64, requires_grad=True)
    c0 = lucid.randn(2, 2, dtype=f64, requires_grad=True)
    w = lucid.randn(8, 2, dtype=f64, requires_grad=True)
    f = lambda *a: lucid._C._lstm_layer(*a, reverse)  # noqa: E731
    assert lucid.autograd.gradcheck(f, (gx, h0, c0, w))
    assert lucid.autograd.gradgradcheck(f, (gx, h0, c0, w))


def test_lstm_module_gradcheck_fused_layer_path():
    m = lnn.LSTM(2, 3, num_layers=2, bidirectional=True).double()
    x = lucid.randn(3, 2, 2, dtype=lucid.float64, requires_grad=True)
    h0 = lucid.randn(4, 2, 3, dtype=lucid.float64, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda x, h: m(x, (h, h * 0.5))[0], (x, h0))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_gru_layer_op_gradcheck_and_double_backward(reverse, bias):
    f64 = lucid.float64
    gx = lucid.randn(3, 2, 6, dtype=f64, requires_grad=True)
    h0 = lucid.randn(2, 2, dtype=f64, requires_grad=True)
    w = lucid.randn(6, 2, dtype=f64, requires_grad=True)
    args = (gx, h0, w) + ((lucid.randn(6, dtype=f64, requires_grad=True),) if bias else ())
    f = (lambda gx, h, w, b: lucid._C._gru_layer(gx, h, w, b, reverse)) if bias else \
        (lambda gx, h, w: lucid._C._gru_layer(gx, h, w, None, reverse))
    assert lucid.autograd.gradcheck(f, args)
    assert lucid.autograd.gradgradcheck(f, args)
