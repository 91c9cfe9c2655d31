#!/usr/bin/env bash
# Installs everything lucid needs to build and test on a fresh Debian 12 machine,
# then builds the extension into the project's virtual environment (.venv).
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_packages=(cmake ninja-build ccache g++ libgtest-dev python3-venv)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# Build tools and the test-only reference (torch). The pip cache lives outside the
# clone (~/.cache/pip), so the large torch wheel is downloaded once per machine.
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -r requirements-dev.txt

# Build and install lucid itself (scikit-build-core drives CMake + Ninja + ccache).
# The build directory is kept so that rebuilds are incremental.
.venv/bin/python -m pip install -q --no-build-isolation -e . \
  -Cbuild-dir=build/py -Ccmake.build-type=Release
