"""A linear layer's bias in its products (Note [A linear layer's bias in its products],
csrc/ops/linalg.cpp): addmm with a row bias adds it in the product (cuBLASLt's BIAS
epilogue on the GPU), and its backward gives the bias's gradient with the weight's
(BGRADB: the sums of g's rows) instead of a separate sum. Values and gradients against
torch for the shapes, dtypes and bias layouts that take the fused path and those that
do not (beta != 1, a strided bias, float64, an empty batch, create_graph), the launches
a layer's backward makes, and accumulation into .grad."""

import pytest
import torch

import lucid
from conftest import to_lucid, to_torch

TOL = {"float64": 1e-12, "float32": 1e-4, "float16": 2e-2, "bfloat16": 8e-2}


def rand(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(tuple(shape), generator=g, dtype=torch.float64).to(getattr(torch, dtype))


def run_both(fn_torch, fn_lucid, tensors, device, dtype, grad_out_shape, seed=9):
    """fn over torch and lucid copies of `tensors` (those with requires_grad get
    gradients): the outputs and the gradients for one random incoming gradient match,
    torch's computed in float64 from the same values."""
    tol = TOL[dtype]
    tt = [t.detach().double().requires_grad_(t.requires_grad) for t in tensors]
    lt = [to_lucid(t.detach(), device).requires_grad_(t.requires_grad) for t in tensors]
    ref, out = fn_torch(*tt), fn_lucid(*lt)
    assert out.dtype == lt[0].dtype and tuple(out.shape) == tuple(ref.shape)
    torch.testing.assert_close(to_torch(out.detach().cpu()).double(), ref.detach(), rtol=tol, atol=tol)
    g = rand(grad_out_shape, dtype, seed)
    ref.backward(g.double())
    out.backward(to_lucid(g, device))
    for t, l in zip(tt, lt):
        if t.requires_grad:
            assert tuple(l.grad.shape) == tuple(t.shape)
            torch.testing.assert_close(to_torch(l.grad.cpu()).double(), t.grad, rtol=tol, atol=tol * 4)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("m,k,n", [(128, 784, 512), (7, 3, 5), (1, 4, 1), (5, 1, 3), (33, 17, 1), (2, 9, 130)])
def test_linear_values_and_gradients(m, k, n, dtype, device):
    scale = 1 / k**0.5
    x, w, b = rand((m, k), dtype, 1), (rand((n, k), "float64", 2) * scale).to(getattr(torch, dtype)), rand((n,), dtype, 3)
    for t in (x, w, b):
        t.requires_grad_()
    run_both(lambda x, w, b: torch.nn.functional.linear(x, w, b), lucid.nn.functional.linear, [x, w, b], device,
             dtype, (m, n))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_addmm_row_biases_alpha_and_beta(dtype, device):
    a, mat = rand((6, 4), dtype, 1), rand((4, 5), dtype, 2)
    for bias_shape in ((5,), (1, 5), (6, 5), (6, 1), ()):
        for alpha, beta in ((1, 1), (2.5, 1), (1, 0.5), (1, 0)):
            bias = rand(bias_shape, dtype, 3)
            for t in (a, mat, bias):
                t.requires_grad_()
            # mat as the transpose of a contiguous matrix too: a linear layer's weight.T
            for m2 in (mat, rand((5, 4), dtype, 4).T.detach().requires_grad_()):
                run_both(lambda i, x, y: torch.addmm(i, x, y, beta=beta, alpha=alpha),
                         lambda i, x, y: lucid.addmm(i, x, y, beta=beta, alpha=alpha), [bias, a, m2], device, dtype,
                         (6, 5))


def test_strided_bias_and_partial_gradients(device):
    x, w = rand((8, 6), "float32", 1), rand((3, 6), "float32", 2)
    wide = rand((6,), "float32", 3)
    bias = wide[::2].detach()  # a strided [3]: the copy and the sum
    for needs in ((True, True, True), (True, False, True), (True, True, False), (False, True, True)):
        ts = [t.detach().clone().requires_grad_(r) for t, r in zip((x, w, bias), needs)]
        run_both(lambda x, w, b: torch.nn.functional.linear(x, w, b), lucid.nn.functional.linear, ts, device,
                 "float32", (8, 3))
    lx, lw = to_lucid(x, device), to_lucid(w, device).requires_grad_()
    lb = to_lucid(wide, device)[::2].requires_grad_()
    lucid.nn.functional.linear(lx, lw, lb).sum().backward()
    assert lb.grad.tolist() == pytest.approx([8.0] * 3)


def test_empty_batch(device):
    lin = lucid.nn.Linear(4, 3).to(device)
    out = lin(lucid.zeros(0, 4, device=device))
    assert tuple(out.shape) == (0, 3)
    out.sum().backward()
    assert lin.bias.grad.tolist() == [0.0, 0.0, 0.0] and lin.weight.grad.abs().sum().item() == 0


def test_backward_of_a_layer_is_two_products(device):
    """x, the weight and the bias: two products, the bias's sum inside the weight's."""
    lin = lucid.nn.Linear(16, 8).to(device)
    x = lucid.randn(32, 16, device=device).requires_grad_()
    y = lin(x)
    lucid._C._op_tally_begin()
    y.backward(lucid.ones_like(y))
    calls = [c[0] for c in lucid._C._op_tally_end()]
    assert calls == ["matmul", "matmul"], calls
    assert lin.bias.grad.tolist() == pytest.approx([32.0] * 8)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
@pytest.mark.parametrize("shape", [(4, 6, 16), (2, 3, 5, 16), (1, 7, 16), (3, 0, 16)])
def test_linear_of_a_batch_of_rows(shape, dtype, device):
    """A [..., rows, k] input whose rows merge is one product with the bias inside."""
    x, w, b = rand(shape, dtype, 1), (rand((8, 16), "float64", 2) / 4).to(getattr(torch, dtype)), rand((8,), dtype, 3)
    for t in (x, w, b):
        t.requires_grad_()
    run_both(lambda x, w, b: torch.nn.functional.linear(x, w, b), lucid.nn.functional.linear, [x, w, b], device,
             dtype, shape[:-1] + (8,))


def test_layer_of_a_batch_of_rows_is_one_product_each_way(device):
    lin = lucid.nn.Linear(16, 8).to(device)
    x = lucid.randn(4, 8, 16, device=device).requires_grad_()
    lucid._C._op_tally_begin()
    y = lin(x)
    forward = [c[0] for c in lucid._C._op_tally_end()]
    assert forward.count("matmul") == 1 and "add" not in forward, forward
    assert y.is_contiguous() and tuple(y.shape) == (4, 8, 8)
    lucid._C._op_tally_begin()
    y.backward(lucid.ones_like(y))
    calls = [c[0] for c in lucid._C._op_tally_end()]
    assert calls.count("matmul") == 2 and "sum" not in calls, calls
    assert lin.bias.grad.tolist() == pytest.approx([32.0] * 8)
    # rows that do not merge (a transposed batch) take matmul and add, as before
    xt = lucid.randn(8, 4, 16, device=device).transpose(0, 1)
    torch.testing.assert_close(to_torch(lin(xt).detach().cpu()),
                               to_torch(lin(xt.contiguous()).detach().cpu()), rtol=1e-5, atol=1e-5)


def test_bias_gradients_accumulate(device):
    lin = lucid.nn.Linear(5, 4).to(device)
    x = lucid.randn(3, 5, device=device)
    lin(x).sum().backward()
    lin(x).sum().backward()
    assert lin.bias.grad.tolist() == pytest.approx([6.0] * 4)


def test_second_derivatives_through_the_bias(device):
    x = rand((5, 4), "float64", 1).requires_grad_()
    w = rand((3, 4), "float64", 2).requires_grad_()
    b = rand((3,), "float64", 3).requires_grad_()
    lx, lw, lb = (to_lucid(t.detach(), device).requires_grad_() for t in (x, w, b))
    for m, F, ts in ((torch, torch.nn.functional, (x, w, b)), (lucid, lucid.nn.functional, (lx, lw, lb))):
        out = (F.linear(*ts) ** 2).sum()
        gw, gb = m.autograd.grad(out, (ts[1], ts[2]), create_graph=True)
        ((gw**2).sum() + (gb**3).sum()).backward()
    for t, l in ((x, lx), (w, lw), (b, lb)):
        torch.testing.assert_close(to_torch(l.grad.cpu()), t.grad, rtol=1e-10, atol=1e-10)


def test_cpu_bias_gradient_is_the_same_on_any_thread_count():
    """The CPU's row sums split the bias over threads, each sum in order: the same bits."""
    x, w, b = lucid.randn(300, 64), lucid.randn(1030, 64).requires_grad_(), lucid.randn(1030).requires_grad_()
    g = lucid.randn(300, 1030)
    before = lucid.get_num_threads()
    grads = []
    try:
        for threads in (1, 2):
            lucid.set_num_threads(threads)
            b.grad = None
            lucid.nn.functional.linear(x, w, b).backward(g)
            grads.append(b.grad.tolist())
    finally:
        lucid.set_num_threads(before)
    assert grads[0] == grads[1]
    torch.testing.assert_close(torch.tensor(grads[0]), torch.tensor(g.sum(0).tolist()), rtol=1e-5, atol=1e-4)
