"""Fetchers: turn one index (or a batch of indices) from the sampler into collated data.
The same code runs in the main process (num_workers=0) and in worker processes."""

from __future__ import annotations

import enum


class DatasetKind(enum.Enum):
    Map = "map"
    Iterable = "iterable"


class MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):  # the dataset fetches whole batches itself
            samples = getitems(possibly_batched_index)
        else:
            samples = [self.dataset[i] for i in possibly_batched_index]
        return self.collate_fn(samples)


class IterableDatasetFetcher:
    """Reads the dataset's stream; the "indices" only say how many samples a batch takes.
    Raises StopIteration once the stream is exhausted (and, with drop_last, instead of a
    short final batch)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        samples = []
        for _ in possibly_batched_index:
            try:
                samples.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not samples or (self.drop_last and len(samples) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(samples)


def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
    fetcher = MapDatasetFetcher if kind is DatasetKind.Map else IterableDatasetFetcher
    return fetcher(dataset, auto_collation, collate_fn, drop_last)
