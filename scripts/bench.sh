#!/usr/bin/env bash
# The benchmark suite: build lucid (scripts/setup.sh), then run every workload in lucid
# and in PyTorch side by side (same process, same thread count) against the machine's
# measured ceilings. Prints a table and writes benchmarks/results/latest.{json,md,png}.
# Arguments go to the suite: --quick (a short run), --only SUBSTRING, --no-plot.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python benchmarks/suite.py "$@"
