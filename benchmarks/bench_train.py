"""The main job side by side: one epoch of examples/train_fashion_mnist.py's CNN, data
pipeline and loop in lucid and in PyTorch, in the same process, same thread count, and
the share of the epoch the loop spent waiting for its DataLoader's workers.

The training program writes its loop once for any framework with PyTorch's API, so
both sides run the same code: the same per-image conversion and random flip in 2
DataLoader workers, the same model, AdamW with a one-cycle schedule, batch 128.

    .venv/bin/python benchmarks/bench_train.py [--limit N] [--epochs 1] [--device auto] [--amp] [--data DIR]

--device auto trains on the GPU when lucid and torch both see one (torch on "cuda"),
else on the CPU; --amp runs both in bfloat16 autocast. An epoch ends with reading its
summed loss, which waits for the device: the times include all of the GPU's work.
"""

import argparse
import os
import sys
import time

import torch

import lucid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import train_fashion_mnist as program  # noqa: E402


class Waited:
    """The loader, counting the seconds the loop spends waiting for its next batch."""

    def __init__(self, loader):
        self.loader, self.seconds = loader, 0.0

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        it = iter(self.loader)
        while True:
            t0 = time.perf_counter()
            try:
                batch = next(it)
            except StopIteration:
                return
            finally:
                self.seconds += time.perf_counter() - t0
            yield batch


def epoch_seconds(m, images, labels, args, device):
    """Seconds per training epoch (mean over args.epochs), the share of them spent
    waiting for data, and the last epoch's loss."""
    m.manual_seed(0)
    gen = m.Generator()
    gen.manual_seed(0)
    loader = Waited(program.make_loader(m, images, labels, True, args, gen, device))
    model = program.build_model(m).to(device)
    opt = m.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = m.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, epochs=args.epochs, steps_per_epoch=len(loader))
    start = time.perf_counter()
    for _ in range(args.epochs):
        loss, _ = program.train_epoch(m, model, loader, opt, sched, device, amp=args.amp)
    total = time.perf_counter() - start
    return total / args.epochs, loader.seconds / total, loss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--limit", type=int, default=None, help="first N training images (default: all 60000)")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--device", default="auto", help="auto, cpu or gpu")
    ap.add_argument("--amp", action="store_true", help="bfloat16 autocast on both sides")
    ap.add_argument("--data", default=lucid.utils.datasets.FashionMNIST.default_root,
                    help="folder of Fashion-MNIST's IDX files")
    args = ap.parse_args()
    gpu = args.device == "gpu" or (args.device == "auto" and lucid.gpu.is_available() and torch.cuda.is_available())
    threads = lucid.get_num_threads()
    torch.set_num_threads(threads)
    data = lucid.utils.datasets.FashionMNIST(args.data)
    images, labels = data.data, data.targets
    if args.limit:
        images, labels = images[:args.limit], labels[:args.limit]
    l_time, l_idle, l_loss = epoch_seconds(lucid, images, labels, args, "gpu" if gpu else "cpu")
    t_time, t_idle, t_loss = epoch_seconds(torch, torch.from_numpy(images.numpy()),
                                           torch.from_numpy(labels.numpy()), args, "cuda" if gpu else "cpu")
    n = len(images)
    print(f"Fashion-MNIST CNN, {n} images per epoch, batch {args.batch_size}, {args.workers} workers, "
          f"{threads} threads, on the {'GPU' if gpu else 'CPU'}{', bfloat16 autocast' if args.amp else ''}")
    for name, sec, idle, loss in (("lucid", l_time, l_idle, l_loss), ("torch", t_time, t_idle, t_loss)):
        print(f"{name}: {sec:6.1f} s per epoch ({n / sec:5.0f} samples/s), waiting for data {100 * idle:4.1f}% "
              f"of it, last loss {loss:.4f}")
    print(f"lucid/torch time per epoch: {l_time / t_time:.2f}")


if __name__ == "__main__":
    main()
