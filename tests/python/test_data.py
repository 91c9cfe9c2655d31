"""lucid.utils.data: datasets, samplers, default_collate and the DataLoader, in the main
process and with worker processes, checked against torch.utils.data where PyTorch defines
the answer (collate output, DistributedSampler's partition, random_split's lengths)."""

import collections
import gc
import math
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import lucid
from lucid.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset,
                              DistributedSampler, IterableDataset, RandomSampler,
                              SequentialSampler, StackDataset, Subset, SubsetRandomSampler,
                              TensorDataset, WeightedRandomSampler, default_collate,
                              default_convert, get_worker_info, random_split)

# The directory holding the lucid this test imported (the installed package under CI,
# the source tree in a development run): a subprocess must import the same one.
LUCID_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(lucid.__file__)))


# ---- datasets used by the loader tests (module level: workers may need to pickle them) ----

class Range(Dataset):
    """Sample i is i."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return i

    def __len__(self):
        return self.n


class Squares(Dataset):
    """Sample i is (tensor [i, i*i] as float32, i, str(i))."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return lucid.tensor([float(i), float(i * i)]), i, str(i)

    def __len__(self):
        return self.n


class WhoLoads(Dataset):
    """Sample i says which process loaded it and what get_worker_info() said there."""

    def __init__(self, n):
        self.n = n
        self.tag = None  # set by worker_init_fn in each worker's copy

    def __getitem__(self, i):
        info = get_worker_info()
        return {"index": i, "pid": os.getpid(), "tag": self.tag,
                "id": info.id, "num_workers": info.num_workers, "seed": info.seed,
                "own_copy": info.dataset is self}

    def __len__(self):
        return self.n


def tag_worker(worker_id):
    get_worker_info().dataset.tag = f"worker-{worker_id}"


class RandomDraws(Dataset):
    """Sample i is a draw from lucid's and Python's global generators in the worker."""

    def __getitem__(self, i):
        return lucid.rand(1).item(), random.random()

    def __len__(self):
        return 4


class FailsAt(Dataset):
    def __init__(self, n, bad, exc_type=ValueError):
        self.n, self.bad, self.exc_type = n, bad, exc_type

    def __getitem__(self, i):
        if i == self.bad:
            raise self.exc_type(f"sample {i} is corrupt")
        return i

    def __len__(self):
        return self.n


class SlowAt(Dataset):
    def __init__(self, n, slow, seconds):
        self.n, self.slow, self.seconds = n, slow, seconds

    def __getitem__(self, i):
        if i == self.slow:
            time.sleep(self.seconds)
        return i

    def __len__(self):
        return self.n


class KillsItselfAt(Dataset):
    def __init__(self, n, fatal):
        self.n, self.fatal = n, fatal

    def __getitem__(self, i):
        if i == self.fatal and get_worker_info() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return i

    def __len__(self):
        return self.n


class PidDataset(Dataset):
    def __getitem__(self, i):
        return i, os.getpid()

    def __len__(self):
        return 6


class Stream(IterableDataset):
    """0 .. n-1; sharded across workers when `shard` (worker k reads k, k + W, ...)."""

    def __init__(self, n, shard=True):
        self.n, self.shard = n, shard

    def __iter__(self):
        info = get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class SizedStream(Stream):
    def __len__(self):
        return self.n


def unpicklable_batch(samples):
    return lambda: samples  # a lambda cannot be pickled to the main process


def no_children():
    """Waits briefly for exiting children to be reaped, then says whether any is left."""
    for _ in range(50):
        if not multiprocessing.active_children():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture(autouse=True)
def _no_leaked_workers():
    yield
    gc.collect()
    assert no_children(), f"worker processes left behind: {multiprocessing.active_children()}"


def flat(batches):
    return [x for b in batches for x in b.tolist()]


# ---- ordering and batching ----------------------------------------------------------------

def test_sequential_order_and_batches():
    batches = [b.tolist() for b in DataLoader(Range(7), batch_size=3)]
    assert batches == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.dtype for b in DataLoader(Range(7), batch_size=3)] == [lucid.int64] * 3


def test_shuffle_with_a_seeded_generator_is_a_reproducible_permutation():
    def order(seed):
        g = lucid.Generator().manual_seed(seed)
        return flat(DataLoader(Range(50), batch_size=8, shuffle=True, generator=g))

    a = order(0)
    assert sorted(a) == list(range(50)) and a != list(range(50))
    assert order(0) == a
    assert order(1) != a


def test_shuffle_draws_a_new_order_each_epoch_and_follows_manual_seed():
    lucid.manual_seed(123)
    loader = DataLoader(Range(30), batch_size=5, shuffle=True)
    first, second = flat(loader), flat(loader)
    assert sorted(first) == sorted(second) == list(range(30)) and first != second
    lucid.manual_seed(123)
    assert flat(loader) == first


@pytest.mark.parametrize("n,batch_size,drop_last", [(10, 3, False), (10, 3, True), (9, 3, True),
                                                    (9, 3, False), (2, 5, False), (2, 5, True)])
def test_batch_count_and_sizes(n, batch_size, drop_last):
    loader = DataLoader(Range(n), batch_size=batch_size, drop_last=drop_last)
    sizes = [len(b) for b in loader]
    expected = n // batch_size if drop_last else math.ceil(n / batch_size)
    assert len(loader) == len(sizes) == expected
    assert all(s == batch_size for s in sizes[:-1])
    assert sum(sizes) == (expected * batch_size if drop_last else n)


def test_batch_size_none_yields_converted_samples():
    loader = DataLoader(Squares(3), batch_size=None)
    samples = list(loader)
    assert len(loader) == 3 and len(samples) == 3
    t, i, s = samples[2]  # the tuple comes back as a list (default_convert), unbatched
    assert isinstance(samples[2], list)
    assert t.tolist() == [2.0, 4.0] and i == 2 and s == "2"


def test_tensor_dataset_through_the_loader():
    x = lucid.arange(12, dtype=lucid.float32).reshape(6, 2)
    y = lucid.arange(6)
    batches = list(DataLoader(TensorDataset(x, y), batch_size=4))
    assert [xb.shape for xb, _ in batches] == [(4, 2), (2, 2)]
    assert batches[1][0].tolist() == [[8.0, 9.0], [10.0, 11.0]] and batches[1][1].tolist() == [4, 5]


def test_batch_sampler_and_custom_sampler():
    loader = DataLoader(Range(10), batch_sampler=[[3, 1], [0, 9, 8]])
    assert [b.tolist() for b in loader] == [[3, 1], [0, 9, 8]]
    loader = DataLoader(Range(10), batch_size=2, sampler=[9, 7, 5])
    assert [b.tolist() for b in loader] == [[9, 7], [5]] and len(loader) == 2


def test_dataset_with_getitems_fetches_whole_batches():
    class Batched(Range):
        def __getitems__(self, indices):
            return [100 + i for i in indices]

    assert [b.tolist() for b in DataLoader(Batched(4), batch_size=2)] == [[100, 101], [102, 103]]
    # Subset forwards __getitems__ with the mapped indices.
    loader = DataLoader(Subset(Batched(9), [8, 0]), batch_size=2)
    assert [b.tolist() for b in loader] == [[108, 100]]


# ---- default_collate / default_convert against PyTorch ------------------------------------

Point = collections.namedtuple("Point", "x y")


def plain(obj):
    """A comparable form of a collated lucid or torch structure."""
    if isinstance(obj, (lucid.Tensor, torch.Tensor)):
        return ("tensor", str(obj.dtype).split(".")[-1], tuple(obj.shape), obj.tolist())
    if isinstance(obj, Point):
        return ("Point", plain(obj.x), plain(obj.y))
    if isinstance(obj, dict):
        return (type(obj).__name__, {k: plain(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [plain(v) for v in obj])
    return obj


def sample_pair(make_tensor):
    return [
        {"image": make_tensor([[1.0, 2.0], [3.0, 4.0]]), "label": 3, "weight": 0.5,
         "flag": True, "name": "cat", "pair": (1, 2.5), "seq": [7, [8, 9]],
         "point": Point(make_tensor([1, 2]), 1.5), "nested": {"a": 1, "b": "x"}},
        {"image": make_tensor([[5.0, 6.0], [7.0, 8.0]]), "label": 4, "weight": 1.5,
         "flag": False, "name": "dog", "pair": (3, 4.5), "seq": [10, [11, 12]],
         "point": Point(make_tensor([3, 4]), 2.5), "nested": {"a": 2, "b": "y"}},
    ]


def test_default_collate_matches_torch_on_nested_structures():
    ours = default_collate(sample_pair(lucid.tensor))
    theirs = tud.default_collate(sample_pair(torch.tensor))
    assert plain(ours) == plain(theirs)
    assert ours["label"].dtype == lucid.int64 and ours["weight"].dtype == lucid.float64
    assert ours["flag"].dtype == lucid.bool and ours["name"] == ["cat", "dog"]


def test_default_collate_keeps_mapping_and_sequence_types():
    batch = [collections.OrderedDict(b=1, a=2), collections.OrderedDict(b=3, a=4)]
    out = default_collate(batch)
    assert isinstance(out, collections.OrderedDict) and list(out) == ["b", "a"]
    assert out["a"].tolist() == [2, 4]
    assert plain(default_collate([(1, "a"), (2, "b")])) == plain(
        tud.default_collate([(1, "a"), (2, "b")]))


def test_default_collate_numpy_values_match_torch():
    batch = [(np.arange(3, dtype=np.float32), np.int32(1), np.float64(0.5), np.bool_(True)),
             (np.arange(3, 6, dtype=np.float32), np.int32(2), np.float64(1.5), np.bool_(False))]
    assert plain(default_collate(batch)) == plain(tud.default_collate(batch))
    with pytest.raises(TypeError, match="batch must contain tensors, numpy arrays"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert_matches_torch():
    data = {"a": np.arange(3), "b": (np.float32(2.0), "x", 1), "c": [np.ones(2)]}
    assert plain(default_convert(data)) == plain(tud.default_convert(data))
    t = lucid.ones(2)
    assert default_convert(t) is t


def test_default_collate_errors_say_what_is_wrong():
    with pytest.raises(RuntimeError, match=r"equal size.*\[2\] at entry 0 and \[3\] at entry 1"):
        default_collate([lucid.ones(2), lucid.ones(3)])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="batch must contain tensors.*found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(KeyError, match=r"sample 1 lacks \['b'\]"):
        default_collate([{"a": 1, "b": 2}, {"a": 3}])
    with pytest.raises(IndexError, match="non-empty batch"):
        default_collate([])


# ---- samplers ------------------------------------------------------------------------------

def test_sequential_and_random_samplers():
    assert list(SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    g = lucid.Generator().manual_seed(7)
    perm = list(RandomSampler(range(20), generator=g))
    assert sorted(perm) == list(range(20))
    assert list(RandomSampler(range(20), generator=lucid.Generator().manual_seed(7))) == perm


def test_random_sampler_num_samples_and_replacement():
    g = lucid.Generator().manual_seed(0)
    # Without replacement, more samples than the dataset: whole permutations, then a part.
    idx = list(RandomSampler(range(5), num_samples=12, generator=g))
    assert len(idx) == 12 and sorted(idx[:5]) == sorted(idx[5:10]) == list(range(5))
    assert len(set(idx[10:])) == 2
    s = RandomSampler(range(5), replacement=True, num_samples=100, generator=g)
    draws = list(s)
    assert len(s) == len(draws) == 100 and set(draws) == set(range(5))  # repeats happen
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(range(5), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(5), num_samples=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler([])


def test_subset_random_sampler():
    indices = [10, 20, 30, 40]
    s = SubsetRandomSampler(indices, generator=lucid.Generator().manual_seed(3))
    out = list(s)
    assert sorted(out) == indices and len(s) == 4


def test_weighted_sampler_frequencies_follow_the_weights():
    weights = [1.0, 2.0, 3.0, 4.0]
    g = lucid.Generator().manual_seed(0)
    draws = list(WeightedRandomSampler(weights, 20000, generator=g))
    counts = collections.Counter(draws)
    for i, w in enumerate(weights):
        assert abs(counts[i] / 20000 - w / 10) < 0.015, (i, counts)


def test_weighted_sampler_without_replacement():
    weights = [0.0, 1.0, 0.0, 2.0, 3.0, 0.0]
    g = lucid.Generator().manual_seed(1)
    for _ in range(50):
        draw = list(WeightedRandomSampler(weights, 3, replacement=False, generator=g))
        assert sorted(draw) == [1, 3, 4]  # every positive index once; zero weights never
    # The first index drawn follows the weights: P(first = 1) = 3 / 4.
    firsts = [next(iter(WeightedRandomSampler([1.0, 3.0], 1, replacement=False, generator=g)))
              for _ in range(2000)]
    assert abs(firsts.count(1) / 2000 - 0.75) < 0.04
    # With replacement, zero weights are never drawn either.
    assert set(WeightedRandomSampler(weights, 500, generator=g)) <= {1, 3, 4}


@pytest.mark.parametrize("weights,num_samples,replacement,match", [
    ([1.0, -1.0], 1, True, r"non-negative, but weights\[1\] is -1.0"),
    ([1.0, float("nan")], 1, True, "finite"),
    ([float("inf"), 1.0], 1, True, "finite"),
    ([0.0, 0.0], 1, True, "should not all be zero"),
    ([[1.0, 2.0]], 1, True, r"1d sequence but given weights have shape \(1, 2\)"),
    ([1.0, 0.0, 2.0], 3, False, "only 2 of the 3 weights are positive"),
    ([1.0], 0, True, "num_samples should be a positive integer value"),
    ([1.0], 1, "yes", "replacement should be a boolean value"),
])
def test_weighted_sampler_rejects_bad_input(weights, num_samples, replacement, match):
    with pytest.raises(ValueError, match=match):
        WeightedRandomSampler(weights, num_samples, replacement=replacement)


def test_batch_sampler():
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(7), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(7), 2, None)


@pytest.mark.parametrize("n", [0, 1, 5, 10, 11])
@pytest.mark.parametrize("replicas", [1, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_partitions_like_torch(n, replicas, drop_last):
    for rank in range(replicas):
        ours = DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False,
                                  drop_last=drop_last)
        theirs = tud.DistributedSampler(range(n), num_replicas=replicas, rank=rank,
                                        shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_distributed_sampler_shuffles_per_epoch_consistently_across_ranks():
    def shards(epoch, seed=0):
        out = []
        for rank in range(3):
            s = DistributedSampler(range(12), num_replicas=3, rank=rank, seed=seed)
            s.set_epoch(epoch)
            out.append(list(s))
        return out

    epoch0 = shards(0)
    assert sorted(i for shard in epoch0 for i in shard) == list(range(12))  # disjoint, covering
    assert epoch0 == shards(0) and epoch0 != shards(1) and epoch0 != shards(0, seed=5)


def test_distributed_sampler_needs_world_size_and_rank():
    with pytest.raises(ValueError, match="needs num_replicas and rank"):
        DistributedSampler(range(4))
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval "
                                         r"\[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)


# ---- datasets -------------------------------------------------------------------------------

def test_random_split_sizes_disjoint_and_reproducible():
    parts = random_split(Range(10), [3, 7], generator=lucid.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 7]
    items = [p[i] for p in parts for i in range(len(p))]
    assert sorted(items) == list(range(10))
    again = random_split(Range(10), [3, 7], generator=lucid.Generator().manual_seed(0))
    assert [list(p.indices) for p in again] == [list(p.indices) for p in parts]


@pytest.mark.parametrize("n,fractions", [(10, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]),
                                         (7, [0.1, 0.2, 0.7]), (5, [1.0])])
def test_random_split_fractions_give_torch_lengths(n, fractions):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both warn about empty splits alike
        ours = random_split(Range(n), fractions)
        theirs = tud.random_split(range(n), fractions)
    assert [len(p) for p in ours] == [len(p) for p in theirs]


def test_random_split_rejects_bad_lengths():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(Range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 2 is not between 0 and 1"):
        random_split(Range(10), [0.5, 0.6, -0.1])


def test_tensor_concat_chain_subset_and_stack_datasets():
    with pytest.raises(AssertionError, match=r"Size mismatch between tensors.*\[3, 2\]"):
        TensorDataset(lucid.ones(3), lucid.ones(2))
    cat = Range(3) + Range(2)
    assert isinstance(cat, ConcatDataset) and len(cat) == 5
    assert [cat[i] for i in range(5)] == [0, 1, 2, 0, 1] and cat[-1] == 1 and cat[-5] == 0
    with pytest.raises(IndexError):
        cat[5]
    with pytest.raises(TypeError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Stream(3)])
    chain = Stream(2) + Stream(3)
    assert isinstance(chain, ChainDataset) and list(chain) == [0, 1, 0, 1, 2]
    assert len(ChainDataset([SizedStream(2), SizedStream(3)])) == 5
    sub = Subset(Range(10), [9, 3])
    assert len(sub) == 2 and sub[0] == 9 and sub[1] == 3
    stack = StackDataset(a=Range(3), b=Squares(3))
    assert stack[2]["a"] == 2 and stack[2]["b"][1] == 2
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(Range(3), Range(4))


# ---- DataLoader arguments -------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,match", [
    (dict(shuffle=True, sampler=[0, 1]), "sampler option is mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0]], shuffle=True), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0]], sampler=[0]), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0]], drop_last=True), "batch_sampler option is mutually exclusive"),
    (dict(batch_size=None, drop_last=True), "disables auto-batching"),
    (dict(num_workers=-1), "num_workers option should be non-negative"),
    (dict(prefetch_factor=2), "prefetch_factor option could only be specified in multiprocessing"),
    (dict(num_workers=1, prefetch_factor=0), "prefetch_factor option should be a positive"),
    (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
    (dict(timeout=-1), "timeout option should be non-negative"),
    (dict(multiprocessing_context="fork"), "multiprocessing_context can only be used with"),
    (dict(num_workers=1, multiprocessing_context="nope"), "should specify a valid start method"),
    (dict(batch_size=0), "batch_size should be a positive integer value"),
])
def test_dataloader_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DataLoader(Range(4), **kwargs)


def test_dataloader_rejects_samplers_for_iterable_datasets_and_frozen_attributes():
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got "
                                         "shuffle=True"):
        DataLoader(Stream(4), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Stream(4), sampler=[0])
    loader = DataLoader(Range(4))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader"):
        loader.batch_size = 2


def test_iterable_dataset_in_the_main_process_and_its_len():
    loader = DataLoader(SizedStream(7), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]] and len(loader) == 3
    assert len(DataLoader(SizedStream(7), batch_size=3, drop_last=True)) == 2
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3, drop_last=True)] == \
        [[0, 1, 2], [3, 4, 5]]

    class Liar(Stream):
        def __len__(self):
            return 2  # but yields 4

    loader = DataLoader(Liar(4), batch_size=None)
    len(loader)
    with pytest.warns(UserWarning, match="was reported to be 2"):
        assert list(loader) == [0, 1, 2, 3]


def test_pin_memory_without_a_gpu_is_a_silent_no_op():
    if lucid.gpu.is_available():
        batch = next(iter(DataLoader(Squares(2), batch_size=2, pin_memory=True)))
        assert batch[0].is_pinned()
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batches = list(DataLoader(Squares(4), batch_size=2, pin_memory=True))
    assert [b[1].tolist() for b in batches] == [[0, 1], [2, 3]]


def test_importing_data_pulls_in_neither_torch_nor_numpy():
    code = ("import sys, lucid.utils.data as d; "
            "assert 'numpy' not in sys.modules and 'torch' not in sys.modules; "
            "print(d.default_collate([1, 2]).tolist())")
    env = dict(os.environ, PYTHONPATH=LUCID_PARENT)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1, 2]"


# ---- worker processes ------------------------------------------------------------------------
# Workers are forked, and a forked child cannot use CUDA (as in torch): the tests whose
# workers make tensors (a dataset's, or default_collate's batches) take the CPU as the
# default device, as a program with a GPU default must.

def collate_batches(loader):
    return [(b[0].tolist(), b[1].tolist(), b[2]) for b in loader]


@pytest.mark.usefixtures("cpu_default")  # tensors made in the workers
def test_workers_give_the_same_batches_in_the_same_order():
    def batches(num_workers):
        g = lucid.Generator().manual_seed(42)
        return collate_batches(DataLoader(Squares(23), batch_size=4, shuffle=True, generator=g,
                                          num_workers=num_workers))

    single = batches(0)
    assert batches(2) == single
    assert sorted(i for _, ids, _ in single for i in ids) == list(range(23))


@pytest.mark.usefixtures("cpu_default")  # tensors made in the workers
def test_workers_deliver_in_order_even_when_a_worker_is_slow():
    # Batch 0 (sample 0, worker 0) is slow: later batches arrive first and wait their turn.
    loader = DataLoader(SlowAt(12, slow=0, seconds=0.3), batch_size=2, num_workers=2)
    assert flat(loader) == list(range(12))


def test_worker_init_fn_and_get_worker_info():
    assert get_worker_info() is None
    loader = DataLoader(WhoLoads(8), batch_size=None, num_workers=2, worker_init_fn=tag_worker,
                        generator=lucid.Generator().manual_seed(9))
    samples = list(loader)
    assert [s["index"] for s in samples] == list(range(8))
    assert {s["pid"] for s in samples}.isdisjoint({os.getpid()}) and \
        len({s["pid"] for s in samples}) == 2
    for s in samples:
        assert s["num_workers"] == 2 and s["own_copy"]
        assert s["tag"] == f"worker-{s['id']}"
    seeds = {s["id"]: s["seed"] for s in samples}
    assert seeds[1] == seeds[0] + 1  # base seed + worker id
    assert WhoLoads(1).tag is None  # the main process's dataset is untouched


@pytest.mark.usefixtures("cpu_default")  # tensors made in the workers
def test_worker_seeds_are_reproducible_and_differ_between_workers():
    def draws():
        lucid.manual_seed(2024)
        return [tuple(x) for x in DataLoader(RandomDraws(), batch_size=None, num_workers=2)]

    first = draws()
    assert draws() == first
    # Samples 0, 2 come from worker 0 and 1, 3 from worker 1: their streams differ.
    assert first[0] != first[1] and first[0] != first[2]


@pytest.mark.usefixtures("cpu_default")  # tensors made in the workers
def test_an_exception_in_a_worker_carries_its_traceback():
    loader = DataLoader(FailsAt(8, bad=5), batch_size=2, num_workers=2)
    it = iter(loader)
    assert next(it).tolist() == [0, 1] and next(it).tolist() == [2, 3]
    with pytest.raises(ValueError) as info:
        next(it)
    msg = str(info.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 0.")
    assert "Original Traceback (most recent call last)" in msg
    assert "sample 5 is corrupt" in msg and "in __getitem__" in msg
    assert next(it).tolist() == [6, 7]  # the loader goes on, as PyTorch's does
    del it, info


def test_a_key_error_in_a_worker_keeps_its_type_and_readable_message():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1"):
        list(DataLoader(FailsAt(4, bad=1, exc_type=KeyError), batch_size=None, num_workers=2))


def test_a_failing_worker_init_fn_surfaces():
    def init(worker_id):
        raise OSError(f"cannot open shard {worker_id}")

    with pytest.raises(OSError, match="cannot open shard 0"):
        list(DataLoader(Range(4), num_workers=2, worker_init_fn=init))


def test_an_unpicklable_batch_raises_instead_of_hanging():
    loader = DataLoader(Range(4), batch_size=2, num_workers=2, collate_fn=unpicklable_batch,
                        timeout=20)
    with pytest.raises(Exception, match="while pickling a batch"):
        list(loader)


def test_timeout():
    loader = DataLoader(SlowAt(4, slow=0, seconds=5), batch_size=None, num_workers=2,
                        timeout=0.3)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0\.3 seconds"):
        next(iter(loader))
    # Raised after the timeout, not after the slow sample (the iterator's shutdown, which
    # terminates the sleeping worker after a grace period, is included).
    assert time.monotonic() - start < 4


def test_a_killed_worker_raises_instead_of_hanging():
    loader = DataLoader(KillsItselfAt(8, fatal=3), batch_size=None, num_workers=2)
    with pytest.raises(RuntimeError, match=r"DataLoader worker 1 \(pid \d+\) exited "
                                           r"unexpectedly with exit code -9 \(killed by "
                                           r"signal SIGKILL\)"):
        list(loader)


def test_an_iterator_whose_worker_died_refuses_to_go_on():
    it = iter(DataLoader(KillsItselfAt(8, fatal=0), batch_size=None, num_workers=2))
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        next(it)
    with pytest.raises(RuntimeError, match="iterate the DataLoader again"):
        next(it)
    del it


@pytest.mark.usefixtures("cpu_default")  # tensors made in the workers
def test_persistent_workers_survive_across_epochs():
    loader = DataLoader(PidDataset(), batch_size=2, num_workers=2, persistent_workers=True)
    epochs = [[(b[0].tolist(), b[1].tolist()) for b in loader] for _ in range(2)]
    pids = [{p for _, ps in e for p in ps} for e in epochs]
    assert [[i for ids, _ in e for i in ids] for e in epochs] == [list(range(6))] * 2
    assert len(pids[0]) == 2 and pids[0] == pids[1]
    assert len(multiprocessing.active_children()) == 2  # alive between epochs
    # An epoch abandoned half-way does not leak into the next one.
    next(iter(loader))
    assert [i for ids, _ in loader for i in ids.tolist()] == list(range(6))
    del loader


@pytest.mark.usefixtures("cpu_default")  # tensors made in the workers
def test_non_persistent_workers_are_new_each_epoch():
    loader = DataLoader(PidDataset(), batch_size=3, num_workers=2)
    pids = [{p for b in loader for p in b[1].tolist()} for _ in range(2)]
    assert pids[0].isdisjoint(pids[1])


@pytest.mark.usefixtures("cpu_default")  # tensors made in the workers
def test_iterable_dataset_sharded_with_get_worker_info():
    loader = DataLoader(Stream(11), batch_size=2, num_workers=2)
    batches = [b.tolist() for b in loader]
    # Worker k streams k, k + 2, ...; batches alternate between the workers.
    assert batches[0] == [0, 2] and batches[1] == [1, 3]
    assert sorted(flat_list for b in batches for flat_list in b) == list(range(11))


def test_iterable_dataset_without_sharding_is_read_by_every_worker():
    items = [x for x in DataLoader(Stream(5, shard=False), batch_size=None, num_workers=2)]
    assert sorted(items) == sorted(list(range(5)) * 2)


@pytest.mark.usefixtures("cpu_default")  # tensors made in the workers
def test_workers_are_gone_after_exhaustion_and_after_an_abandoned_epoch():
    list(DataLoader(Range(10), batch_size=2, num_workers=2))
    assert multiprocessing.active_children() == []
    it = iter(DataLoader(Range(10), batch_size=2, num_workers=2))
    next(it)
    assert len(multiprocessing.active_children()) == 2
    del it
    gc.collect()
    assert no_children()
