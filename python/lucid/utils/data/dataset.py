"""Datasets (torch.utils.data.dataset): the map-style Dataset (indexable, sized), the
iterable-style IterableDataset (a stream), and the ways to combine and split them."""

from __future__ import annotations

import bisect
import itertools
import math
import warnings

from ..._random import randperm
from ..._tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]


class Dataset:
    """A map-style dataset: subclasses implement __getitem__(index) and usually __len__.

    A subclass may also implement __getitems__(indices) to fetch a whole batch at once;
    the DataLoader then calls it instead of __getitem__ once per sample."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__ "
                                  "(subclasses of Dataset return the sample at an index)")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """An iterable-style dataset: subclasses implement __iter__.

    With DataLoader workers every worker iterates its own copy of the dataset, so a
    subclass shards the stream itself, usually with get_worker_info():

        def __iter__(self):
            info = lucid.utils.data.get_worker_info()
            if info is None:              # loading in the main process
                return iter(self.items)
            return itertools.islice(self.items, info.id, None, info.num_workers)
    """

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__ "
                                  "(subclasses of IterableDataset yield their samples)")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample i is the tuple (t[i] for t in tensors); the tensors share their first size."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset expects lucid tensors, but argument {i} is "
                                f"{type(t).__name__}")
            if t.ndim == 0:
                raise ValueError(f"TensorDataset expects tensors with a first dimension to "
                                 f"index, but tensor {i} is 0-dimensional")
        sizes = [t.shape[0] for t in tensors]
        if any(s != sizes[0] for s in sizes):  # (an AssertionError: torch's assert)
            raise AssertionError(f"Size mismatch between tensors: TensorDataset expects the same "
                                 f"first size in every tensor, got {sizes}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class StackDataset(Dataset):
    """Sample i gathers sample i of every dataset: a tuple for positional datasets,
    a dict for keyword ones. All datasets have the same length."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("StackDataset takes datasets either as positional arguments (a "
                             "tuple per sample) or as keyword arguments (a dict per sample), "
                             "not both")
        datasets = args or kwargs
        if not datasets:
            raise ValueError("StackDataset needs at least one dataset")
        values = list(datasets) if args else list(datasets.values())
        self._length = len(values[0])
        lengths = [len(d) for d in values]
        if any(n != self._length for n in lengths):
            raise ValueError(f"Size mismatch between datasets: StackDataset expects datasets "
                             f"of one length, got lengths {lengths}")
        self.datasets = datasets

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """The samples of several map-style datasets, one after the other."""

    @staticmethod
    def cumsum(sequence):
        """Running totals of the lengths: [len(d0), len(d0) + len(d1), ...]."""
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable: ConcatDataset needs at "
                             "least one dataset")
        for i, d in enumerate(self.datasets):
            if isinstance(d, IterableDataset):
                raise TypeError(f"ConcatDataset does not support IterableDataset (dataset {i} "
                                "is one); use ChainDataset to chain iterable datasets")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        n = len(self)
        if idx < 0:
            if -idx > n:
                raise ValueError(f"absolute value of index should not exceed dataset length: "
                                 f"index {idx} for a ConcatDataset of length {n}")
            idx += n
        if idx >= n:
            raise IndexError(f"index {idx} is out of range for a ConcatDataset of length {n}")
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[dataset_idx - 1] if dataset_idx > 0 else 0
        return self.datasets[dataset_idx][idx - start]


class ChainDataset(IterableDataset):
    """The samples of several iterable datasets, one stream after the other (chained
    lazily, so it works on streams that are still being produced)."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for i, d in enumerate(self.datasets):
            _require_iterable_dataset(d, i)
            yield from d

    def __len__(self):
        total = 0
        for i, d in enumerate(self.datasets):
            _require_iterable_dataset(d, i)
            total += len(d)
        return total


def _require_iterable_dataset(d, i):
    if not isinstance(d, IterableDataset):
        raise TypeError(f"ChainDataset only supports IterableDataset, but dataset {i} is "
                        f"{type(d).__name__}")


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        # Hand the whole batch to the wrapped dataset when it can fetch batches itself.
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Splits `dataset` into non-overlapping Subsets of the given lengths, drawn by a
    random permutation from `generator` (lucid's default generator when None).

    `lengths` are sizes that add up to len(dataset), or fractions that add up to 1:
    floor(len * fraction) each, and the remainder dealt one by one, round-robin."""
    lengths = list(lengths)
    if not lengths:
        raise ValueError("random_split needs at least one length")
    for i, n in enumerate(lengths):
        if isinstance(n, bool) or not isinstance(n, (int, float)):
            raise TypeError(f"random_split lengths must be ints or fractions, but length at "
                            f"index {i} is {type(n).__name__}")
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        lengths = _lengths_from_fractions(len(dataset), lengths)
    for i, n in enumerate(lengths):
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"random_split lengths must be non-negative ints (or fractions "
                             f"adding up to 1), but length at index {i} is {n!r}")
    if sum(lengths) != len(dataset):
        raise ValueError(f"Sum of input lengths does not equal the length of the input "
                         f"dataset! (lengths {lengths} add up to {sum(lengths)}, the dataset "
                         f"has {len(dataset)} samples)")
    indices = randperm(sum(lengths), generator=generator).tolist()
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, indices[end - n:end]) for end, n in zip(ends, lengths)]


def _lengths_from_fractions(n, fractions):
    for i, frac in enumerate(fractions):
        if not 0 <= frac <= 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1 (got {frac})")
    lengths = [math.floor(n * frac) for frac in fractions]
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty "
                          "dataset.", stacklevel=3)
    return lengths
