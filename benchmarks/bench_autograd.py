"""Autograd overhead: lucid against PyTorch, side by side, same process.

Tiny tensors, so the figures are the per-op cost of the framework itself (dispatch,
allocation, graph recording, the backward walk), not of arithmetic.
Usage: python benchmarks/bench_autograd.py [--quick]
"""

import statistics
import sys

import torch

import lucid

from common import CHAIN, chain, chain_backward, per_call

QUICK = "--quick" in sys.argv
ROWS = []


def case(name, lucid_fn, torch_fn, calls=2000):
    """Median over samples of `calls` back-to-back calls, lucid and torch alternating
    (so both see the same machine state); sub-microsecond ops need the batching."""
    lucid_fn(), torch_fn()
    samples = 5 if QUICK else 15
    tl, tt = [], []
    for _ in range(samples):
        tl.append(per_call(lucid_fn, calls))
        tt.append(per_call(torch_fn, calls))
    tl, tt = statistics.median(tl), statistics.median(tt)
    ROWS.append((name, tl, tt))
    print(f"{name:52s} lucid {tl * 1e6:8.2f} us  torch {tt * 1e6:8.2f} us  ratio {tl / tt:5.2f}", flush=True)


def main():
    torch.set_num_threads(lucid.get_num_threads() if hasattr(lucid, "get_num_threads") else torch.get_num_threads())
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}; lucid {lucid.__version__}")
    one_l, one_t = lucid.tensor([1.0]), torch.tensor([1.0])
    case("tiny op: 1-element add (no grad)", lambda: one_l + one_l, lambda: one_t + one_t)
    g_l, g_t = lucid.tensor([1.0], requires_grad=True), torch.tensor([1.0], requires_grad=True)
    case("tiny op: 1-element add (recorded)", lambda: g_l + g_l, lambda: g_t + g_t)
    case(f"chain of {CHAIN} tiny ops, forward only (recorded)", lambda: chain(lucid, g_l),
         lambda: chain(torch, g_t), calls=100)
    case(f"chain of {CHAIN} tiny ops + sum + backward", lambda: chain_backward(lucid, g_l),
         lambda: chain_backward(torch, g_t), calls=100)
    name, tl, tt = ROWS[-1]
    print(f"per op with backward: lucid {tl / (CHAIN + 1) * 1e6:.2f} us, torch {tt / (CHAIN + 1) * 1e6:.2f} us, "
          f"ratio {tl / tt:.2f}")
    ratios = [tl / tt for _, tl, tt in ROWS]
    print(f"geometric mean ratio lucid/torch over {len(ratios)} cases: {statistics.geometric_mean(ratios):.2f}")


if __name__ == "__main__":
    main()
