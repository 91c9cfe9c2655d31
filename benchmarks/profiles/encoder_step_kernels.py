"""The kernels of one step of the big Transformer encoder (4 layers d1024 seq 1024 batch 16,
bfloat16 autocast, Adam), lucid.compile.fused_step against torch.compile, in one process:
each side's step time, then each kernel timed by CUPTI (_cupti.py). Where the two sides'
kernel time differs, by kernel family: the products, attention, elementwise, reductions.

    python3 benchmarks/profiles/encoder_step_kernels.py [steps]"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import torch  # noqa: E402

import lucid  # noqa: E402
import workloads_train_gpu as w  # noqa: E402
from _cupti import profile_kernels  # noqa: E402


def sides():
    big = w.BIG
    setup = w._compiled_setup(w._encoder(big["layers"], big["d"], big["heads"], big["ff"]),
                              lambda gen: [torch.randn(big["batch"], big["seq"], big["d"], generator=gen)],
                              loss_fn=w._float_mean_square)
    lucid_args, torch_args = setup()
    return (("lucid.compile", lambda: w._compiled_autocast_step(lucid, *lucid_args), lucid.gpu.synchronize),
            ("torch.compile", lambda: w._compiled_autocast_step(torch, *torch_args), torch.cuda.synchronize))


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for name, run, sync in sides():
        # lucid replays from the fourth call; torch.compile compiles at the first
        profile_kernels(name, run, sync, steps, warmup=6, top=45)


if __name__ == "__main__":
    main()
