"""Does a DataLoader with worker processes keep a training loop fed?

Trains the small Fashion-MNIST CNN of the suite (conv16-pool-conv32-pool-linear,
batch 64) for a fixed number of batches, fed by a DataLoader whose workers read and
convert each image (uint8 [28, 28] -> float [1, 28, 28] in [0, 1]) and collate the
batches. Reports the loop's throughput and its idle fraction: the share of the wall
time the main process spent waiting for the next batch. The same loop runs with
torch's DataLoader and model in the same process for comparison.

    .venv/bin/python benchmarks/bench_data.py [--workers 2] [--batches 300]
"""

import argparse
import time

import torch

import lucid
import lucid.nn as lnn
from lucid.utils.data import DataLoader as LucidLoader
from lucid.utils.datasets import FashionMNIST


def lucid_model():
    return lnn.Sequential(lnn.Conv2d(1, 16, 3, padding=1), lnn.ReLU(), lnn.MaxPool2d(2),
                          lnn.Conv2d(16, 32, 3, padding=1), lnn.ReLU(), lnn.MaxPool2d(2), lnn.Flatten(),
                          lnn.Linear(32 * 7 * 7, 10))


def torch_model():
    tnn = torch.nn
    return tnn.Sequential(tnn.Conv2d(1, 16, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                          tnn.Conv2d(16, 32, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2), tnn.Flatten(),
                          tnn.Linear(32 * 7 * 7, 10))


def lucid_transform(image):
    return (image.float() / 255.0).unsqueeze(0)


class TorchFashion(torch.utils.data.Dataset):
    """The same images for torch's loader, with the same per-image conversion."""

    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return (torch.from_numpy(self.images[i]).float() / 255.0).unsqueeze(0), int(self.labels[i])


def run(loader, model, opt, loss_fn, batches):
    """(samples per second, idle fraction) over `batches` steps, after 20 warm-up steps."""
    it = iter(loader)
    waited = 0.0
    start = None
    for step in range(batches + 20):
        if step == 20:
            start, waited = time.perf_counter(), 0.0
        t0 = time.perf_counter()
        x, y = next(it)
        waited += time.perf_counter() - t0
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    total = time.perf_counter() - start
    return batches * loader.batch_size / total, waited / total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batches", type=int, default=300)
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()
    threads = lucid.get_num_threads()
    torch.set_num_threads(threads)
    lucid.manual_seed(0)
    torch.manual_seed(0)
    data = FashionMNIST(transform=lucid_transform)
    loader = LucidLoader(data, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                         persistent_workers=args.workers > 0, drop_last=True)
    model = lucid_model()
    opt = lucid.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    l_rate, l_idle = run(loader, model, opt, lnn.functional.cross_entropy, args.batches)

    tdata = TorchFashion(data.data.numpy(), data.targets.numpy())
    tloader = torch.utils.data.DataLoader(tdata, batch_size=args.batch_size, shuffle=True,
                                          num_workers=args.workers, persistent_workers=args.workers > 0,
                                          drop_last=True)
    tmodel = torch_model()
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.05, momentum=0.9)
    t_rate, t_idle = run(tloader, tmodel, topt, torch.nn.functional.cross_entropy, args.batches)

    print(f"Fashion-MNIST CNN, batch {args.batch_size}, {args.workers} workers, {threads} threads, "
          f"{args.batches} batches")
    print(f"lucid: {l_rate:8.0f} samples/s, idle {100 * l_idle:5.1f}% of the loop waiting for data")
    print(f"torch: {t_rate:8.0f} samples/s, idle {100 * t_idle:5.1f}% of the loop waiting for data")
    print(f"lucid/torch time per sample: {t_rate / l_rate:.2f}")


if __name__ == "__main__":
    main()
