"""Softmax regression on Fashion-MNIST with lucid's autograd: the README's main job.

Reads the gzipped IDX files that Debian's dataset-fashion-mnist package installs
under /usr/share/datasets/fashion-mnist, trains a linear classifier with minibatch
SGD (gradients from loss.backward()), and prints the test accuracy.
"""

import argparse
import gzip
import os
import struct
import sys
import time

import lucid

DEFAULT_ROOT = "/usr/share/datasets/fashion-mnist"
FILES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
         "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}


def read_idx(path, expected_magic):
    """One IDX file as (dims, raw bytes); ValueError naming the file when malformed."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} not found: install Debian's dataset-fashion-mnist package "
                                "(apt-get install dataset-fashion-mnist) or pass --data DIR")
    with gzip.open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: too short for an IDX header")
    magic, count = struct.unpack(">II", data[:8])
    if magic != expected_magic:
        raise ValueError(f"{path}: IDX magic {magic:#x}, expected {expected_magic:#x}")
    ndims = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndims, data[4:4 + 4 * ndims])
    header = 4 + 4 * ndims
    size = 1
    for d in dims:
        size *= d
    if len(data) - header != size:
        raise ValueError(f"{path}: {len(data) - header} bytes of data, the header promises {size}")
    return dims, data[header:]


def load(root, split):
    images, labels = (os.path.join(root, name) for name in FILES[split])
    (n, rows, cols), pixels = read_idx(images, 0x803)
    (m,), targets = read_idx(labels, 0x801)
    if n != m:
        raise ValueError(f"{split}: {n} images but {m} labels")
    x = lucid.frombuffer(bytearray(pixels), dtype=lucid.uint8).reshape(n, rows * cols).float() / 255.0
    y = lucid.frombuffer(bytearray(targets), dtype=lucid.uint8).long()
    return x, y


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
    args = p.parse_args(argv)

    lucid.manual_seed(args.seed)
    x_train, y_train = load(args.data, "train")
    x_test, y_test = load(args.data, "test")
    if args.limit:
        x_train, y_train = x_train[:args.limit], y_train[:args.limit]
    classes = lucid.arange(10)
    w = (lucid.randn(x_train.shape[1], 10) * 0.01).requires_grad_()
    b = lucid.zeros(10, requires_grad=True)

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
