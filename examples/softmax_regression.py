"""Softmax regression on Fashion-MNIST with bare autograd (no nn, no optim).

Reads the gzipped IDX files that Debian's dataset-fashion-mnist package installs
under /usr/share/datasets/fashion-mnist, trains a linear classifier with minibatch
SGD (gradients from loss.backward()), and prints the test accuracy. --device auto
trains on the GPU when there is one (and says so); the whole data set is moved there
once, as it is small (60000 x 784 floats, 188 MB).

    PYTHONPATH=python python examples/softmax_regression.py [--epochs 5] [--limit N] [--device auto]
"""

import argparse
import sys
import time

import lucid
from _device import pick_device  # examples/_device.py
from lucid.utils.datasets import FashionMNIST

DEFAULT_ROOT = FashionMNIST.default_root


def load(root, train):
    """Images as float [N, 784] in [0, 1] and labels as int64 [N] (the IDX reader of
    lucid.utils.datasets names the file and the problem when one is missing or malformed)."""
    data = FashionMNIST(root, train=train)
    return data.data.reshape(len(data), -1).float() / 255.0, data.targets


def cross_entropy(logits, onehot):
    return -(lucid.log_softmax(logits, dim=1) * onehot).sum(dim=1).mean()


def accuracy(x, y, w, b):
    with lucid.no_grad():
        pred = lucid.argmax(x @ w + b, dim=1)
        return (pred == y).float().mean().item()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=DEFAULT_ROOT, help="directory with the gzipped IDX files")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--limit", type=int, default=0, help="use only the first N training images (0: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="auto, cpu, gpu or cuda[:N]")
    args = p.parse_args(argv)

    lucid.manual_seed(args.seed)
    device = pick_device(args.device)
    x_train, y_train = load(args.data, train=True)
    x_test, y_test = load(args.data, train=False)
    if args.limit:
        x_train, y_train = x_train[:args.limit], y_train[:args.limit]
    # Read from the files on the CPU, then moved to the device once: the batches are slices of these.
    x_train, y_train = x_train.to(device), y_train.to(device)
    x_test, y_test = x_test.to(device), y_test.to(device)
    classes = lucid.arange(10, device=device)
    # Made on the device, the parameters are leaves there (randn(..., requires_grad=True).to(device)
    # would instead give a copy whose .grad stays None).
    w = (lucid.randn(x_train.shape[1], 10, device=device) * 0.01).requires_grad_()
    b = lucid.zeros(10, device=device, requires_grad=True)

    n = x_train.shape[0]
    for epoch in range(args.epochs):
        start, total = time.perf_counter(), 0.0
        for i in range(0, n, args.batch_size):
            xb, yb = x_train[i:i + args.batch_size], y_train[i:i + args.batch_size]
            onehot = (yb.unsqueeze(1) == classes).float()
            loss = cross_entropy(xb @ w + b, onehot)
            loss.backward()
            with lucid.no_grad():
                w -= args.lr * w.grad
                b -= args.lr * b.grad
            w.grad = None
            b.grad = None
            total += loss.item() * xb.shape[0]
        print(f"epoch {epoch + 1}: train loss {total / n:.4f}, test accuracy "
              f"{accuracy(x_test, y_test, w, b):.4f} ({time.perf_counter() - start:.1f} s)")
    acc = accuracy(x_test, y_test, w, b)
    print(f"test accuracy: {acc:.4f}")
    return acc


if __name__ == "__main__":
    sys.exit(0 if main() > 0 else 1)
