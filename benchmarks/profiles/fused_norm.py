"""A pre-norm block's residual stream under bfloat16 (residual add, cast up, layer_norm,
cast down: Note [Fused norm rows]) over [16384, 1024], timed four ways in one process:
lucid with the norm fused with its neighbours, lucid with fusion off (four kernels),
torch eager and torch.compile. Per call, from 50 calls between synchronisations, the
best of five; and the kernels lucid ran (generated_kernel_stats).

    python3 benchmarks/profiles/fused_norm.py [--rows 16384] [--n 1024] [--rms]
For ncu: ncu --clock-control none -k regex:lucid_fused_norm -c 1 python3 benchmarks/profiles/fused_norm.py --once
"""

import argparse
import time

import numpy as np
import torch

import lucid
import lucid.nn.functional as F


def per_call(fn, sync, calls=50, repeats=5):
    for _ in range(3):
        fn()
    sync()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=16384)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--rms", action="store_true")
    ap.add_argument("--once", action="store_true", help="run the fused lucid call a few times and stop (for ncu)")
    args = ap.parse_args()
    rows, n = args.rows, args.n
    rng = np.random.default_rng(0)
    a0, h0 = rng.standard_normal((rows, n), dtype=np.float32), rng.standard_normal((rows, n), dtype=np.float32)
    w0, b0 = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)

    la, lh = (lucid.tensor(v, device="gpu").bfloat16() for v in (a0, h0))
    lw, lb = lucid.tensor(w0, device="gpu"), lucid.tensor(b0, device="gpu")
    ta, th = (torch.tensor(v, device="cuda").bfloat16() for v in (a0, h0))
    tw, tb = torch.tensor(w0, device="cuda"), torch.tensor(b0, device="cuda")

    def lucid_block():
        # one expression: a named s or y would still be held at the flush, so the fused
        # kernel would store it too (x_stored, y_stored), as it must
        z = (F.rms_norm((la + lh).float(), (n,), lw, eps=1e-6) if args.rms else
             F.layer_norm((la + lh).float(), (n,), lw, lb)).bfloat16()
        lucid.gpu.flush()  # (a flush a call, without waiting: the fused calls run in it)
        return z

    def torch_block(a, h):
        s = (a + h).float()
        y = torch.nn.functional.rms_norm(s, (n,), tw, eps=1e-6) if args.rms else \
            torch.nn.functional.layer_norm(s, (n,), tw, tb)
        return y.bfloat16()

    lucid.gpu.set_kernel_compile("sync")
    lucid.gpu.set_norm_fusion(True)
    if args.once:
        for _ in range(3):
            lucid_block()
        lucid.gpu.synchronize()
        print(lucid.gpu.generated_kernel_stats())
        return

    compiled = torch.compile(torch_block)
    before = lucid.gpu.generated_kernel_stats()["fused_norm_launches"]
    fused = per_call(lucid_block, lucid.gpu.synchronize)
    launches = lucid.gpu.generated_kernel_stats()["fused_norm_launches"] - before
    lucid.gpu.set_fusion(False)
    unfused = per_call(lucid_block, lucid.gpu.synchronize)
    lucid.gpu.set_fusion(True)
    eager = per_call(lambda: torch_block(ta, th), torch.cuda.synchronize)
    inductor = per_call(lambda: compiled(ta, th), torch.cuda.synchronize)

    z = lucid_block().float().cpu().numpy()
    ref = torch_block(ta, th).float().cpu().numpy()
    moved = 6 * rows * n  # bytes: two bf16 inputs read, one bf16 result written
    print(f"{'rms_norm' if args.rms else 'layer_norm'} [{rows}, {n}], residual add + cast up + norm + cast down")
    for name, t in (("lucid fused", fused), ("lucid unfused", unfused), ("torch eager", eager),
                    ("torch.compile", inductor)):
        print(f"  {name:14s} {t * 1e6:8.1f} us  {moved / t / 1e9:7.0f} GB/s effective")
    print(f"  lucid fused / torch.compile: {fused / inductor:.2f}x time; / torch eager: {fused / eager:.2f}x")
    print(f"  fused norm launches in the fused run: {launches}; max |lucid - torch| = {np.abs(z - ref).max():.3g}")


if __name__ == "__main__":
    main()
