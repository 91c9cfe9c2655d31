"""The worker-process side of a DataLoader with num_workers > 0: WorkerInfo,
get_worker_info(), and the loop each worker runs.

A worker reads (batch number, indices) from its own index queue, fetches and collates
the batch, and puts (batch number, batch) on the result queue shared by all workers.
Messages are pickled here, in the worker, so that a batch that cannot be pickled is
reported as an error instead of vanishing in the queue's feeder thread (which would
leave the main process waiting forever)."""

from __future__ import annotations

import os
import pickle
import queue
import random
import sys

from ... import _C
from ..._random import manual_seed
from ._exception import ExceptionWrapper
from ._fetch import DatasetKind, create_fetcher

# How long the main process waits for a batch before checking that its workers are
# still alive.
MP_STATUS_CHECK_INTERVAL = 0.5

# How often an idle worker checks that its parent is alive and that the loader has not
# shut down. The shutdown message (None on the index queue) may never arrive: when the
# iterator is collected in a reference cycle, the garbage collector closes the index
# queues' feeder threads before the iterator's __del__ puts None on them.
WORKER_POLL_INTERVAL = 0.1


class WorkerInfo:
    """What get_worker_info() returns inside a worker: id (0 .. num_workers - 1),
    num_workers, seed (this worker's seed: base seed + id) and dataset (this worker's
    copy). Read-only."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects: "
                               "the worker's information is read-only")
        super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{type(self).__name__}({items})"


_worker_info = None  # set in worker processes only


def get_worker_info():
    """Inside a DataLoader worker, a WorkerInfo describing it; in the main process, None.

    A dataset's __iter__ uses it to read only its share of a stream, and a
    worker_init_fn uses it to configure the worker's copy of the dataset."""
    return _worker_info


class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; echoed back as the
    acknowledgement that everything of the previous epoch has been sent."""


class _IterableDatasetStopIteration:
    """Sent by a worker whose copy of an iterable dataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


def _seed_worker(base_seed, worker_id):
    """Seeds Python's `random`, lucid's default generator and (when the program uses it)
    NumPy's global generator from base_seed and the worker id: workers draw different
    random numbers, and a fixed base seed repeats them."""
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np = sys.modules.get("numpy")
    if np is not None:
        # NumPy's legacy seed takes 32-bit words: derive them from both numbers.
        np.random.seed(np.random.SeedSequence([base_seed, worker_id]).generate_state(4))
    return seed


def _send(data_queue, idx, data, worker_id):
    try:
        payload = pickle.dumps((idx, data), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        where = (f"in DataLoader worker process {worker_id} while pickling a batch to send "
                 "it to the main process")
        payload = pickle.dumps((idx, ExceptionWrapper(where=where)),
                               protocol=pickle.HIGHEST_PROTOCOL)
    data_queue.put(payload)


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers):
    global _worker_info
    # The parent now: the main process (fork, spawn) or the fork server, which exits with
    # it. Once it is gone the worker is reparented, and exits instead of lingering.
    parent_pid = os.getppid()
    where = f"in DataLoader worker process {worker_id}"
    try:
        # Workers are parallel already: more threads each would oversubscribe the cores.
        _C.set_num_threads(1)
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)

        def new_fetcher():
            return create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)

        # A failing worker_init_fn (or iter(dataset)) is reported as the answer to every
        # request, so the main process raises it instead of waiting.
        fetcher, setup_error = None, None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = new_fetcher()
        except Exception:
            setup_error = ExceptionWrapper(where=where)

        iteration_end = False
        while os.getppid() == parent_pid:
            try:
                r = index_queue.get(timeout=WORKER_POLL_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    break
                continue
            if isinstance(r, _ResumeIteration):  # a new epoch of persistent workers
                iteration_end = False
                if setup_error is None:
                    try:
                        fetcher = new_fetcher()
                    except Exception:
                        fetcher, setup_error = None, ExceptionWrapper(where=where)
                _send(data_queue, r, None, worker_id)
                continue
            if r is None:  # shutdown
                break
            if done_event.is_set() or iteration_end:
                continue  # requests left over from a finished epoch or a shutdown
            idx, index = r
            if fetcher is None:
                data = setup_error
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if dataset_kind is not DatasetKind.Iterable:
                        data = ExceptionWrapper(where=where)
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=where)
            _send(data_queue, idx, data, worker_id)
            del data, idx, index, r  # do not hold a batch while waiting for the next request
    except KeyboardInterrupt:
        pass  # the main process got it too, and shuts the workers down
    if done_event.is_set():
        # The main process stopped reading: exit without flushing what it will not read.
        data_queue.cancel_join_thread()
        data_queue.close()
