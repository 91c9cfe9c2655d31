"""Elementwise fusion at a flush (csrc/ops/fusion.h, Note [Elementwise fusion]): chains
of recorded unary, binary and where ops and casts run as one program, with the unfused ops' results bit
for bit, intermediates that something still holds written, in-place steps and aliasing
views kept exact. (The switch is tested in test_gpu_lazy.py.) Every test needs a GPU."""

import numpy as np
import pytest

import lucid

GPU = lucid.gpu.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="lucid has no GPU here")


def fused_calls():
    return lucid.gpu.pending_stats()["fused_calls"]


def both_ways(fn):
    """fn() run with fusion off and on (lazy mode): its results as NumPy arrays, and how
    many calls the fused run fused. The fused run is made twice, with the chains
    interpreted and with their generated kernels; the two must agree bit for bit."""
    lazy, was, compile_mode = lucid.gpu.is_lazy(), lucid.gpu.is_fusion(), lucid.gpu.kernel_compile()
    lucid.gpu.set_lazy(True)
    try:
        out = []
        for fusion, compiled in ((False, "off"), (True, "off"), (True, "sync")):
            lucid.gpu.set_fusion(fusion)
            lucid.gpu.set_kernel_compile(compiled)
            before = fused_calls()
            got = fn()
            got = got if isinstance(got, (tuple, list)) else (got,)
            out.append([g.float().cpu().numpy() if g.dtype in (lucid.float16, lucid.bfloat16) else g.cpu().numpy()
                        for g in got])
            fused = fused_calls() - before
        assert_bitwise(out[1], out[2])
        return out[0], out[2], fused
    finally:
        lucid.gpu.set_kernel_compile(compile_mode)
        lucid.gpu.set_fusion(was)
        lucid.gpu.set_lazy(lazy)


def assert_bitwise(a, b):
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        # (a result may keep a transposed input's layout: its bytes compared in order)
        np.testing.assert_array_equal(np.ascontiguousarray(x).view(np.uint8), np.ascontiguousarray(y).view(np.uint8))


def data(dtype, n=1 << 16, seed=0):
    a = np.random.default_rng(seed).standard_normal(n) * 2
    return lucid.tensor(a, device="gpu").to(dtype)


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_chain_of_eight_is_bitwise_the_unfused_ops(dtype):
    x = data(getattr(lucid, dtype))

    def chain():
        y = lucid.sin(x * 1.5 + 0.5) * x
        return lucid.sigmoid(lucid.exp(lucid.tanh(y) - 0.25)) + 1.0

    plain, fused, n = both_ways(chain)
    assert n >= 8
    assert_bitwise(plain, fused)


@needs_gpu
def test_intermediates_still_held_are_written():
    x = data(lucid.float32)

    def run():
        t = x * 2
        u = (t.exp() - 1).abs()
        return t, u, lucid.sqrt(u) + t

    plain, fused, n = both_ways(run)
    assert n >= 4
    assert_bitwise(plain, fused)


@needs_gpu
def test_in_place_chains_and_views_see_every_step():
    def run():
        x = lucid.arange(1000.0, device="gpu")
        head = x[:10]
        x.add_(1)
        x.mul_(0.5)
        y = x * x
        x.sub_(y)
        return x, head, y

    plain, fused, n = both_ways(run)
    assert n >= 3
    assert_bitwise(plain, fused)


@needs_gpu
def test_overlapping_views_are_not_fused_into_a_race():
    def run():
        a = lucid.arange(4096.0, device="gpu") * 1.0
        a[1:].add_(a[:-1])  # each element adds its left neighbour's old value
        return a * 2.0 + 1.0

    plain, fused, _ = both_ways(run)
    assert_bitwise(plain, fused)


@needs_gpu
def test_one_element_tensors_and_numbers():
    x = data(lucid.float32, seed=3)
    s = lucid.tensor(0.75, device="gpu")

    def run():
        return lucid.maximum(x * s, s) - 2 ** 0.5 + x / 3

    plain, fused, n = both_ways(run)
    assert n >= 3  # (maximum with a tensor may take ops of its own)
    assert_bitwise(plain, fused)


@needs_gpu
def test_chains_around_other_ops_and_dtypes():
    x = data(lucid.float32, seed=4).reshape(256, 256)

    def run():
        a = (x * 2 + 1).relu()
        m = a.sum(1, keepdim=True)  # not fusable: ends the chain
        b = (a / m).sqrt() * 3 - 1
        c = b.double() * 2 + 1  # another dtype: another chain
        return a, b, c, (c > 0)

    plain, fused, n = both_ways(run)
    assert n >= 6
    assert_bitwise(plain, fused)


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_where_and_casts_join_the_chain(dtype):
    d = getattr(lucid, dtype)
    x = data(d, seed=7)
    keep = data(lucid.float32, seed=8) > 0.3

    def run():
        a = lucid.where(keep, x * 1.5, 1.0 / 3.0)  # the number rounded to the dtype, then selected
        b = lucid.where(keep, lucid.tanh(a), a - 0.25)
        outs = [a, b + x, keep.to(d) * x]  # (a bool cast)
        if dtype != "float64":  # casts within float's compute type
            up = b.float() * 2 + 1
            outs += [up, up.to(lucid.bfloat16) * 3, (up.half() - x.half()).to(d), up.clone()]
        return outs

    plain, fused, n = both_ways(run)
    assert n >= 7
    assert_bitwise(plain, fused)


@needs_gpu
def test_casts_in_a_chain_round_as_the_cast_kernel():
    """float32 to the 16-bit types and back, on NaN, infinities, overflow past float16's
    65504, subnormals and ties: the program's rounding is the cast kernel's."""
    special = [float("nan"), float("inf"), -float("inf"), 65504.0, 65520.0, 1e6, -1e-7, 6e-8, 2.0 ** -24 * 1.5,
               1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 3.0e38, -0.0, 1.0 / 3.0]
    x = lucid.tensor(special * 512, device="gpu")

    def run():
        return [(x * 1.0).half().float() + 0.0, (x * 1.0).bfloat16().float() - 0.0,
                (x + 0.0).half().bfloat16() * 1.0]

    plain, fused, n = both_ways(run)
    assert n >= 6
    assert_bitwise(plain, fused)


@needs_gpu
def test_gradients_through_fused_chains_are_bitwise():
    x0 = np.random.default_rng(5).standard_normal((64, 64)).astype(np.float32)

    def run():
        x = lucid.tensor(x0, device="gpu", requires_grad=True)
        y = (lucid.tanh(x * 1.3) * x + lucid.sigmoid(x)).exp()
        y.sum().backward()
        return y.detach(), x.grad

    plain, fused, n = both_ways(run)
    assert n >= 4
    assert_bitwise(plain, fused)


@needs_gpu
def test_long_and_wide_chains_fit_the_registers():
    x, y, z = data(lucid.float32, seed=6), data(lucid.float32, seed=7), data(lucid.float32, seed=8)

    def run():
        v = x
        for i in range(30):  # longer than one program: several, each value in a reused register
            v = v * 1.01 + 0.5 if i % 2 else lucid.tanh(v) - x
        w = (x + y) * (y - z) / (z * x + 1) + x * y * z  # several values live at once
        return v, w

    plain, fused, n = both_ways(run)
    assert n >= 40
    assert_bitwise(plain, fused)


@needs_gpu
def test_half_precision_rounds_every_step_as_stored():
    x = data(lucid.float16, seed=9)

    def run():
        return ((x * 3.1 + 0.7) * (x - 0.3)).exp() / 7

    plain, fused, n = both_ways(run)
    assert n >= 5
    assert_bitwise(plain, fused)


def mat(dtype, *shape, seed=0):
    n = int(np.prod(shape))
    return data(dtype, n=n, seed=seed).reshape(*shape)


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_broadcast_operands_join_the_chain_as_views(dtype):
    """Operands expanded over a batch (a bias row, a [B, 1] column, a channel vector over
    [N, C, H, W], an attention mask over batch and heads, a key mask [B, 1, 1, T]) are read
    through their views (ops::FusedView): every call of the chain is fused. The sizes are
    not powers of two, so the generated kernels' divisions by multiplying are checked
    against the interpreter's and the unfused ops' integer division."""
    d = getattr(lucid, dtype)
    x, bias, col = mat(d, 37, 129, seed=1), mat(d, 129, seed=2), mat(d, 37, 1, seed=3)
    img, chan = mat(d, 5, 3, 7, 9, seed=4), mat(d, 1, 3, 1, 1, seed=5)
    scores, mask, keys = mat(d, 3, 5, 11, 11, seed=6), mat(d, 11, 11, seed=7), mat(d, 3, 1, 1, 11, seed=8)

    def run():
        a = ((x + bias) * col).tanh() - bias  # 4 calls, bias read twice
        b = (img * chan + chan).relu() * 0.5  # 4 calls
        c = (scores * 0.125 + mask + keys).exp()  # 4 calls
        return a, b, c

    plain, fused, n = both_ways(run)
    assert n == 12
    assert_bitwise(plain, fused)


@needs_gpu
def test_transposed_sliced_and_cast_views_are_read_in_place():
    x = mat(lucid.float32, 300, 70, seed=11)
    y = mat(lucid.float32, 70, 300, seed=12)
    z = mat(lucid.float16, 70, 600, seed=13)

    def run():
        a = (y * 2.0 + x.t()).sin()  # a transposed operand: two terms
        b = (z[:, ::2].float() - y) * 3.0  # a cast from a strided slice
        c = lucid.where(y.t() > 0, x, -x) + 1.0  # a transposed condition (y.t() > 0 keeps y.t()'s layout)
        d = x.t() * 2.0  # (keeps x.t()'s layout, as torch: a result that is not contiguous is not fused)
        return a, b, c, d

    plain, fused, n = both_ways(run)
    assert n == 9
    assert_bitwise(plain, fused)


@needs_gpu
def test_views_beyond_three_terms_and_overlapping_writes_stay_unfused_and_exact():
    base = mat(lucid.float32, 4, 1, 6, 1, 8, seed=14)
    wide = base.expand(4, 5, 6, 7, 8)  # (broadcast dims between read ones: three terms, fused)
    odd = mat(lucid.float32, 4, 5, 6, 7, 8, seed=15).permute(4, 2, 0, 3, 1)  # (five terms: not fused)

    def run():
        a = (wide * 2.0 + 1.0).exp() - wide
        b = (odd * 0.5 - 1.0).abs() + odd
        x = lucid.arange(4096.0, device="gpu") * 1.0
        x.add_(x.flip(0) * 1.0)  # (flip copies: still exact)
        m = x.reshape(64, 64)
        m.mul_(m.t() + 1.0)  # a transposed read of the storage written in place: not fused together
        return a, b, m

    plain, fused, n = both_ways(run)
    assert n >= 3
    assert_bitwise(plain, fused)


@needs_gpu
def test_a_new_batch_size_reuses_the_views_kernel():
    """A view's sizes and strides are the kernel's parameters, not its source: the same
    chain over another batch compiles nothing new."""
    lazy, compile_mode = lucid.gpu.is_lazy(), lucid.gpu.kernel_compile()
    lucid.gpu.set_lazy(True)
    lucid.gpu.set_kernel_compile("sync")
    try:
        bias = mat(lucid.float32, 96, seed=16)
        got = []
        for batch in (7, 19, 7 * 19):
            x = mat(lucid.float32, batch, 96, seed=batch)
            ((x + bias).tanh() * bias).cpu()
            got.append(lucid.gpu.generated_kernel_stats()["compiled"] + lucid.gpu.generated_kernel_stats()["loaded"])
        assert got[1] == got[0] and got[2] == got[0]
    finally:
        lucid.gpu.set_kernel_compile(compile_mode)
        lucid.gpu.set_lazy(lazy)


# Every op a program may hold (ops/prims/fused.h, fusable()): the elementwise table's float
# ops whose result has the operands' dtype.
FUSABLE_BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "floor_divide", "remainder", "fmod", "pow",
                  "fmax", "fmin", "atan2", "hypot", "xlogy", "logaddexp", "logaddexp2", "_threshold_backward",
                  "_gelu_backward", "_gelu_tanh_backward", "_silu_backward", "_hardsigmoid_backward",
                  "_hardswish_backward", "_softplus_backward", "_log_sigmoid_backward", "_mish_backward",
                  "_leaky_relu", "_leaky_relu_slope", "_softshrink", "_hardshrink", "_shrink_backward"]
FUSABLE_UNARY = ["neg", "abs", "sign", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "exp2", "expm1",
                 "log2", "log10", "log1p", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
                 "atanh", "erf", "erfc", "erfinv", "reciprocal", "rsqrt", "logit", "floor", "ceil", "round",
                 "trunc", "frac", "square", "relu", "_gelu", "_gelu_tanh", "_silu",
                 "_hardsigmoid", "_hardswish", "_softplus", "_log_sigmoid", "_mish"]


def every_mode(fn, repeats=3):
    """fn()'s result (a tensor) in eager mode, lazy without fusion or graphs, lazy with both
    and the fused chains interpreted, and lazy with both and the chains run by their
    generated kernels (each fused run `repeats` times, so that its flush replays as a
    graph), as NumPy arrays."""
    lazy, fusion, replay = lucid.gpu.is_lazy(), lucid.gpu.is_fusion(), lucid.gpu.is_graph_replay()
    compile_mode = lucid.gpu.kernel_compile()
    out = []
    try:
        for mode in ("eager", "lazy", "interpreted", "generated"):
            lucid.gpu.set_lazy(mode != "eager")
            lucid.gpu.set_fusion(mode in ("interpreted", "generated"))
            lucid.gpu.set_graph_replay(mode in ("interpreted", "generated"))
            lucid.gpu.set_kernel_compile("sync" if mode == "generated" else "off")
            for _ in range(1 if mode in ("eager", "lazy") else repeats):
                r = fn()
                lucid.eval(r)
            out.append(r.float().cpu().numpy() if r.dtype in (lucid.float16, lucid.bfloat16) else r.cpu().numpy())
    finally:
        lucid.gpu.set_kernel_compile(compile_mode)
        lucid.gpu.set_graph_replay(replay)
        lucid.gpu.set_fusion(fusion)
        lucid.gpu.set_lazy(lazy)
    return out


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("op", FUSABLE_UNARY + FUSABLE_BINARY)
def test_every_fusable_op_is_bitwise_equal_in_every_mode(op, dtype):
    x = data(getattr(lucid, dtype), n=4099, seed=10) * 0.45  # (mostly inside every op's domain)
    y = data(getattr(lucid, dtype), n=4099, seed=11) * 0.45 + 0.05
    f = getattr(lucid, op)

    def chain():
        a = x * 1.25 + 0.125
        r = f(a, y) if op in FUSABLE_BINARY else f(a)
        return (r - 0.5) * a

    eager, lazy, interpreted, generated = every_mode(chain)
    assert_bitwise([eager], [lazy])
    assert_bitwise([eager], [interpreted])
    assert_bitwise([eager], [generated])


@needs_gpu
def test_chains_whose_results_nobody_holds_are_not_run():
    x = data(lucid.float32, n=1000)
    lazy, compile_mode = lucid.gpu.is_lazy(), lucid.gpu.kernel_compile()
    lucid.gpu.set_lazy(True)
    lucid.gpu.set_kernel_compile("sync")
    try:
        (x * 2.0 + 1.0).cpu()  # (compiles the chain's kernel)
        before, launches = fused_calls(), lucid.gpu.generated_kernel_stats()["fused_launches"]
        for _ in range(10):
            x * 2.0 + 1.0  # computed and dropped: nothing can read it
            lucid.gpu.flush()
        assert fused_calls() - before == 20
        assert lucid.gpu.generated_kernel_stats()["fused_launches"] == launches  # none ran
        for _ in range(5):
            x * 2.0 + 1.0  # dropped steps inside a chain whose last value is held
        y = x * 3.0 - 1.0
        got = y.cpu().numpy()
        assert lucid.gpu.generated_kernel_stats()["fused_launches"] == launches + 1
    finally:
        lucid.gpu.set_kernel_compile(compile_mode)
        lucid.gpu.set_lazy(lazy)
    np.testing.assert_array_equal(got, x.cpu().numpy() * np.float32(3.0) - np.float32(1.0))
