#!/usr/bin/env bash
# The main job: build lucid, take the tensor tour (CPU, and GPU when present), then
# train softmax regression on Fashion-MNIST with autograd and print the test accuracy.
# Extra arguments go to the training run (e.g. --epochs 10 --lr 0.05).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python examples/tensor_tour.py
exec .venv/bin/python examples/softmax_regression.py "$@"
