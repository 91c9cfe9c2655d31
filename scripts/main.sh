#!/usr/bin/env bash
# The main job: install what is missing, build lucid, take the tensor tour (CPU, and
# GPU when present), then train a CNN on Fashion-MNIST (examples/train_fashion_mnist.py:
# test accuracy per epoch, checkpoint and curves under runs/fashion_mnist).
# Extra arguments go to the training run (e.g. --epochs 10 --lr 0.002, or --resume).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python examples/tensor_tour.py
exec .venv/bin/python examples/train_fashion_mnist.py "$@"
