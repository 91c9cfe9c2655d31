"""Peak GPU memory of a training step, lucid against PyTorch in the same process: the
big Transformer encoder of workloads_train_gpu.py (4 layers, d_model 1024, seq 1024,
batch 16, bfloat16 autocast, Adam). Each framework counts only its own tensors
(lucid.gpu.max_memory_allocated, torch.cuda.max_memory_allocated): the peak of one
step after a first step has created the optimizer's state, so both hold the same
things when their peak is reset.

    python benchmarks/bench_gpu_memory.py [--layers 4] [--batch 16] [--seq 1024]
"""

import argparse
import os
import sys

import torch

import lucid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads_train_gpu as W  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layers", type=int, default=W.BIG["layers"])
    p.add_argument("--batch", type=int, default=W.BIG["batch"])
    p.add_argument("--seq", type=int, default=W.BIG["seq"])
    args = p.parse_args()
    if not (lucid.gpu.is_available() and torch.cuda.is_available()):
        print("needs a GPU that both lucid and torch see")
        return 1
    setup = W._model_setup(W._encoder(args.layers, W.BIG["d"], W.BIG["heads"], W.BIG["ff"]),
                           (args.batch, args.seq, W.BIG["d"]))
    ls, ts = setup()
    peaks = {}
    for name, m, inputs, sync, reset, peak in (
            ("lucid", lucid, ls, lucid.gpu.synchronize, lucid.gpu.reset_peak_memory_stats,
             lucid.gpu.max_memory_allocated),
            ("torch", torch, ts, torch.cuda.synchronize, torch.cuda.reset_peak_memory_stats,
             torch.cuda.max_memory_allocated)):
        W._autocast_step(m, *inputs)  # the optimizer's state exists from here on
        sync()
        reset()
        loss = W._autocast_step(m, *inputs)
        sync()
        peaks[name] = peak()
        print(f"{name}: peak {peaks[name] / 2 ** 30:.2f} GiB in a step (loss {float(loss.item()):.4f})")
    print(f"lucid/torch peak memory: {peaks['lucid'] / peaks['torch']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
