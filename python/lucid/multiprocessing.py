"""lucid.multiprocessing (torch.multiprocessing): Python's multiprocessing, plus spawn /
start_processes, which start one process per rank and raise in the parent what a child
raised, and the sharing-strategy names.

One difference from torch: lucid tensors cross to other processes by value (pickled
bytes), not as shared memory. Arguments to spawn and items sent through a Queue arrive
as copies, which is what DistributedDataParallel-style programs need; code that relies
on children writing into the parent's tensors (Hogwild training after
model.share_memory()) is refused at share_memory_() instead of silently not sharing.
"""

import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback
import warnings
from multiprocessing import *  # noqa: F401,F403  (torch.multiprocessing re-exports them)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn",
           "start_processes", "ProcessContext", "SpawnContext", "ProcessException", "ProcessRaisedException",
           "ProcessExitedException"] + list(multiprocessing.__all__)

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = ["file_descriptor"]


def get_all_sharing_strategies():
    return set(_STRATEGIES)


def get_sharing_strategy():
    return _strategy[0]


def set_sharing_strategy(new_strategy):
    """Records the strategy (one of get_all_sharing_strategies()); lucid sends tensors by
    value whichever is chosen (see the module's docstring)."""
    if new_strategy not in _STRATEGIES:
        raise ValueError(f"set_sharing_strategy: {new_strategy!r} is not one of {sorted(_STRATEGIES)}")
    _strategy[0] = new_strategy


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child process raised: the message carries its traceback."""


class ProcessExitedException(ProcessException):
    """A child process ended with a nonzero exit code (or a signal) without raising."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is going down too
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes spawn started; join() waits for them and raises the first failure."""

    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """True once every process has ended successfully; False if some still run after
        `timeout` seconds. The first one to fail makes the others stop and raises."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            i = self.sentinels.pop(sentinel)
            self.processes[i].join()
            if self.processes[i].exitcode != 0 and failed is None:
                failed = i
        if failed is None:
            return not self.sentinels
        for p in self.processes:  # the others stop: their work is lost with the failed rank's
            if p.is_alive():
                p.terminate()
            p.join(grace_period)
        self.sentinels.clear()
        p = self.processes[failed]
        if not self.error_queues[failed].empty():
            message = self.error_queues[failed].get()
            raise ProcessRaisedException(f"\n\n-- Process {failed} terminated with the following error:\n{message}",
                                         failed, p.pid)
        code = p.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(f"process {failed} terminated with signal {name}", failed, p.pid, code,
                                         name)
        raise ProcessExitedException(f"process {failed} terminated with exit code {code}", failed, p.pid, code)


SpawnContext = ProcessContext


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Runs fn(i, *args) in nprocs new processes (i = 0 .. nprocs - 1), started by
    `start_method`; with join, waits for all and raises the first failure
    (ProcessRaisedException with the child's traceback, or ProcessExitedException),
    else returns their ProcessContext."""
    if not isinstance(nprocs, int) or isinstance(nprocs, bool) or nprocs < 1:
        raise ValueError(f"start_processes: nprocs must be a positive int, got {nprocs!r}")
    ctx = multiprocessing.get_context(start_method)
    processes, error_queues = [], []
    for i in range(nprocs):
        error_queue = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, tuple(args), error_queue), daemon=daemon)
        p.start()
        processes.append(p)
        error_queues.append(error_queue)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """start_processes with the "spawn" start method (another method works, with
    torch's FutureWarning)."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\nTo use a different "
                      "start_method use:\n\t\t lucid.multiprocessing.start_processes(...)", FutureWarning,
                      stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method=start_method)
