"""Matrix products on the GPU (cuBLASLt; a plain kernel for integers and empty sums),
against torch on CUDA: every layout cuBLASLt reads in place (transposed operands,
broadcast batches), those it cannot (copied first), products' gradients, and TF32."""

import pytest
import torch

import lucid
from conftest import to_lucid

# The GPU against the CPU: a tensor made here without a device is the CPU side, whatever
# the run's default device (LUCID_TEST_DEFAULT_DEVICE).
pytestmark = [pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here"),
              pytest.mark.usefixtures("cpu_default")]

TOL = {"float32": 1e-5, "float64": 1e-12, "float16": 1e-2, "bfloat16": 2e-2, "complex64": 1e-5, "int64": 0,
       "int32": 0}


def _pair(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype in ("int64", "int32"):
        t = torch.randint(-4, 5, shape, generator=g).to(getattr(torch, dtype))
    elif dtype == "complex64":
        t = torch.randn(shape, generator=g, dtype=torch.complex64)
    else:
        t = torch.randn(shape, generator=g, dtype=torch.float64).to(getattr(torch, dtype))
    return to_lucid(t, "gpu"), t.cuda()


def _same(lt, tt, dtype):
    assert lt.device.type == "gpu" and tuple(lt.shape) == tuple(tt.shape)
    got = torch.tensor(lt.cpu().tolist(), dtype=tt.dtype).reshape(tt.shape)
    tol = TOL[dtype]
    torch.testing.assert_close(got, tt.cpu(), rtol=tol, atol=tol * 10)


CASES = [  # (a shape, b shape, view applied to both operands)
    ((5, 7), (7, 3), None),
    ((7, 5), (3, 7), lambda a, b: (a.t(), b.t())),          # both transposed: read in place
    ((4, 5, 7), (4, 7, 6), None),                           # bmm
    ((2, 4, 5, 7), (7, 6), None),                           # a batch times a matrix
    ((5, 7), (3, 7, 2), None),                              # a broadcast over b's batch
    ((1, 5, 7), (4, 7, 6), None),                           # a size-1 batch broadcast (stride 0)
    ((9, 14), (14, 6), lambda a, b: (a[::2, ::2], b[::2])),  # strided rows and columns: copied
    ((7,), (7, 4), None), ((5, 7), (7,), None), ((7,), (7,), None),  # mv, vm, dot
    ((5, 0), (0, 3), None),                                 # empty sum
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64", "int64"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_matmul_matches_torch_cuda(dtype, case):
    sa, sb, view = CASES[case]
    (la, ta), (lb, tb) = _pair(sa, dtype, case), _pair(sb, dtype, case + 50)
    if view:
        la, lb = view(la, lb)
        ta, tb = view(ta, tb)
    if dtype == "int64":  # torch's CUDA has no integer products: its CPU is the reference
        _same(la @ lb, (ta.cpu() @ tb.cpu()).cuda(), dtype)
        return
    _same(la @ lb, ta @ tb, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_addmm_baddbmm_linear_einsum(dtype):
    (li, ti), (la, ta), (lb, tb) = _pair((5, 3), dtype, 1), _pair((5, 7), dtype, 2), _pair((7, 3), dtype, 3)
    _same(lucid.addmm(li, la, lb, beta=0.5, alpha=2.0), torch.addmm(ti, ta, tb, beta=0.5, alpha=2.0), dtype)
    (lc, tc), (lx, tx), (ly, ty) = _pair((4, 5, 3), dtype, 4), _pair((4, 5, 7), dtype, 5), _pair((4, 7, 3), dtype, 6)
    _same(lucid.baddbmm(lc, lx, ly, beta=2.0), torch.baddbmm(tc, tx, ty, beta=2.0), dtype)
    (lw, tw), (lbias, tbias) = _pair((3, 7), dtype, 7), _pair((3,), dtype, 8)
    _same(lucid.nn.functional.linear(la, lw, lbias), torch.nn.functional.linear(ta, tw, tbias), dtype)
    _same(lucid.einsum("bij,bjk->bik", lx, ly), torch.einsum("bij,bjk->bik", tx, ty), dtype)
    _same(lucid.outer(la[0], lb[:, 0]), torch.outer(ta[0], tb[:, 0]), dtype)


def test_matmul_gradients_on_the_gpu():
    (la, ta), (lb, tb) = _pair((3, 5, 7), "float64", 9), _pair((7, 4), "float64", 10)
    la.requires_grad_(True)
    lb.requires_grad_(True)
    ta.requires_grad_(True)
    tb.requires_grad_(True)
    (la @ lb).sum().backward()
    (ta @ tb).sum().backward()
    _same(la.grad, ta.grad, "float64")
    _same(lb.grad, tb.grad, "float64")  # summed over the broadcast batch on the device
    assert lucid.autograd.gradcheck(lambda x, y: x @ y, (la.detach().requires_grad_(True),
                                                         lb.detach().requires_grad_(True)))


def test_float32_is_exact_unless_tf32_is_allowed():
    (la, ta), (lb, tb) = _pair((256, 512), "float32", 11), _pair((512, 256), "float32", 12)
    exact = (ta.double() @ tb.double()).float()
    assert (torch.tensor((la @ lb).cpu().tolist()) - exact.cpu()).abs().max().item() < 1e-3
    try:
        lucid.backends.cuda.matmul.allow_tf32 = True
        fast = la @ lb  # TF32 tensor cores: about 1e-3 relative
        assert (torch.tensor(fast.cpu().tolist()) - exact.cpu()).abs().max().item() < 0.5
    finally:
        lucid.backends.cuda.matmul.allow_tf32 = False
    assert not lucid.backends.cuda.matmul.allow_tf32


def test_products_mixing_devices_raise():
    with pytest.raises(RuntimeError, match="same device"):
        lucid.ones(2, 3, device="gpu") @ lucid.ones(3, 2)
