"""A multilayer perceptron on Fashion-MNIST: nn.Module, DataLoader, Adam.

The same program a PyTorch user would write with torchvision: a FashionMNIST
dataset whose transform turns each uint8 [28, 28] image into a float vector of 784
values in [0, 1], a DataLoader that shuffles and batches it, an MLP
(784-256-128-10 with ReLU and Dropout), nn.CrossEntropyLoss and Adam, with the test
accuracy printed after every epoch. Nothing is downloaded: the data are Debian's
dataset-fashion-mnist package, under /usr/share/datasets/fashion-mnist.
--device auto trains on the GPU when there is one (and says so).

    PYTHONPATH=python python examples/mlp_fashion_mnist.py [--device auto]   # test accuracy ~0.87-0.88
    PYTHONPATH=python python examples/mlp_fashion_mnist.py --epochs 1 --limit 5000
"""

import argparse
import sys
import time

import lucid
from _device import pick_device  # examples/_device.py
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.utils.data import DataLoader, Subset
from lucid.utils.datasets import FashionMNIST

DEFAULT_ROOT = FashionMNIST.default_root  # /usr/share/datasets/fashion-mnist


def to_vector(image):
    """uint8 [28, 28] -> float32 [784] in [0, 1] (what ToTensor() + flatten would give)."""
    return image.float().div(255.0).flatten()


class MLP(nn.Module):
    def __init__(self, in_features=784, hidden=(256, 128), num_classes=10, dropout=0.2):
        super().__init__()
        layers = []
        for width in hidden:
            layers += [nn.Linear(in_features, width), nn.ReLU(), nn.Dropout(dropout)]
            in_features = width
        layers.append(nn.Linear(in_features, num_classes))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    total, count = 0.0, 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)  # the loader batches on the CPU
        optimizer.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        total += loss.item() * labels.shape[0]
        count += labels.shape[0]
    return total / count


@lucid.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct, count = 0, 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        correct += (model(images).argmax(dim=1) == labels).sum().item()
        count += labels.shape[0]
    return correct / count


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=DEFAULT_ROOT, help="directory with Fashion-MNIST's IDX files")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--limit", type=int, default=0, help="train on the first N images only (0: all 60000)")
    p.add_argument("--test-limit", type=int, default=0, help="test on the first N images only (0: all 10000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="auto, cpu, gpu or cuda[:N]")
    args = p.parse_args(argv)

    lucid.manual_seed(args.seed)
    device = pick_device(args.device)
    # FashionMNIST raises FileNotFoundError naming the missing file when the data are not there.
    train_set = FashionMNIST(args.data, train=True, transform=to_vector)
    test_set = FashionMNIST(args.data, train=False, transform=to_vector)
    if args.limit:
        train_set = Subset(train_set, range(min(args.limit, len(train_set))))
    if args.test_limit:
        test_set = Subset(test_set, range(min(args.test_limit, len(test_set))))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=1000)

    model = MLP(dropout=args.dropout).to(device)
    optimizer = lucid.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    print(model)
    print(f"{sum(p.numel() for p in model.parameters())} parameters, {len(train_set)} training images")

    acc = 0.0
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        train_loss = train_one_epoch(model, train_loader, optimizer, loss_fn, device)
        acc = evaluate(model, test_loader, device)
        print(f"epoch {epoch}: train loss {train_loss:.4f}, test accuracy {acc:.4f} "
              f"({time.perf_counter() - start:.1f} s)")
    return acc


if __name__ == "__main__":
    sys.exit(0 if main() > 0 else 1)
