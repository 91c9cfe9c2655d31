"""Matrix-product benchmarks: lucid against PyTorch on the CPU, side by side, one process.

Prints one row per case: median times, lucid's GFLOP/s and the ratio lucid/torch
(below 1: lucid is faster). Both use the same number of threads (lucid's).
Usage: python benchmarks/bench_matmul.py [--quick]
"""

import sys

import lucid
import torch

from common import median_time

QUICK = "--quick" in sys.argv


def case(name, flops, lucid_fn, torch_fn, reps):
    tl = median_time(lucid_fn, reps=reps)
    tt = median_time(torch_fn, reps=reps)
    print(f"{name:<34} lucid {tl * 1e3:9.3f} ms  torch {tt * 1e3:9.3f} ms  "
          f"{flops / tl / 1e9:7.1f} GFLOP/s  ratio {tl / tt:5.2f}")


def main():
    torch.set_num_threads(lucid.get_num_threads())
    print(f"lucid BLAS: {lucid._C._blas_info()}; threads {lucid.get_num_threads()}; "
          f"torch {torch.__version__}")
    sizes = (256, 512, 1024) if QUICK else (256, 512, 1024, 2048)
    for dtype in ("float32", "float64"):
        for n in sizes:
            reps = 3 if n >= 2048 else (5 if QUICK else 11)
            ta, tb = torch.randn(n, n, dtype=getattr(torch, dtype)), torch.randn(n, n, dtype=getattr(torch, dtype))
            la = lucid.randn(n, n, dtype=getattr(lucid, dtype))
            lb = lucid.randn(n, n, dtype=getattr(lucid, dtype))
            case(f"matmul {dtype} {n}x{n}", 2 * n ** 3, lambda: la @ lb, lambda: ta @ tb, reps)
    n = 1024
    la, lb = lucid.randn(n, n), lucid.randn(n, n)
    ta, tb = torch.randn(n, n), torch.randn(n, n)
    case(f"matmul a.T @ b.T float32 {n}", 2 * n ** 3, lambda: la.t() @ lb.t(), lambda: ta.t() @ tb.t(), 5)
    lx, lw = lucid.randn(32, 128, 512), lucid.randn(1024, 512)
    tx, tw = torch.randn(32, 128, 512), torch.randn(1024, 512)
    case("linear [32,128,512] x [1024,512]", 2 * 32 * 128 * 512 * 1024,
         lambda: lucid.nn.functional.linear(lx, lw), lambda: torch.nn.functional.linear(tx, tw), 5)
    lx, ly = lucid.randn(256, 64, 64), lucid.randn(256, 64, 64)
    tx, ty = torch.randn(256, 64, 64), torch.randn(256, 64, 64)
    case("bmm [256,64,64] x [256,64,64]", 2 * 256 * 64 ** 3, lambda: lx @ ly, lambda: tx @ ty, 11)


if __name__ == "__main__":
    main()
