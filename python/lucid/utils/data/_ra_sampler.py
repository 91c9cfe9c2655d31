"""RASampler: DeiT's repeated-augmentation sampler (Hoffer et al., 2020; Touvron et al.,
2021), a DistributedSampler whose epoch holds every index num_repeats times, the copies
of one index going to different replicas, so each replica augments its copy differently.

    sampler = RASampler(train_set, num_replicas=world_size, rank=rank, num_repeats=3)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        ...

lucid has no process group: num_replicas and rank default to a single process (1 and 0)."""

from __future__ import annotations

import math

from .distributed import epoch_order, replica_slice
from .sampler import Sampler

__all__ = ["RASampler"]


def _check_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"RASampler expects {name} to be an int, but got {type(value).__name__}")


class RASampler(Sampler):
    """Each replica's indices for one epoch, with every dataset index repeated num_repeats
    times.

    The epoch's order (a permutation from seed + epoch when shuffle, else 0, 1, ...) has
    each index repeated num_repeats times in a row: [i0] * r + [i1] * r + ... That list is
    padded by repeating its start until it splits evenly, and replica `rank` takes positions
    rank, rank + num_replicas, rank + 2 * num_replicas, ... so the copies of an index land
    on consecutive replicas. Every replica gets ceil(len(dataset) * num_repeats /
    num_replicas) indices (its len). Call set_epoch(epoch) before each epoch: the order
    depends on seed + epoch, identically on every replica."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 num_repeats=3):
        num_replicas = 1 if num_replicas is None else num_replicas
        rank = 0 if rank is None else rank
        for name, value in (("num_replicas", num_replicas), ("rank", rank), ("seed", seed),
                            ("num_repeats", num_repeats)):
            _check_int(value, name)
        if num_replicas <= 0:
            raise ValueError(f"RASampler: num_replicas should be a positive integer, but got "
                             f"num_replicas={num_replicas}")
        if rank < 0 or rank >= num_replicas:
            raise ValueError(f"RASampler: invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}] for num_replicas={num_replicas}")
        if num_repeats < 1:
            raise ValueError(f"RASampler: num_repeats should be >= 1 (copies of each index per "
                             f"epoch), but got num_repeats={num_repeats}")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.shuffle = shuffle
        self.seed = seed
        self.num_repeats = num_repeats
        self.epoch = 0

    @property
    def num_samples(self):
        # Read at each access, as the dataset's size may change after the sampler is built.
        return math.ceil(len(self.dataset) * self.num_repeats / self.num_replicas)

    @property
    def total_size(self):
        return self.num_samples * self.num_replicas

    def __iter__(self):
        order = epoch_order(len(self.dataset), self.shuffle, self.seed, self.epoch)
        indices = [i for i in order for _ in range(self.num_repeats)]
        return iter(replica_slice(indices, self.total_size, self.rank, self.num_replicas))

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch, which (with seed) picks this epoch's shuffled order."""
        self.epoch = epoch
