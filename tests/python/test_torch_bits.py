"""Where lucid computes exactly torch's expression, bit for bit, on each device:

- Note [Numbers in opmath] (ops/prims/elementwise.h): a Python number (or a 0-d CPU
  tensor) joining a float16 / bfloat16 product, quotient or leaky_relu stays a float32,
  as torch's does; rounding it first made bf16(1000) * 0.998 give 996, not 1000, and
  x.mul_(0.999) a multiplication by 1.
- Note [One rounding]: add / sub with alpha, lerp, addcmul and addcdiv of float tensors
  are torch's one expression, rounded once, in every float dtype (as compositions they
  rounded after each step: a bfloat16 lerp three times).
- number / tensor is torch's reciprocal-then-multiply; elu, selu and celu are torch's
  expression (16-bit inputs in float32, rounded once).

Each case is compared with torch on the matching device (CUDA for the GPU leg) by
value, exactly; the gradients with torch's, and by float64 numerical differences."""

import pytest
import torch

import lucid

from conftest import dtype_name, to_lucid

FLOATS = ["float16", "bfloat16", "float32", "float64"]
HALVES = ["float16", "bfloat16"]
NUMBERS = [0.998, 1.3333333, 0.1, 7.77777, -2.5e-3]


def _torch_device(device):
    return "cuda" if device == "gpu" else "cpu"


def _data(dtype, shape, seed, scale=10.0, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale + shift).to(getattr(torch, dtype))


def _pair(dtype, shape, seed, device, **kw):
    t = _data(dtype, shape, seed, **kw)
    return to_lucid(t, device), t.to(_torch_device(device))


def _as_torch(lt):
    """lucid tensor `lt` as a CPU torch tensor of its dtype (a copy)."""
    return torch.tensor(lt.double().cpu().tolist(), dtype=torch.float64).to(getattr(torch, dtype_name(lt.dtype)))


def _same_bits(lt, tt):
    assert dtype_name(lt.dtype) == dtype_name(tt.dtype), (lt.dtype, tt.dtype)
    assert tuple(lt.shape) == tuple(tt.shape)
    got = torch.tensor(lt.float().cpu().tolist(), dtype=torch.float32) if lt.dtype != lucid.float64 else \
        torch.tensor(lt.cpu().tolist(), dtype=torch.float64)
    want = tt.cpu().to(got.dtype)
    diff = (got != want) & ~(got.isnan() & want.isnan())
    assert not diff.any(), f"{int(diff.sum())} of {diff.numel()} elements differ from torch's"


# torch's CUDA kernel floors a quotient by a number through its reciprocal, and in 16 bits
# rounds the floor to the tensor's dtype before correcting it: lucid's GPU divides (the
# quotient is the same but at the rare elements that difference decides).
_FLOOR_DIVIDE_ON_CUDA = "torch's CUDA floor_divide by a number is not lucid's formula at a few elements"


# ---- Note [Numbers in opmath] ------------------------------------------------------------

@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("op", ["mul", "div", "floor_divide", "mul_", "div_", "leaky_relu", "add", "sub", "rsub",
                                "add_"])
def test_number_stays_float32(op, dtype, device):
    if op in ("add", "sub", "rsub", "add_") and device == "cpu":
        pytest.skip("torch's CPU kernels round an added number to the tensor's dtype (the next test)")
    if op == "floor_divide" and device == "gpu":
        pytest.skip(_FLOOR_DIVIDE_ON_CUDA)
    lx, tx = _pair(dtype, (4096,), 0, device, scale=100.0)
    for s in NUMBERS:
        if op == "rsub":
            f = lambda m, x: s - x  # noqa: E731
        elif op == "leaky_relu":
            f = lambda m, x: m.nn.functional.leaky_relu(x, s)  # noqa: E731
        elif op.endswith("_"):
            f = lambda m, x: getattr(x.clone(), op)(s)  # noqa: E731
        else:
            f = lambda m, x: getattr(m, op)(x, s)  # noqa: E731
        _same_bits(f(lucid, lx), f(torch, tx))


def test_number_stays_float32_example():
    x = lucid.tensor([1000.0], dtype=lucid.bfloat16)
    assert (x * 0.998).item() == 1000.0  # bf16(998.0): rounding 0.998 first gave 996
    w = lucid.full((4,), 7.0, dtype=lucid.bfloat16)
    w.mul_(0.99)  # a decay: bf16(7 * 0.99) = 6.9375, where 7 * bf16(0.99) = 6.90625
    assert w.tolist() == [6.9375] * 4
    h = lucid.full((4,), 10.0, dtype=lucid.float16)
    assert (h * 0.998).tolist() == [9.9765625] * 4  # not 9.984375


@pytest.mark.parametrize("dtype", HALVES)
def test_number_stays_float32_through_views(dtype, device):
    # strided, transposed and expanded tensors take the same numbers as dense ones
    lx, tx = _pair(dtype, (64, 48), 1, device)
    for f in (lambda x: x[:, 3:] * 0.998, lambda x: x.t() / 1.3333333, lambda x: x[:1].expand(5, 48) * 0.1) + (
            (lambda x: x[::2] // 0.3,) if device == "cpu" else ()):
        _same_bits(f(lx), f(tx))
    ly = lx.clone()
    ty = tx.clone()
    ly.t().mul_(0.998)
    ty.t().mul_(0.998)
    _same_bits(ly, ty)


@pytest.mark.parametrize("dtype", HALVES)
def test_zero_dim_cpu_tensor_is_a_number(dtype, device):
    lx, tx = _pair(dtype, (1024,), 2, device, scale=100.0)
    for wide in ("float32", "float64"):
        ls, ts = lucid.tensor(0.998, dtype=getattr(lucid, wide), device="cpu"), torch.tensor(0.998, dtype=getattr(torch, wide))
        _same_bits(lx * ls, tx * ts)
        # On either side: torch's CUDA kernel takes both sides so, its CPU kernel only the
        # right one (a float32 0-d tensor on the left is rounded to the tensor's dtype there).
        _same_bits(ls * lx, tx * ts)


@pytest.mark.parametrize("dtype", HALVES)
def test_numbers_of_other_ops_still_take_the_dtype(dtype, device):
    # torch converts these numbers to the tensor's dtype first
    lx, tx = _pair(dtype, (2048,), 3, device)
    added = (lambda m, x: x + 0.1, lambda m, x: x - 1.3333333) if device == "cpu" else ()
    for f in added + (lambda m, x: m.fmod(x, 1.3333333),
              lambda m, x: x.abs() ** 1.3333333, lambda m, x: m.remainder(x, 0.7), lambda m, x: x < 0.1,
              lambda m, x: m.clamp(x, min=-1.3333333)):
        _same_bits(f(lucid, lx), f(torch, tx))


@pytest.mark.parametrize("dtype", HALVES)
def test_threshold_compares_in_float32(dtype, device):
    lx, tx = _pair(dtype, (4096,), 4, device)
    for s in NUMBERS:
        _same_bits(lucid.nn.functional.threshold(lx, s, 3 * s), torch.nn.functional.threshold(tx, s, 3 * s))


@pytest.mark.parametrize("dtype", ["float32"] + HALVES)
def test_exp_linear_units(dtype, device):
    # elu / selu / celu: torch's one coefficient on the negative side; 16-bit in float32
    lx, tx = _pair(dtype, (4096,), 5, device, scale=3.0)
    F, TF = lucid.nn.functional, torch.nn.functional
    _same_bits(F.elu(lx, 1.3), TF.elu(tx, 1.3))
    _same_bits(F.selu(lx), TF.selu(tx))
    _same_bits(F.celu(lx, 0.7), TF.celu(tx, 0.7))
    _same_bits(F.elu(lx.clone(), 1.3, inplace=True), TF.elu(tx.clone(), 1.3, inplace=True))


# ---- Note [One rounding] -------------------------------------------------------------------

def _three(dtype, device, shapes=((4096,), (4096,), (4096,))):
    return [_pair(dtype, s, 10 + k, device, shift=3.0 if k == 2 else 0.0) for k, s in enumerate(shapes)]


@pytest.mark.parametrize("dtype", FLOATS)
def test_add_sub_alpha(dtype, device):
    (la, ta), (lb, tb), _ = _three(dtype, device)
    for s in NUMBERS + [2, -3]:
        for op in ("add", "sub"):
            _same_bits(getattr(lucid, op)(la, lb, alpha=s), getattr(torch, op)(ta, tb, alpha=s))
            _same_bits(getattr(la.clone(), op + "_")(lb, alpha=s), getattr(ta.clone(), op + "_")(tb, alpha=s))


@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "float64"])
def test_add_alpha_in_place_writes_self_once(dtype, device):
    # add_ / sub_ with alpha write the one-rounding result straight into self: the
    # out-of-place op's bits and a version bump, through a strided self, and with self
    # read in another arrangement (a.add_(a.t()), which torch refuses) from the old values.
    (la, ta), (lb, tb), _ = _three(dtype, device, shapes=((64, 64), (64, 64), (1,)))
    for op in ("add", "sub"):
        f = getattr(lucid, op)
        x = la.clone()
        v = x._version
        getattr(x, op + "_")(lb, alpha=0.37)
        assert x._version == v + 1
        _same_bits(x, _as_torch(f(la, lb, alpha=0.37)))
        x = la.clone()
        getattr(x[:, ::2], op + "_")(lb[:, ::2], alpha=-2.5)
        _same_bits(x[:, ::2], _as_torch(f(la[:, ::2], lb[:, ::2], alpha=-2.5)))
        _same_bits(x[:, 1::2], ta[:, 1::2])
        x = la.clone()
        getattr(x, op + "_")(x.t(), alpha=2)
        _same_bits(x, _as_torch(f(la, la.t(), alpha=2)))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        la[0].clone().add_(lb, alpha=2)


def test_add_alpha_promotes_before_it_scales(device):
    # float64 + alpha * bfloat16: the product is float64's, not a bfloat16 one
    (la, ta), (lb, tb), _ = _three("bfloat16", device)
    _same_bits(la.double().add_(lb, alpha=0.998), ta.double().add_(tb, alpha=0.998))
    _same_bits(lucid.add(la.float(), lb, alpha=0.1), torch.add(ta.float(), tb, alpha=0.1))


@pytest.mark.parametrize("dtype", FLOATS)
def test_lerp(dtype, device):
    (la, ta), (lb, tb), (lw, tw) = _three(dtype, device)
    for w in (0.1, 0.4999, 0.5, 0.9, -0.3, 1.7):
        _same_bits(lucid.lerp(la, lb, w), torch.lerp(ta, tb, w))
        _same_bits(la.clone().lerp_(lb, w), ta.clone().lerp_(tb, w))
    lw, tw = _pair(dtype, (4096,), 13, device, scale=0.5)  # weights around 1/2, both sides
    _same_bits(lucid.lerp(la, lb, lw), torch.lerp(ta, tb, tw))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv(op, dtype, device):
    (la, ta), (lb, tb), (lc, tc) = _three(dtype, device)
    for v in NUMBERS + [1, -2]:
        _same_bits(getattr(lucid, op)(la, lb, lc, value=v), getattr(torch, op)(ta, tb, tc, value=v))
        _same_bits(getattr(la.clone(), op + "_")(lb, lc, value=v), getattr(ta.clone(), op + "_")(tb, tc, value=v))


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_one_rounding_broadcasts_and_strides(dtype, device):
    # Broadcast and strided operands give the bits of dense ones. (torch's CPU kernels
    # round rows shorter than a vector, and their tails, in its scalar code, which for
    # bfloat16 add with alpha rounds twice: compared within a rounding there.)
    (la, ta), (lb, tb), (lc, tc) = _three(dtype, device, shapes=((8, 1, 6), (5, 6), (6,)))
    dense = [x.expand(8, 5, 6).contiguous() for x in (la, lb, lc)]
    cases = [
        (lambda a, b, c: lucid.addcmul(a, b, c, value=0.3), torch.addcmul(ta, tb, tc, value=0.3)),
        (lambda a, b, c: lucid.addcdiv(a, b, c, value=0.3), torch.addcdiv(ta, tb, tc, value=0.3)),
        (lambda a, b, c: lucid.lerp(a, b, c / 8), torch.lerp(ta, tb, tc / 8)),
        (lambda a, b, c: lucid.add(a, b, alpha=0.3), torch.add(ta, tb, alpha=0.3)),
    ]
    for f, want in cases:
        got = f(la, lb, lc)
        _same_bits(got, _as_torch(f(*dense)))
        torch.testing.assert_close(_as_torch(got), want.cpu(), rtol=1.6e-2, atol=1e-2)
    (lm, tm), (ln, tn), _ = _three(dtype, device, shapes=((6, 7), (7, 6), (1,)))
    _same_bits(lucid.lerp(lm.t(), ln, 0.3), _as_torch(lucid.lerp(lm.t().contiguous(), ln, 0.3)))
    _same_bits(lm.t().clone().add_(ln, alpha=-0.1), _as_torch(lucid.add(lm.t().contiguous(), ln, alpha=-0.1)))


def test_one_rounding_matches_a_cpu_zero_dim_tensor_on_the_gpu(devices):
    if "gpu" not in devices:
        pytest.skip("no GPU")
    a, b = _pair("float32", (100,), 20, "gpu"), _pair("float32", (), 21, "cpu")
    _same_bits(lucid.lerp(a[0], b[0].to(a[0].device).expand(100), 0.3), torch.lerp(a[1], b[1].cuda().expand(100), 0.3))
    _same_bits(lucid.add(a[0], b[0], alpha=0.3), torch.add(a[1], b[1], alpha=0.3))


@pytest.mark.parametrize("op", ["add", "sub", "lerp", "addcmul", "addcdiv"])
def test_one_rounding_gradients(op, device):
    f = {
        "add": lambda m, a, b, c: m.add(a, b, alpha=0.3),
        "sub": lambda m, a, b, c: m.sub(a, b, alpha=-1.7),
        "lerp": lambda m, a, b, c: m.lerp(a, b, c.sigmoid()),
        "addcmul": lambda m, a, b, c: m.addcmul(a, b, c, value=0.7),
        "addcdiv": lambda m, a, b, c: m.addcdiv(a, b, c, value=0.7),
    }[op]
    shapes = ((3, 4), (4,), (3, 1))
    ts = [_data("float64", s, 30 + k, scale=1.0, shift=2.0 if k == 2 else 0.0).requires_grad_() for k, s in
          enumerate(shapes)]
    ls = [to_lucid(t.detach(), device).requires_grad_() for t in ts]
    out_l, out_t = f(lucid, *ls), f(torch, *ts)
    g = _data("float64", tuple(out_t.shape), 40)
    out_l.backward(to_lucid(g, device))
    out_t.backward(g.to(out_t.device))
    for lt, tt in zip(ls, ts):
        assert (lt.grad is None) == (tt.grad is None)
        if tt.grad is not None:
            torch.testing.assert_close(torch.tensor(lt.grad.cpu().tolist(), dtype=torch.float64), tt.grad.cpu())
    used = [x for x, t in zip(ls, ts) if t.grad is not None]
    assert lucid.autograd.gradcheck(lambda *xs: f(lucid, *(xs + (ls[2],) * (3 - len(xs)))), used)
    assert out_l.grad_fn.name() == out_t.grad_fn.name()


def test_one_rounding_keeps_other_dtypes():
    # integers and complex numbers keep the compositions (exact): torch's values and dtypes
    a, b = lucid.tensor([1, 2, 3]), lucid.tensor([4, 5, 6])
    assert lucid.add(a, b, alpha=2).tolist() == [9, 12, 15]
    assert lucid.addcmul(a, a, b, value=2).tolist() == [9, 22, 39]
    z = lucid.tensor([1 + 2j, 3 - 1j])
    torch.testing.assert_close(torch.tensor(lucid.lerp(z, z * 2, 0.25).tolist()),
                               torch.lerp(torch.tensor([1 + 2j, 3 - 1j]), torch.tensor([2 + 4j, 6 - 2j]), 0.25))
    with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
        lucid.add(a, b, alpha=0.5)
    with pytest.raises(RuntimeError, match="can't be cast"):
        a.clone().add_(lucid.tensor([0.5, 1.5, 2.5]), alpha=2)


# ---- number / tensor ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + ["int64", "bool"])
def test_number_over_tensor_is_reciprocal_times(dtype, device):
    t = _data("float64", (2048,), 50, shift=0.5)
    if dtype in ("int64", "bool"):
        t = (t * 4).round().clamp(min=1).to(getattr(torch, dtype))
    else:
        t = t.to(getattr(torch, dtype))
    lt, tt = to_lucid(t, device), t.to(_torch_device(device))
    for s in (2.0, 1.3333333, 3):
        _same_bits(s / lt, s / tt)
    lr = lucid.tensor(2.0) / lucid.tensor([3.0, 7.0])  # (two tensors: a true division)
    assert lr.tolist() == (torch.tensor(2.0) / torch.tensor([3.0, 7.0])).tolist()
