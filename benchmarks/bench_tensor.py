"""Engine-foundation benchmarks: lucid against PyTorch, side by side, same process.

Prints one row per case: median times and the ratio lucid/torch (below 1: lucid is
faster). GPU rows appear when both lucid and torch see a GPU.
Usage: python benchmarks/bench_tensor.py [--quick]
"""

import statistics
import sys

import lucid
import torch

from common import median_time as _median_time

QUICK = "--quick" in sys.argv


def median_time(fn, sync=None):
    return _median_time(fn, sync, reps=5 if QUICK else 15, min_time=0.2)


ROWS = []


def case(name, lucid_fn, torch_fn, sync_l=None, sync_t=None, nbytes=None):
    tl = median_time(lucid_fn, sync_l)
    tt = median_time(torch_fn, sync_t)
    bw = f"{nbytes / tl / 1e9:7.1f} GB/s" if nbytes else ""
    ROWS.append((name, tl, tt))
    print(f"{name:44s} lucid {tl * 1e3:9.3f} ms  torch {tt * 1e3:9.3f} ms  ratio {tl / tt:5.2f}  {bw}",
          flush=True)


def main():
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}; lucid {lucid.__version__}")
    n = 2048 if QUICK else 4096
    a_l = lucid.rand(n, n)
    a_t = torch.rand(n, n)
    nb = n * n * 4
    case(f"contiguous() of transposed {n}x{n} f32", lambda: a_l.t().contiguous(),
         lambda: a_t.t().contiguous(), nbytes=2 * nb)
    case(f"clone() {n}x{n} f32", lambda: a_l.clone(), lambda: a_t.clone(), nbytes=2 * nb)
    case(f".half() {n}x{n} f32", lambda: a_l.half(), lambda: a_t.half(), nbytes=nb + nb // 2)
    case(f".to(int64) {n}x{n} f32", lambda: a_l.long(), lambda: a_t.long(), nbytes=3 * nb)
    case(f"fill_ {n}x{n} f32", lambda: a_l.fill_(1.5), lambda: a_t.fill_(1.5), nbytes=nb)
    case("randn(1e7)", lambda: lucid.randn(10_000_000), lambda: torch.randn(10_000_000))
    case("rand(1e7)", lambda: lucid.rand(10_000_000), lambda: torch.rand(10_000_000))
    data = [[float(i * 1000 + j) for j in range(1000)] for i in range(300)]
    case("tensor(nested list 300x1000 floats)", lambda: lucid.tensor(data), lambda: torch.tensor(data))
    small = lucid.rand(1000, 1000)
    small_t = torch.rand(1000, 1000)
    case("tolist() 1000x1000 f32", lambda: small.tolist(), lambda: small_t.tolist())
    case("repr() 1000x1000 (summarised)", lambda: repr(small), lambda: repr(small_t))
    x_l, x_t = lucid.rand(4, 4), torch.rand(4, 4)
    case("overhead: t.view(16) on 4x4", lambda: x_l.view(16), lambda: x_t.view(16))
    case("overhead: t[1, ::2] on 4x4", lambda: x_l[1, ::2], lambda: x_t[1, ::2])
    case("overhead: zeros(4, 4)", lambda: lucid.zeros(4, 4), lambda: torch.zeros(4, 4))
    one_l, one_t = lucid.tensor([1.0]), torch.tensor([1.0])
    case("tiny op: 1-element add (no grad)", lambda: one_l + one_l, lambda: one_t + one_t)
    case("tiny op: 1-element exp (no grad)", lambda: one_l.exp(), lambda: one_t.exp())
    big_l, big_t = lucid.rand(1 << 22), torch.rand(1 << 22)
    case("add 4M f32 (+ broadcast scalar)", lambda: big_l + 1.5, lambda: big_t + 1.5, nbytes=8 << 22)
    case("exp 4M f32", lambda: big_l.exp(), lambda: big_t.exp(), nbytes=8 << 22)

    if lucid.gpu.is_available() and torch.cuda.is_available():
        sl, st = lucid.gpu.synchronize, torch.cuda.synchronize
        m = 8192
        h_l, h_t = lucid.rand(m, m), torch.rand(m, m)
        gb = m * m * 4
        case(f"H2D {gb >> 20} MiB pageable", lambda: h_l.to("gpu"), lambda: h_t.to("cuda"), sl, st, gb)
        g_l, g_t = h_l.to("gpu"), h_t.to("cuda")
        case(f"D2H {gb >> 20} MiB pageable", lambda: g_l.cpu(), lambda: g_t.cpu(), sl, st, gb)
        p_l, p_t = h_l.pin_memory(), h_t.pin_memory()
        case(f"pinned {gb >> 20} MiB -> GPU (lucid: relabel)", lambda: p_l.to("gpu"),
             lambda: p_t.to("cuda", non_blocking=True), sl, st, gb)
        case(f"GPU contiguous() of transposed {m}x{m}", lambda: g_l.t().contiguous(),
             lambda: g_t.t().contiguous(), sl, st, 2 * gb)
        case(f"GPU clone() {m}x{m}", lambda: g_l.clone(), lambda: g_t.clone(), sl, st, 2 * gb)
        case("GPU overhead: zeros(4, 4)", lambda: lucid.zeros(4, 4, device="gpu"),
             lambda: torch.zeros(4, 4, device="cuda"), sl, st)

    ratios = [tl / tt for _, tl, tt in ROWS]
    print(f"geometric mean ratio lucid/torch over {len(ratios)} cases: "
          f"{statistics.geometric_mean(ratios):.2f}")


if __name__ == "__main__":
    main()
