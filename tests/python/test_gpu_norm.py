"""The GPU kernels of the normalisation layers (csrc/backend/cuda/norm_*.cu) on the
shapes that take their other paths: units split over several blocks (long rows, tall
columns), layer_norm rows of a block, the column reductions of d weight / d bias; the
16-bit dtypes against torch's CUDA in the same dtype; and bitwise determinism (no
float atomics). Compared with torch on "cuda" and with lucid's CPU. The shared legs
(every shape and option on both devices) are in test_nn_norm.py and test_nn_norm_layer.py."""

import pytest
import torch
import torch.nn.functional as TF

import lucid
import lucid.nn.functional as LF
from conftest import to_lucid, to_torch

pytestmark = pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")


def close(l, t, tol):
    assert tuple(l.shape) == tuple(t.shape)
    torch.testing.assert_close(to_torch(l.detach()).double(), t.detach().cpu().double(), rtol=tol, atol=tol)


def bn(lib, x, w, b, rm, rv):
    return lib.nn.functional.batch_norm(x, rm, rv, w, b, training=True, momentum=0.2, eps=1e-5)


def gn(lib, x, w, b, groups):
    return lib.nn.functional.group_norm(x, groups, w, b, 1e-5)


def ln(lib, x, w, b):
    return lib.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def rms(lib, x, w, b):
    return lib.nn.functional.rms_norm(x, (x.shape[-1],), w, 1e-6)


def run_all(fn, x, c, dtype, device, **kw):
    """fn forward and backward with a weight and bias of c elements (and running statistics
    for batch norm); returns the output, the gradients of x, w and b, and the running stats."""
    gen = torch.Generator().manual_seed(5)
    w = torch.rand(c, generator=gen) + 0.5
    b = torch.randn(c, generator=gen)
    g = torch.randn(tuple(x.shape), generator=gen)
    rm, rv = torch.randn(c, generator=gen), torch.rand(c, generator=gen) + 0.5
    if device == "cuda" or device == "cpu_torch":
        lib, dev = torch, ("cuda" if device == "cuda" else "cpu")
        conv = lambda t, d=dtype: t.to(dev, d)  # noqa: E731
    else:
        lib, dev = lucid, device
        conv = lambda t, d=dtype: to_lucid(t.to(d), dev)  # noqa: E731
    lx, lw, lb = (conv(t).requires_grad_() for t in (x, w, b))
    lrm, lrv = conv(rm), conv(rv)  # in the input's dtype, as after model.half()
    y = fn(lib, lx, lw, lb, lrm, lrv, **kw) if fn is bn else fn(lib, lx, lw, lb, **kw)
    y.backward(conv(g))
    return y, lx.grad, lw.grad, (lb.grad if fn is not rms else None), lrm, lrv


# (fn, input shape, channels or normalised size, kwargs): each takes a path of its own
CASES = [
    (bn, (2, 3, 100_000), 3, {}),        # rows: 6 units of 100k, split over blocks
    (bn, (70_000, 8), 8, {}),            # columns: 8 units of 70k, split over blocks
    (bn, (64, 16, 3, 3), 16, {}),        # columns of [N, C * 9]
    (bn, (16, 32, 14, 14), 32, {}),      # rows of 196
    (bn, (600, 2, 40), 2, {}),           # 600 units a channel: the combining block strides
    (gn, (4, 32, 20, 20), 32, {"groups": 8}),
    (gn, (3, 64), 64, {"groups": 16}),   # rows of one element
    (gn, (2, 6, 50_000), 6, {"groups": 1}),
    (gn, (2, 512, 3), 512, {"groups": 2}),  # 256 rows a group
    (ln, (70_000, 64), 64, {}),          # d weight / d bias: columns of 70k rows
    (ln, (32, 5000), 5000, {}),          # a block per row, staged in shared memory
    (ln, (1000, 33), 33, {}),            # a warp per row (backward and forward)
    (rms, (300, 2048), 2048, {}),        # forward: a block per row, 8 elements a thread
    (rms, (4097, 7), 7, {}),
    (ln, (300, 1000), 1000, {}),         # backward: 32 elements a thread; forward: 128 threads a row
    (rms, (64, 777), 777, {}),
    (ln, (8, 10_000), 10_000, {}),       # backward: a block per row longer than its registers hold
    (ln, (50, 3000), 3000, {}),          # forward: 16 elements a thread
    (ln, (4, 20_000), 20_000, {}),       # forward: too long to stage, read again at each pass
]
IDS = [f"{c[0].__name__}-{'x'.join(map(str, c[1]))}" for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_against_torch_cuda_and_lucid_cpu(case):
    fn, shape, c, kw = case
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1)) * 3 + 1
    gpu = run_all(fn, x, c, torch.float32, "gpu", **kw)
    assert all(t.device.type == "gpu" for t in gpu if t is not None)
    for ref_dev in ("cuda", "cpu"):
        ref = run_all(fn, x, c, torch.float32, ref_dev, **kw)
        for l, t in zip(gpu, ref):
            if t is not None:
                close(l, t if isinstance(t, torch.Tensor) else to_torch(t.detach()), 2e-3)


@pytest.mark.parametrize("case", CASES[2:], ids=IDS[2:])
def test_float64_matches_lucid_cpu_closely(case):
    fn, shape, c, kw = case
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    gpu = run_all(fn, x, c, torch.float64, "gpu", **kw)
    cpu = run_all(fn, x, c, torch.float64, "cpu", **kw)
    for l, t in zip(gpu, cpu):
        if t is not None:
            close(l, to_torch(t.detach()), 1e-9)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", [CASES[i] for i in (2, 3, 5, 11, 13)], ids=[IDS[i] for i in (2, 3, 5, 11, 13)])
def test_16_bit_floats_against_torch_cuda(case, dtype):
    fn, shape, c, kw = case
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(3))
    gpu = run_all(fn, x, c, dtype, "gpu", **kw)
    ref = run_all(fn, x, c, dtype, "cuda", **kw)
    tol = 2e-2 if dtype == torch.float16 else 8e-2
    assert gpu[0].dtype == getattr(lucid, str(dtype).split(".")[-1])
    for l, t in zip(gpu[:2], ref[:2]):  # the parameter grads are sums over the batch: ulps of 16 bits differ
        close(l, t, tol)
    for l, t in zip(gpu[2:], ref[2:]):
        if t is not None:
            close(l, t, tol * max(1.0, float(t.detach().abs().max())))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bitwise_deterministic(case):
    fn, shape, c, kw = case
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(4))
    a = run_all(fn, x, c, torch.float32, "gpu", **kw)
    b = run_all(fn, x, c, torch.float32, "gpu", **kw)
    for l, m in zip(a, b):
        if l is not None:
            assert (l == m).all().item()


def test_eval_mode_and_no_running_stats():
    x = torch.randn(8, 5, 7, dtype=torch.float64)
    rm, rv = torch.randn(5, dtype=torch.float64), torch.rand(5, dtype=torch.float64) + 0.5
    lx = to_lucid(x, "gpu").requires_grad_()
    y = LF.batch_norm(lx, to_lucid(rm, "gpu"), to_lucid(rv, "gpu"), training=False)
    tx = x.cuda().requires_grad_()
    t = TF.batch_norm(tx, rm.cuda(), rv.cuda(), training=False)
    close(y, t, 1e-12)
    y.sum().backward(), t.sum().backward()
    close(lx.grad, tx.grad, 1e-12)
    close(LF.batch_norm(to_lucid(x, "gpu"), None, None, training=True), TF.batch_norm(x, None, None, training=True),
          1e-12)

