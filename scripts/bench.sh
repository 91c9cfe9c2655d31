#!/usr/bin/env bash
# The benchmark suite: build lucid (scripts/setup.sh), then run every workload in lucid
# and in PyTorch side by side (same process, same thread count) against the machine's
# measured ceilings. Prints a table and writes benchmarks/results/latest.{json,md,png}.
# A full run then times one epoch of the main job's Fashion-MNIST training side by side,
# with the share of it spent waiting for the 2-worker DataLoader
# (benchmarks/bench_train.py).
# Arguments go to the suite: --quick (a short run, no end-to-end jobs), --only
# SUBSTRING (that too), --no-plot.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python benchmarks/suite.py "$@"
case " $* " in *" --quick "* | *" --only "*) exit 0 ;; esac
.venv/bin/python benchmarks/bench_train.py
