"""softmax over rows, alone and as attention's probabilities under bfloat16 autocast
(scores cast up and scaled, softmax, cast down: Note [Fused norm rows]), timed in one
process against torch eager and torch.compile. Per call, from 50 calls between
synchronisations, the best of five (fused_norm.per_call); and what lucid fused
(generated_kernel_stats, pending_stats' fused_calls: 5 a call when the cast and scale,
the softmax and the cast down are one kernel).

    python3 benchmarks/profiles/fused_softmax.py [--rows 32768] [--n 1024]
For ncu: ncu --clock-control none -k regex:softmax -c 3 python3 benchmarks/profiles/fused_softmax.py --once
"""

import argparse

import numpy as np
import torch

import lucid
from fused_norm import per_call


def counts():
    return (lucid.gpu.generated_kernel_stats()["fused_softmax_launches"],
            lucid.gpu.pending_stats("gpu")["fused_calls"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=32768)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--once", action="store_true", help="run each lucid softmax a few times and stop (for ncu)")
    args = ap.parse_args()
    rows, n = args.rows, args.n
    rng = np.random.default_rng(0)
    s0 = rng.standard_normal((rows, n), dtype=np.float32) * 3
    ls, ts = lucid.tensor(s0, device="gpu").bfloat16(), torch.tensor(s0, device="cuda").bfloat16()
    plain = {shape: (lucid.tensor(rng.standard_normal(shape, dtype=np.float32), device="gpu"),
                     torch.randn(*shape, device="cuda")) for shape in ((4096, 4096), (16384, 1024))}

    def lucid_scaled():
        z = lucid.softmax(ls.float() * 0.125, -1).bfloat16()  # (one expression: nothing else holds s or y)
        lucid.gpu.flush()
        return z

    def torch_scaled(s):
        return torch.softmax(s.float() * 0.125, -1).bfloat16()

    lucid.gpu.set_kernel_compile("sync")
    if args.once:
        for x, _ in plain.values():
            lucid.softmax(x, -1)
            lucid.gpu.flush()
        lucid_scaled()
        lucid.gpu.synchronize()
        print(lucid.gpu.generated_kernel_stats())
        return

    for shape, (x, tx) in plain.items():
        lt = per_call(lambda: (lucid.softmax(x, -1), lucid.gpu.flush()), lucid.gpu.synchronize)
        tt = per_call(lambda: torch.softmax(tx, -1), torch.cuda.synchronize)
        moved = 8 * shape[0] * shape[1]
        print(f"softmax {list(shape)} float32: lucid {lt * 1e6:.1f} us ({moved / lt / 1e9:.0f} GB/s), "
              f"torch {tt * 1e6:.1f} us ({moved / tt / 1e9:.0f} GB/s): {lt / tt:.2f}x")
        # (the norm in the same layout, for comparison)
        lt = per_call(lambda: (lucid.nn.functional.layer_norm(x, shape[1:]), lucid.gpu.flush()), lucid.gpu.synchronize)
        tt = per_call(lambda: torch.nn.functional.layer_norm(tx, shape[1:]), torch.cuda.synchronize)
        print(f"layer_norm {list(shape)} float32: lucid {lt * 1e6:.1f} us, torch {tt * 1e6:.1f} us: {lt / tt:.2f}x")

    compiled = torch.compile(torch_scaled)
    before = counts()
    fused = per_call(lucid_scaled, lucid.gpu.synchronize)
    after = counts()
    calls = 3 + 5 * 50
    lucid.gpu.set_fusion(False)
    unfused = per_call(lucid_scaled, lucid.gpu.synchronize)
    lucid.gpu.set_fusion(True)
    eager = per_call(lambda: torch_scaled(ts), torch.cuda.synchronize)
    inductor = per_call(lambda: compiled(ts), torch.cuda.synchronize)
    z = lucid_scaled().float().cpu().numpy()
    ref = torch_scaled(ts).float().cpu().numpy()
    moved = 4 * rows * n  # bytes: the bf16 scores read, the bf16 probabilities written
    print(f"scaled softmax [{rows}, {n}], bfloat16 -> float32 * 0.125 -> softmax -> bfloat16")
    for name, t in (("lucid fused", fused), ("lucid unfused", unfused), ("torch eager", eager),
                    ("torch.compile", inductor)):
        print(f"  {name:14s} {t * 1e6:8.1f} us  {moved / t / 1e9:7.0f} GB/s effective")
    print(f"  lucid fused / torch.compile: {fused / inductor:.2f}x time; / torch eager: {fused / eager:.2f}x")
    print(f"  a call: {(after[0] - before[0]) / calls:.2f} fused softmax launches, "
          f"{(after[1] - before[1]) / calls:.2f} calls fused; max |lucid - torch| = {np.abs(z - ref).max():.3g}")


if __name__ == "__main__":
    main()
