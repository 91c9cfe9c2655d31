"""save_compiled / load_compiled: a compiled module or function in a file, with the
signatures it has traced, so that a new process calls it without tracing them again.

The file is written by lucid.save: {"format": "lucid.compiled", "version", "kind",
"target" (the model, pickled with its parameters, or a module-level function, pickled
by name), "dynamic", "fullgraph", "signatures"}. The generated kernels the traces
compiled are in the kernel cache on disk ($LUCID_CACHE_DIR/kernels, Note [Generated
kernels]), which the new process reads instead of compiling them again. load_compiled
unpickles the model, which runs code the file names: load only files you trust (as
torch.load(weights_only=False))."""

from ._function import CompiledFunction, CompiledModule

_FORMAT = "lucid.compiled"
_VERSION = 1


def save_compiled(cm, path):
    """Writes `cm` (a CompiledModule, or a CompiledFunction of a module-level function)
    to `path`."""
    from .. import save

    if isinstance(cm, CompiledModule):
        kind, target, compiled = "module", cm._orig_mod, cm._compiled
    elif isinstance(cm, CompiledFunction):
        kind, target, compiled = "function", cm._fn, cm
        if getattr(target, "__qualname__", "").count("<locals>") or getattr(target, "__name__", "") == "<lambda>":
            raise ValueError(f"save_compiled: {target.__qualname__} is a lambda or a nested function, which a new "
                             "process cannot import; compile a module-level function or an nn.Module")
    else:
        raise TypeError(f"save_compiled: expected a CompiledModule or a CompiledFunction (from lucid.compile), got "
                        f"{type(cm).__name__}")
    record = {"format": _FORMAT, "version": _VERSION, "kind": kind, "target": target,
              "dynamic": compiled._dynamic, "fullgraph": compiled._fullgraph,
              "signatures": [(key, info["breaks"]) for key, info in compiled._signatures.items()]}
    save(record, path)


def load_compiled(path):
    """The CompiledModule or CompiledFunction save_compiled wrote to `path`, its traced
    signatures known (their calls do not trace again)."""
    from .. import load

    record = load(path, weights_only=False)
    if not isinstance(record, dict) or record.get("format") != _FORMAT:
        raise ValueError(f"load_compiled: {path!r} is not a file written by lucid.compile.save_compiled")
    if record.get("version") != _VERSION:
        raise ValueError(f"load_compiled: {path!r} has format version {record.get('version')!r}; this lucid reads "
                         f"version {_VERSION}")
    kind, target = record.get("kind"), record.get("target")
    if kind == "module":
        cm = CompiledModule(target, dynamic=record["dynamic"], fullgraph=record["fullgraph"])
        compiled = cm._compiled
    elif kind == "function" and callable(target):
        cm = compiled = CompiledFunction(target, dynamic=record["dynamic"], fullgraph=record["fullgraph"])
    else:
        raise ValueError(f"load_compiled: {path!r} holds an unknown kind of compiled object {kind!r}")
    for key, breaks in record["signatures"]:
        compiled._signatures[_as_key(key)] = {"calls": 0, "breaks": breaks}
    return cm


def _as_key(value):
    """A signature as it was saved (pickling keeps tuples: this only guards lists)."""
    if isinstance(value, list):
        return tuple(_as_key(v) for v in value)
    if isinstance(value, tuple):
        return tuple(_as_key(v) for v in value)
    return value
