"""Host time against wall time of a replayed MLP 784-512-512-10 Adam step (batch 128,
lucid.compile.fused_step): a step whose host time per call matches its wall time is
bound by the host, not by its kernels (Note [Fixed replays], flush_graphs.h). Prints
both for runs of 10, 50 and 200 steps, then where the host time of 200 goes (cProfile:
calls into lucid's extension count in their Python caller's own time)."""

import cProfile
import pstats
import time

import lucid
from _mlp_step import mlp_fused_step


def main():
    step, x, y = mlp_fused_step(128)
    for _ in range(20):
        step(x, y)
    lucid.gpu.synchronize()
    for n in (10, 50, 200):
        t0 = time.perf_counter()
        for _ in range(n):
            step(x, y)
        t1 = time.perf_counter()
        lucid.gpu.synchronize()
        t2 = time.perf_counter()
        print(f"{n} steps: host {1e6 * (t1 - t0) / n:.1f} us a step, wall {1e6 * (t2 - t0) / n:.1f} us a step")
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(200):
        step(x, y)
    profile.disable()
    lucid.gpu.synchronize()
    pstats.Stats(profile).sort_stats("tottime").print_stats(8)
    print("replays", step.stats["replays"], "of which from graphs captured once (Note [Fixed replays]):",
          lucid.gpu.pending_stats()["fixed_replays"])


if __name__ == "__main__":
    main()
