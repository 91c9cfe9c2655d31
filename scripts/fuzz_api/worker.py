"""What runs inside the worker process: the helpers the programs call (mk,
corrupt_blob, _touch, ...), the execution of one program and the classification of
what it raised, and the request loop on the protocol pipes."""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import random
import re
import signal
import sys
import tempfile
import types

from .values import DTYPE_NAMES

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
