"""Shared timing helpers for lucid's benchmarks (benchmarks/suite.py and the bench_*.py scripts).

Every comparison runs lucid and PyTorch in the same process with the same thread count,
warms both up, and reports the median over samples. A sample is a batch of back-to-back
calls long enough to be timed well: a sub-microsecond op timed one call at a time would
measure the clock, not the op. lucid and torch samples alternate, so a noisy neighbour on
a shared machine slows both rather than one.
"""

import math
import statistics
import time

import torch

import lucid


def same_threads():
    """Gives torch lucid's thread count (lucid's pool and OpenBLAS share one), returns it."""
    n = lucid.get_num_threads()
    torch.set_num_threads(n)
    return n


def per_call(fn, calls, sync=None):
    """Seconds per call over `calls` back-to-back calls; `sync` (a GPU wait) closes the batch."""
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    if sync:
        sync()
    return (time.perf_counter() - t0) / calls


def calls_for(fn, target, sync=None, max_calls=1 << 16):
    """How many back-to-back calls make a sample of about `target` seconds (at least 1)."""
    calls = 1
    while True:
        t = per_call(fn, calls, sync) * calls
        if t >= target / 8 or calls >= max_calls:
            break
        calls *= 8
    return max(1, min(max_calls, math.ceil(calls * target / max(t, 1e-9))))


def median_time(fn, sync=None, reps=5, min_time=0.0, calls=1):
    """Median seconds per call over at least `reps` samples of `calls` calls (and until
    `min_time` seconds have passed, at most 1000 samples), after one warm-up call."""
    fn()  # warm up
    if sync:
        sync()
    times = []
    start = time.perf_counter()
    while len(times) < reps or (time.perf_counter() - start < min_time and len(times) < 1000):
        times.append(per_call(fn, calls, sync))
    return statistics.median(times)


def time_pair(lucid_fn, torch_fn, samples=5, target=0.02, sync_l=None, sync_t=None):
    """Per-call seconds of lucid and torch: a warm-up call each, then `samples` alternating
    samples, each a batch sized to take about `target` seconds. Returns two lists (one
    per-call time per sample); report their medians."""
    lucid_fn(), torch_fn()
    if sync_l:
        sync_l()
    if sync_t:
        sync_t()
    cl, ct = calls_for(lucid_fn, target, sync_l), calls_for(torch_fn, target, sync_t)
    # Batches of calls may fuse into programs that one call does not make: a batch more,
    # until nothing compiles.
    for _ in range(5):
        if not wait_for_generated_kernels():
            break
        per_call(lucid_fn, cl, sync_l)
    tl, tt = [], []
    for _ in range(samples):
        idle()
        tl.append(per_call(lucid_fn, cl, sync_l))
        idle()
        tt.append(per_call(torch_fn, ct, sync_t))
    return tl, tt


def wait_for_generated_kernels(timeout=120.0):
    """Waits until lucid has no kernel compiling in the background (fused elementwise
    chains run interpreted until NVRTC has compiled their kernel, Note [Generated
    kernels]): rows time the steady state that a training loop reaches after its first
    steps, as torch.compile's rows time compiled code. True if something was compiling."""
    waited = False
    deadline = time.perf_counter() + timeout
    while lucid.gpu.generated_kernel_stats()["compiling"] and time.perf_counter() < deadline:
        waited = True
        time.sleep(0.005)
    return waited


def idle():
    """Lets the framework that just ran go quiet before the other is timed. Idle threads
    spin a while before they sleep (PyTorch's OpenMP threads ~10 ms, OpenBLAS's and
    lucid's pool ~0.2 ms): in one process, the spinners of one framework would otherwise
    take cores from the other's first calls, which neither suffers when run alone."""
    time.sleep(0.03)


# A chain of tiny recorded ops: the framework's own per-op cost (dispatch, allocation,
# graph recording, the backward walk), the same code for both modules.
CHAIN = 32  # ops per chain; with the final sum, CHAIN + 1 ops are recorded


def chain(m, x):
    y = x
    for _ in range(CHAIN // 2):
        y = y * 1.0001
        y = y + 0.5
    return y


# issue 22's fusion rows (CPU and GPU): eight dependent elementwise ops after a first
# multiply, bytes counted as one read of x and one write (what a fused chain moves)
def chain8(m, x):
    y = m.sin(x * 1.5 + 0.5) * x
    return m.sigmoid(m.exp(m.tanh(y) - 0.25)) + 1.0


def chain_backward(m, x):
    chain(m, x).sum().backward()
    x.grad = None
