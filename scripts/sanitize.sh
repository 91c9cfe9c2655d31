#!/usr/bin/env bash
# The checked build: the engine, the extension and the C++ tests compiled with
# AddressSanitizer and UndefinedBehaviorSanitizer (build/asan, -O1 -g), then the C++
# tests and a representative set of the Python tests run on it. Any leak in the
# engine's own tests, any invalid memory access or undefined behaviour fails the run.
# Python's own allocations are not leak-checked (the interpreter keeps objects alive
# at exit by design). Arguments go to pytest (e.g. a test file to run instead).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
export PATH="$PWD/.venv/bin:$PATH"
PY=.venv/bin/python

cmake -S . -B build/asan -G Ninja -DLUCID_SANITIZE=address,undefined -DLUCID_CUDA=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DPython_EXECUTABLE="$PWD/$PY" >/dev/null
ninja -C build/asan -j"$(nproc)"

echo "== C++ engine tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build/asan --output-on-failure -j2

echo "== Python tests under ASan + UBSan"
# The interpreter is not instrumented: the sanitizer runtime is preloaded, and the
# package is assembled next to the instrumented extension.
pkg=build/asan/pkg
rm -rf "$pkg" && mkdir -p "$pkg"
cp -r python/lucid "$pkg/lucid"
rm -f "$pkg"/lucid/_C*.so
cp build/asan/csrc/bindings/_C*.so "$pkg/lucid/"
# libstdc++ preloaded too: ASan intercepts __cxa_throw and must find the real one at
# start-up, before torch (used by the tests) throws its first C++ exception.
runtime="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)"
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
  # the engine's surface: tensors, views, copies, every elementwise and reduction op,
  # indexing, autograd, nn layers, optimizers, data loading, checkpoints
  tests=(tests/python/test_creation.py tests/python/test_views.py tests/python/test_copy_cast.py
         tests/python/test_elementwise.py tests/python/test_reduce.py tests/python/test_indexing.py
         tests/python/test_advanced_indexing.py tests/python/test_autograd.py tests/python/test_linalg.py
         tests/python/test_nn_conv.py tests/python/test_nn_rnn.py tests/python/test_nn_norm.py
         tests/python/test_nn_layers.py tests/python/test_nn_pool.py tests/python/test_nn_module.py
         tests/python/test_shape_ops.py tests/python/test_random.py tests/python/test_reduce_more.py
         tests/python/test_conv_direct.py tests/python/test_transforms.py tests/python/test_resume.py
         tests/python/test_optim.py tests/python/test_serialization.py tests/python/test_errors.py
         tests/python/test_pickle.py tests/python/test_datasets.py tests/python/test_conv_winograd.py)
fi
# GCC's ASan allocator has no fork handler: a process forked while another of its threads
# holds one of the allocator's locks deadlocks at its first malloc (glibc's malloc takes
# its locks around a fork; real runs are not affected). The test files that fork
# DataLoader workers hung that way in a forked worker even run alone with one compute
# thread (the parent's multiprocessing feeder threads allocate too), so they are left to
# the plain run (scripts/test.sh); their datasets, samplers and collation run in-process
# under the sanitizers through the other files.
forking=(tests/python/test_data.py tests/python/test_data_mix.py tests/python/test_transforms.py
         tests/python/test_examples.py)
selected=()
for t in "${tests[@]}"; do
  case " ${forking[*]} " in *" ${t%/} "*) echo "(left to the plain run: $t forks DataLoader workers)" ;;
                                      *) selected+=("$t") ;; esac
done
for f in "${forking[@]}"; do selected=("--ignore=$f" "${selected[@]}"); done
[ ${#selected[@]} -gt ${#forking[@]} ] || exit 0
LD_PRELOAD="$runtime" ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
  PYTHONPATH="$pkg" "$PY" -m pytest -q -p no:cacheprovider -n 2 "${selected[@]}"
