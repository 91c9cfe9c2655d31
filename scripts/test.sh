#!/usr/bin/env bash
# Every test: the C++ engine tests (ctest) and the Python API tests (pytest, checked
# against PyTorch). GPU tests skip on machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"

echo "== C++ engine tests (ctest)"
ctest --test-dir build/py --output-on-failure -j2

echo "== Python API tests (pytest)"
# Run from the tests folder so that `import lucid` finds the installed package,
# not the source tree.
.venv/bin/python -m pytest tests/python -q -n 2 -p no:cacheprovider "$@"
