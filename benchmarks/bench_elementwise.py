"""lucid vs torch elementwise throughput, same thread count (docs/PERFORMANCE.md).

    PYTHONPATH=python python benchmarks/bench_elementwise.py [--sizes 1024,65536,16777216]
Prints median microseconds per call and GB/s (bytes read + written) for each op.
"""
import argparse
import statistics
import time

import lucid
import torch


def bench(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def cases(n, lib):
    r = lib.randn if lib is torch else lucid.randn
    a, b = r(n), r(n)
    pa = a.abs() + 0.5
    rows = max(n // 1024, 1)
    m = r(rows, n // rows)
    v = r(n // rows)
    t = r(n // rows, rows)
    w = r(rows, n // rows)
    nbytes3, nbytes2 = 12 * n, 8 * n
    return [
        ("add", lambda: a + b, nbytes3),
        ("mul", lambda: a * b, nbytes3),
        ("add_scalar", lambda: a + 1.5, nbytes2),
        ("exp", lambda: a.exp(), nbytes2),
        ("tanh", lambda: a.tanh(), nbytes2),
        ("sigmoid", lambda: a.sigmoid(), nbytes2),
        ("log", lambda: pa.log(), nbytes2),
        ("bcast_add", lambda: m + v, nbytes2),
        ("noncontig_add", lambda: t.t() + w, nbytes3),
    ]


def copy_bw(n):
    src = torch.randn(n)
    dst = torch.empty(n)
    s = bench(lambda: dst.copy_(src), 20)
    return 8 * n / s / 1e9


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="1024,65536,16777216")
    p.add_argument("--ops", default="")
    args = p.parse_args()
    torch.set_num_threads(lucid.get_num_threads())
    print(f"threads={lucid.get_num_threads()} torch={torch.__version__}")
    for n in map(int, args.sizes.split(",")):
        reps = 200 if n <= 65536 else 15
        print(f"n={n}  memcpy {copy_bw(n):.1f} GB/s" if n >= 1 << 20 else f"n={n}")
        lc, tc = cases(n, lucid), cases(n, torch)
        for (name, lf, nb), (_, tf, _) in zip(lc, tc):
            if args.ops and name not in args.ops.split(","):
                continue
            tl, tt = bench(lf, reps), bench(tf, reps)
            print(f"  {name:14s} lucid {tl*1e6:9.1f} us {nb/tl/1e9:6.1f} GB/s | torch {tt*1e6:9.1f} us "
                  f"{nb/tt/1e9:6.1f} GB/s | x{tt/tl:5.2f}")


if __name__ == "__main__":
    main()
