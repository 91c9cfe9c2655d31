"""The main-process side of a DataLoader with num_workers > 0.

Batch numbers are dealt round-robin to the workers' index queues, at most
prefetch_factor outstanding per worker; results arrive on one shared queue in whatever
order the workers finish, and are handed out in batch order (early ones wait in
_task_info). While waiting, the iterator checks every MP_STATUS_CHECK_INTERVAL seconds
that its workers are alive, so a killed worker raises instead of hanging."""

from __future__ import annotations

import atexit
import itertools
import multiprocessing
import pickle
import queue
import signal
import time

from ._exception import ExceptionWrapper
from ._loader_iter import _BaseDataLoaderIter
from ._pin_memory import pin_memory
from ._worker import MP_STATUS_CHECK_INTERVAL, _IterableDatasetStopIteration, \
    _ResumeIteration, _worker_loop

# How long a shutdown waits for workers to finish before terminating them (a worker may
# be in the middle of a slow __getitem__).
_SHUTDOWN_GRACE = 1.0

_interpreter_exiting = False


def _set_interpreter_exiting():
    # At exit, multiprocessing terminates the (daemonic) workers itself; an iterator
    # collected during interpreter teardown must not touch half-destroyed modules.
    global _interpreter_exiting
    _interpreter_exiting = True


atexit.register(_set_interpreter_exiting)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        context = loader.multiprocessing_context or multiprocessing.get_context()
        self._shutdown = True  # until the workers exist: __del__ may run after a failure
        self._worker_died = False
        self._workers = []
        self._index_queues = []
        self._result_queue = context.Queue()
        self._workers_done_event = context.Event()
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            # The main process never waits for its index-queue puts to be flushed: a
            # worker that is gone will not read them.
            index_queue.cancel_join_thread()
            w = context.Process(
                target=_worker_loop,
                args=(self._dataset_kind, self._dataset, index_queue, self._result_queue,
                      self._workers_done_event, self._auto_collation, self._collate_fn,
                      self._drop_last, self._base_seed, loader.worker_init_fn, worker_id,
                      self._num_workers),
                daemon=True)  # never outlive the main process
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
            self._shutdown = False
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the next batch number to hand to a worker
        self._rcvd_idx = 0  # the next batch number to return
        # batch number -> (worker id,) while outstanding, (worker id, data) once arrived
        self._task_info = {}
        self._workers_status = [True] * self._num_workers  # False: no more requests to it
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # Persistent workers start a new epoch: wait until each has acknowledged,
            # dropping what the previous (possibly abandoned) epoch left in the queue.
            for q in self._index_queues:
                q.put(_ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    # ---- receiving ------------------------------------------------------------------------

    def _get_data(self):
        """The next (batch number, data) from any worker; raises RuntimeError on a timeout
        or when a worker has died."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = MP_STATUS_CHECK_INTERVAL
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            try:
                payload = self._result_queue.get(timeout=wait)
            except queue.Empty:
                self._raise_if_a_worker_died()
                if deadline is not None and time.monotonic() >= deadline:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                continue
            return pickle.loads(payload)

    def _raise_if_a_worker_died(self):
        for worker_id, w in enumerate(self._workers):
            if self._workers_status[worker_id] and not w.is_alive():
                self._workers_status[worker_id] = False
                self._worker_died = True
                code = w.exitcode
                self._shutdown_workers()
                how = f"exit code {code}"
                if code is not None and code < 0:
                    how += f" (killed by signal {signal.Signals(-code).name})"
                raise RuntimeError(f"DataLoader worker {worker_id} (pid {w.pid}) exited "
                                   f"unexpectedly with {how}")

    def _next_data(self):
        if self._worker_died:
            raise RuntimeError("this DataLoader iterator stopped when one of its workers died; "
                               "iterate the DataLoader again to start new workers")
        while True:
            # Skip batch numbers that will never arrive: they were sent to an iterable
            # dataset's worker that has run out of data.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                worker_id = info[0]
                if len(info) == 2 or self._workers_status[worker_id]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                # Nothing outstanding: the epoch is over.
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:  # arrived early, kept
                return self._process_data(self._task_info.pop(self._rcvd_idx)[1])

            idx, data = self._get_data()
            if isinstance(data, _IterableDatasetStopIteration):
                self._retire_exhausted_worker(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)  # keep it until its turn
            else:
                del self._task_info[idx]
                return self._process_data(data)

    def _retire_exhausted_worker(self, worker_id):
        if self._persistent_workers:
            self._workers_status[worker_id] = False  # idle until the next epoch
        else:
            self._mark_worker_as_unavailable(worker_id)

    def _process_data(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        if self._pin_memory:
            data = pin_memory(data)
        return data

    # ---- sending --------------------------------------------------------------------------

    def _try_put_index(self):
        """Sends the next batch's indices to the next active worker, if there are both."""
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every worker is done (iterable dataset exhausted)
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._send_idx += 1

    def _mark_worker_as_unavailable(self, worker_id):
        """Tells the worker to exit (None), and sends it nothing more."""
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    # ---- shutdown -------------------------------------------------------------------------

    def _shutdown_workers(self):
        # (getattr: __del__ also runs on an iterator whose __init__ failed early.)
        if getattr(self, "_shutdown", True) or _interpreter_exiting:
            return
        self._shutdown = True
        try:
            # done_event makes workers skip requests still queued; None makes them exit.
            self._workers_done_event.set()
            for q in self._index_queues:
                q.put(None)
            deadline = time.monotonic() + _SHUTDOWN_GRACE
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for q in self._index_queues:
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join()
            self._result_queue.cancel_join_thread()
            self._result_queue.close()

    def __del__(self):
        self._shutdown_workers()
