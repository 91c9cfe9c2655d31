"""Random numbers: seeding and reproducibility, Generator objects, RNG state round trips,
and the moments of every sampler against their expected values (within a few standard
errors). lucid's Philox stream is not torch's, so values are not compared with torch."""

import math

import numpy as np
import pytest
import torch

import lucid
from conftest import DEVICES, FLOAT_NAMES, default_device_as, dtype_name

N = 200_000
Z = 5.0  # standard errors allowed: a false failure is ~1e-6 likely per check


def check_moments(t, mean, var, mu4):
    """Sample mean and variance of `t` agree with the distribution's (mean, var), with
    mu4 the distribution's fourth central moment (for the variance's standard error)."""
    x = t.cpu().double().numpy().ravel() if t.dtype is not lucid.bfloat16 \
        else np.array(t.float().tolist(), dtype=np.float64).ravel()
    n = x.size
    m, v = x.mean(), x.var()
    assert abs(m - mean) < Z * math.sqrt(var / n) + 1e-12, (m, mean)
    # x.var() centres on the sample mean: allow for that second-order term too (it is all
    # there is when mu4 == var**2, e.g. a fair coin)
    tol = Z * math.sqrt(max(mu4 - var ** 2, 0.0) / n) + Z ** 2 * var / n + 1e-12
    assert abs(v - var) < tol, (v, var)


def discrete_uniform(low, high):
    k = np.arange(low, high, dtype=np.float64)
    mean = k.mean()
    return mean, ((k - mean) ** 2).mean(), ((k - mean) ** 4).mean()


@pytest.fixture(autouse=True)
def _seed():
    lucid.manual_seed(1234)


# ---- moments -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["float32", "float64"])
def test_rand_moments(name, device):
    t = lucid.rand(N, dtype=getattr(lucid, name), device=device)
    assert t.device.type == device and dtype_name(t.dtype) == name
    check_moments(t, 0.5, 1 / 12, 1 / 80)


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_rand_range(name):
    x = lucid.rand(N, dtype=getattr(lucid, name)).float().numpy()
    assert x.min() >= 0.0 and x.max() < 1.0
    assert len(np.unique(x)) > (50 if name == "bfloat16" else 500)


@pytest.mark.parametrize("name", ["float32", "float64", "float16"])
def test_randn_moments(name, device):
    t = lucid.randn(N, dtype=getattr(lucid, name), device=device)
    assert dtype_name(t.dtype) == name
    check_moments(t, 0.0, 1.0, 3.0)
    assert np.isfinite(t.float().numpy()).all()


@pytest.mark.parametrize("mean,std", [(0.0, 1.0), (2.0, 3.0), (-5.0, 0.5)])
def test_normal_moments(mean, std):
    t = lucid.normal(mean, std, (N,))
    assert t.shape == (N,) and t.dtype is lucid.float32
    check_moments(t, mean, std ** 2, 3 * std ** 4)
    t2 = lucid.normal(mean, std, size=(N // 4, 4), dtype=lucid.float64)
    assert t2.shape == (N // 4, 4) and t2.dtype is lucid.float64
    check_moments(t2, mean, std ** 2, 3 * std ** 4)


def test_normal_zero_std():
    assert lucid.normal(5.0, 0.0, (4,)).tolist() == [5.0] * 4


@pytest.mark.parametrize("mean,std", [
    (lambda m: m.zeros(3), lambda m: 1.0), (lambda m: 0.0, lambda m: m.ones(2, 3)),
    (lambda m: m.zeros(2, 1), lambda m: m.ones(1, 3)),
    (lambda m: m.zeros(2, dtype=m.float64), lambda m: 1.0),
    (lambda m: m.zeros(2, dtype=m.float64), lambda m: m.ones(2)),
    (lambda m: m.zeros(2), lambda m: m.ones(2, dtype=m.float64)),
    (lambda m: m.zeros(2, dtype=m.float16), lambda m: m.ones(2, dtype=m.float64))])
def test_normal_tensor_args_shape_dtype(mean, std):
    lt, tt = lucid.normal(mean(lucid), std(lucid)), torch.normal(mean(torch), std(torch))
    assert lt.shape == tt.shape and dtype_name(lt.dtype) == dtype_name(tt.dtype)


def test_normal_tensor_args_moments():
    means = lucid.tensor([[-3.0, 0.0, 100.0]]).expand(N, 3)
    stds = lucid.tensor([0.5, 1.0, 4.0])
    t = lucid.normal(means, stds)
    assert t.shape == (N, 3)
    for j, (m, s) in enumerate([(-3.0, 0.5), (0.0, 1.0), (100.0, 4.0)]):
        check_moments(t[:, j].contiguous(), m, s ** 2, 3 * s ** 4)
    assert lucid.normal(lucid.tensor([1.0, 2.0]), 0.0).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("args", [
    lambda m: (m.zeros(3), m.ones(2)), lambda m: (m.zeros(2), -1.0), lambda m: (0.0, -1.0, (2,)),
    lambda m: (m.zeros(3), 1.0, (3,)), lambda m: (m.zeros(2, dtype=m.int64), 1.0)])
def test_normal_bad_args(args):
    with pytest.raises(Exception) as te:
        torch.normal(*args(torch))
    with pytest.raises(type(te.value)):
        lucid.normal(*args(lucid))


@pytest.mark.parametrize("low,high", [(0, 10), (-5, 5), (3, 4), (0, 2), (-100, 1000)])
def test_randint_moments_and_range(low, high):
    t = lucid.randint(low, high, (N,))
    assert dtype_name(t.dtype) == dtype_name(torch.randint(low, high, (2,)).dtype) == "int64"
    x = t.numpy()
    assert x.min() >= low and x.max() < high
    if high - low <= 10:
        assert sorted(set(x.tolist())) == list(range(low, high))
    check_moments(t, *discrete_uniform(low, high))


def test_randint_forms():
    assert lucid.randint(10, (3,)).shape == torch.randint(10, (3,)).shape
    assert lucid.randint(3, 5, (2, 2)).shape == (2, 2)
    assert lucid.randint(0, 256, (4,), dtype=lucid.uint8).dtype is lucid.uint8
    assert lucid.randint(3, 5, size=(2,)).shape == (2,)
    big = lucid.randint(-2 ** 62, 2 ** 62, (1000,)).numpy()
    assert big.min() < -2 ** 60 and big.max() > 2 ** 60
    assert dtype_name(lucid.randint_like(lucid.zeros(3), 10).dtype) == \
        dtype_name(torch.randint_like(torch.zeros(3), 10).dtype)


@pytest.mark.parametrize("low,high", [(5, 3), (3, 3)])
def test_randint_empty_range(low, high):
    with pytest.raises(RuntimeError) as te:
        torch.randint(low, high, (2,))
    with pytest.raises(type(te.value), match="from"):
        lucid.randint(low, high, (2,))


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("name", ["float32", "float64"])
def test_bernoulli_moments(p, name):
    probs = lucid.full((N,), p, dtype=getattr(lucid, name))
    t = lucid.bernoulli(probs)
    assert t.dtype is probs.dtype and t.shape == probs.shape
    x = t.numpy()
    assert set(np.unique(x).tolist()) <= {0.0, 1.0}
    v = p * (1 - p)
    check_moments(t, p, v, v * (1 - 3 * v))
    t2 = lucid.bernoulli(lucid.zeros(N, dtype=getattr(lucid, name)), p)
    check_moments(t2, p, v, v * (1 - 3 * v))


def test_bernoulli_per_element_probabilities():
    probs = lucid.tensor([0.0, 1.0] * 4)
    assert lucid.bernoulli(probs).tolist() == [0.0, 1.0] * 4
    t = lucid.zeros(N).bernoulli_(0.25)
    check_moments(t, 0.25, 0.1875, 0.1875 * (1 - 3 * 0.1875))


def test_inplace_samplers():
    t = lucid.empty(N, dtype=lucid.float64).uniform_(2.0, 5.0)
    x = t.numpy()
    assert x.min() >= 2.0 and x.max() < 5.0
    check_moments(t, 3.5, 9 / 12, 81 / 80)
    t = lucid.empty(N).normal_(1.0, 2.0)
    check_moments(t, 1.0, 4.0, 48.0)
    t = lucid.empty(N, dtype=lucid.int64).random_(3, 9)
    check_moments(t, *discrete_uniform(3, 9))
    t = lucid.empty(N, dtype=lucid.int16).random_(7)
    check_moments(t, *discrete_uniform(0, 7))
    x = lucid.empty(1000, dtype=lucid.int8).random_().numpy()
    assert x.min() >= 0 and x.max() <= 127


def test_like_samplers():
    base = lucid.zeros(2, 3, dtype=lucid.float64)
    for f in ["rand_like", "randn_like"]:
        lt, tt = getattr(lucid, f)(base), getattr(torch, f)(torch.zeros(2, 3, dtype=torch.float64))
        assert lt.shape == tt.shape and dtype_name(lt.dtype) == dtype_name(tt.dtype)
    r = lucid.randint_like(lucid.zeros(N, dtype=lucid.int32), 4)
    assert r.dtype is lucid.int32
    check_moments(r, *discrete_uniform(0, 4))


@pytest.mark.parametrize("n", [0, 1, 2, 10, 1000, 100_000])
def test_randperm_is_permutation(n):
    p = lucid.randperm(n)
    assert p.dtype is lucid.int64 and p.shape == (n,)
    assert sorted(p.tolist()) == list(range(n))
    if n >= 1000:
        assert p.tolist() != list(range(n))


def test_randperm_dtype_and_uniformity():
    assert lucid.randperm(5, dtype=lucid.int32).dtype is lucid.int32
    assert sorted(lucid.randperm(300, dtype=lucid.int16).tolist()) == list(range(300))
    trials, n = 20_000, 5
    counts = np.zeros((n, n))
    for _ in range(trials):
        for pos, v in enumerate(lucid.randperm(n).tolist()):
            counts[pos, v] += 1
    expected, sd = trials / n, math.sqrt(trials * (1 / n) * (1 - 1 / n))
    assert np.abs(counts - expected).max() < Z * sd


def test_randperm_negative():
    with pytest.raises(RuntimeError) as te:
        torch.randperm(-1)
    with pytest.raises(type(te.value), match="-1"):
        lucid.randperm(-1)


@pytest.mark.parametrize("fn", ["rand", "randn"])
def test_float_samplers_reject_int_dtype(fn):
    with pytest.raises(Exception) as te:
        getattr(torch, fn)(2, dtype=torch.int64)
    with pytest.raises(type(te.value)):
        getattr(lucid, fn)(2, dtype=lucid.int64)


# ---- seeding and generators ------------------------------------------------------------
SAMPLERS = [
    lambda **kw: lucid.rand(50, **kw), lambda **kw: lucid.randn(50, **kw),
    lambda **kw: lucid.randint(0, 1000, (50,), **kw), lambda **kw: lucid.randperm(50, **kw),
    lambda **kw: lucid.normal(1.0, 2.0, (50,), **kw),
    lambda **kw: lucid.bernoulli(lucid.full((50,), 0.5), **kw),
    lambda **kw: lucid.rand(7, 3, dtype=lucid.float64, **kw),
]


@pytest.mark.parametrize("sample", SAMPLERS)
def test_manual_seed_reproducible(sample):
    lucid.manual_seed(7)
    a = sample().tolist()
    lucid.manual_seed(7)
    b = sample().tolist()
    lucid.manual_seed(8)
    c = sample().tolist()
    assert a == b and a != c
    assert sample().tolist() != b  # the stream moves on


@pytest.mark.parametrize("sample", SAMPLERS)
def test_generator_object(sample):
    g = lucid.Generator()
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    a = sample(generator=g).tolist()
    g.manual_seed(3)
    assert sample(generator=g).tolist() == a
    # a private generator leaves the default one alone
    lucid.manual_seed(11)
    ref = lucid.rand(5).tolist()
    lucid.manual_seed(11)
    sample(generator=lucid.Generator().manual_seed(99))
    assert lucid.rand(5).tolist() == ref
    # same seed: private and default generators give the same stream
    lucid.manual_seed(3)
    assert sample().tolist() == a


def test_rng_state_round_trip():
    s = lucid.get_rng_state()
    assert s.dtype is lucid.uint8 and s.ndim == 1
    a = lucid.rand(10).tolist()
    lucid.rand(3)
    lucid.set_rng_state(s)
    assert lucid.rand(10).tolist() == a
    g = lucid.Generator().manual_seed(5)
    gs = g.get_state()
    b = lucid.randn(10, generator=g).tolist()
    g.set_state(gs)
    assert lucid.randn(10, generator=g).tolist() == b
    h = lucid.Generator().set_state(gs)  # state carries over between generators
    assert lucid.randn(10, generator=h).tolist() == b


def test_get_state_is_a_copy():
    s = lucid.get_rng_state()
    before = s.tolist()
    lucid.rand(100)
    assert s.tolist() == before


def test_set_rng_state_wrong_dtype():
    with pytest.raises(TypeError) as te:
        torch.set_rng_state(torch.zeros(3))
    with pytest.raises(type(te.value), match="ByteTensor|uint8"):
        lucid.set_rng_state(lucid.zeros(3))


def test_set_rng_state_wrong_size():
    with pytest.raises(RuntimeError) as te:
        torch.set_rng_state(torch.zeros(3, dtype=torch.uint8))
    with pytest.raises(type(te.value), match="size"):
        lucid.set_rng_state(lucid.zeros(3, dtype=lucid.uint8))


def test_seed_values():
    assert lucid.manual_seed(1) is lucid.default_generator
    assert lucid.initial_seed() == 1
    lucid.manual_seed(-1)
    torch_g = torch.Generator().manual_seed(-1)
    assert lucid.initial_seed() == torch_g.initial_seed() == 2 ** 64 - 1
    s = lucid.seed()
    assert lucid.initial_seed() == s and 0 <= s < 2 ** 64
    with pytest.raises(TypeError):
        lucid.rand(3, generator=5)


def test_seed_overflow():
    with pytest.raises(Exception) as te:
        torch.manual_seed(2 ** 64)
    with pytest.raises(type(te.value), match="[Oo]verflow"):
        lucid.manual_seed(2 ** 64)


def test_random_on_devices_and_flags(device):
    lucid.manual_seed(0)
    a = lucid.rand(5, device=device, requires_grad=True)
    assert a.device.type == device and a.requires_grad
    lucid.manual_seed(0)
    assert lucid.rand(5).tolist() == a.tolist()  # drawn on the host, then moved
    assert lucid.rand(0).shape == (0,) and lucid.randn(()).shape == ()


@pytest.mark.parametrize("rate", [0.3, 4.0, 9.9, 10.0, 37.5, 1e4])
def test_poisson_moments(rate, device):
    """Mean and variance equal the rate (Knuth's method below 10, PTRS above), counts
    are whole numbers, and the dtype is the rates'."""
    rates = lucid.full((N,), rate, dtype=lucid.float64, device=device)
    t = lucid.poisson(rates)
    assert t.dtype == lucid.float64 and t.device.type == device
    mean, var = float(t.mean()), float(t.var())
    assert abs(mean - rate) < 6 * math.sqrt(rate / N), (mean, rate)
    assert abs(var - rate) < 8 * rate * math.sqrt(2 / N) + 1e-12, (var, rate)
    assert bool((t == t.floor()).all()) and float(t.min()) >= 0


def test_poisson_pmf_and_special_rates(device):
    """The frequencies of small counts match the Poisson pmf; rate 0 gives 0; float32
    and float16 rates give counts of their dtype."""
    t = lucid.poisson(lucid.full((N,), 2.5, device=device))
    for k in range(6):
        pmf = math.exp(-2.5) * 2.5 ** k / math.factorial(k)
        assert abs(float((t == k).float().mean()) - pmf) < 6 * math.sqrt(pmf / N)
    z = lucid.poisson(lucid.zeros(7, device=device))
    assert z.tolist() == [0.0] * 7
    h = lucid.poisson(lucid.full((4,), 3.0, dtype=lucid.float16, device=device))
    assert h.dtype == lucid.float16


def test_poisson_reproducible_and_errors(device):
    rates = lucid.linspace(0, 50, 1000, device=device)
    lucid.manual_seed(3)
    a = lucid.poisson(rates)
    b = lucid.poisson(rates)
    lucid.manual_seed(3)
    assert lucid.equal(a, lucid.poisson(rates)) and not lucid.equal(a, b)
    g = lucid.Generator().manual_seed(3)
    assert lucid.equal(a, lucid.poisson(rates, generator=g))
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
        lucid.poisson(lucid.tensor([1.0, -2.0], device=device))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        lucid.poisson(lucid.tensor([1, 2], device=device))
    with pytest.raises(TypeError):
        lucid.poisson([1.0])


@pytest.mark.parametrize("default", DEVICES)
def test_rng_state_is_a_cpu_byte_tensor_whatever_the_default_device(default):
    with default_device_as(default):  # torch's get_rng_state: a CPU ByteTensor always
        state = lucid.get_rng_state()
        assert state.device.type == "cpu" and state.dtype == lucid.uint8
        lucid.set_rng_state(state)
        assert lucid.get_rng_state().tolist() == state.tolist()


@pytest.mark.skipif(lucid.gpu.device_count() == 0, reason="no GPU")
def test_poisson_gpu_matches_cpu():
    """Both devices walk the same per-element streams with the same arithmetic: the
    same counts (allowing a rare last-ulp difference in exp/log/lgamma to flip one)."""
    rates = lucid.linspace(0, 60, 20000, dtype=lucid.float64, device="cpu")
    lucid.manual_seed(11)
    cpu = lucid.poisson(rates)
    lucid.manual_seed(11)
    gpu = lucid.poisson(rates.to("gpu")).cpu()
    assert float((cpu != gpu).sum()) <= 2


def test_values_do_not_depend_on_the_thread_count():
    # The CPU's draws split their Philox blocks over the pool: element i is a function of
    # (seed, offset, i) alone, whatever the pool's size.
    before = lucid.get_num_threads()
    draws = []
    try:
        for threads in (1, 2, 3):
            lucid.set_num_threads(threads)
            lucid.manual_seed(11)
            draws.append([lucid.randn(300001), lucid.rand(200001, dtype=lucid.float64), lucid.randint(0, 7, (100003,)),
                          lucid.bernoulli(lucid.full((100003,), 0.25)), lucid.randn(5, dtype=lucid.float16)])
    finally:
        lucid.set_num_threads(before)
    for other in draws[1:]:
        for a, b in zip(draws[0], other):
            assert a.tolist() == b.tolist()


@pytest.mark.parametrize("n", [1, 7, 1024, 300001])
def test_randn_is_box_muller_of_the_uniforms_rand_draws(n):
    # The same seed gives rand and randn the same Philox words (Note [Philox in lanes]):
    # randn's pair j is Box-Muller of rand's uniforms 2j and 2j + 1, in order, odd ends too.
    lucid.manual_seed(21)
    u = np.array(lucid.rand(n + n % 2).tolist(), dtype=np.float64)
    lucid.manual_seed(21)
    z = np.array(lucid.randn(n).tolist(), dtype=np.float64)
    r = np.sqrt(-2 * np.log1p(-u[0::2]))
    theta = np.float64(np.float32(2 * math.pi)) * u[1::2]
    want = np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1).ravel()[:n]
    np.testing.assert_allclose(z, want, rtol=2e-5, atol=2e-6)
    lucid.manual_seed(21)
    u64 = np.array(lucid.rand(2 * ((n + 1) // 2), dtype=lucid.float64).tolist())
    lucid.manual_seed(21)
    z64 = np.array(lucid.randn(n, dtype=lucid.float64).tolist())
    r, theta = np.sqrt(-2 * np.log1p(-u64[0::2])), 2 * math.pi * u64[1::2]
    np.testing.assert_allclose(z64, np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1).ravel()[:n],
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("isa", ["baseline", "avx2"])
def test_each_instruction_set_draws_the_same_values(isa):
    # Philox runs in vector lanes compiled per instruction set: the uniform and integer
    # draws are the same bits under each; the normals' vector math may differ in the last bit.
    import os
    import subprocess
    import sys
    code = ("import lucid; lucid.manual_seed(5); "
            "print([lucid.rand(1001).tolist(), lucid.rand(77, dtype=lucid.float64).tolist(), "
            "lucid.randint(0, 1000, (513,)).tolist(), lucid.randn(999).tolist()])")
    root = os.path.dirname(os.path.dirname(os.path.abspath(lucid.__file__)))
    env = dict(os.environ, LUCID_CPU_ISA=isa, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    theirs = eval(r.stdout)
    lucid.manual_seed(5)
    ours = [lucid.rand(1001).tolist(), lucid.rand(77, dtype=lucid.float64).tolist(),
            lucid.randint(0, 1000, (513,)).tolist(), lucid.randn(999).tolist()]
    assert theirs[:3] == ours[:3]
    np.testing.assert_allclose(theirs[3], ours[3], rtol=1e-6, atol=1e-6)
