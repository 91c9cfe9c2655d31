"""Memory stability of long training runs: resident memory must not grow.

Trains an MLP (784-256-10, batch 64, Adam) and a small CNN (conv-relu-pool x2 +
linear on 1x28x28, batch 32, SGD with momentum) on synthetic data for --steps steps
each, as a user's loop would (zero_grad, forward, cross-entropy, backward, step,
loss.item()). The resident set size is sampled after --warmup steps (the allocator's
pools and caches are warm by then) and at the end; the growth between the two must
stay below --max-growth percent (5 by default), else the exit status is 1.

With --model both (the default) each model runs in a fresh interpreter, so one
model's memory does not blur the other's figures.

    PYTHONPATH=python .venv/bin/python scripts/stability.py                  # 10,000 steps of each
    PYTHONPATH=python .venv/bin/python scripts/stability.py --model cnn --steps 2000
"""

import argparse
import gc
import os
import subprocess
import sys
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes():
    """Resident set size of this process, from /proc/self/statm (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def build(lucid, which):
    nn = lucid.nn
    if which == "mlp":
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
        opt = lucid.optim.Adam(model.parameters(), lr=1e-3)
        batch, shape = 64, (784,)
    else:
        model = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16 x 14 x 14
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 32 x 7 x 7
            nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
        opt = lucid.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        batch, shape = 32, (1, 28, 28)
    # A fixed pool of batches, cycled: the data pipeline is not what is measured.
    data = [(lucid.randn(batch, *shape), lucid.randint(0, 10, (batch,))) for _ in range(16)]
    return model, opt, data


def run_one(which, steps, warmup, max_growth):
    import lucid

    lucid.manual_seed(0)
    model, opt, data = build(lucid, which)
    loss_fn = lucid.nn.CrossEntropyLoss()
    model.train()
    warm_rss = warm_objs = None
    warm_step = min(warmup, steps)
    total = 0.0
    progress_every = max(steps // 5, 1)
    start = time.perf_counter()
    t_warm = start
    for step in range(1, steps + 1):
        x, y = data[step % len(data)]
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        total += loss.item()
        if step == warm_step:
            gc.collect()
            warm_rss, warm_objs = rss_bytes(), len(gc.get_objects())
            t_warm = time.perf_counter()
        elif step % progress_every == 0:
            print(f"  {which} step {step}: loss {loss.item():.4f}, rss {rss_bytes() / 2**20:.1f} MiB", flush=True)
    elapsed = time.perf_counter() - start
    gc.collect()
    end_rss, end_objs = rss_bytes(), len(gc.get_objects())
    measured = steps - warm_step
    growth = 100.0 * (end_rss - warm_rss) / warm_rss
    per_step = (end_rss - warm_rss) / measured if measured else 0.0
    step_ms = 1e3 * (time.perf_counter() - t_warm) / measured if measured else 1e3 * elapsed / steps
    ok = growth < max_growth
    print(f"{which}: {steps} steps in {elapsed:.1f} s ({step_ms:.2f} ms/step), "
          f"rss {warm_rss / 2**20:.1f} MiB after step {warm_step} -> {end_rss / 2**20:.1f} MiB at the end: "
          f"growth {growth:+.2f}% ({per_step:+.1f} bytes/step), "
          f"python objects {warm_objs} -> {end_objs}, mean loss {total / steps:.4f} "
          f"[{'ok' if ok else f'FAIL: >= {max_growth}%'}]", flush=True)
    return ok


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=10_000)
    p.add_argument("--model", choices=["mlp", "cnn", "both"], default="both")
    p.add_argument("--warmup", type=int, default=500, help="steps before the first RSS sample")
    p.add_argument("--max-growth", type=float, default=5.0, help="allowed RSS growth in percent")
    args = p.parse_args(argv)
    if args.steps < 1 or args.warmup < 1:
        p.error("--steps and --warmup must be positive")

    if args.model != "both":
        return 0 if run_one(args.model, args.steps, args.warmup, args.max_growth) else 1

    status = 0
    for which in ("mlp", "cnn"):  # a fresh interpreter each
        cmd = [sys.executable, os.path.abspath(__file__), "--model", which, "--steps", str(args.steps),
               "--warmup", str(args.warmup), "--max-growth", str(args.max_growth)]
        status |= subprocess.call(cmd)
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
