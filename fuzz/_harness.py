"""What the fuzz targets share: the verdict on an exception, a byte reader that works
with or without atheris, scratch files on tmpfs, and reading a parsed result.

A target's TestOneInput(data) parses the bytes. A Python Exception is the parser's
expected way to refuse input and is swallowed; everything else surfaces as a finding
and ends the run with a crash report:

  - a crash in native code (the process dies: libFuzzer prints the signal),
  - SystemError (CPython's "a C function broke the rules") and MemoryError (a
    parser allocating what the input claims instead of checking it against the
    input's real size),
  - any BaseException that is not an Exception,
  - Finding, raised by a target's own oracle: a result that contradicts the input
    (values that differ from the bytes, a view reaching past its buffer, a DLPack
    deleter called twice or never, a buffer export never released, two readers of
    the same bytes disagreeing),
  - hangs and memory blow-ups (libFuzzer's -timeout and -rss_limit_mb).

Exceptions of the wrong kind (a KeyError or struct.error escaping a parser instead of
a ValueError/RuntimeError naming the problem) are not crashes: each distinct one (by
type and raising line) is written once to $LUCID_FUZZ_UNCLEAR_DIR, when set, with the
input that raised it, for a human to read. The same goes for "rejections" of input
that an independent reference decoder accepts.

Nothing here imports atheris: the targets import it only when run as programs, so the
regression tests can call TestOneInput without it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import struct
import sys
import traceback

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
# The lucid on the path (an installed one, or the source tree through PYTHONPATH, as
# scripts/fuzz.sh sets it); the source tree only when there is none.
if importlib.util.find_spec("lucid") is None:
    sys.path.insert(0, os.path.join(_ROOT, "python"))


class Finding(BaseException):
    """An oracle violation. A BaseException, so no `except Exception` swallows it."""


# Known, reported bugs the targets steer around so that a run can go past them and look
# for others (each has a regression test in tests/python/test_fuzz_regressions.py).
# LUCID_FUZZ_NO_GUARDS=1 turns the guards off, to check whether a fix landed.
GUARDS = os.environ.get("LUCID_FUZZ_NO_GUARDS") != "1"


# ---- verdicts ----------------------------------------------------------------------------

_seen_unclear = set()


def _raising_line(exc):
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return "?"
    code = last.tb_frame.f_code
    return f"{os.path.basename(code.co_filename)}:{last.tb_lineno}"


def note(target, kind, message, data, key=None):
    """Records one "unclear" observation (written once per key) for a human to read."""
    key = (target, kind, key if key is not None else re.sub(r"\d+", "N", message)[:80])
    if key in _seen_unclear:
        return
    _seen_unclear.add(key)
    out = os.environ.get("LUCID_FUZZ_UNCLEAR_DIR")
    if not out:
        return
    os.makedirs(out, exist_ok=True)
    digest = hashlib.sha1(repr(key).encode()).hexdigest()[:12]
    with open(os.path.join(out, f"{target}-{digest}.bin"), "wb") as f:
        f.write(data)
    with open(os.path.join(out, "unclear.tsv"), "a") as f:
        f.write(f"{target}\t{kind}\t{message[:300]!r}\t{target}-{digest}.bin\n")


def attempt(target, data, fn, clear=(ValueError,)):
    """(True, result) or (False, exception-type): fn() run under the harness's rules.
    Exceptions of the `clear` types are the expected rejection; other Exceptions are
    noted as unclear; SystemError, MemoryError and non-Exceptions propagate."""
    try:
        return True, fn()
    except (SystemError, MemoryError):
        raise
    except clear as e:
        return False, type(e)
    except Exception as e:  # noqa: BLE001 - the point is to catch every kind
        note(target, type(e).__name__, f"{type(e).__name__}: {e}", data,
             key=(type(e).__name__, _raising_line(e)))
        return False, type(e)


# ---- reading results -------------------------------------------------------------------------

TOUCH_LIMIT = 1 << 14  # elements; larger tensors are read at their first and last element only


def touch_tensor(t):
    """Reads a tensor so a tensor built over bad memory would be read: all of it when
    small, its corners when large. Returns its bytes when it was read in full."""
    if GUARDS and t.dim() > 1000:
        # Known bug (tests/python/test_fuzz_regressions.py): repr() and tolist() recurse
        # once per dimension in C++ and overflow the stack at some 40k dimensions.
        return None
    n = t.numel()
    if n <= 256:
        repr(t)
    if n == 0:
        outer = 1
        for s in t.shape:
            if s == 0:
                break
            outer *= s
        if outer <= TOUCH_LIMIT:  # tolist() builds the lists before the first 0-size dim
            t.tolist()
        return b""
    if n <= TOUCH_LIMIT:
        t.tolist()
        return t.to_bytes()
    if 0 < t.dim() <= 64:  # (indexing costs ndim**2: 65k dimensions take minutes)
        t[tuple(0 for _ in t.shape)].item()
        t[tuple(s - 1 for s in t.shape)].item()
    return None


def walk(obj, visit, limit=10_000):
    """Calls visit(x) on every object in nested containers (iteratively: a hostile pickle
    may nest deeply), at most `limit` of them."""
    stack, seen, count = [obj], set(), 0
    while stack and count < limit:
        x = stack.pop()
        count += 1
        if isinstance(x, (dict, list, tuple, set, frozenset)):
            if id(x) in seen:
                continue
            seen.add(id(x))
            if isinstance(x, dict):
                stack.extend(x.keys())
                stack.extend(x.values())
            else:
                stack.extend(x)
        else:
            visit(x)


def instrument_harness(namespace):
    """Instruments the target's own functions (and this module's byte reader) for
    atheris's coverage feedback: where the interesting code is native (no coverage),
    the branches the harness takes (which exporter, layout, dtype, import function) are
    what tells the fuzzer that an input is new."""
    import atheris
    import inspect

    for name, obj in list(namespace.items()):
        if inspect.isfunction(obj) and obj.__module__ == namespace["__name__"]:
            namespace[name] = atheris.instrument_func(obj)
        elif inspect.isclass(obj) and obj.__module__ == namespace["__name__"]:
            for attr, member in list(vars(obj).items()):
                if inspect.isfunction(member):
                    setattr(obj, attr, atheris.instrument_func(member))
    for attr, member in list(vars(Bytes).items()):
        if inspect.isfunction(member):
            setattr(Bytes, attr, atheris.instrument_func(member))


# ---- scratch files ------------------------------------------------------------------------------

def scratch_dir():
    """A per-process directory under $LUCID_FUZZ_SCRATCH (scripts/fuzz.sh sets it and
    removes it afterwards), else on tmpfs (/dev/shm when there is one), removed at exit."""
    base = os.environ.get("LUCID_FUZZ_SCRATCH")
    if not base:
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    if base is None:
        import tempfile
        base = tempfile.gettempdir()
    path = os.path.join(base, f"lucid-fuzz-{os.getpid()}")
    if not os.path.isdir(path):
        import atexit
        import shutil

        os.makedirs(path, exist_ok=True)
        atexit.register(shutil.rmtree, path, True)
    return path


def write_scratch(name, data):
    """Writes `data` to a scratch file (a fresh inode each time: a file still mapped by
    the last input's tensors is unlinked, not truncated under them)."""
    path = os.path.join(scratch_dir(), name)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    with open(path, "wb") as f:
        f.write(data)
    return path


# ---- bytes -> values -------------------------------------------------------------------------

class Bytes:
    """A deterministic reader of fuzz bytes (a small FuzzedDataProvider in pure Python):
    the same input means the same values with or without atheris, so a saved
    regression input replays anywhere. Reads past the end give zeros."""

    def __init__(self, data):
        self.data = bytes(data)
        self.pos = 0

    def remaining(self):
        return max(0, len(self.data) - self.pos)

    def take(self, n):
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk + bytes(max(0, n - len(chunk)))

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def i32(self):
        return struct.unpack("<i", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def i64(self):
        return struct.unpack("<q", self.take(8))[0]

    def bool(self):
        return bool(self.u8() & 1)

    def below(self, n):
        """An int in [0, n)."""
        if n <= 1:
            return 0
        v = self.u8() if n <= 256 else self.u16() if n <= 65536 else self.u32()
        return v % n

    def pick(self, seq):
        return seq[self.below(len(seq))]

    def small_or_wild(self, small=8, signed=True):
        """Mostly a small count (0..small), sometimes an edge value: huge, negative,
        a power of two near 2**31, 2**32, 2**62, 2**63, or any 64-bit value."""
        mode = self.u8()
        if mode < 160:
            return mode % (small + 1)
        if mode < 200:
            v = self.pick([2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 61, 2 ** 62,
                           2 ** 62 + 1, 2 ** 63 - 1, 2 ** 40, 3 * 2 ** 61, 2 ** 61 + 1, 2 ** 60 + 1])
            return -v if (signed and self.bool()) else v
        if mode < 230:
            v = self.u16()
            return -v if (signed and self.bool()) else v
        return self.i64() if signed else self.u64()
