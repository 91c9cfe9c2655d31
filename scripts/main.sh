#!/usr/bin/env bash
# The main job. For now: a tour of lucid's tensors on the CPU, and on the GPU when
# one is present. It grows into training runs with the autograd and nn issues.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python examples/tensor_tour.py "$@"
