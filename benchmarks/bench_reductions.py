"""Reductions and softmax, lucid vs PyTorch side by side (issue 4).

Same thread count for both (torch.set_num_threads(lucid.get_num_threads())); the
inputs share memory (DLPack). Prints median times and lucid/torch ratios (below 1:
lucid is faster).  Usage: PYTHONPATH=python python benchmarks/bench_reductions.py [filter]
"""
import statistics
import sys
import time

import torch

import lucid


def median_time(fn, repeat=15):
    fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    torch.set_num_threads(lucid.get_num_threads())
    torch.manual_seed(0)
    big = torch.randn(4096, 4096)
    small = torch.randn(64, 1000)
    flat = big.reshape(-1)
    L = {id(big): lucid.from_dlpack(big), id(small): lucid.from_dlpack(small), id(flat): lucid.from_dlpack(flat)}
    cases = [
        ("sum full 16M", flat, lambda m, x: m.sum(x)),
        ("sum dim=1 [4096,4096]", big, lambda m, x: m.sum(x, 1)),
        ("sum dim=0 [4096,4096]", big, lambda m, x: m.sum(x, 0)),
        ("mean full 16M", flat, lambda m, x: m.mean(x)),
        ("mean dim=0", big, lambda m, x: m.mean(x, 0)),
        ("max full 16M", flat, lambda m, x: m.max(x)),
        ("max dim=1 (values, indices)", big, lambda m, x: m.max(x, 1)),
        ("max dim=0 (values, indices)", big, lambda m, x: m.max(x, 0)),
        ("argmax full 16M", flat, lambda m, x: m.argmax(x)),
        ("argmax dim=1", big, lambda m, x: m.argmax(x, 1)),
        ("argmax dim=0", big, lambda m, x: m.argmax(x, 0)),
        ("var full 16M", flat, lambda m, x: m.var(x)),
        ("var dim=1", big, lambda m, x: m.var(x, 1)),
        ("var dim=0", big, lambda m, x: m.var(x, 0)),
        ("std dim=1", big, lambda m, x: m.std(x, 1)),
        ("norm full 16M", flat, lambda m, x: (m.linalg.vector_norm(x) if m is torch else m.norm(x))),
        ("softmax [4096,4096] dim=-1", big, lambda m, x: m.softmax(x, -1)),
        ("log_softmax [4096,4096] dim=-1", big, lambda m, x: m.log_softmax(x, -1)),
        ("softmax [4096,4096] dim=0", big, lambda m, x: m.softmax(x, 0)),
        ("softmax [64,1000] dim=-1", small, lambda m, x: m.softmax(x, -1)),
        ("log_softmax [64,1000] dim=-1", small, lambda m, x: m.log_softmax(x, -1)),
    ]
    print(f"threads: {lucid.get_num_threads()}")
    print("| case | lucid | torch | ratio |\n| --- | --- | --- | --- |")
    for name, x, fn in cases:
        if flt not in name:
            continue
        lx = L[id(x)]
        tl = median_time(lambda: fn(lucid, lx))
        tt = median_time(lambda: fn(torch, x))
        print(f"| {name} | {tl * 1e3:.3f} ms | {tt * 1e3:.3f} ms | {tl / tt:.2f} |", flush=True)


if __name__ == "__main__":
    main()
