"""GPU storage: transfers and their device aliases, values of every dtype, views and
writes on the GPU, copy_ across devices, the caching allocator's statistics, pinned
(shared) storage that both devices address, DLPack exchange with torch.cuda, and the
error for an op with no GPU kernel. Skipped entirely where lucid has no GPU."""

import gc

import numpy as np
import pytest
import torch

import lucid
from conftest import DTYPE_NAMES, assert_same, shares_storage, to_lucid

# The GPU against the CPU: a tensor made here without a device is the CPU side, whatever
# the run's default device (LUCID_TEST_DEFAULT_DEVICE).
pytestmark = [pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here"),
              pytest.mark.usefixtures("cpu_default")]

TORCH_CUDA = torch.cuda.is_available()
MiB = 1 << 20


def _src(name, shape=(3, 4)):
    t = torch.arange(int(np.prod(shape))).reshape(shape) - 5
    return t.to(getattr(torch, name))


# ---- device API ----------------------------------------------------------------------------
def test_device_api():
    assert lucid.gpu.device_count() >= 1
    assert lucid.gpu.current_device() == 0
    assert lucid.cuda is lucid.gpu
    import lucid.cuda as lc
    assert lc.is_available()
    assert lucid.gpu.synchronize() is None
    lucid.gpu.synchronize(0)
    lucid.gpu.synchronize("gpu:0")
    lucid.gpu.synchronize("cuda")


@pytest.mark.parametrize("move", [lambda t: t.to("gpu"), lambda t: t.cuda(), lambda t: t.gpu(),
                                  lambda t: t.to("cuda:0"), lambda t: t.to("gpu:0"),
                                  lambda t: t.to("cuda"), lambda t: t.cuda(0),
                                  lambda t: t.to(lucid.device("gpu", 0)),
                                  lambda t: t.to(device="cuda"), lambda t: t.to(0)])
def test_transfer_aliases(move):
    t = lucid.arange(6.0, device="cpu")
    g = move(t)
    assert g.device.type == "gpu" and g.device == lucid.device("gpu:0") == "cuda:0"
    assert g.is_cuda and g.is_gpu and not g.is_cpu
    assert g.to("gpu") is g and g.cuda() is g  # already there: the same tensor
    assert g.cpu().tolist() == t.tolist()
    assert t.cpu() is t


def test_bad_gpu_index():
    bad = f"gpu:{lucid.gpu.device_count()}"
    with pytest.raises(RuntimeError, match="device|GPU|gpu"):
        lucid.zeros(2, device=bad)
    with pytest.raises(RuntimeError, match="device|GPU|gpu"):
        lucid.zeros(2).to(bad)


# ---- values -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_round_trip_every_dtype(name):
    tt = _src(name)
    g = to_lucid(tt).to("gpu")
    assert g.device.type == "gpu" and g.dtype is getattr(lucid, name)
    assert_same(g.cpu(), tt)
    assert g.tolist() == tt.tolist()  # read-outs download
    assert g[1, 2].item() == tt[1, 2].item()


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_creation_on_gpu(name):
    d = getattr(lucid, name)
    td = getattr(torch, name)
    assert_same(lucid.zeros(2, 3, dtype=d, device="gpu").cpu(), torch.zeros(2, 3, dtype=td))
    assert_same(lucid.ones(4, dtype=d, device="cuda").cpu(), torch.ones(4, dtype=td))
    assert_same(lucid.full((2,), 1, dtype=d, device="gpu").cpu(), torch.full((2,), 1, dtype=td))
    assert_same(lucid.eye(3, dtype=d, device="gpu").cpu(), torch.eye(3, dtype=td))
    assert_same(lucid.tensor([1, 0], dtype=d, device="cuda:0").cpu(), torch.tensor([1, 0], dtype=td))
    assert lucid.empty(5, dtype=d, device="gpu").device.type == "gpu"


def test_ranges_on_gpu():
    assert_same(lucid.arange(2, 20, 3, device="gpu").cpu(), torch.arange(2, 20, 3))
    assert_same(lucid.linspace(0, 1, 5, device="gpu").cpu(), torch.linspace(0, 1, 5))
    assert lucid.zeros(0, 3, device="gpu").cpu().shape == (0, 3)


def test_non_contiguous_transfers():
    tb = torch.arange(60.0).reshape(3, 4, 5)
    lb = to_lucid(tb)
    for f in [lambda t: t.transpose(0, 2), lambda t: t[:, ::2, 1:], lambda t: t[1, :, 3],
              lambda t: t[:, :1].expand(3, 4, 5), lambda t: t.permute(1, 2, 0)[1:]]:
        g = f(lb).to("gpu")
        assert g.tolist() == f(tb).tolist()
        assert g.cpu().tolist() == f(tb).tolist()
        if TORCH_CUDA:  # the layout of the copy, as torch makes it (preserve_format)
            assert g.stride() == f(tb).cuda().stride()
    g = lb.to("gpu")
    for f in [lambda t: t.transpose(0, 2), lambda t: t[:, ::2, 1:], lambda t: t[1, :, 3]]:
        v = f(g)
        assert v.device.type == "gpu" and shares_storage(v, g)
        assert v.cpu().tolist() == f(tb).tolist()
        if TORCH_CUDA:
            assert_same(v.cpu(), f(tb.cuda()).cpu())
        assert v.contiguous().tolist() == f(tb).tolist() and v.contiguous().is_contiguous()


def test_large_transfer():
    a = np.random.default_rng(0).standard_normal((1000, 1003)).astype(np.float32)
    g = lucid.from_numpy(a).to("gpu")
    back = g.numpy()  # a GPU tensor's numpy() downloads
    assert np.array_equal(back, a)
    assert np.array_equal(g.t().cpu().numpy(), a.T)
    assert np.array_equal(g.t().contiguous().cpu().numpy(), a.T)


# ---- writes and copies --------------------------------------------------------------------
def test_writes_through_gpu_views():
    tb = torch.arange(12.0).reshape(3, 4)
    g = to_lucid(tb).to("gpu")
    g[:, 1] = -1.0
    tb[:, 1] = -1.0
    g.t()[0].fill_(5.0)
    tb.t()[0].fill_(5.0)
    g[2] = lucid.tensor([7.0, 8.0, 9.0, 10.0], device="gpu")
    tb[2] = torch.tensor([7.0, 8.0, 9.0, 10.0])
    g[0, 1:] = lucid.tensor([0.5, 0.25, 0.125])  # a CPU source into a GPU target
    tb[0, 1:] = torch.tensor([0.5, 0.25, 0.125])
    assert_same(g.cpu(), tb)
    g.zero_()
    assert g.tolist() == [[0.0] * 4] * 3


@pytest.mark.parametrize("src_dev,dst_dev", [("cpu", "gpu"), ("gpu", "cpu"), ("gpu", "gpu")])
def test_copy_across_devices(src_dev, dst_dev):
    ts = torch.arange(12).reshape(3, 4)
    ls = to_lucid(ts).to(src_dev)
    ld = lucid.zeros(3, 4, dtype=lucid.int64, device=dst_dev)
    assert ld.copy_(ls) is ld and ld.device.type == dst_dev
    assert ld.tolist() == ts.tolist()
    # broadcasting
    ld2 = lucid.zeros(2, 3, 4, dtype=lucid.int64, device=dst_dev)
    ld2.copy_(ls)
    assert ld2.tolist() == ts.expand(2, 3, 4).tolist()
    # non-contiguous both sides
    ld3 = lucid.zeros(4, 3, dtype=lucid.int64, device=dst_dev).t()
    ld3.copy_(ls)
    assert ld3.tolist() == ts.tolist()
    ld4 = lucid.zeros(4, 3, dtype=lucid.int64, device=dst_dev)
    ld4.copy_(ls.t())
    assert ld4.tolist() == ts.t().tolist()


@pytest.mark.parametrize("src_dev,dst_dev", [("cpu", "gpu"), ("gpu", "cpu")])
def test_copy_with_cast_across_devices(src_dev, dst_dev):
    ts = torch.tensor([[-2.7, 0.5], [3.9, 100.25]])
    ls = to_lucid(ts).to(src_dev)
    for name in ["int32", "float16", "bool", "float64", "complex64", "bfloat16"]:
        ld = lucid.zeros(2, 2, dtype=getattr(lucid, name), device=dst_dev)
        ld.copy_(ls)
        td = torch.zeros(2, 2, dtype=getattr(torch, name))
        td.copy_(ts)
        assert_same(ld.cpu(), td)


@pytest.mark.parametrize("src", DTYPE_NAMES)
def test_gpu_cast_matches_cpu_cast(src):
    # Values every dtype holds exactly or truncates the same way (no negatives: a
    # negative float into uint8 is undefined in C++ and in PyTorch).
    data = [[0, 1, 2.75], [100, 7, 0.5]]
    if src == "bool":
        data = [[0, 1, 1], [1, 0, 1]]
    host = lucid.tensor(data).to(getattr(lucid, src))
    gpu = host.to("gpu")
    for dst in DTYPE_NAMES:
        d = getattr(lucid, dst)
        for h, g in ((host, gpu), (host.t(), gpu.t())):  # contiguous and transposed sources
            out = g.to(d)
            assert out.device.type == "gpu" and out.dtype is d
            assert out.cpu().tolist() == h.to(d).tolist(), (src, dst)


def test_version_counter_on_gpu():
    g = lucid.zeros(4, device="gpu")
    v = g._version
    g.fill_(1.0)
    g[0] = 2.0
    assert g._version == v + 2 and g[1:]._version == g._version


# ---- allocator statistics ---------------------------------------------------------------------
def test_memory_allocated_grows_and_shrinks():
    gc.collect()
    lucid.gpu.synchronize()
    base = lucid.gpu.memory_allocated()
    t = lucid.empty(16 * MiB // 4, device="gpu")  # 16 MiB of float32
    grown = lucid.gpu.memory_allocated()
    assert grown - base >= 16 * MiB
    assert lucid.gpu.max_memory_allocated() >= grown
    assert lucid.gpu.memory_reserved() >= grown
    v = t[::2]  # a view allocates nothing
    assert lucid.gpu.memory_allocated() == grown
    del t, v
    gc.collect()
    assert lucid.gpu.memory_allocated() == base
    cpu = lucid.empty(MiB)
    assert lucid.gpu.memory_allocated() == base  # CPU tensors are not counted
    del cpu


def test_peak_and_empty_cache():
    gc.collect()
    lucid.gpu.reset_peak_memory_stats()
    base = lucid.gpu.memory_allocated()
    assert lucid.gpu.max_memory_allocated() == base
    t = lucid.empty(32 * MiB, dtype=lucid.uint8, device="gpu")
    peak = lucid.gpu.max_memory_allocated()
    assert peak >= base + 32 * MiB
    del t
    gc.collect()
    assert lucid.gpu.max_memory_allocated() == peak  # the peak stays until reset
    reserved = lucid.gpu.memory_reserved()
    assert reserved >= base + 32 * MiB  # the freed block is cached
    lucid.gpu.empty_cache()
    assert lucid.gpu.memory_reserved() <= reserved - 32 * MiB
    assert lucid.gpu.memory_allocated() == base
    lucid.gpu.reset_peak_memory_stats()
    assert lucid.gpu.max_memory_allocated() == lucid.gpu.memory_allocated()


def test_cached_block_is_reused():
    gc.collect()
    t = lucid.empty(8 * MiB, dtype=lucid.uint8, device="gpu")
    reserved = lucid.gpu.memory_reserved()
    del t
    gc.collect()
    u = lucid.empty(8 * MiB, dtype=lucid.uint8, device="gpu")
    assert lucid.gpu.memory_reserved() == reserved
    del u


# ---- pinned (shared) storage ------------------------------------------------------------------
def test_pin_memory():
    t = lucid.arange(6.0)
    assert not t.is_pinned()
    p = t.pin_memory()
    assert p.is_pinned() and p.device.type == "cpu" and p.tolist() == t.tolist()
    assert not shares_storage(p, t)
    assert p.pin_memory() is p
    assert lucid.zeros(3, pin_memory=True).is_pinned()
    assert lucid.tensor([1, 2], pin_memory=True).is_pinned()


def test_pinned_to_gpu_is_a_relabel():
    gc.collect()
    p = lucid.arange(12.0).reshape(3, 4).pin_memory()
    before = lucid.gpu.memory_allocated()
    g = p.to("gpu")
    assert g.device.type == "gpu"
    assert g.untyped_storage().data_ptr() == p.untyped_storage().data_ptr()  # no copy
    assert lucid.gpu.memory_allocated() == before  # no device memory taken
    back = g.to("cpu")
    assert back.device.type == "cpu"
    assert back.untyped_storage().data_ptr() == p.untyped_storage().data_ptr()
    # writes through one are seen by the other, in both directions
    g[0] = -1.0  # a GPU write
    assert p[0].tolist() == [-1.0] * 4
    p[2, 3] = 42.0  # a host write
    assert g[2, 3].item() == 42.0
    g.t()[1].fill_(7.0)
    assert p[:, 1].tolist() == [7.0, 7.0, 7.0]
    c = p.to("gpu", copy=True)  # copy=True makes a real copy
    assert c.untyped_storage().data_ptr() != p.untyped_storage().data_ptr()
    c.fill_(0.0)
    assert p[1, 0].item() == 4.0


def test_pinned_blocks_are_reused_only_after_their_last_queued_use():
    # Note [Cached pinned blocks]: a loader pins a batch a step; a freed block goes back to
    # a cache and may be handed out again only after the kernels queued on it have run.
    # Each step's sum reads its pinned batch on the device; the batch dies right after
    # the launch, and the next step pins (and fills, on the host) a block of the same
    # size. A block reused too early would give a later batch's values to an earlier sum.
    n = 1 << 20
    sums = []
    for i in range(64):
        p = lucid.full((n,), float(i)).pin_memory()
        g = p.to("gpu")  # a relabel: the kernel below reads the pinned block itself
        sums.append((g * 2.0).sum())
        del p, g
    assert [s.item() for s in sums] == [2.0 * i * n for i in range(64)]
    lucid.gpu.empty_cache()  # frees the cached pinned blocks too
    assert lucid.full((n,), 3.0).pin_memory().to("gpu").sum().item() == 3.0 * n


def test_pinned_views_relabel():
    p = lucid.arange(24.0).reshape(2, 3, 4).pin_memory()
    v = p.transpose(0, 2)[1:]
    g = v.to("gpu")
    assert g.untyped_storage().data_ptr() == p.untyped_storage().data_ptr()
    assert g.stride() == v.stride() and g.storage_offset() == v.storage_offset()
    assert g.tolist() == v.tolist()


# ---- DLPack with torch.cuda -------------------------------------------------------------------
@pytest.mark.skipif(not TORCH_CUDA, reason="torch has no CUDA here")
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dlpack_gpu_lucid_to_torch(name):
    tt = _src(name)
    g = to_lucid(tt).to("gpu")
    assert g.__dlpack_device__() == (2, 0)
    u = torch.from_dlpack(g)
    assert u.is_cuda and u.dtype == tt.dtype and u.data_ptr() == g.data_ptr()
    assert u.cpu().tolist() == tt.tolist()
    u[0, 0] = True if name == "bool" else 1
    torch.cuda.synchronize()
    assert g[0, 0].item() == u[0, 0].item()
    g[1, 1] = 0
    lucid.gpu.synchronize()
    assert u[1, 1].item() == 0


@pytest.mark.skipif(not TORCH_CUDA, reason="torch has no CUDA here")
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dlpack_gpu_torch_to_lucid(name):
    u = _src(name).cuda()
    g = lucid.from_dlpack(u)
    assert g.device.type == "gpu" and g.data_ptr() == u.data_ptr()
    assert_same(g.cpu(), u.cpu())
    g[0, 0] = True if name == "bool" else 1
    lucid.gpu.synchronize()
    assert u[0, 0].item() == g[0, 0].item()
    u[2, 3] = 0
    torch.cuda.synchronize()
    assert g[2, 3].item() == 0


@pytest.mark.skipif(not TORCH_CUDA, reason="torch has no CUDA here")
def test_dlpack_gpu_strided_and_capsule_once():
    u = torch.arange(24.0, device="cuda").reshape(4, 6).t()[1:]
    g = lucid.from_dlpack(u)
    assert g.stride() == u.stride() and g.tolist() == u.tolist()
    v = torch.from_dlpack(lucid.arange(24.0, device="gpu").reshape(4, 6).t())
    assert v.is_cuda and v.tolist() == torch.arange(24.0).reshape(4, 6).t().tolist()
    cap = lucid.arange(4.0, device="gpu").__dlpack__()
    torch.from_dlpack(cap)
    with pytest.raises(RuntimeError):
        torch.from_dlpack(cap)


@pytest.mark.parametrize("draw", [
    lambda d: lucid.rand(1001, device=d), lambda d: lucid.rand(7, dtype=lucid.float64, device=d),
    lambda d: lucid.rand(33, dtype=lucid.float16, device=d), lambda d: lucid.randint(-5, 9, (513,), device=d),
    lambda d: lucid.randperm(300, device=d), lambda d: lucid.bernoulli(lucid.full((257,), 0.3, device=d)),
    lambda d: lucid.empty(64, dtype=lucid.complex64, device=d).uniform_(-1, 2),
    lambda d: lucid.zeros(9, 5, device=d).bernoulli_(0.7)])
def test_random_on_gpu_is_drawn_there_with_the_cpu_values(draw):
    # Philox on the device, the same stream of numbers as the CPU's: equal bits
    lucid.manual_seed(5)
    g = draw("gpu")
    used_g = lucid.default_generator.get_offset()
    lucid.manual_seed(5)
    c = draw("cpu")
    assert g.device.type == "gpu" and g.tolist() == c.tolist()
    assert used_g == lucid.default_generator.get_offset() > 0  # the same share of the stream


@pytest.mark.parametrize("dtype", [lucid.float32, lucid.float64, lucid.bfloat16, lucid.complex64])
def test_normal_on_gpu_matches_the_cpu_up_to_its_math_library(dtype):
    # Box-Muller's log/cos/sin are CUDA's on the device: the last bits may differ
    lucid.manual_seed(11)
    g = lucid.randn(1000, dtype=dtype, device="gpu")
    lucid.manual_seed(11)
    c = lucid.randn(1000, dtype=dtype)
    tol = 1e-2 if dtype is lucid.bfloat16 else 1e-5
    torch.testing.assert_close(torch.tensor(g.cpu().tolist()), torch.tensor(c.tolist()), rtol=tol, atol=tol)
    lucid.manual_seed(3)
    m = lucid.normal(lucid.zeros(50, dtype=lucid.float64, device="gpu"), lucid.ones(50, dtype=lucid.float64, device="gpu"))
    assert m.device.type == "gpu" and abs(m.mean().item()) < 1


def test_bad_random_arguments_on_gpu_raise_and_draw_nothing():
    p = lucid.tensor([0.5, 1.5], device="gpu")
    with pytest.raises(RuntimeError, match="p_in"):
        lucid.bernoulli(p)
    with pytest.raises(RuntimeError, match="std >= 0"):
        lucid.normal(lucid.zeros(2, dtype=lucid.float64, device="gpu"), -lucid.ones(2, dtype=lucid.float64, device="gpu"))


def test_metal_is_an_alias_of_the_gpu():
    # upstream Lucid names its GPU device "metal": its programs run unchanged
    t = lucid.ones(2, device="metal")
    assert t.device == lucid.device("gpu:0") and str(t.to("metal:0").device) == "gpu:0"


def test_mixing_devices_names_both():
    with pytest.raises(RuntimeError, match="same device.*(cpu.*gpu:0|gpu:0.*cpu)"):
        lucid.ones(3, device="gpu") + lucid.ones(3)
    with pytest.raises(RuntimeError, match="same device"):
        lucid.where(lucid.ones(3, dtype=lucid.bool), lucid.ones(3, device="gpu"), lucid.ones(3))
    # a 0-d CPU tensor and a Python number join freely, as in PyTorch
    g = lucid.ones(3, device="gpu")
    assert (g + lucid.tensor(2.0)).tolist() == [3.0] * 3 and (g * 2).device == g.device


def test_integer_division_by_zero_raises_at_the_next_sync_and_the_gpu_keeps_working():
    a = lucid.tensor([4, 5, 6], device="gpu")
    b = lucid.tensor([2, 0, 3], device="gpu")
    q = a // b  # queued; the kernel records the error instead of asserting
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        q.tolist()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        a % 0  # a number divisor is checked at once
    assert (a // lucid.tensor([2, 1, 3], device="gpu")).tolist() == [2, 5, 2]  # still usable


def test_fill_makes_values_on_the_device():
    for dtype in (lucid.float16, lucid.bfloat16, lucid.float32, lucid.float64, lucid.int8, lucid.int64,
                  lucid.bool, lucid.complex64):
        t = lucid.full((5, 3), 1 if dtype is lucid.bool else 3, dtype=dtype, device="gpu")
        assert t.cpu().tolist() == lucid.full((5, 3), 1 if dtype is lucid.bool else 3, dtype=dtype).tolist()
    v = lucid.zeros(4, 6, device="gpu")
    v[:, ::2].fill_(-1.5)  # a strided view: the kernel, not a memset
    assert v.cpu().tolist() == [[-1.5, 0.0] * 3] * 4



@pytest.mark.parametrize("dtype", [lucid.float32, lucid.float16, lucid.int64, lucid.bool, lucid.complex64])
def test_masked_fill_on_gpu_matches_cpu(dtype):
    lucid.manual_seed(2)
    x = lucid.randint(0, 5, (6, 8)).to(dtype)
    mask = lucid.rand(8) > 0.5  # broadcast over the rows
    want = x.masked_fill(mask, 1)
    got = x.to("gpu").masked_fill(mask.to("gpu"), 1)
    assert got.device.type == "gpu" and got.cpu().tolist() == want.tolist()
    g = x.to("gpu").t()
    g.masked_fill_(mask.reshape(8, 1).to("gpu"), 0)  # in place, through a transposed view
    assert g.cpu().tolist() == x.t().masked_fill(mask.reshape(8, 1), 0).tolist()


@pytest.mark.parametrize("dtype", [lucid.float32, lucid.float64, lucid.bfloat16, lucid.int8, lucid.bool,
                                   lucid.complex64])
def test_reading_index_ops_on_gpu_match_cpu(dtype):
    lucid.manual_seed(4)
    x = (lucid.randn(6, 5, 4) * 3).to(dtype)
    g = x.to("gpu")
    idx = lucid.tensor([4, 0, 2, 2, -1])
    gi = idx.to("gpu")
    cases = [
        lambda t, i: t[i],                                   # rows, a negative index
        lambda t, i: t[:, i.abs()],                          # a middle dim
        lambda t, i: t[i, i.abs() % 4, 1:3],                 # two index tensors, broadcast with a slice
        lambda t, i: t.transpose(0, 2)[i.abs() % 4],         # a transposed self
        lambda t, i: t.index_select(1, i.abs()),
        lambda t, i: t.index_select(0, i.abs()[:0]),         # no rows
        lambda t, i: lucid.gather(t, 2, (i.abs() % 4).reshape(1, 5, 1).expand(6, 5, 3)),
    ]
    for f in cases:
        want = f(x, idx)
        got = f(g, gi)
        assert got.device.type == "gpu" and got.shape == want.shape and got.cpu().tolist() == want.tolist()


def test_gpu_index_out_of_range_raises_at_the_next_sync_and_the_gpu_keeps_working():
    g = lucid.arange(12.0, device="gpu").reshape(3, 4)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        g[lucid.tensor([0, 5], device="gpu")].tolist()
    with pytest.raises(IndexError, match="index out of range in self"):
        g.index_select(1, lucid.tensor([1, 4], device="gpu")).cpu()
    with pytest.raises(RuntimeError, match="index 9 is out of bounds for dimension 1 with size 4"):
        lucid.gather(g, 1, lucid.tensor([[9]], device="gpu")).tolist()
    assert g[lucid.tensor([2, 0], device="gpu")].tolist() == [[8.0, 9.0, 10.0, 11.0], [0.0, 1.0, 2.0, 3.0]]


@pytest.mark.parametrize("dtype", [lucid.float32, lucid.float16, lucid.int64, lucid.complex64])
def test_flip_tril_triu_on_gpu_match_cpu(dtype):
    x = lucid.arange(2 * 4 * 5).reshape(2, 4, 5).to(dtype)
    g = x.to("gpu")
    for f in (lambda t: t.flip(0), lambda t: t.flip(-1, 1), lambda t: t.transpose(1, 2).flip(2),
              lambda t: t.tril(), lambda t: t.triu(1), lambda t: t.tril(-2), lambda t: t[0].t().triu()):
        assert f(g).device.type == "gpu" and f(g).cpu().tolist() == f(x).tolist()


def test_out_of_memory_raises_the_oom_error_and_the_next_allocation_works():
    lucid.ones(1024, device="gpu")  # something cached, which the failed request releases
    with pytest.raises(lucid.gpu.OutOfMemoryError, match="tried to allocate .* bytes free on the device"):
        lucid.empty(1 << 50, dtype=lucid.uint8, device="gpu")  # 1 PiB: more than any card
    with pytest.raises(RuntimeError, match="out of memory"):  # a RuntimeError too
        lucid.empty(1 << 50, dtype=lucid.uint8, device="gpu") + 1
    assert lucid.ones(1024, device="gpu").sum().item() == 1024.0


def test_gpu_reductions_give_the_same_bits_every_run():
    # no atomics (Note [Deterministic reductions]): a split full sum combines its
    # partials in order, so two runs agree bit for bit
    lucid.manual_seed(8)
    x = lucid.randn(1000, 4999, device="gpu")
    for f in (lambda t: t.sum(), lambda t: t.sum(0), lambda t: t.mean(1), lambda t: t.var(0), lambda t: t.std(),
              lambda t: t.amax(0), lambda t: t.argmax(), lambda t: lucid.softmax(t, 1), lambda t: t.double().sum()):
        a, b = f(x), f(x)
        assert a.device.type == "gpu" and lucid.equal(a, b)
    # and they agree with the CPU's to rounding
    torch.testing.assert_close(torch.tensor(x.sum(0).cpu().tolist()), torch.tensor(x.cpu().sum(0).tolist()),
                               rtol=1e-5, atol=1e-4)


# Row broadcasts (x + bias) run on the contiguous path, reading element i % period.
def _same_on_both(lg, lc):
    assert lg.device.type == "gpu" and lg.dtype == lc.dtype and tuple(lg.shape) == tuple(lc.shape)
    assert lg.cpu().tolist() == lc.tolist()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "float64"])
@pytest.mark.parametrize("shapes", [((6, 8), (8,)), ((5, 7), (7,)), ((3, 4, 8), (4, 8)), ((2, 3, 5), (1, 1, 5)),
                                    ((4, 8), (1,)), ((9,), ()), ((4, 1, 8), (8,)), ((3, 1), (3, 4))])
def test_row_broadcasts_match_the_cpu(dtype, shapes):
    gen = torch.Generator().manual_seed(5)
    a = (torch.randn(shapes[0], generator=gen, dtype=torch.float64) * 4).to(getattr(torch, dtype))
    b = (torch.randn(shapes[1], generator=gen, dtype=torch.float64) * 4).to(getattr(torch, dtype))
    la, lb = to_lucid(a), to_lucid(b)
    ga, gb = la.to("gpu"), lb.to("gpu")
    for f in (lambda x, y: x + y, lambda x, y: y * x, lambda x, y: lucid.maximum(x, y),
              lambda x, y: lucid.where(x > 0, x, y), lambda x, y: lucid.where(y > 0, 1, x)):
        _same_on_both(f(ga, gb), f(la, lb))


def test_row_broadcast_of_an_offset_view_and_an_expanded_element():
    x = lucid.arange(60.0).reshape(5, 12)
    bias = lucid.arange(13.0, device="gpu")[1:]              # not 16-byte aligned
    one = lucid.arange(4.0, device="gpu")[3:].expand(5, 12)  # one element, expanded on the device
    for y in (bias, one):
        _same_on_both(x.to("gpu") + y, x + y.cpu())
        _same_on_both(lucid.where(x.to("gpu") > 20, y, x.to("gpu")), lucid.where(x > 20, y.cpu(), x))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_softmax_on_gpu_reads_and_writes_16_bits_and_matches_cpu(dtype):
    """The GPU computes a 16-bit softmax in float32 lanes straight from the 16-bit input
    (no float32 copies); the CPU on float32 copies: the same result to within an ulp of
    the exponential's last float32 bit, rounded once."""
    x = (lucid.randn(64, 300) * 4).to(getattr(lucid, dtype))
    g = x.to("gpu")
    ulp = 2.0 ** (-10 if dtype == "float16" else -7)
    for f in (lambda t: lucid.softmax(t, 1), lambda t: lucid.log_softmax(t, 1),  # rows
              lambda t: lucid.softmax(t, 0), lambda t: lucid.log_softmax(t, 0)):   # columns
        got, want = f(g), f(x)
        assert got.dtype == want.dtype == x.dtype and got.device.type == "gpu"
        err = ((got.cpu().float() - want.float()).abs() / want.float().abs().clamp(min=1.0)).max().item()
        assert err <= ulp, err
    # no float32 copy in or out: the step's peak is the 16-bit output (float32 copies of
    # input and output would add four times its size)
    big = lucid.randn(1024, 4096, device="gpu").to(getattr(lucid, dtype))
    lucid.gpu.synchronize()
    before = lucid.gpu.memory_allocated()
    lucid.gpu.reset_peak_memory_stats()
    out = lucid.softmax(big, 1)
    assert lucid.gpu.max_memory_allocated() - before <= 1.5 * out.numel() * out.element_size()


def _make_a_gpu_tensor(queue):
    try:
        lucid.ones(1, device="gpu").tolist()
        queue.put("no error")
    except RuntimeError as e:
        queue.put(str(e))


def test_a_forked_child_is_told_why_its_gpu_calls_fail():
    """A CUDA context does not survive a fork (a DataLoader worker, multiprocessing's
    default start method on Linux): the child's first GPU call raises torch's message,
    not the runtime's bare initialization error."""
    import multiprocessing

    lucid.ones(1, device="gpu").tolist()  # the parent's context
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_make_a_gpu_tensor, args=(queue,))
    child.start()
    child.join(120)
    if child.is_alive():
        child.kill()
    assert "Cannot re-initialize CUDA in forked subprocess" in queue.get(timeout=10)
