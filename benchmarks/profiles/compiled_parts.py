"""Where a compiled call's time goes, by differences (the device machine has no sampling
profiler). Two parts:
  cpu   the chain of 8 (common.chain8) on 16M float32, eager and under lucid.compile, at
        several thread counts: whether the compiled chain's block kernel scales;
  gpu   the MLP 784-512-512-10 Adam step under lucid.compile.fused_step (replayed) at
        batch 128 and 8192: host time a step (the call returning, nothing waited for)
        against the time a step when the GPU is waited for (throughput), so whether a
        step is bound by the host or by the GPU.
Run: python benchmarks/profiles/compiled_parts.py [cpu] [gpu]"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import lucid  # noqa: E402
from common import chain8  # noqa: E402
from _mlp_step import mlp_fused_step  # noqa: E402


def best_ms(fn, reps=8):
    fn()
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def cpu_part():
    x = lucid.randn(4096, 4096)
    compiled = lucid.compile(lambda t: chain8(lucid, t))
    out = lucid.empty(4096, 4096)
    into_out = lucid.compile(lambda t: lucid.add(lucid.sigmoid(lucid.exp(lucid.tanh(lucid.sin(t * 1.5 + 0.5) * t)
                                                                          - 0.25)), 1.0, out=out))
    full = lucid.get_num_threads()
    for threads in sorted({1, 2, 4, 8, full}):
        if threads > full:
            continue
        lucid.set_num_threads(threads)
        e = best_ms(lambda: chain8(lucid, x))
        c = best_ms(lambda: compiled(x))
        o = best_ms(lambda: into_out(x))
        s = best_ms(lambda: lucid.sin(x))
        print(f"cpu threads {threads:2d}: eager {e:7.2f} ms  compiled {c:7.2f} ms  (ratio {e / c:4.2f})  "
              f"compiled into out= {o:7.2f} ms  one eager sin {s:6.2f} ms")
    lucid.set_num_threads(full)


def gpu_part():
    for batch in (128, 8192):
        step, x, y = mlp_fused_step(batch)
        for _ in range(10):
            step(x, y)
        lucid.gpu.synchronize()
        host = float("inf")
        for _ in range(200):  # one call at a time, the queue drained between
            lucid.gpu.synchronize()
            t = time.perf_counter()
            step(x, y)
            host = min(host, time.perf_counter() - t)
        lucid.gpu.synchronize()
        n = 200
        t = time.perf_counter()
        for _ in range(n):
            step(x, y)
        lucid.gpu.synchronize()
        through = (time.perf_counter() - t) / n
        print(f"gpu MLP batch {batch}: host {host * 1e6:7.1f} us a step, throughput {through * 1e6:7.1f} us a step, "
              f"replays {step.stats['replays']}")


if __name__ == "__main__":
    parts = sys.argv[1:] or ["cpu", "gpu"]
    if "cpu" in parts:
        cpu_part()
    if "gpu" in parts and lucid.gpu.is_available():
        gpu_part()
