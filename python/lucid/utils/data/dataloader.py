"""DataLoader (torch.utils.data.DataLoader): iterates a dataset in batches, in the main
process or in worker processes."""

from __future__ import annotations

import math
import multiprocessing
import os
import warnings

from ._collate import default_collate, default_convert
from ._fetch import DatasetKind
from ._loader_iter import _SingleProcessDataLoaderIter
from ._worker_iter import _MultiProcessingDataLoaderIter
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader"]


class _InfiniteConstantSampler(Sampler):
    """The sampler of an iterable-style dataset: its "indices" (None, forever) only count
    how many samples each batch takes from the stream."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Batches of a dataset: an iterable over default_collate(samples) (or collate_fn's
    result) for each batch of indices the sampler yields.

    dataset: map-style (Dataset: __getitem__, __len__) or iterable-style (IterableDataset).
    batch_size: samples per batch; None turns batching off (each sample goes through
        collate_fn alone, default_convert by default).
    shuffle: a new random order every epoch (map-style only; from `generator`).
    sampler / batch_sampler: custom index orders / batches of indices (exclusive with
        shuffle; batch_sampler also with batch_size, sampler and drop_last).
    num_workers: processes that load batches in parallel (0: load in the main process).
    collate_fn: merges a list of samples into a batch.
    pin_memory: page-lock the batches' tensors (only with a GPU; otherwise a no-op).
    drop_last: drop the last batch when it would be short.
    timeout: seconds to wait for a batch from the workers before raising (0: forever).
    worker_init_fn: called as worker_init_fn(worker_id) in each worker after seeding.
    multiprocessing_context: start method name or context for the workers (default:
        multiprocessing's default, fork on Linux).
    generator: draws the shuffled order and the workers' base seed (default: lucid's).
    prefetch_factor: batches requested ahead per worker (default 2 with workers).
    persistent_workers: keep the workers alive from one epoch to the next.
    """

    # Attributes fixed once the loader is built: changing them would desynchronize the
    # samplers built from them.
    _FROZEN = frozenset({"batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                         "persistent_workers"})
    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="", in_order=True):
        # (pin_memory_device: pinned memory serves every device here; in_order=False allows batches out of order,
        # which lucid's workers never need: they are always delivered in order)
        _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers,
                              worker_init_fn, collate_fn)
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device, self.in_order = pin_memory_device, in_order
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = DatasetKind.Iterable
            # A stream has no indices to shuffle or sample: the dataset orders itself.
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={value}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind is DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None  # len(self) of an iterable dataset, once read
        self._iterator = None  # the persistent workers' iterator
        self._check_worker_number_rationality()

    # ---- attributes -----------------------------------------------------------------------

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(context, str):
                valid = multiprocessing.get_all_start_methods()
                if context not in valid:
                    raise ValueError(f"multiprocessing_context option should specify a valid "
                                     f"start method in {valid!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            elif not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context "
                                f"object or a string specifying the start method, but got "
                                f"multiprocessing_context={context!r}")
        self.__multiprocessing_context = context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in self._FROZEN:
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        # What the iterators draw from: batches of indices, or single indices when
        # batching is off.
        return self.batch_sampler if self._auto_collation else self.sampler

    # ---- iteration ------------------------------------------------------------------------

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if not (self.persistent_workers and self.num_workers > 0):
            return self._get_iterator()
        # Persistent workers: one iterator (and one set of workers) for every epoch.
        if self._iterator is None or self._iterator._shutdown:
            self._iterator = self._get_iterator()
        else:
            self._iterator._reset(self)
        return self._iterator

    def __len__(self):
        if self._dataset_kind is DatasetKind.Map:
            return len(self._index_sampler)
        # An iterable dataset's len is a promise about its stream; the iterators warn
        # when more batches than that arrive.
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            length = length // self.batch_size if self.drop_last else \
                math.ceil(length / self.batch_size)
        return length

    def _check_worker_number_rationality(self):
        if self.num_workers <= 1:
            return
        try:
            cpus = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            cpus = os.cpu_count()
        if cpus is not None and self.num_workers > cpus:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes "
                          f"in total. Our suggested max number of worker in current system is "
                          f"{cpus}, which is smaller than what this DataLoader is going to "
                          "create. Please be aware that excessive worker creation might get "
                          "DataLoader running slow or even freeze, lower the worker number to "
                          "avoid potential slowness/freeze if necessary.", stacklevel=3)


def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers,
                          worker_init_fn, collate_fn):
    if isinstance(num_workers, bool) or not isinstance(num_workers, int):
        raise TypeError(f"num_workers option should be an int, but got "
                        f"{type(num_workers).__name__}")
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout option should be a number of seconds, but got "
                        f"{type(timeout).__name__}")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if prefetch_factor is not None and (isinstance(prefetch_factor, bool)
                                        or not isinstance(prefetch_factor, int)
                                        or prefetch_factor <= 0):
        raise ValueError(f"prefetch_factor option should be a positive integer (batches "
                         f"loaded in advance by each worker), but got "
                         f"prefetch_factor={prefetch_factor!r}")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    for name, fn in (("worker_init_fn", worker_init_fn), ("collate_fn", collate_fn)):
        if fn is not None and not callable(fn):
            raise TypeError(f"{name} should be callable or None, but got {type(fn).__name__}")
