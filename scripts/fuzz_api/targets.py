"""What the fuzzer calls: every public function, Tensor method/operator/property, nn
Module, Module/Generator method, optimizer and LR scheduler of lucid, each a Target with
its parameters (from inspect.signature, or parsed from a nanobind signature)."""

from __future__ import annotations

import inspect
import re
import types


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


def filter_targets(targets, only):
    if not only:
        return targets
    pat = re.compile(only)
    return [t for t in targets if pat.search(t.name)]
