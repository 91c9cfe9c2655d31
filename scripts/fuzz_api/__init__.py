"""Bad-argument fuzzer over lucid's public API.

For every public function (lucid.*, lucid.nn.functional.*, lucid.nn.init.*,
lucid.nn.utils.*, lucid.autograd.*, lucid.gpu.*, lucid.serialization.*,
lucid.utils.transforms.*, lucid.utils.data.*), every public Tensor method, operator
and property, every nn Module constructor (then the module's forward on random
inputs), Module methods, Generator methods, optimizers (constructor, step) and LR
schedulers (constructor, step), it makes random calls with wrong shapes, dtypes,
devices, None, NaN/inf, huge and negative sizes, strings, random objects...

The contract checked: every call returns or raises an ``Exception``. Failures:
  crash   the worker process died (signal, abort, exit) during the call
  hang    the worker did not answer within --timeout seconds
  bug     SystemError (a C function returned NULL without an exception, or an error
          set while returning a value), or a BaseException that is not an Exception
and, reported separately (not failures):
  bad message  an exception whose text is raw C++ (std::bad_alloc, "unknown exception",
               std::..., vector::_M_...), which tells the user nothing.

Each call runs in a worker subprocess (restarted when it dies) under
RLIMIT_AS = --mem-limit-gb, so a request for an impossible size must raise (an
out-of-memory error), never take the machine. Each call's arguments are derived from
``random.Random(f"{seed}:{index}")``: ``--replay SEED:INDEX`` (with the same --only /
--self-test options) prints the call as Python code and runs it again in a fresh worker.

Usage:
  PYTHONPATH=python python scripts/fuzz_api --calls 20000 --seed 1
  PYTHONPATH=python python scripts/fuzz_api --time-budget 600 --only 'nn\\.functional'
  PYTHONPATH=python python scripts/fuzz_api --replay 1:1234
  PYTHONPATH=python python scripts/fuzz_api --list-targets
  # on the ASan/UBSan build (scripts/sanitize.sh assembles build/asan/pkg; copy it first):
  PYTHONPATH=python python scripts/fuzz_api --time-budget 300 --mem-limit-gb 0 \
      --worker-env PYTHONPATH=/tmp/asan_pkg \
      --worker-env "LD_PRELOAD=$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)" \
      --worker-env ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=6144 \
      --worker-env UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
Exit status: 0 when no crash, hang or bug was seen, 1 otherwise (2: usage errors).
"""

# The package: targets.py (what is called), values.py (random argument expressions),
# programs.py (one call as a program: make_call), worker.py (what runs in the worker
# process), driver.py (the parent: workers, the run, the summary, replay), cli.py
# (arguments; main), __main__.py (`python scripts/fuzz_api`, `python -m fuzz_api`).

from .cli import main
from .programs import make_call, program_text
from .targets import Target, build_targets, filter_targets

__all__ = ["Target", "build_targets", "filter_targets", "make_call", "program_text", "main"]
