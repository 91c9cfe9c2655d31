#!/usr/bin/env bash
# The GPU check, for the lent H200 (the device tool runs it in a copy of the working
# tree; nothing can be installed there): builds lucid into that machine's Python, runs
# the GPU legs of the test suite, then the GPU benchmark rows whose names contain each
# argument. Everything is logged under $OUT: build.log, tests.log (one line per test,
# so a run cut short by its time limit still names every result so far) and bench.log.
# The failures, the test summary and the benchmark rows are printed.
#
#   bash scripts/gpu_check.sh                      every GPU leg, no benchmark
#   TESTS="python/test_gpu_seq.py" bash scripts/gpu_check.sh "GPU matmul"
#
# TESTS: pytest's arguments (default: every test whose id names the GPU, "-k gpu");
# SHARD=i/n: only every n-th test file from the i-th (0-based), for runs that must fit
# the device tool's 10 minutes a call (all GPU legs in one process take about 10);
# TEST_TIMEOUT: seconds for the tests (default 420). The tests run in 8 processes when
# pytest-xdist is there. GPU ops are recorded lazily (csrc/core/pending.h); LUCID_LAZY=0
# in the environment runs every leg with each op run at its call (eager mode) instead;
# LUCID_FUSION=0 and LUCID_CUDA_GRAPHS=0 keep laziness but switch off fusion or graphs.
set -u
: "${OUT:?set OUT to a folder for the logs (the device machine sets it)}"
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
export CMAKE_BUILD_PARALLEL_LEVEL=16 PYTHONDONTWRITEBYTECODE=1
start=$(date +%s)
# The device keeps build/gpu between calls, and a copied file may carry an mtime older
# than the objects built from its last version (a file restored with cp), which ninja
# would not rebuild: every file whose contents changed since the last build is touched.
sums=build/gpu/.source_sums
[ -f "$sums" ] && md5sum --quiet -c "$sums" 2>/dev/null | sed -n 's/: FAILED$//p' | xargs -r touch
python3 -m pip install -q --no-build-isolation --no-deps . -Cbuild-dir=build/gpu >"$OUT/build.log" 2>&1 ||
  { tail -50 "$OUT/build.log"; exit 1; }
find csrc -type f -print0 | xargs -0 md5sum >"$sums"
echo "build: $(($(date +%s) - start)) s"

if [ -n "${SHARD:-}" ] && [ -z "${TESTS:-}" ]; then
  files=$(cd tests && ls python/test_*.py | awk -v i="${SHARD%/*}" -v n="${SHARD#*/}" '(NR - 1) % n == i')
  TESTS="$(echo $files) -k gpu"
fi
# The lent machine has no MKL (nothing can be installed there): the CPU legs of the FFT
# tests skip there, and only there (tests/python/test_fft.py).
python3 -c "import lucid; lucid.fft.fft(lucid.ones(4, device='cpu'))" 2>/dev/null || export LUCID_TEST_NO_MKL=1
parallel=""
python3 -c "import xdist" 2>/dev/null && parallel="-n 8"
(cd tests && timeout "${TEST_TIMEOUT:-420}" python3 -m pytest ${TESTS:-python -k gpu} $parallel -v -rfE \
  -p no:cacheprovider >"$OUT/tests.log" 2>&1)
echo "tests: rc=$? ($(($(date +%s) - start)) s)"
# pytest's summary of failures (-rfE), or, for a run cut short, the per-test lines (-v)
if grep -qE "^(FAILED|ERROR) " "$OUT/tests.log"; then
  grep -E "^(FAILED|ERROR) " "$OUT/tests.log" | cut -c1-200 | head -100
else
  grep -E " (FAILED|ERROR)" "$OUT/tests.log" | cut -c1-200 | head -100
fi
tail -1 "$OUT/tests.log"

for only in "$@"; do python3 benchmarks/suite.py --only "$only" --no-plot >>"$OUT/bench.log" 2>&1; done
[ $# -gt 0 ] && grep -E "^GPU|ceiling gpu" "$OUT/bench.log"
echo "total: $(($(date +%s) - start)) s"
