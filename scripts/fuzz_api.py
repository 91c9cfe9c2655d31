#!/usr/bin/env python3
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
  PYTHONPATH=python python scripts/fuzz_api.py --calls 20000 --seed 1
  PYTHONPATH=python python scripts/fuzz_api.py --time-budget 600 --only 'nn\\.functional'
  PYTHONPATH=python python scripts/fuzz_api.py --replay 1:1234
  PYTHONPATH=python python scripts/fuzz_api.py --list-targets
  # on the ASan/UBSan build (scripts/sanitize.sh assembles build/asan/pkg; copy it first):
  PYTHONPATH=python python scripts/fuzz_api.py --time-budget 300 --mem-limit-gb 0 \
      --worker-env PYTHONPATH=/tmp/asan_pkg \
      --worker-env "LD_PRELOAD=$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)" \
      --worker-env ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=6144 \
      --worker-env UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
Exit status: 0 when no crash, hang or bug was seen, 1 otherwise (2: usage errors).
"""

from __future__ import annotations

import argparse
import collections
import inspect
import io
import itertools
import json
import math
import os
import random
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))

# --------------------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------------------

# Exclusions, each with its reason. Nothing is excluded for being buggy.
EXCLUDE = {
    # Interactive / not part of the numeric API: they only print or spawn a debugger.
    "lucid.autograd.graph": "module of graph helpers, not a function",
    # Reads the process-wide RNG seed from the OS; harmless but makes runs unreproducible.
    # (lucid.seed is still called: it is reset by manual_seed before every call.)
}
# Constrained rather than excluded (see _constrain_kwargs / value hints):
#  * lucid.save / save_safetensors / serialization.*: the worker runs in a private temp
#    directory and path-like strings are plain relative names, so writes land there;
#    file objects are io.BytesIO.
#  * lucid.set_num_threads / set_default_dtype / set_printoptions / manual_seed /
#    set_rng_state / grad and inference modes: called with any value, and the worker
#    restores the global state after every call.
#  * utils.data.DataLoader: num_workers is never a positive int (a positive value spawns
#    processes: the fuzzer must not fork the machine). Its other arguments are random.
#  * utils.datasets.MNIST/FashionMNIST: root is a relative name in the temp dir (lucid
#    never downloads; they only read files).

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
               "float32", "float64", "complex64"]


class Target:
    __slots__ = ("name", "kind", "expr", "params", "extra")

    def __init__(self, name, kind, expr, params, extra=None):
        self.name = name      # display name, e.g. "lucid.add", "Tensor.add", "nn.Conv2d"
        self.kind = kind      # func | method | getprop | setprop | class | nnmod | modmeth
                              # | genmeth | optim | sched | selftest
        self.expr = expr      # code that names the callable (for func/class/nnmod/...)
        self.params = params  # list of (name, kind, has_default) or None when unknown
        self.extra = extra


_KINDMAP = {
    inspect.Parameter.POSITIONAL_ONLY: "pos",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "pk",
    inspect.Parameter.KEYWORD_ONLY: "kw",
    inspect.Parameter.VAR_POSITIONAL: "varpos",
    inspect.Parameter.VAR_KEYWORD: "varkw",
}


def _split_top(s):
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur))
    return out


def _parse_sig_text(text):
    """Parameters from a nanobind signature line 'def f(a: T, *, b: T = \\0) -> R'."""
    m = re.search(r"\((.*)\)\s*(->.*)?$", text.strip().splitlines()[0])
    if not m:
        return None
    params, kwonly = [], False
    for piece in _split_top(m.group(1)):
        piece = piece.strip()
        if not piece or piece == "/":
            continue
        if piece == "*":
            kwonly = True
            continue
        name = piece.split(":")[0].split("=")[0].strip()
        if name.startswith("**"):
            params.append((name[2:], "varkw", False))
            continue
        if name.startswith("*"):
            params.append((name[1:], "varpos", False))
            kwonly = True
            continue
        if not name.isidentifier():
            return None
        params.append((name, "kw" if kwonly else "pk", "=" in piece))
    return params


def get_params(obj, drop_self=False):
    params = None
    try:
        sig = inspect.signature(obj)
        params = [(p.name, _KINDMAP[p.kind], p.default is not inspect.Parameter.empty)
                  for p in sig.parameters.values()]
    except (TypeError, ValueError):
        nb = getattr(obj, "__nb_signature__", None)
        text = None
        if nb:
            text = nb[0][0]
        elif isinstance(getattr(obj, "__doc__", None), str) and "(" in obj.__doc__.split("\n")[0]:
            text = obj.__doc__.split("\n")[0]
        if text:
            params = _parse_sig_text(text)
    if params is not None and drop_self and params and params[0][0] in ("self", "cls"):
        params = params[1:]
    return params


def _public(mod):
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")]
    return sorted(set(n for n in names if not n.startswith("_")))


def _is_imported(obj, mod):
    """Standard-library helpers re-exported by accident (math, warnings, partial...)."""
    if isinstance(obj, types.ModuleType):
        return True
    m = getattr(obj, "__module__", None) or ""
    return not (m.startswith("lucid") or m == "builtins" and type(obj).__name__.startswith("nb_"))


# Tensor operators (dunders) that are part of the public surface.
TENSOR_DUNDERS = [
    "__abs__", "__add__", "__and__", "__array__", "__bool__", "__complex__", "__deepcopy__",
    "__dlpack__", "__dlpack_device__", "__eq__", "__float__", "__floordiv__", "__format__",
    "__ge__", "__getitem__", "__gt__", "__iadd__", "__iand__", "__ifloordiv__", "__ilshift__",
    "__imod__", "__imul__", "__index__", "__int__", "__invert__", "__ior__", "__ipow__",
    "__irshift__", "__isub__", "__iter__", "__itruediv__", "__ixor__", "__le__", "__len__",
    "__lshift__", "__lt__", "__matmul__", "__mod__", "__mul__", "__ne__", "__neg__", "__or__",
    "__pow__", "__radd__", "__rand__", "__reduce_ex__", "__repr__", "__rfloordiv__",
    "__rlshift__", "__rmatmul__", "__rmod__", "__rmul__", "__ror__", "__rpow__", "__rrshift__",
    "__rshift__", "__rsub__", "__rtruediv__", "__rxor__", "__setitem__", "__str__", "__sub__",
    "__truediv__", "__xor__", "__hash__", "__contains__", "__reversed__", "__copy__",
    "__setstate__", "__getstate__", "__reduce__",
]

# Abstract bases: constructing them is fine, calling forward raises NotImplementedError.
FUNC_MODULES = [
    ("lucid", "lucid"),
    ("lucid.nn.functional", "lucid.nn.functional"),
    ("lucid.nn.init", "lucid.nn.init"),
    ("lucid.nn.utils", "lucid.nn.utils"),
    ("lucid.nn.utils.rnn", "lucid.nn.utils.rnn"),
    ("lucid.nn.utils.parametrize", "lucid.nn.utils.parametrize"),
    ("lucid.nn.utils.parametrizations", "lucid.nn.utils.parametrizations"),
    ("lucid.autograd", "lucid.autograd"),
    ("lucid.autograd.functional", "lucid.autograd.functional"),
    ("lucid.gpu", "lucid.gpu"),
    ("lucid.serialization", "lucid.serialization"),
    ("lucid.utils.transforms", "lucid.utils.transforms"),
    ("lucid.utils.transforms.functional", "lucid.utils.transforms.functional"),
    ("lucid.utils.data", "lucid.utils.data"),
    ("lucid.utils.datasets", "lucid.utils.datasets"),
    ("lucid.linalg", "lucid.linalg"),
    ("lucid.fft", "lucid.fft"),
    ("lucid.special", "lucid.special"),
]


def _import(path):
    import importlib
    try:
        return importlib.import_module(path)
    except ImportError:
        return None


def build_targets(self_test=False):
    import lucid
    targets = {}

    def add(t):
        targets.setdefault(t.name, t)

    dtype_type = type(lucid.float32)
    for modpath, expr in FUNC_MODULES:
        mod = _import(modpath)
        if mod is None:
            continue
        for n in _public(mod):
            full = f"{modpath}.{n}"
            if full in EXCLUDE:
                continue
            obj = getattr(mod, n, None)
            if obj is None or isinstance(obj, (types.ModuleType, dtype_type)):
                continue
            if _is_imported(obj, mod) and not (modpath == "lucid" and callable(obj)):
                continue
            if isinstance(obj, type):
                if modpath == "lucid.optim.lr_scheduler":
                    continue
                if modpath in ("lucid.nn",):
                    continue
                add(Target(full, "class", f"{expr}.{n}", get_params(obj)))
            elif callable(obj):
                add(Target(full, "func", f"{expr}.{n}", get_params(obj)))
    # Singletons that are public objects with methods.
    add(Target("lucid.default_generator.manual_seed", "func",
               "lucid.default_generator.manual_seed", [("seed", "pk", False)]))

    # nn modules: constructor, then forward on random inputs.
    nn = lucid.nn
    for n in _public(nn):
        obj = getattr(nn, n)
        if isinstance(obj, type) and issubclass(obj, nn.Module):
            add(Target(f"lucid.nn.{n}", "nnmod", f"lucid.nn.{n}", get_params(obj)))
        elif isinstance(obj, type):   # Parameter, Buffer
            add(Target(f"lucid.nn.{n}", "class", f"lucid.nn.{n}", get_params(obj)))
    for n in _public(lucid.nn.Module):
        obj = getattr(lucid.nn.Module, n)
        if callable(obj) and not isinstance(obj, type):
            add(Target(f"Module.{n}", "modmeth", n, get_params(obj, drop_self=True)))

    # Optimizers and schedulers.
    optim = lucid.optim
    for n in _public(optim):
        obj = getattr(optim, n)
        if isinstance(obj, type) and issubclass(obj, optim.Optimizer):
            add(Target(f"lucid.optim.{n}", "optim", f"lucid.optim.{n}", get_params(obj)))
    sch = lucid.optim.lr_scheduler
    for n in _public(sch):
        obj = getattr(sch, n)
        if isinstance(obj, type) and obj.__module__.startswith("lucid") and \
                not issubclass(obj, optim.Optimizer) and n != "Counter":
            add(Target(f"lucid.optim.lr_scheduler.{n}", "sched",
                       f"lucid.optim.lr_scheduler.{n}", get_params(obj)))

    # Generator methods, on a fresh Generator.
    for n in _public(lucid.Generator):
        obj = getattr(lucid.Generator, n)
        if callable(obj):
            add(Target(f"Generator.{n}", "genmeth", n, get_params(obj, drop_self=True)))

    # Tensor: methods, properties (get and, when settable, set), operators.
    T = lucid.Tensor
    for n in _public(T) + TENSOR_DUNDERS:
        if not hasattr(T, n):
            continue
        st = inspect.getattr_static(T, n)
        if isinstance(st, property) or (hasattr(st, "__get__") and hasattr(st, "__set__")
                                        and not callable(st)):
            add(Target(f"Tensor.{n}", "getprop", n, None))
            if getattr(st, "fset", None) is not None or not isinstance(st, property):
                add(Target(f"Tensor.{n}=", "setprop", n, None))
        elif callable(getattr(T, n)):
            add(Target(f"Tensor.{n}", "method", n, get_params(getattr(T, n), drop_self=True)))

    if self_test:
        for n in SELF_TESTS:
            add(Target(f"selftest.{n}", "selftest", n, []))
    return [targets[k] for k in sorted(targets)]


# The fuzzer's own check that it detects each failure kind (--self-test).
SELF_TESTS = {
    "abort": "import os; os.abort()",
    "segv": "import ctypes; ctypes.string_at(0)",
    "exit": "import os; os._exit(3)",
    "hang": "import time; time.sleep(10**6)",
    "systemerror": "raise SystemError('error return without exception set')",
    "keyboardinterrupt": "raise KeyboardInterrupt",
    "badmsg": "raise RuntimeError('std::bad_alloc')",
    "ok": "_r = lucid.zeros(2)",
    "raises": "raise ValueError('fine')",
}

# --------------------------------------------------------------------------------------
# Argument generation: every value is a Python expression (a string), so a call is a
# small program that can be printed, replayed and minimised.
# --------------------------------------------------------------------------------------

INTS = [0, 1, 2, 3, 4, 5, -1, -2, -3, 7, 8, 16, 64, 100, 1000, -100, 2**31 - 1, 2**31,
        -2**31, 2**32, 2**62, 2**63 - 1, -2**63, 2**64, 10**12, -10**12, 10**5]
SMALL_INTS = [0, 1, 1, 2, 2, 3, 3, 4, 5, -1, 8]
FLOATS = ["0.0", "0.5", "1.0", "-1.0", "2.5", "1e-12", "nan", "inf", "-inf", "1e308",
          "-1e308", "5e-324", "1e20", "3.0", "-0.0", "0.1", "-7.5", "1e-3"]
STRINGS = ["'cpu'", "'gpu'", "'cuda'", "'cuda:7'", "'gpu:0'", "'gpu:1'", "'tpu'", "'cpu:0'",
           "'cpu:1'", "''", "' '", "'mean'", "'sum'", "'none'", "'bogus'", "'float32'",
           "'\\x00'", "'\\u00e9'", "'a' * 1000", "'nearest'", "'bilinear'", "'zeros'",
           "'reflect'", "'constant'", "'replicate'", "'circular'", "'fro'", "'nuc'",
           "'ij'", "'ii->i'", "'i,i->'", "'ab,bc->ac'", "'...'", "'tanh'", "'relu'",
           "'fan_in'", "'fan_out'", "'linear'", "'bicubic'", "'trilinear'", "'area'",
           "'ckpt.lucid'", "'x.safetensors'", "'max'", "'min'", "'triangular'", "'cos'"]
DEVICES = ["'cpu'", "'gpu'", "'cuda'", "'cuda:7'", "'gpu:1'", "'gpu:-1'", "'tpu'",
           "'cpu:0'", "'cpu:3'", "''", "'meta'", "'mps'", "lucid.device('cpu')", "None",
           "0", "-1", "7", "2**62", "'cuda:99999999999999999999'", "'cpu:-1'"]
DTYPES = [f"lucid.{n}" for n in DTYPE_NAMES]
BAD_DTYPES = ["'float32'", "float", "int", "bool", "complex", "3", "None", "object()",
              "lucid.Tensor", "lucid.dtype(99, 'x', 4, 'f')", "lucid.dtype(-1, 'float32', 4, 'f')",
              "lucid.dtype(2**40, 'y', 1, 'i')"]
MODES = ["'mean'", "'sum'", "'none'", "'batchmean'", "'elementwise_mean'", "'bogus'", "None",
         "'nearest'", "'bilinear'", "'bicubic'", "'linear'", "'trilinear'", "'area'",
         "'nearest-exact'", "'zeros'", "'border'", "'reflection'", "'reflect'",
         "'replicate'", "'circular'", "'constant'", "'tanh'", "'relu'", "'gelu'", "'fan_in'",
         "'fan_out'", "'min'", "'max'", "'rel'", "'abs'", "'triangular'", "'triangular2'",
         "'exp_range'", "'cos'", "'linear'", "'leaky_relu'", "'selu'", "'sigmoid'", "1", "0"]
EQUATIONS = ["'ij,jk->ik'", "'ii->i'", "'i,i->'", "'...ij->...ji'", "'bij,bjk->bik'",
             "'i->'", "'ab,ab->ab'", "'a'", "'->'", "'ij'", "'i,j->ij'", "'..., ...->...'",
             "'Ab,bC->AC'", "'ij,jk,kl->il'", "'\\x00'", "'i' * 100 + '->'", "'...'",
             "'i j -> j i'", "'ij->ijk'"]


NUM_WORKERS = ["0", "-1", "-5", "None", "'2'", "0.5", "-2**63", "False", "0.0"]


def _w(rng, table):
    """Weighted choice: table is [(weight, fn_or_value)]."""
    total = sum(w for w, _ in table)
    x = rng.random() * total
    for w, v in table:
        x -= w
        if x < 0:
            return v(rng) if callable(v) else v
    v = table[-1][1]
    return v(rng) if callable(v) else v


SHAPE_DIMS = [0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 6, 8]


def rand_shape(rng):
    r = rng.random()
    if r < 0.05:
        return rng.choice([(64,), (16, 16), (256, 256), (1, 3, 32, 32), (2, 8, 16, 16),
                           (4096,), (1, 1, 300), (2, 3, 8, 8, 8), (128, 128)])
    nd = _w(rng, [(6, 0), (14, 1), (24, 2), (20, 3), (16, 4), (6, 5), (2, 6)])
    return tuple(rng.choice(SHAPE_DIMS) for _ in range(nd))


class Ctx:
    """Per-call state: the rng, a preferred shape and dtype (so tensors in one call are
    often compatible, which gets calls past the first argument check)."""

    def __init__(self, rng):
        self.rng = rng
        self.shape = rand_shape(rng)
        self.dtype = rng.choice(["float32"] * 6 + DTYPE_NAMES)
        self.tensors = []    # (expr, shape, dtype) of tensors made for this call


def tensor_expr(ctx, shape=None, dtype=None, values=None, view=None, rg=None):
    rng = ctx.rng
    if shape is None:
        r = rng.random()
        if r < 0.45:
            shape = ctx.shape
        elif r < 0.6 and ctx.shape:
            # broadcast-compatible variants of the call's shape
            s = list(ctx.shape)
            k = rng.randrange(len(s))
            if rng.random() < 0.5:
                s[k] = 1
            else:
                s = s[k:]
            shape = tuple(s)
        else:
            shape = rand_shape(rng)
    if dtype is None:
        dtype = ctx.dtype if rng.random() < 0.5 else rng.choice(DTYPE_NAMES)
    if values is None:
        values = _w(rng, [(40, "randn"), (15, "int"), (10, "idx"), (10, "nan"), (4, "big"),
                          (5, "zero"), (6, "pos"), (4, "bool"), (3, "neg"), (3, "tiny")])
    if view is None:
        view = _w(rng, [(65, None), (10, "t"), (8, "step"), (8, "expand"), (5, "offset"),
                        (4, "param")])
    if rg is None:
        rg = dtype in ("float32", "float64", "float16", "bfloat16", "complex64") and \
            rng.random() < 0.2
    seed = rng.randrange(1 << 30)
    args = [repr(tuple(shape)), repr(dtype), repr(values), repr(view), str(seed)]
    e = "mk(" + ", ".join(args) + (", rg=True" if rg else "") + ")"
    ctx.tensors.append((e, tuple(shape), dtype))
    return e


def index_tensor_expr(ctx):
    rng = ctx.rng
    shape = rand_shape(rng) if rng.random() < 0.6 else ctx.shape
    dtype = _w(rng, [(70, "int64"), (10, "int32"), (8, "bool"), (6, "uint8"), (6, "float32")])
    values = _w(rng, [(70, "idx"), (15, "int"), (10, "big"), (5, "neg")])
    return tensor_expr(ctx, shape, dtype, values, view=rng.choice([None, None, None, "t", "step"]),
                       rg=False)


def int_value(rng):
    return str(_w(rng, [(60, lambda r: r.choice(SMALL_INTS)), (40, lambda r: r.choice(INTS))]))


def float_value(rng):
    return rng.choice(FLOATS)


def ints_seq(rng):
    n = _w(rng, [(5, 0), (25, 1), (30, 2), (20, 3), (12, 4), (5, 5), (3, 6)])
    vals = [int_value(rng) if rng.random() < 0.25 else str(rng.choice(SMALL_INTS))
            for _ in range(n)]
    if rng.random() < 0.5:
        return "(" + ", ".join(vals) + ("," if n == 1 else "") + ")"
    return "[" + ", ".join(vals) + "]"


def dim_value(rng):
    return _w(rng, [(60, lambda r: str(r.choice([0, 1, 2, -1, -2, 3, -3, 4, 5, -5]))),
                    (10, lambda r: str(r.choice(INTS))), (10, "None"),
                    (15, lambda r: ints_seq(r)), (3, "'a'"), (2, "1.5")])


def size_value(rng):
    return _w(rng, [(45, ints_seq), (40, int_value), (5, "None"), (3, "lucid.Size([2, 3])"),
                    (3, "[2, -1]"), (2, "(2.5, 3)"), (2, "'2'")])


def bool_value(rng):
    return rng.choice(["True", "False", "True", "False", "None", "2", "'yes'", "0", "1.0"])


def scalar_value(rng):
    return _w(rng, [(40, float_value), (40, int_value), (5, "True"), (5, "(1+2j)"),
                    (3, "complex('nan')"), (4, "None"), (3, "'1'")])


def string_value(rng):
    return rng.choice(STRINGS)


def misc_value(rng):
    return rng.choice([
        "object()", "(lambda *a, **k: None)", "(lambda *a, **k: 1 / 0)", "(1+2j)",
        "b''", "b'\\x00' * 7", "bytearray(b'\\x01\\x02\\x03\\x04')", "{}", "{'a': 1}",
        "[[1, 2], [3]]", "[None]", "[1, 'a']", "set()", "range(5)", "range(2**62)",
        "lucid.Generator()", "lucid.nn.Linear(3, 4)", "lucid.float32", "Ellipsis",
        "slice(None, None, -1)", "slice(0, 2**62, 2**61)", "slice(None, None, 0)",
        "iter([1, 2])", "(x for x in range(3))", "type", "lucid", "NotImplemented",
        "float('nan')", "[[[]]]", "[]", "()", "lucid.Size([2, 3])", "memoryview(b'abcd')",
    ])


def tensor_list(ctx):
    n = _w(ctx.rng, [(5, 0), (25, 1), (40, 2), (20, 3), (10, 5)])
    items = [tensor_expr(ctx) for _ in range(n)]
    if ctx.rng.random() < 0.1 and items:
        items[ctx.rng.randrange(n)] = any_value(ctx, tensors=False)
    return _bracket(ctx.rng, items)


def _bracket(rng, items):
    if rng.random() < 0.3:
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return "[" + ", ".join(items) + "]"


def index_value(ctx):
    """Subscripts for __getitem__/__setitem__."""
    rng = ctx.rng

    def one(r):
        return _w(r, [(30, lambda rr: str(rr.choice([0, 1, -1, 2, -2, 3, 5, 2**62, -2**63]))),
                      (20, lambda rr: rr.choice(["slice(None)", "slice(1, None)",
                                                 "slice(None, None, 2)", "slice(-1, None, -1)",
                                                 "slice(None, None, 0)", "slice(0, 2**62, 2**61)",
                                                 "slice(-2**63, 2**63)", "slice(2, 1)",
                                                 "slice(1, 3, 7)"])),
                      (8, "None"), (8, "Ellipsis"), (15, lambda rr: index_tensor_expr(ctx)),
                      (8, lambda rr: ints_seq(rr)), (3, "True"), (3, "1.5"), (3, "'a'"),
                      (2, "[[0, 1], [1, 0]]"), (2, "[True, False]")])
    n = _w(rng, [(50, 1), (25, 2), (15, 3), (10, 4)])
    if n == 1:
        return one(rng)
    return "(" + ", ".join(one(rng) for _ in range(n)) + ")"


def optimizer_expr(ctx):
    rng = ctx.rng
    p = tensor_expr(ctx, rand_shape(rng), rng.choice(["float32", "float32", "float64"]),
                    "randn", None, True)
    return rng.choice([f"lucid.optim.SGD([{p}], lr=0.1)",
                       f"lucid.optim.SGD([{p}], lr=0.1, momentum=0.9)",
                       f"lucid.optim.Adam([{p}], lr=0.01)",
                       f"lucid.optim.SGD([{{'params': [{p}]}}, {{'params': [], 'lr': 0.5}}], lr=0.1)"])


def params_expr(ctx):
    rng = ctx.rng

    def ptensor():
        return tensor_expr(ctx, rand_shape(rng) if rng.random() < 0.5 else ctx.shape,
                           rng.choice(["float32"] * 5 + ["float64", "float16", "bfloat16",
                                                         "complex64", "int64"]),
                           _w(rng, [(80, "randn"), (10, "nan"), (10, "zero")]),
                           rng.choice([None, None, None, "t", "param"]),
                           rng.random() < 0.9)
    return _w(rng, [
        (55, lambda r: "[" + ", ".join(ptensor() for _ in range(r.randrange(0, 4))) + "]"),
        (15, lambda r: f"lucid.nn.Linear({r.choice([1, 3, 4])}, {r.choice([1, 2, 5])}).parameters()"),
        (10, lambda r: f"[{{'params': [{ptensor()}], 'lr': {float_value(r)}}}, {{'params': [{ptensor()}]}}]"),
        (5, lambda r: ptensor()),
        (5, "[]"), (5, lambda r: any_value(ctx)), (5, lambda r: f"[{ptensor()}, {ptensor()}]"),
    ])


def lambda_value(ctx):
    rng = ctx.rng
    return rng.choice([
        "(lambda *a, **k: None)", "(lambda *a, **k: 1 / 0)", "(lambda *a, **k: a[0] if a else None)",
        f"(lambda *a, **k: {tensor_expr(ctx)})", "(lambda *a, **k: 0.5)", "(lambda *a, **k: 'x')",
        "(lambda e: 0.9 ** e)", "(lambda *a, **k: float('nan'))", "None", "3", "object()",
    ])


def file_value(ctx):
    rng = ctx.rng
    return rng.choice([
        "io.BytesIO()", "io.BytesIO(b'')", "io.BytesIO(b'\\x80\\x04garbage')",
        f"corrupt_blob({rng.randrange(1 << 30)}, 'save')",
        f"corrupt_blob({rng.randrange(1 << 30)}, 'safetensors')",
        "'ckpt.lucid'", "'x.safetensors'", "'missing_file'", "''", "'.'", "'sub/dir/x'",
        "io.StringIO('abc')", "None", "3", f"corrupt_path({rng.randrange(1 << 30)})",
    ])


def dataset_expr(ctx):
    rng = ctx.rng
    return rng.choice([
        f"lucid.utils.data.TensorDataset({tensor_expr(ctx)}, {tensor_expr(ctx)})",
        f"lucid.utils.data.TensorDataset({tensor_expr(ctx, (5, 3))})",
        "list(range(7))", "[]", "range(2**62)", "None", "3", f"[{tensor_expr(ctx)}]",
    ])


# Name-based hints: (regex, generator). First match wins.
def _hints():
    return [
        (r"^(input|x|self|other|tensor|a|b|y|mat|mat1|mat2|vec|vec1|vec2|target|src|source_t|"
         r"query|key|input1|input2|x1|x2|anchor|positive|negative|log_probs|var|grid|theta|"
         r"batch1|batch2|tensor1|tensor2|end_t|exponent|img|pic|image|grad_output|"
         r"grad_outputs|outputs|inputs_t|out|weight_ih|weight_hh|bias_ih|bias_hh|hx|h_0|c_0|"
         r"running_mean|running_var|offsets|per_sample_weights|pos_weight|condition|"
         r"elements|test_elements|lengths|targets|input_lengths|target_lengths|"
         r"attn_mask|key_padding_mask|mask|values|memory|tgt|src_mask|tgt_mask|"
         r"memory_mask|is_causal_t|in_proj_weight|in_proj_bias|out_proj_weight|"
         r"out_proj_bias|grad|data|tensors_t|output|sequences|sequence|padded_input)$",
         lambda ctx: _w(ctx.rng, [(80, lambda r: tensor_expr(ctx)), (20, lambda r: any_value(ctx))])),
        (r"^(weight|bias)$",
         lambda ctx: _w(ctx.rng, [(70, lambda r: tensor_expr(ctx)), (15, "None"),
                                  (15, lambda r: any_value(ctx))])),
        (r"^(index|indices|idx|dims_t|argmax)$",
         lambda ctx: _w(ctx.rng, [(70, lambda r: index_tensor_expr(ctx)), (30, lambda r: any_value(ctx))])),
        (r"^(tensors|inputs|seq|params_list|xs)$",
         lambda ctx: _w(ctx.rng, [(80, lambda r: tensor_list(ctx)), (20, lambda r: any_value(ctx))])),
        (r"^(dim|dims|axis|axes|dim0|dim1|dim2|start_dim|end_dim|source|destination|"
         r"dimension|shifts|offset|axis0|axis1)$", lambda ctx: dim_value(ctx.rng)),
        (r"(size|shape|sizes|kernel_size|stride|padding|dilation|output_padding|"
         r"output_size|pad|split_size_or_sections|sections|indices_or_sections|repeats|"
         r"split_size|stride_t|storage_offset|normalized_shape|unflattened_size|"
         r"scale_factor|reps|lengths_list)$", lambda ctx: size_value(ctx.rng)),
        (r"^(dtype|out_dtype|default_dtype|type1|type2|from_|to)$",
         lambda ctx: _w(ctx.rng, [(75, lambda r: r.choice(DTYPES)), (25, lambda r: r.choice(BAD_DTYPES))])),
        (r"device", lambda ctx: ctx.rng.choice(DEVICES)),
        (r"^(keepdim|inplace|training|requires_grad|batch_first|bidirectional|"
         r"align_corners|ceil_mode|count_include_pad|return_indices|affine|track_running_stats|"
         r"sorted|largest|unbiased|descending|replacement|pin_memory|shuffle|drop_last|"
         r"non_blocking|copy|upper|elementwise_affine|log_input|full|amsgrad|nesterov|"
         r"maximize|centered|foreach|differentiable|capturable|fused|create_graph|"
         r"retain_graph|allow_unused|is_causal|need_weights|average_attn_weights|"
         r"add_bias_kv|add_zero_attn|norm_first|sparse|scale_grad_by_freq|include_last_offset|"
         r"swap|zero_infinity|log_target|right|equal_nan|enforce_sorted|cycle_momentum|"
         r"three_phase|verbose|antialias|recompute_scale_factor|strict|recurse|"
         r"include_self|unsafe|pin|weights_only|persistent|error_if_nonfinite|"
         r"keep_vars|assign|use_separate_proj_weight|accumulate|return_counts|"
         r"return_inverse|sci_mode|mmap|decoupled_weight_decay|check_undefined_grad|"
         r"strict_t|vectorize|batch_first_t|as_tuple|upper_t|count)$",
         lambda ctx: bool_value(ctx.rng)),
        (r"^(reduction|mode|padding_mode|nonlinearity|approximate|interpolation|"
         r"anneal_strategy|threshold_mode|scale_mode|profile|norm_type_s|activation|"
         r"rounding_mode|side|ord_s|indexing|memory_format|layout|fill_mode|"
         r"distribution|method)$", lambda ctx: ctx.rng.choice(MODES + STRINGS[:10])),
        (r"^(equation|subscripts)$", lambda ctx: ctx.rng.choice(EQUATIONS)),
        (r"^(num_workers)$", lambda ctx: ctx.rng.choice(NUM_WORKERS)),
        (r"generator", lambda ctx: ctx.rng.choice(["lucid.Generator()", "None", "3", "object()",
                                                   "lucid.default_generator"])),
        (r"^(num_\w+|in_\w+|out_\w+|hidden_size|input_size|proj_size|embed_dim|"
         r"num_heads|features|channels|groups|num_layers|d_model|nhead|dim_feedforward|"
         r"num_embeddings|embedding_dim|padding_idx|upscale_factor|downscale_factor|"
         r"kdim|vdim|n|m|k|steps|step_size|T_max|T_0|T_mult|total_iters|max_iter|"
         r"history_size|batch_size|num_samples|epochs|steps_per_epoch|total_steps|"
         r"warmup|warmup_steps|patience|cooldown|last_epoch|blank|ignore_index|"
         r"num_classes|output_size_i|size_average|low|high|end|start|step|"
         r"diagonal|sparsity|seed|nbins|bins|min_length|minlength|p_int|chunks|"
         r"split_size_i|length|max_norm_i|milestones|precision|threshold_i|edgeitems|"
         r"linewidth|rank|world_size|num_replicas|max_eval)$",
         lambda ctx: _w(ctx.rng, [(55, lambda r: str(r.choice(SMALL_INTS + [16, 10, 6]))),
                                  (30, lambda r: int_value(r)), (15, lambda r: any_value(ctx))])),
        (r"^(p|eps|alpha|beta|beta1|beta2|lr|momentum|weight_decay|negative_slope|lambd|"
         r"min|max|min_val|max_val|value|fill_value|threshold|margin|rtol|atol|scale|gamma|"
         r"base|exponent_f|max_norm|norm_type|std|mean|a_f|b_f|gain|delta|beta_f|lr_decay|"
         r"initial_accumulator_value|rho|etas|step_sizes|dampening|lambd_f|t0|tolerance_grad|"
         r"tolerance_change|max_lr|base_lr|eta_min|factor|start_factor|end_factor|"
         r"div_factor|final_div_factor|pct_start|min_lr|power|total|lower|upper_f|"
         r"init|weight_f|posinf|neginf|nan|clip_value|momentum_decay|beta3|betas|"
         r"label_smoothing|dropout|temperature|other_s|mean_f|var_f|tol|initial_lr|"
         r"lr_lambda_f|weights_f|val|softmax_scale|dropout_p|full_value|kappa|"
         r"lambd_s|value_s|rate|neg|multiplier|initial|a|b)$",
         lambda ctx: _w(ctx.rng, [(70, lambda r: scalar_value(r)), (15, lambda r: tensor_expr(ctx)),
                                  (10, lambda r: "(" + float_value(r) + ", " + float_value(r) + ")"),
                                  (5, lambda r: any_value(ctx))])),
        (r"^(closure|fn|func|hook|lr_lambda|transform|target_transform|collate_fn|"
         r"worker_init_fn|scale_fn|functions|lambd_fn|callable|f_call|"
         r"init_fn|parametrization|module_fn|lambda_fn|fn_t)$", lambda ctx: lambda_value(ctx)),
        (r"^(params|parameters)$", lambda ctx: params_expr(ctx)),
        (r"^(optimizer|optim)$", lambda ctx: _w(ctx.rng, [(85, lambda r: optimizer_expr(ctx)),
                                                          (15, lambda r: any_value(ctx))])),
        (r"^(module|mod|model|conv|bn|linear|modules|net)$",
         lambda ctx: ctx.rng.choice(["lucid.nn.Linear(3, 4)", "lucid.nn.Conv2d(3, 2, 3)",
                                     "lucid.nn.BatchNorm2d(2)", "lucid.nn.LSTM(3, 4)",
                                     "lucid.nn.BatchNorm1d(4)", "lucid.nn.Sequential()",
                                     "lucid.nn.Embedding(5, 3)", "None", "3",
                                     f"{tensor_expr(ctx)}", "lucid.nn.GRU(2, 3, 2)",
                                     "[lucid.nn.ReLU(), lucid.nn.Tanh()]"])),
        (r"^(f|path|file|filename|fp|root|filepath|buffer_path|name_path)$",
         lambda ctx: file_value(ctx)),
        (r"^(buffer|data_b|obj|array|ndarray|sequence_data|data_seq|object|pic_np|ext_tensor)$",
         lambda ctx: _w(ctx.rng, [(30, lambda r: misc_value(r)), (30, lambda r: tensor_expr(ctx)),
                                  (20, lambda r: np_value(r)), (20, lambda r: nested_list(r))])),
        (r"^(dataset|datasets)$", lambda ctx: dataset_expr(ctx)),
        (r"^(sampler|batch_sampler)$",
         lambda ctx: ctx.rng.choice(["lucid.utils.data.SequentialSampler(range(5))",
                                     "list(range(4))", "None", "3", "[[0, 1], [2, 9]]",
                                     "lucid.utils.data.RandomSampler(range(3))"])),
        (r"^(weights)$", lambda ctx: _w(ctx.rng, [(60, lambda r: tensor_expr(ctx)),
                                                  (40, lambda r: any_value(ctx))])),
        (r"^(state|new_state|state_dict)$",
         lambda ctx: _w(ctx.rng, [(40, lambda r: tensor_expr(ctx)), (20, "lucid.get_rng_state()"),
                                  (20, lambda r: f"corrupt_state({r.randrange(1 << 30)})"),
                                  (20, lambda r: any_value(ctx))])),
        (r"^(name|prefix|tensor_name|param_name|target_name|key_s)$",
         lambda ctx: ctx.rng.choice(["'weight'", "'bias'", "'w'", "''", "'a.b'", "'0'",
                                     "None", "3", "'running_mean'", "'_x'", "'\\x00'"])),
        (r"^(metadata|extra)$", lambda ctx: ctx.rng.choice(["None", "{'a': 'b'}", "{1: 2}",
                                                            "{'a': 1}", "'x'"])),
    ]


HINTS = None


def value_for(ctx, pname):
    global HINTS
    if HINTS is None:
        HINTS = [(re.compile(p), g) for p, g in _hints()]
    if ctx.rng.random() < 0.8:
        for pat, gen in HINTS:
            if pat.search(pname):
                return gen(ctx)
    return any_value(ctx)


def nested_list(rng):
    return rng.choice(["[1, 2, 3]", "[[1.0, 2.0], [3.0, 4.0]]", "[]", "[[]]", "[True, False]",
                       "[1, 2.5, True]", "[[1, 2], [3]]", "[1e308, -1e308, nan]", "[2**63, 1]",
                       "[2**64]", "[[[1]], [[2]]]", "[1+2j, 3]", "5", "3.5", "True",
                       "[-2**63]", "[[1, 2], [3, 'a']]", "(1, (2, 3))", "[range(3)]"])


def np_value(rng):
    return rng.choice(["np.arange(6, dtype=np.float32).reshape(2, 3).T",
                       "np.zeros((2, 0), dtype=np.int16)", "np.ones(3, dtype=np.uint16)",
                       "np.array(['a', 'b'])", "np.array([1, None], dtype=object)",
                       "np.arange(10)[::3]", "np.float64(2.5)", "np.array(3)",
                       "np.ones((2, 2), dtype=np.complex128)",
                       "np.lib.stride_tricks.as_strided(np.zeros(1), (4,), (0,))",
                       "np.ones(4, dtype='>f4')", "np.zeros((3,), dtype=np.uint64)"])


def any_value(ctx, tensors=True):
    rng = ctx.rng
    table = [(15, lambda r: int_value(r)), (8, lambda r: float_value(r)), (6, "None"),
             (4, lambda r: bool_value(r)), (8, lambda r: ints_seq(r)),
             (5, lambda r: string_value(r)), (4, lambda r: r.choice(DTYPES + BAD_DTYPES[:3])),
             (2, lambda r: r.choice(DEVICES)), (4, lambda r: misc_value(r)),
             (2, lambda r: nested_list(r))]
    if tensors:
        table += [(38, lambda r: tensor_expr(ctx)), (3, lambda r: tensor_list(ctx)),
                  (3, lambda r: index_tensor_expr(ctx))]
    return _w(rng, table)


POOL_KWARGS = ["dim", "keepdim", "dtype", "device", "out", "p", "inplace", "alpha", "bogus",
               "requires_grad", "size", "reduction", "generator", "weight", "bias", "eps",
               "value", "min", "max", "axis", "memory_format", "non_blocking", "copy"]


def gen_args(ctx, params, nmax=4):
    """(positional exprs, {name: expr}) for a callable with the given parameters."""
    rng = ctx.rng
    pos, kw = [], {}
    if params is None:
        n = _w(rng, [(10, 0), (30, 1), (30, 2), (20, 3), (10, 4)])
        pos = [any_value(ctx) for _ in range(n)]
        for _ in range(_w(rng, [(60, 0), (30, 1), (10, 2)])):
            kw[rng.choice(POOL_KWARGS)] = value_for(ctx, rng.choice(POOL_KWARGS))
        return pos, kw
    positional = [p for p in params if p[1] in ("pos", "pk")]
    varpos = [p for p in params if p[1] == "varpos"]
    kwonly = [p for p in params if p[1] == "kw"]
    has_varkw = any(p[1] == "varkw" for p in params)
    required = [p for p in positional if not p[2]]
    r = rng.random()
    if r < 0.7:
        npos = len(required) + (rng.randrange(0, len(positional) - len(required) + 1)
                                if len(positional) > len(required) and rng.random() < 0.4 else 0)
    else:
        npos = rng.randrange(0, nmax + 1)
    names = [p[0] for p in positional]
    for i in range(npos):
        if i < len(names):
            pos.append(value_for(ctx, names[i]))
        elif varpos:
            pos.append(value_for(ctx, varpos[0][0]))
        else:
            pos.append(any_value(ctx))
    if varpos and npos <= len(names) and rng.random() < 0.6:
        for _ in range(_w(rng, [(20, 1), (40, 2), (25, 3), (15, 4)])):
            pos.append(value_for(ctx, varpos[0][0]))
    # keyword arguments
    optional = [p for p in positional[len(pos):]] + kwonly
    for p in optional:
        if (not p[2] and p[1] == "kw" and rng.random() < 0.85) or rng.random() < 0.3:
            kw[p[0]] = value_for(ctx, p[0])
    if rng.random() < 0.05 or (has_varkw and rng.random() < 0.3):
        k = rng.choice(POOL_KWARGS)
        kw[k] = value_for(ctx, k)
    if rng.random() < 0.03 and names:
        # a keyword repeating a positional argument
        kw[names[0]] = value_for(ctx, names[0])
    return pos, kw


def call_text(fn_expr, pos, kw):
    parts = list(pos) + [f"{k}={v}" for k, v in kw.items()]
    return f"{fn_expr}({', '.join(parts)})"


def module_input_args(ctx):
    rng = ctx.rng
    n = _w(rng, [(10, 0), (60, 1), (20, 2), (10, 3)])
    ctx.shape = rand_shape(rng) if rng.random() < 0.5 else \
        tuple(rng.choice([1, 2, 3, 4, 5, 8]) for _ in range(rng.choice([2, 3, 4, 5])))
    return [tensor_expr(ctx) if rng.random() < 0.85 else any_value(ctx) for _ in range(n)]


def make_call(targets, seed, index, target=None):
    """The program for call `index` of a run with `seed`: a list of (stage, code).
    The target is the index-th of a seed-shuffled round robin over `targets`, or the
    one named `target` (the program then only depends on seed, index and target)."""
    rng = random.Random(f"{seed}:{index}")
    if target is not None:
        t = next(t for t in targets if t.name == target)
    else:
        order = list(range(len(targets)))
        random.Random(f"order:{seed}").shuffle(order)
        t = targets[order[index % len(targets)]]
    ctx = Ctx(rng)
    st = []
    lseed = rng.randrange(1 << 31)
    bw = rng.random() < 0.3
    if t.kind == "selftest":
        st.append(("call", SELF_TESTS[t.expr]))
    elif t.kind in ("func", "class"):
        pos, kw = gen_args(ctx, t.params)
        if t.name == "lucid.utils.data.DataLoader":
            # never a positive num_workers: that forks worker processes (see EXCLUDE notes)
            if "num_workers" in kw:
                kw["num_workers"] = rng.choice(NUM_WORKERS)
            if len(pos) > 5:
                pos[5] = rng.choice(NUM_WORKERS)
        st.append(("call", "_r = " + call_text(t.expr, pos, kw)))
        if t.kind == "class" and rng.random() < 0.5:
            pos2, kw2 = gen_args(ctx, None)
            st.append(("call2", "_r = _use_object(_r, " + ", ".join(pos2) + ")" if pos2
                       else "_r = _use_object(_r)"))
    elif t.kind in ("method",):
        self_e = tensor_expr(ctx)
        pos, kw = gen_args(ctx, t.params)
        if t.expr in ("__getitem__", "__setitem__", "__contains__") and rng.random() < 0.9:
            pos = [index_value(ctx)] + ([value_for(ctx, "value")] if t.expr == "__setitem__" else [])
            if t.expr == "__setitem__" and rng.random() < 0.5:
                pos[1] = tensor_expr(ctx)
        st.append(("build", f"S = {self_e}"))
        st.append(("call", "_r = " + call_text(f"S.{t.expr}", pos, kw)))
    elif t.kind == "getprop":
        st.append(("build", f"S = {tensor_expr(ctx)}"))
        st.append(("call", f"_r = S.{t.expr}"))
    elif t.kind == "setprop":
        st.append(("build", f"S = {tensor_expr(ctx)}"))
        v = value_for(ctx, t.expr) if rng.random() < 0.7 else any_value(ctx)
        st.append(("call", f"S.{t.expr} = {v}\n_r = S"))
    elif t.kind == "nnmod":
        pos, kw = gen_args(ctx, t.params)
        st.append(("call", "_m = " + call_text(t.expr, pos, kw)))
        if rng.random() < 0.3:
            st.append(("call2", f"_m = _m.to({rng.choice(DTYPES + DEVICES[:3])})"))
        ins = module_input_args(ctx)
        st.append(("call2", "_r = _m(" + ", ".join(ins) + ")"))
    elif t.kind == "modmeth":
        m = rng.choice(["lucid.nn.Linear(3, 4)", "lucid.nn.Conv2d(2, 3, 3)",
                        "lucid.nn.BatchNorm1d(4)", "lucid.nn.Sequential(lucid.nn.Linear(2, 2), lucid.nn.ReLU())",
                        "lucid.nn.LSTM(3, 4, 2)", "lucid.nn.Embedding(5, 2)", "lucid.nn.Module()",
                        "lucid.nn.MultiheadAttention(4, 2)", "lucid.nn.LayerNorm(4)"])
        st.append(("build", f"M = {m}"))
        pos, kw = gen_args(ctx, t.params)
        st.append(("call", "_r = " + call_text(f"M.{t.expr}", pos, kw)))
        if rng.random() < 0.5:
            st.append(("call2", f"_r = M({tensor_expr(ctx)})"))
    elif t.kind == "genmeth":
        st.append(("build", "G = lucid.Generator()"))
        pos, kw = gen_args(ctx, t.params)
        st.append(("call", "_r = " + call_text(f"G.{t.expr}", pos, kw)))
        st.append(("call2", f"_r = lucid.rand({rng.choice([1, 3, 100])}, generator=G)"))
    elif t.kind == "optim":
        pos, kw = gen_args(ctx, t.params)
        if pos and rng.random() < 0.8:
            pos[0] = params_expr(ctx)
        st.append(("call", "_o = " + call_text(t.expr, pos, kw)))
        gspecs = "[" + ", ".join(repr(rng.choice(["same", "same", "same", "shape", "dtype",
                                                   "none", "nan"])) for _ in range(3)) + "]"
        st.append(("call2", f"_set_grads(_o, {gspecs}, {rng.randrange(1 << 30)})"))
        closure = rng.choice(["", "", "lambda: _loss(_o)", "lambda: None", "lambda: 3.0",
                              "lambda: 1 / 0", "3"])
        st.append(("call2", f"_r = _o.step({closure})"))
        st.append(("call2", f"_r = _o.step({closure})"))
        if rng.random() < 0.5:
            st.append(("call2", "_o.zero_grad(); _o.load_state_dict(_o.state_dict())"))
    elif t.kind == "sched":
        pos, kw = gen_args(ctx, t.params)
        if rng.random() < 0.85:
            if pos:
                pos[0] = optimizer_expr(ctx)
            else:
                kw["optimizer"] = optimizer_expr(ctx)
        st.append(("call", "_s = " + call_text(t.expr, pos, kw)))
        for _ in range(rng.choice([1, 3, 5])):
            a = rng.choice(["", "", "", int_value(rng), float_value(rng), "None",
                            tensor_expr(ctx)])
            st.append(("call2", f"_s.optimizer.step() if hasattr(_s, 'optimizer') else None; _s.step({a})"))
        st.append(("call2", "_r = _s.get_last_lr() if hasattr(_s, 'get_last_lr') else None; "
                            "_s.load_state_dict(_s.state_dict())"))
    if bw:
        st.append(("backward", "_backward(_r)"))
    return t, [("seed", f"lucid.manual_seed({lseed})")] + st


def program_text(stages):
    lines = []
    for stage, code in stages:
        lines.append(f"# {stage}")
        lines.append(code)
    lines.append("# touch\n_touch(_r)")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# Worker side: helpers available to the programs, execution and classification.
# --------------------------------------------------------------------------------------

BAD_MSG = re.compile(r"std::|bad_alloc|unknown exception|vector::|basic_string|_M_[a-z]|"
                     r"bad_array_new_length|Caught an unknown|terminate called|"
                     r"\bstoll?\b|\bstoi\b|nanobind::|nb::|__cxa|what\(\):")
INTERNAL = ("NameError", "UnboundLocalError", "RecursionError", "SystemError")


def _worker_namespace():
    import lucid
    try:
        import numpy as np
    except ImportError:      # numpy is used only for np_value arguments
        np = None
    base = {"lucid": lucid, "nan": float("nan"), "inf": float("inf"), "io": io, "np": np}

    def mk(shape, dtype, values, view, seed, rg=False):
        """A tensor of `shape` and `dtype` with values of kind `values`, laid out as
        `view` (None: contiguous; t: permuted; step: strided slice; expand: stride 0;
        offset: nonzero storage offset; param: an nn.Parameter)."""
        r = random.Random(seed)
        dt = getattr(lucid, dtype)
        shape = tuple(shape)
        if view == "t" and len(shape) >= 2:
            base_shape = shape[::-1]
        elif view == "step" and len(shape) >= 1:
            base_shape = shape[:-1] + (shape[-1] * 2,)
        elif view == "expand" and len(shape) >= 1:
            k = max(range(len(shape)), key=lambda i: shape[i])
            base_shape = shape[:k] + (1,) + shape[k + 1:]
        elif view == "offset":
            base_shape = (math.prod(shape) + 3,)
        else:
            base_shape = shape
        n = math.prod(base_shape)
        if n > 20000:
            if values in ("int", "idx", "bool", "big", "neg"):
                t = lucid.randint(-5 if values == "int" else 0, 5, base_shape,
                                  generator=lucid.Generator().manual_seed(seed))
            else:
                t = lucid.randn(base_shape, generator=lucid.Generator().manual_seed(seed))
            t = t.to(dt)
        else:
            if values == "randn":
                vals = [r.gauss(0, 2) for _ in range(n)]
            elif values == "int":
                vals = [r.randint(-5, 10) for _ in range(n)]
            elif values == "idx":
                vals = [r.randint(0, 3) for _ in range(n)]
            elif values == "nan":
                vals = [r.choice([math.nan, math.inf, -math.inf, 0.0, 1.5, -2.0]) for _ in range(n)]
            elif values == "big":
                vals = [r.choice([2**62, -2**63, 2**31, 1e38 if dtype.startswith(("f", "b", "c")) else 2**40,
                                  -(2**40), 65504]) for _ in range(n)]
            elif values == "zero":
                vals = [0] * n
            elif values == "pos":
                vals = [r.uniform(0.01, 3.0) for _ in range(n)]
            elif values == "bool":
                vals = [r.random() < 0.5 for _ in range(n)]
            elif values == "neg":
                vals = [-r.randint(1, 100) for _ in range(n)]
            else:   # tiny
                vals = [r.choice([5e-324, 1e-45, -1e-300, 1e-8]) for _ in range(n)]
            if dtype == "bool":
                vals = [bool(v) if v == v else True for v in vals]
                t = lucid.tensor(vals, dtype=lucid.bool)
            elif dtype in ("float32", "float64", "float16", "bfloat16", "complex64"):
                if dtype == "complex64":
                    vals = [complex(float(v), r.choice([0.0, 1.0, -0.5])) for v in vals]
                    t = lucid.tensor(vals, dtype=lucid.complex64)
                else:
                    t = lucid.tensor([float(v) for v in vals], dtype=lucid.float64).to(dt)
            else:
                ints = [int(v) if v == v and abs(v) != math.inf else 0 for v in vals]
                ints = [max(min(v, 2**63 - 1), -2**63) for v in ints]
                t = lucid.tensor(ints, dtype=lucid.int64).to(dt)
            t = t.reshape(base_shape)
        if view == "t" and len(shape) >= 2:
            t = t.permute(*range(len(shape) - 1, -1, -1))
        elif view == "step" and len(shape) >= 1:
            t = t[..., ::2]
        elif view == "expand" and len(shape) >= 1:
            t = t.expand(*shape)
        elif view == "offset":
            t = t[3:].view(*shape) if shape else t[3:].view(())
        if view == "param" and t.is_floating_point():
            t = lucid.nn.Parameter(t)
        elif rg:
            t.requires_grad_(True)
        assert tuple(t.shape) == shape, (t.shape, shape)
        return t

    def corrupt_blob(seed, kind):
        r = random.Random(seed)
        buf = io.BytesIO()
        x = lucid.arange(r.choice([0, 1, 6, 64]), dtype=getattr(lucid, r.choice(DTYPE_NAMES[1:])))
        if kind == "save":
            lucid.save({"w": x, "n": 3} if r.random() < 0.5 else x, buf)
        else:
            lucid.save_safetensors({"w": x.reshape(-1)}, buf)
        data = bytearray(buf.getvalue())
        how = r.choice(["trunc", "flip", "flip", "header", "ok"])
        if how == "trunc" and data:
            data = data[:r.randrange(len(data))]
        elif how == "flip" and data:
            for _ in range(r.randint(1, 8)):
                i = r.randrange(len(data))
                data[i] = r.randrange(256)
        elif how == "header" and len(data) >= 8:
            import struct
            data[0:8] = struct.pack("<Q", r.choice([0, 2**63, 2**64 - 1, len(data) * 4, 1]))
        return io.BytesIO(bytes(data))

    def corrupt_path(seed):
        b = corrupt_blob(seed, random.Random(seed).choice(["save", "safetensors"]))
        name = f"blob_{seed}.bin"
        with open(name, "wb") as f:
            f.write(b.getvalue())
        return name

    def corrupt_state(seed):
        r = random.Random(seed)
        s = lucid.get_rng_state()
        how = r.choice(["trunc", "flip", "dtype", "empty", "long"])
        if how == "trunc":
            return s[:r.randrange(max(1, s.numel()))]
        if how == "flip":
            s = s.clone()
            for _ in range(4):
                s[r.randrange(s.numel())] = r.randrange(256)
            return s
        if how == "dtype":
            return s.to(lucid.float32)
        if how == "empty":
            return lucid.zeros(0, dtype=lucid.uint8)
        return lucid.cat([s, s])

    def _set_grads(opt, specs, seed):
        r = random.Random(seed)
        i = 0
        for g in opt.param_groups:
            for p in g["params"]:
                spec = specs[i % len(specs)]
                i += 1
                try:
                    if spec == "none":
                        p.grad = None
                    elif spec == "same":
                        p.grad = lucid.randn(tuple(p.shape)).to(p.dtype)
                    elif spec == "nan":
                        p.grad = lucid.full(tuple(p.shape), float("nan")).to(p.dtype)
                    elif spec == "shape":
                        p.grad = lucid.randn(r.choice([(), (1,), (3, 7)])).to(p.dtype)
                    elif spec == "dtype":
                        p.grad = lucid.randn(tuple(p.shape)).to(
                            getattr(lucid, r.choice(DTYPE_NAMES)))
                except Exception as e:   # a refused grad is fine; check its message
                    _note_exc(e, "setgrad")

    def _loss(opt):
        tot = None
        for g in opt.param_groups:
            for p in g["params"]:
                v = (p.float() * p.float()).sum() if p.is_floating_point() else lucid.tensor(0.0)
                tot = v if tot is None else tot + v
        if tot is not None and tot.requires_grad:
            tot.backward()
        return tot

    def _use_object(obj, *args):
        """Uses a constructed lucid object: context managers are entered and left,
        callables called, iterables iterated (a bounded number of items)."""
        if hasattr(obj, "__enter__") and hasattr(obj, "__exit__"):
            with obj:
                pass
        if callable(obj) and not isinstance(obj, type):
            return obj(*args)
        return obj

    def _backward(r):
        ts = r if isinstance(r, (tuple, list)) else [r]
        for t in ts[:2]:
            if isinstance(t, lucid.Tensor) and t.requires_grad and t.numel() <= 100000:
                if t.is_complex():
                    t = t.abs()
                t.sum().backward()

    def _touch(r, depth=0):
        """Reads a result: the first and last elements, tolist for small tensors, repr;
        containers and iterators a few items deep."""
        if depth > 3:
            return
        if isinstance(r, lucid.Tensor):
            n = r.numel()
            if n > 0:
                r[(0,) * r.ndim].item()
                r[(-1,) * r.ndim].item()
            if n <= 50000:
                r.tolist()
            if n <= 500:
                repr(r)
            return
        if isinstance(r, (str, bytes, bytearray, int, float, complex, type, types.ModuleType)):
            return
        if isinstance(r, (tuple, list)):
            for x in r[:6]:
                _touch(x, depth + 1)
            return
        if isinstance(r, dict):
            for x in list(r.values())[:6]:
                _touch(x, depth + 1)
            return
        if hasattr(r, "__len__"):
            try:
                len(r)
            except Exception as e:
                _note_exc(e, "touch")
        if isinstance(r, (types.GeneratorType, itertools.islice)) or hasattr(r, "__next__") or (
                hasattr(r, "__iter__") and type(r).__module__.startswith("lucid")):
            for x in itertools.islice(iter(r), 3):
                _touch(x, depth + 1)

    ns = dict(base, mk=mk, corrupt_blob=corrupt_blob, corrupt_path=corrupt_path,
              corrupt_state=corrupt_state, _set_grads=_set_grads, _loss=_loss,
              _use_object=_use_object, _backward=_backward, _touch=_touch)
    return ns


_NOTES = []
PROTO_IN_FD, PROTO_OUT_FD = 987, 988


def _note_exc(e, stage):
    _NOTES.append((stage, type(e).__name__, str(e)[:300]))


def classify_exc(e):
    """(category, type name, message)."""
    name = type(e).__name__
    msg = str(e)[:400]
    if isinstance(e, SystemError):
        return "bug", name, msg
    if not isinstance(e, Exception):
        return "bug", name, msg
    return "raised", name, msg


class _Reset:
    """Restores the process-wide state a call may change."""

    def __init__(self):
        import lucid
        self.lucid = lucid
        self.threads = lucid.get_num_threads()
        self.dtype = lucid.get_default_dtype()
        self.cwd = os.getcwd()
        self.print_opts = dict(lucid._C.get_print_options())

    def __call__(self):
        lucid = self.lucid
        if lucid.get_num_threads() != self.threads:
            lucid.set_num_threads(self.threads)
        if lucid.get_default_dtype() != self.dtype:
            lucid.set_default_dtype(self.dtype)
        if not lucid.is_grad_enabled():
            lucid.set_grad_enabled(True)
        if lucid.is_inference_mode_enabled():
            lucid._C._set_inference_mode(False)
        if dict(lucid._C.get_print_options()) != self.print_opts:
            lucid.set_printoptions(profile="default")
        if os.getcwd() != self.cwd:
            os.chdir(self.cwd)


def run_program(stages, ns_base, reset):
    """Runs one call's stages; returns the outcome record (a dict)."""
    ns = dict(ns_base)
    ns["_r"] = None
    del _NOTES[:]
    out = {"o": "returned", "stage": None, "exc": None, "msg": None, "notes": [],
           "aux": []}
    try:
        for stage, code in stages + [("touch", "_touch(_r)")]:
            try:
                exec(compile(code, f"<{stage}>", "exec"), ns)
            except BaseException as e:   # noqa: B036 - classified below
                cat, name, msg = classify_exc(e)
                if stage in ("touch", "backward", "build", "seed"):
                    out["aux"].append((stage, cat, name, msg))
                    if cat == "bug":
                        out.update(o="bug", stage=stage, exc=name, msg=msg)
                    if stage in ("build", "seed"):
                        if cat != "bug":
                            out.update(o="builderr", stage=stage, exc=name, msg=msg)
                        break
                    continue
                out.update(o=cat, stage=stage, exc=name, msg=msg)
                break
    finally:
        ns.clear()
        reset()
    out["notes"] = list(_NOTES)
    return out


def worker_main(args):
    import resource
    import warnings
    limit = int(args.mem_limit_gb * (1 << 30))
    if limit > 0:    # 0: no limit (e.g. under AddressSanitizer, which maps terabytes)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    warnings.simplefilter("ignore")
    import faulthandler
    faulthandler.enable(file=sys.stderr, all_threads=False)
    faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    # The protocol runs on a private copy of stdout; fd 1 goes to stderr so that
    # anything the library prints cannot corrupt it.
    # High descriptor numbers: a call given a small int as a "file" (open(3) opens fd 3)
    # must not close or read the protocol pipes. stdin becomes /dev/null.
    os.dup2(1, PROTO_OUT_FD)
    os.dup2(0, PROTO_IN_FD)
    proto = os.fdopen(PROTO_OUT_FD, "w", buffering=1)
    requests = os.fdopen(PROTO_IN_FD, "r")
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = sys.stderr
    sys.stdin = None
    os.chdir(args.workdir or tempfile.mkdtemp(prefix="lucid_fuzz_"))
    ns = _worker_namespace()
    reset = _Reset()
    proto.write("ready\n")
    for line in requests:
        req = json.loads(line)
        out = run_program([tuple(s) for s in req["stages"]], ns, reset)
        proto.write(json.dumps(out) + "\n")


# --------------------------------------------------------------------------------------
# Parent: scheduling, timeouts, summary.
# --------------------------------------------------------------------------------------

class Worker:
    def __init__(self, args):
        self.args = args
        self.errfile = tempfile.TemporaryFile()
        env = dict(os.environ)
        env.setdefault("PYTHONPATH", os.path.join(os.path.dirname(HERE), "python"))
        env["MALLOC_PERTURB_"] = env.get("MALLOC_PERTURB_", "165")
        env["PYTHONFAULTHANDLER"] = "1"
        for kv in args.worker_env or []:
            k, _, v = kv.partition("=")
            env[k] = v
        # the worker's current directory, where calls given a relative path write
        self.workdir = tempfile.mkdtemp(prefix="lucid_fuzz_")
        cmd = [sys.executable, os.path.abspath(__file__), "--worker",
               "--mem-limit-gb", str(args.mem_limit_gb), "--workdir", self.workdir]
        # Its own session, so that the worker and anything it forked are killed together.
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.errfile, env=env, bufsize=0,
                                  start_new_session=True)
        self.buf = b""
        self.history = []
        line = self._readline(60)
        if line != "ready":
            err = self.stderr_tail(0)
            self.kill()
            raise RuntimeError(f"worker did not start: {line!r}\n{err}")

    def _readline(self, timeout):
        deadline = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return ""     # EOF: the worker died
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def stderr_tail(self, start, n=12000):
        self.errfile.flush()
        self.errfile.seek(start)
        data = self.errfile.read()
        return data[-n:].decode(errors="replace")

    def errpos(self):
        return os.fstat(self.errfile.fileno()).st_size

    def call(self, stages, timeout, index):
        self.history.append(index)
        start = self.errpos()
        self.p.stdin.write((json.dumps({"stages": stages}) + "\n").encode())
        line = self._readline(timeout)
        if line:
            return json.loads(line), None
        if line is None:   # hang: ask for a traceback, then kill
            try:
                self.p.send_signal(signal.SIGUSR1)
                time.sleep(0.5)
            except ProcessLookupError:
                pass
            self.kill()
            return None, {"kind": "hang", "stderr": self.stderr_tail(start)}
        rc = self.p.wait()
        self.reap_group()
        self.cleanup()
        sig = -rc if rc < 0 else None
        return None, {"kind": "crash", "rc": rc,
                      "signal": signal.Signals(sig).name if sig else None,
                      "stderr": self.stderr_tail(start)}

    def rss_mb(self):
        try:
            with open(f"/proc/{self.p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0

    def kill(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.p.wait()
        self.cleanup()

    def cleanup(self):
        import shutil
        shutil.rmtree(self.workdir, ignore_errors=True)

    def reap_group(self):
        """Kills what the worker left behind in its process group (a crash can leave
        forked children)."""
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def snapshot_lucid(dest_root):
    """Copies the lucid package (the extension's symlink resolved) to dest_root, so that a
    long run keeps testing one build while the checkout is rebuilt under it (a relinked
    .so truncated under a running worker faults it: a false crash). Retries while the
    extension is being written."""
    import importlib.util
    import shutil
    spec = importlib.util.find_spec("lucid")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("lucid is not importable (set PYTHONPATH=python)")
    src = list(spec.submodule_search_locations)[0]
    dest = os.path.join(dest_root, "lucid")
    for k in range(30):
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(src, dest, symlinks=False,
                        ignore=shutil.ignore_patterns("__pycache__"))
        ok = subprocess.run([sys.executable, "-c", "import lucid; lucid.zeros(1)"],
                            cwd=dest_root, env=dict(os.environ, PYTHONPATH=dest_root),
                            capture_output=True).returncode == 0
        if ok:
            return dest_root
        print(".. lucid snapshot does not import (a rebuild in progress?), retrying in 10s",
              file=sys.stderr)
        time.sleep(10)
    raise RuntimeError("could not snapshot an importable lucid")


def use_snapshot(args):
    if args.no_snapshot or "lucid" in sys.modules:
        return
    root = tempfile.mkdtemp(prefix="lucid_fuzz_pkg_")
    snapshot_lucid(root)
    sys.path.insert(0, root)
    os.environ["PYTHONPATH"] = root + os.pathsep + os.environ.get("PYTHONPATH", "")
    import atexit
    import shutil
    atexit.register(shutil.rmtree, root, True)


def start_worker(args, tries=30):
    """A fresh worker; retried for a while, because the extension may be being rebuilt
    (a half-written .so fails to import)."""
    for k in range(tries):
        try:
            return Worker(args)
        except RuntimeError as e:
            if k == tries - 1:
                raise
            print(f".. worker failed to start, retrying in 10s: {str(e)[-300:]}", file=sys.stderr)
            time.sleep(10)


def filter_targets(targets, only):
    if not only:
        return targets
    pat = re.compile(only)
    return [t for t in targets if pat.search(t.name)]


def run_fuzz(args):
    targets = filter_targets(build_targets(args.self_test), args.only)
    if not targets:
        print("no targets match", file=sys.stderr)
        return 2
    kinds = collections.Counter(t.kind for t in targets)
    stats = collections.Counter()
    raised = collections.Counter()
    aux = collections.Counter()
    per_target = collections.defaultdict(collections.Counter)
    failures, bad_msgs, internal = [], {}, {}
    worker = None
    t0 = time.monotonic()
    last_report = t0
    i = args.start
    end = args.start + args.calls if args.calls else None
    try:
        while True:
            if end is not None and i >= end:
                break
            if args.time_budget and time.monotonic() - t0 > args.time_budget:
                break
            if worker is None:
                worker = start_worker(args)
            elif stats["calls"] % 200 == 0 and worker.rss_mb() > args.max_rss_mb:
                stats["rss_restarts"] += 1     # a slow leak, or a big cache: start afresh
                worker.close()
                worker = start_worker(args)
            t, stages = make_call(targets, args.seed, i)
            res, fail = worker.call(stages, args.timeout, f"{args.seed}:{i}:{t.name}")
            stats["calls"] += 1
            per_target[t.name]["calls"] += 1
            if fail is not None:
                hist = worker.history[-20:]
                worker = None if fail["kind"] == "crash" else (worker.kill() or None)
                stats[fail["kind"]] += 1
                per_target[t.name][fail["kind"]] += 1
                rec = dict(fail, target=t.name, replay=f"{args.seed}:{i}:{t.name}",
                           program=program_text(stages), history=hist)
                failures.append(rec)
                print(f"!! {fail['kind'].upper()} {t.name} (replay {args.seed}:{i}:{t.name}) "
                      f"{fail.get('signal') or fail.get('rc') or ''}", file=sys.stderr)
                if args.stop_on_failure:
                    break
            else:
                o = res["o"]
                stats[o] += 1
                per_target[t.name][o] += 1
                if o == "raised":
                    raised[res["exc"]] += 1
                elif o == "bug":
                    rec = dict(kind="bug", target=t.name, replay=f"{args.seed}:{i}:{t.name}",
                               program=program_text(stages), exc=res["exc"], msg=res["msg"],
                               stage=res["stage"])
                    failures.append(rec)
                    print(f"!! BUG {res['exc']} in {t.name} (replay {args.seed}:{i}:{t.name}): "
                          f"{res['msg'][:200]}", file=sys.stderr)
                for st, cat, name, msg in res["aux"]:
                    aux[f"{st}:{name}"] += 1
                msgs = [(res["stage"], res["exc"], res["msg"])] if res["exc"] else []
                msgs += [(a[0], a[2], a[3]) for a in res["aux"]] + [tuple(n) for n in res["notes"]]
                for st, name, msg in msgs:
                    if msg and BAD_MSG.search(msg):
                        key = (t.name, name, re.sub(r"\d+", "N", msg)[:120])
                        bad_msgs.setdefault(key, dict(target=t.name, exc=name, msg=msg,
                                                      replay=f"{args.seed}:{i}:{t.name}", stage=st,
                                                      count=0))["count"] += 1
                    if name in INTERNAL:
                        key = (t.name, name, re.sub(r"\d+", "N", msg or "")[:120])
                        internal.setdefault(key, dict(target=t.name, exc=name, msg=msg,
                                                      replay=f"{args.seed}:{i}:{t.name}", stage=st,
                                                      count=0))["count"] += 1
            i += 1
            now = time.monotonic()
            if args.progress and now - last_report > args.progress:
                last_report = now
                print(f".. {stats['calls']} calls, {now - t0:.0f}s, returned {stats['returned']},"
                      f" raised {stats['raised']}, crash {stats['crash']}, hang {stats['hang']},"
                      f" bug {stats['bug']}", file=sys.stderr)
    finally:
        if worker is not None:
            worker.close()
    elapsed = time.monotonic() - t0
    covered = sum(1 for t in targets if per_target[t.name]["calls"])
    summary = {
        "seed": args.seed, "targets": len(targets), "targets_by_kind": dict(kinds),
        "targets_covered": covered, "calls": stats["calls"], "seconds": round(elapsed, 1),
        "returned": stats["returned"], "raised": stats["raised"],
        "raised_by_type": dict(raised.most_common()),
        "arg_build_errors": stats["builderr"],
        "crashes": stats["crash"], "hangs": stats["hang"], "bugs": stats["bug"],
        "worker_restarts_for_memory": stats["rss_restarts"],
        "aux_exceptions": dict(aux.most_common()),
        "bad_messages": list(bad_msgs.values()), "internal_errors": list(internal.values()),
        "failures": failures,
        "never_returned": sorted(t.name for t in targets
                                 if per_target[t.name]["calls"] and not per_target[t.name]["returned"]),
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    print_summary(summary, args.verbose)
    return 1 if (stats["crash"] or stats["hang"] or stats["bug"]) else 0


def print_summary(s, verbose=False):
    p = print
    p(f"== lucid API fuzz: seed {s['seed']}, {s['calls']} calls in {s['seconds']}s "
      f"({s['calls'] / max(s['seconds'], 1e-9):.0f}/s)")
    p(f"targets: {s['targets']} ({', '.join(f'{k} {v}' for k, v in sorted(s['targets_by_kind'].items()))}),"
      f" covered {s['targets_covered']}")
    p(f"returned {s['returned']}, raised {s['raised']}, crashes {s['crashes']}, hangs "
      f"{s['hangs']}, bugs (SystemError/BaseException) {s['bugs']}, "
      f"bad messages {sum(b['count'] for b in s['bad_messages'])} "
      f"({len(s['bad_messages'])} distinct), arg-build errors {s['arg_build_errors']}")
    p("raised by type: " + ", ".join(f"{k} {v}" for k, v in s["raised_by_type"].items()))
    if verbose and s["aux_exceptions"]:
        p("after-call stages (touch/backward) raised: " +
          ", ".join(f"{k} {v}" for k, v in s["aux_exceptions"].items()))
    groups = collections.Counter((f["kind"], f["target"]) for f in s["failures"])
    shown = collections.Counter()
    if groups:
        p("failures by target: " + ", ".join(f"{k} {t} x{n}" for (k, t), n in groups.items()))
    for f in s["failures"]:
        key = (f["kind"], f["target"])
        shown[key] += 1
        if shown[key] > 2 and not verbose:
            continue
        p(f"\n-- {f['kind'].upper()} in {f['target']}  (--replay {f['replay']})"
          + (f" signal {f.get('signal')}" if f.get("signal") else "")
          + (f" rc {f.get('rc')}" if f.get("rc") is not None and not f.get("signal") else "")
          + (f" {f.get('exc')}: {f.get('msg')}" if f.get("exc") else ""))
        p(f["program"])
        if f.get("stderr"):
            lines = f["stderr"].strip().splitlines()
            key = [ln for ln in lines if re.search(r"ERROR: \w+Sanitizer|runtime error:|"
                                                   r"SUMMARY:|Fatal Python error|terminate", ln)]
            if key:
                p("stderr key lines:\n" + "\n".join(key[:8]))
            p("stderr tail:\n" + "\n".join(lines[-25:]))
    for b in s["bad_messages"]:
        p(f"\n-- BAD MESSAGE in {b['target']} ({b['stage']}, x{b['count']}, --replay "
          f"{b['replay']}): {b['exc']}: {b['msg'][:300]}")
    if s["internal_errors"]:
        p("\ninternal-looking errors (not failures):")
        for b in s["internal_errors"][:40]:
            p(f"  {b['target']} ({b['stage']}, x{b['count']}, --replay {b['replay']}): "
              f"{b['exc']}: {(b['msg'] or '')[:200]}")


def replay(args):
    """--replay SEED:INDEX[:TARGET][,SEED:INDEX[:TARGET]...]: the calls run one after the
    other in one fresh worker (a crash that needs earlier calls: pass the failure's
    history, then the failing call)."""
    all_targets = build_targets(args.self_test)
    items = args.replay.split(",")
    if len(items) > 1:
        w = start_worker(args)
        for k, item in enumerate(items):
            seed, index, *target = item.strip().split(":", 2)
            targets = all_targets if target else filter_targets(all_targets, args.only)
            t, stages = make_call(targets, seed, int(index), target[0] if target else None)
            res, fail = w.call(stages, args.timeout, item)
            if fail:
                print(f"# [{k}] {item}: {fail['kind']} rc={fail.get('rc')} signal={fail.get('signal')}")
                print(program_text(stages))
                print(fail["stderr"][-6000:])
                return 1
            print(f"# [{k}] {item}: {res['o']} {res['exc'] or ''} {(res['msg'] or '')[:100]}")
        w.close()
        return 0
    seed, index, *target = args.replay.split(":", 2)
    targets = all_targets if target else filter_targets(all_targets, args.only)
    t, stages = make_call(targets, seed, int(index), target[0] if target else None)
    print(f"# target: {t.name}  (replay {args.replay})")
    print(program_text(stages))
    if args.inline:
        ns = _worker_namespace()
        for stage, code in stages + [("touch", "_touch(_r)")]:
            print(f"# running {stage}", flush=True)
            exec(compile(code, f"<{stage}>", "exec"), ns)
        print("# returned")
        return 0
    w = start_worker(args)
    res, fail = w.call(stages, args.timeout, args.replay)
    if fail:
        print(f"# => {fail['kind']} rc={fail.get('rc')} signal={fail.get('signal')}")
        print(fail["stderr"][-3000:])
        return 1
    w.close()
    print(f"# => {res['o']} at {res['stage']}: {res['exc']}: {res['msg']}")
    for a in res["aux"]:
        print(f"#    {a[0]}: {a[2]}: {a[3][:200]}")
    return 1 if res["o"] == "bug" else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=0, help="number of calls (0: until the time budget)")
    ap.add_argument("--seed", default="0")
    ap.add_argument("--start", type=int, default=0, help="first call index")
    ap.add_argument("--time-budget", type=float, default=0, help="seconds (0: no limit)")
    ap.add_argument("--timeout", type=float, default=10, help="per-call timeout in seconds")
    ap.add_argument("--mem-limit-gb", type=float, default=6, help="worker RLIMIT_AS")
    ap.add_argument("--worker-env", action="append", metavar="KEY=VALUE",
                    help="environment for the worker (e.g. PYTHONPATH of an instrumented "
                         "build, LD_PRELOAD, ASAN_OPTIONS); repeatable")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="import lucid in place (default: from a private copy of the package)")
    ap.add_argument("--max-rss-mb", type=float, default=3000,
                    help="restart the worker when its resident memory passes this")
    ap.add_argument("--only", default=None, help="regex on target names")
    ap.add_argument("--replay", default=None, metavar="SEED:INDEX[:TARGET]",
                    help="rerun one call (give TARGET when the target list may have changed)")
    ap.add_argument("--inline", action="store_true", help="with --replay: run in this process")
    ap.add_argument("--self-test", action="store_true",
                    help="add selftest.* targets that abort, segfault, hang, ...")
    ap.add_argument("--list-targets", action="store_true")
    ap.add_argument("--json", default=None, help="write the summary as JSON here")
    ap.add_argument("--progress", type=float, default=30, help="progress line every N s (0: off)")
    ap.add_argument("--stop-on-failure", action="store_true")
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker_main(args)
    use_snapshot(args)
    if args.replay:
        return replay(args)
    if args.list_targets:
        for t in filter_targets(build_targets(args.self_test), args.only):
            print(f"{t.kind:9s} {t.name}  {t.params}")
        return 0
    if not args.calls and not args.time_budget:
        args.calls = 2000
    return run_fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
