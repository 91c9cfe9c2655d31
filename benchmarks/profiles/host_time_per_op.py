"""Issue 22's "host time per recorded GPU op" (target 2 us), taken apart by differences,
since the device machine has no sampling profiler: the same tiny op recorded on the lazy
GPU, run at once (LUCID_LAZY=0's way), on the CPU, and its pieces alone (an allocation, the
Python operator against the binding). Each figure is the best of several batches of
back-to-back calls, in microseconds a call. Run: python benchmarks/profiles/host_time_per_op.py"""

import time

import lucid
from lucid import _C

BATCH = 500


def best_us(fn, batches=30):
    fn()
    best = float("inf")
    for _ in range(batches):
        t = time.perf_counter()
        for _ in range(BATCH):
            fn()
        best = min(best, time.perf_counter() - t)
    return best / BATCH * 1e6


def recorded_only(fn):
    """Per call, recording only: each batch is timed before the list runs (a region's op
    budget holds it), then flushed untimed."""
    from lucid.compile import _region
    best = float("inf")
    fn()
    for _ in range(20):
        with _region.region():
            t = time.perf_counter()
            for _ in range(BATCH):
                fn()
            best = min(best, time.perf_counter() - t)
    lucid.gpu.synchronize()
    return best / BATCH * 1e6


def main():
    gpu = lucid.gpu.is_available()
    dev = "gpu" if gpu else "cpu"
    a = lucid.tensor([1.0], device=dev)
    c = lucid.tensor([1.0])
    rows = [
        ("cpu: a + a (1 element, eager)", lambda: c + c),
        ("cpu: _C.add(a, a) (the binding alone)", lambda: _C.add(c, c)),
        ("cpu: a + 1.0", lambda: c + 1.0),
    ]
    if gpu:
        rows += [
            ("gpu: empty(1) (allocation, a TensorImpl)", lambda: lucid.empty(1, device="gpu")),
            ("gpu: a + a recorded (flushes included)", lambda: a + a),
            ("gpu: a + a recorded, no flush", None),
            ("gpu: _C.add(a, a) recorded, no flush", None),
            ("gpu: a + 1.0 recorded, no flush", None),
            ("gpu: a.add_(a) recorded, no flush (no allocation)", None),
        ]
    for name, fn in rows:
        if fn is not None:
            us = best_us(fn)
        elif name.startswith("gpu: a + a"):
            us = recorded_only(lambda: a + a)
        elif name.startswith("gpu: _C.add"):
            us = recorded_only(lambda: _C.add(a, a))
        elif name.startswith("gpu: a + 1.0"):
            us = recorded_only(lambda: a + 1.0)
        else:
            b = a.clone()
            us = recorded_only(lambda: b.add_(a))
        print(f"{name:55s} {us:7.2f} us")
    if gpu:
        lucid.gpu.set_lazy(False)
        print(f"{'gpu: a + a at once (LUCID_LAZY=0: a launch)':55s} {best_us(lambda: a + a):7.2f} us")
        lucid.gpu.set_lazy(True)
        import torch
        t = torch.ones(1, device="cuda")
        print(f"{'torch: a + a (cuda)':55s} {best_us(lambda: t + t):7.2f} us")


if __name__ == "__main__":
    main()
