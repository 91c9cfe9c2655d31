"""Samplers (torch.utils.data.sampler): iterables of dataset indices, and BatchSampler,
which groups them into lists. Random draws come from lucid generators, so a seeded
generator (or lucid.manual_seed) makes every order reproducible."""

from __future__ import annotations

import bisect
import itertools
import math

from ... import _dtype as D
from ..._creation import as_tensor, empty
from ..._random import Generator, rand, randint, randperm

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler:
    """Base class: subclasses implement __iter__ (indices, or lists of indices for batch
    samplers) and, when the count is known, __len__."""

    def __init__(self, data_source=None):
        # PyTorch's samplers accept and ignore data_source here; kept for subclasses that
        # call super().__init__(data_source).
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__ "
                                  "(subclasses of Sampler yield indices)")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _check_positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value!r}")


def _check_bool(value, name, error=ValueError):
    if not isinstance(value, bool):
        raise error(f"{name} should be a boolean value, but got {name}={value!r}")


def _generator_or_fresh(generator):
    """`generator`, or (when None) a new generator seeded from lucid's default one: each
    pass then draws a new order, and lucid.manual_seed makes the sequence of orders
    reproducible, as in PyTorch."""
    if generator is not None:
        return generator
    seed = empty((), dtype=D.int64).random_().item()
    return Generator().manual_seed(seed)


class RandomSampler(Sampler):
    """Indices in random order: a permutation per len(data_source) indices (num_samples
    may exceed it: then several permutations follow one another), or with
    replacement=True, num_samples independent uniform draws."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _check_bool(replacement, "replacement", TypeError)
        _check_positive_int(self.num_samples, "num_samples")

    @property
    def num_samples(self):
        # Read at each access: the dataset's size may change after the sampler is built.
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if n == 0:
            raise ValueError("RandomSampler cannot draw indices from an empty data_source")
        g = _generator_or_fresh(self.generator)
        if self.replacement:
            # In chunks of 32, as PyTorch, so a long run does not build one huge tensor.
            for _ in range(self.num_samples // 32):
                yield from randint(0, n, (32,), generator=g).tolist()
            yield from randint(0, n, (self.num_samples % 32,), generator=g).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=g).tolist()
            yield from randperm(n, generator=g).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a random order (a new one each pass)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices in [0, len(weights)), index i drawn with probability
    proportional to weights[i] (torch.multinomial's sampling). Without replacement an
    index appears at most once, and zero-weight indices never appear."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _check_positive_int(num_samples, "num_samples")
        _check_bool(replacement, "replacement")
        weights_tensor = as_tensor(weights, dtype=D.float64)
        if weights_tensor.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        values = weights_tensor.tolist()
        _check_weights(values)
        positive = sum(w > 0 for w in values)
        if not replacement and num_samples > positive:
            raise ValueError(f"cannot draw num_samples={num_samples} indices without "
                             f"replacement: only {positive} of the {len(values)} weights are "
                             "positive (zero-weight indices are never drawn)")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        weights = self.weights.tolist()
        if self.replacement:
            yield from _draw_with_replacement(weights, self.num_samples, self.generator)
        else:
            yield from _draw_without_replacement(weights, self.num_samples, self.generator)

    def __len__(self):
        return self.num_samples


def _check_weights(values):
    if not values:
        raise ValueError("weights should be a non-empty sequence of sampling weights")
    for i, w in enumerate(values):
        if not math.isfinite(w) or w < 0:
            raise ValueError(f"weights should be finite and non-negative, but weights[{i}] "
                             f"is {w}")
    if not any(values):
        raise ValueError("weights should not all be zero: at least one index needs a "
                         "positive weight to be drawn")


def _draw_with_replacement(weights, num_samples, generator):
    """Inverse CDF: a uniform u picks the first index whose running total exceeds
    u * total. A zero weight adds no width to the running total, so it is never picked."""
    cdf = list(itertools.accumulate(weights))
    total = cdf[-1]
    # u * total can round up to total itself; the last positive weight takes that case.
    last_positive = max(i for i, w in enumerate(weights) if w > 0)
    for u in rand(num_samples, dtype=D.float64, generator=generator).tolist():
        yield min(bisect.bisect_right(cdf, u * total), last_positive)


def _draw_without_replacement(weights, num_samples, generator):
    """Exponential race: index i finishes at time E_i / w_i with E_i ~ Exp(1); the order
    of finishing is a weighted draw without replacement (Efraimidis-Spirakis), so the
    first num_samples finishers are the sample. Zero weights never finish."""
    uniforms = rand(len(weights), dtype=D.float64, generator=generator).tolist()
    finish = {i: -math.log1p(-u) / w for i, (u, w) in enumerate(zip(uniforms, weights)) if w > 0}
    return sorted(finish, key=finish.__getitem__)[:num_samples]


class BatchSampler(Sampler):
    """Groups the indices of `sampler` into lists of batch_size (the last one shorter
    unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        _check_positive_int(batch_size, "batch_size")
        _check_bool(drop_last, "drop_last")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
