#!/usr/bin/env bash
# Installs what lucid needs to build and test on a fresh Debian 12 machine, then
# builds lucid (engine, extension and C++ tests) into the project's virtual
# environment (.venv). Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
need=()
for p in cmake ninja-build ccache g++ libgtest-dev dataset-fashion-mnist libopenblas-dev libsleef-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
command -v "$PY" >/dev/null 2>&1 || need+=(python3)
if command -v "$PY" >/dev/null 2>&1; then
  "$PY" -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
  "$PY" -c 'import os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' \
    2>/dev/null || need+=(python3-dev)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${need[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# Build tools, plus the test-only reference (torch). pip's cache lives outside the
# clone (~/.cache/pip), so the large torch wheel is downloaded once per machine.
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt

# Build and install lucid. The build directory persists, so with ccache a rebuild
# compiles only what changed. The C++ tests are built in the same tree.
export PATH="$PWD/.venv/bin:$PATH"
.venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation . \
  -Cbuild-dir=build/py -Ccmake.define.LUCID_BUILD_TESTS=ON
