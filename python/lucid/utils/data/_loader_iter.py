"""What iter(DataLoader) returns: the state shared by both kinds of iterator, and the
single-process iterator (num_workers=0), which fetches each batch when asked."""

from __future__ import annotations

import warnings

from ... import _dtype as D
from ..._creation import empty
from ._fetch import DatasetKind, create_fetcher
from ._pin_memory import pin_memory, pinning_available


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._pin_memory = loader.pin_memory and pinning_available()
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # Drawn even without workers, as PyTorch does, so the generator's stream (and
        # thus a shuffled order) does not depend on num_workers.
        self._base_seed = empty((), dtype=D.int64).random_(generator=loader.generator).item()
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind is DatasetKind.Iterable
                and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            self._warn_length_exceeded()
        return data

    def _warn_length_exceeded(self):
        msg = (f"Length of IterableDataset {self._dataset} was reported to be "
               f"{self._IterableDataset_len_called} (when accessing len(dataloader)), but "
               f"{self._num_yielded} samples have been fetched. ")
        if self._num_workers > 0:
            msg += ("For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker (each worker "
                    "iterates its own copy: shard it with get_worker_info()).")
        warnings.warn(msg, stacklevel=3)

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise TypeError(f"{type(self).__name__} cannot be pickled: iterate the DataLoader "
                        "again instead of sending its iterator")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._dataset_fetcher = create_fetcher(self._dataset_kind, self._dataset,
                                               self._auto_collation, self._collate_fn,
                                               self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        data = self._dataset_fetcher.fetch(index)  # may raise StopIteration
        if self._pin_memory:
            data = pin_memory(data)
        return data
