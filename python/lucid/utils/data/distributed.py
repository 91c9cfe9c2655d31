"""DistributedSampler (torch.utils.data.distributed): each of num_replicas processes
reads its own slice of the dataset, every epoch in a new order shared by all of them.

lucid has no process group, so the world size and this process's rank are given."""

from __future__ import annotations

import math

from ..._random import Generator, randperm
from .sampler import Sampler

__all__ = ["DistributedSampler"]


def epoch_order(n, shuffle, seed, epoch):
    """0 .. n - 1 in this epoch's order: a permutation drawn from seed + epoch (the same on
    every replica) when shuffle, else in order."""
    if not shuffle:
        return list(range(n))
    return randperm(n, generator=Generator().manual_seed(seed + epoch)).tolist()


def replica_slice(indices, total_size, rank, num_replicas):
    """Replica `rank`'s share of `indices` padded to total_size by repeating its start:
    positions rank, rank + num_replicas, ... (disjoint across replicas)."""
    if total_size > len(indices):  # (never for an empty order: total_size is 0)
        padding = total_size - len(indices)
        indices = indices + (indices * math.ceil(padding / len(indices)))[:padding]
    return indices[rank:total_size:num_replicas]


class DistributedSampler(Sampler):
    """Indices rank, rank + num_replicas, rank + 2 * num_replicas, ... of one order of the
    dataset (a permutation from seed + epoch when shuffle), so the replicas' slices are
    disjoint and cover the dataset.

    Unless drop_last, the order is padded by repeating its start until it splits evenly,
    so every replica gets ceil(len / num_replicas) indices; with drop_last the tail that
    does not split evenly is dropped instead. Call set_epoch(epoch) before each epoch:
    the order depends on seed + epoch, identically on every replica."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            raise ValueError("DistributedSampler needs num_replicas and rank: lucid has no "
                             "distributed process group to read them from, so pass "
                             "num_replicas=<number of processes> and rank=<this process's "
                             f"index> (got num_replicas={num_replicas}, rank={rank})")
        for name, value in (("num_replicas", num_replicas), ("rank", rank), ("seed", seed)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"DistributedSampler expects {name} to be an int, but got "
                                f"{type(value).__name__}")
        if num_replicas <= 0:
            raise ValueError(f"num_replicas should be a positive integer, but got "
                             f"num_replicas={num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # The largest even split: drop the tail rather than repeat samples.
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        indices = epoch_order(len(self.dataset), self.shuffle, self.seed, self.epoch)
        if self.drop_last:
            indices = indices[:self.total_size]
        return iter(replica_slice(indices, self.total_size, self.rank, self.num_replicas))

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch, which (with seed) picks this epoch's shuffled order."""
        self.epoch = epoch
