"""The unpicklers behind lucid.load, and the safe-globals allow-list of weights_only=True
(lucid.serialization.add_safe_globals, safe_globals, ..., as torch.serialization has them).

Note [weights-only unpickling]
A pickle is a program: GLOBAL names any callable and REDUCE calls it. weights_only=True
runs data.pkl on pickle's pure-Python unpickler with the opcodes that can run code
restricted, as PyTorch's torch/_weights_only_unpickler.py restricts them:
  - GLOBAL (and INST, STACK_GLOBAL) resolves only names of the allow-list: the
    tensor rebuild functions and storage types of the format being read, containers,
    dtypes, devices, Sizes, and what the user added with add_safe_globals. Modules sys,
    os, posix and nt are refused even when added. Nothing is imported. EXT* (copyreg's
    registry, which caches objects outside the unpickler) is refused.
  - REDUCE, NEWOBJ, INST and OBJ call only objects of the allow-list (not, say, an
    instance that an allowed class made and that happens to be callable).
  - BUILD sets state only on OrderedDicts and instances of allowed classes.
  - APPEND(S) only extend lists, SETITEM(S) only fill dicts, ADDITEMS only sets.
Pickle's length fields are checked against the bytes present before unpickling
(_check_framing), and the pure-Python memo is a dict, so a small hostile pickle cannot
make the loader allocate much. weights_only=False uses pickle's C unpickler: any global,
any code, for trusted files only.

Both unpicklers map PyTorch's names (torch.float32, torch.Size, torch.device,
torch._utils._rebuild_tensor_v2, ...) to lucid's objects without importing torch.
"""

from __future__ import annotations

import _compat_pickle
import collections
import functools
import io
import pickle

from . import _dtype as D
from ._checkpoint_io import BuildFailed

__all__ = ["add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_user_globals = set()
# torch dtypes and storage types that lucid lacks: named as such rather than as unknown
# globals, in both load modes (weights_only=False would otherwise import torch for them).
_FOREIGN_DTYPES = {"complex128", "complex32", "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2",
                   "float8_e4m3fnuz", "float8_e5m2fnuz", "qint8", "qint32", "quint8", "quint4x2", "quint2x4"}


# ---- the user's allow-list ---------------------------------------------------------------------

def _entry_name(entry):
    """The full name ('module.qualname') that a safe-globals entry allows."""
    if isinstance(entry, tuple):
        if len(entry) != 2:
            raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got "
                             f"tuple of length: {len(entry)}")
        if type(entry[1]) is not str:
            raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                            f"{type(entry[1])}")
        return entry[1]
    module, name = getattr(entry, "__module__", None), getattr(entry, "__qualname__", None)
    if not (isinstance(module, str) and isinstance(name, str)):
        raise TypeError(f"safe globals must be functions or classes, or (function or class, 'module.name') "
                        f"tuples, but got {entry!r:.100}")
    return f"{module}.{name}"


def _checked_entries(safe_globals, what):
    if isinstance(safe_globals, (str, bytes)) or not hasattr(safe_globals, "__iter__"):
        raise TypeError(f"{what} expects a list of functions or classes (or (global, 'module.name') tuples), "
                        f"but got {type(safe_globals).__name__}")
    entries = list(safe_globals)
    for entry in entries:
        _entry_name(entry)
        hash(entry)  # a set holds them
    return entries


def add_safe_globals(safe_globals):
    """Marks the given globals as safe for lucid.load(weights_only=True): functions in
    the list may be called while unpickling, classes instantiated and their state set.
    Each item is a function or class, or a (function or class, 'module.qualname') tuple
    naming it as the checkpoint does."""
    _user_globals.update(_checked_entries(safe_globals, "add_safe_globals"))


def get_safe_globals():
    """The globals added with add_safe_globals (and safe_globals contexts now open)."""
    return list(_user_globals)


def clear_safe_globals():
    """Forgets every global added with add_safe_globals."""
    _user_globals.clear()


class safe_globals:
    """Context manager: the given globals are safe for weights_only loads inside it."""

    def __init__(self, safe_globals):
        self.safe_globals = _checked_entries(safe_globals, "safe_globals")

    def __enter__(self):
        _user_globals.update(self.safe_globals)

    def __exit__(self, exc_type, exc, tb):
        _user_globals.difference_update(self.safe_globals)


def _user_table():
    return {_entry_name(entry): entry[0] if isinstance(entry, tuple) else entry for entry in _user_globals}


# ---- the default allow-list ---------------------------------------------------------------------

def _refuse_bytes_of_a_size(kind):
    # bytes(n) and bytearray(n) allocate n zero bytes: a file could ask for any n.
    def make(data=b""):
        if not isinstance(data, (bytes, bytearray)):
            raise pickle.UnpicklingError(f"weights_only load: {kind.__name__} may only be rebuilt from bytes, "
                                         f"not from {type(data).__name__}")
        return kind(data)
    return make


def _latin1_encode(text, encoding):
    # Protocol 2 pickles bytes as _codecs.encode(text, "latin1"); other codecs are not
    # needed and are not offered.
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("weights_only load: _codecs.encode is allowed only as pickle uses "
                                     "it for bytes (a str and 'latin1')")
    return text.encode("latin-1")


def _dtype_by_name(name):
    found = D._BY_NAME.get(name) if isinstance(name, str) else None
    if found is None:
        raise pickle.UnpicklingError(f"weights_only load: unknown lucid dtype {name!r:.100}")
    return found


@functools.lru_cache(maxsize=1)
def _default_globals():
    """The names every load resolves (to lucid's objects), by full name. Each builds
    data only: no attribute access, no imports, no size-only allocations."""
    from ._device import device
    from ._size import Size
    from ._tensor import Tensor
    from .nn.parameter import Parameter  # here: lucid.nn imports much of lucid
    from . import _sparse

    table = {
        "collections.OrderedDict": collections.OrderedDict, "collections.Counter": collections.Counter,
        "builtins.set": set, "builtins.frozenset": frozenset, "builtins.complex": complex,
        "builtins.slice": slice, "builtins.bytes": _refuse_bytes_of_a_size(bytes),
        "builtins.bytearray": _refuse_bytes_of_a_size(bytearray), "_codecs.encode": _latin1_encode,
        "torch.Size": Size, "torch.device": device, "torch.Tensor": Tensor,
        "torch.nn.parameter.Parameter": Parameter,
        # what lucid's format version 1 names
        "lucid._dtype._dtype_by_name": _dtype_by_name, "lucid._device.device": device, "lucid._size.Size": Size,
        # sparse tensors (their members checked as any new one's)
        "lucid._sparse._rebuild": _sparse._rebuild, "lucid._sparse.sparse_coo": _sparse.sparse_coo,
        "lucid._sparse.sparse_csr": _sparse.sparse_csr, "lucid._sparse.strided": _sparse.strided,
    }
    table.update({f"torch.{name}": dt for name, dt in D._BY_NAME.items()})
    return table


def _py3_name(module, name):
    """Python 2's spelling of a global (protocol 2 writes __builtin__.set) in Python 3's."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _refuse_foreign_torch_global(module, name):
    if module == "torch" and (name in _FOREIGN_DTYPES or name.endswith("Storage")):
        raise pickle.UnpicklingError(f"lucid.load: the checkpoint uses torch.{name}, whose dtype lucid does "
                                     f"not have (lucid has {', '.join(D._BY_NAME)})")


def _refusal(full, module):
    root = module.partition(".")[0]
    if root in _BLOCKED_MODULES:
        return pickle.UnpicklingError(
            f"lucid.load(weights_only=True) refused the global '{full}': globals of the module {root} are never "
            "allowed, not even with add_safe_globals. Load with weights_only=False only if you trust the file "
            "(that runs the code the file names)")
    return pickle.UnpicklingError(
        f"lucid.load(weights_only=True) refused the global '{full}': it is not an allowed global by default. If "
        f"you trust this class or function, allow it with `lucid.serialization.add_safe_globals([{full}])` or "
        f"the `lucid.serialization.safe_globals([{full}])` context manager; if you trust the whole file, load "
        "it with weights_only=False (which runs the code the file names)")


# ---- the unpicklers -------------------------------------------------------------------------------

class _Malformed(Exception):
    """A weights-only restriction on what an opcode may act on: the pickle is not one a
    pickler writes for data (reported as 'cannot be unpickled')."""


class _FullUnpickler(pickle.Unpickler):
    """weights_only=False: any global (imported as pickle does), PyTorch's names mapped."""

    def __init__(self, file, resolver):
        super().__init__(file)
        self._resolver = resolver
        self._table = {**_default_globals(), **resolver.globals()}

    def find_class(self, module, name):
        module, name = _py3_name(module, name)
        found = self._table.get(f"{module}.{name}")
        if found is not None:
            return found
        _refuse_foreign_torch_global(module, name)
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self._resolver.persistent_load(pid)


class _WeightsOnlyUnpickler(pickle._Unpickler):
    """weights_only=True: Note [weights-only unpickling]."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, resolver):
        super().__init__(file)
        self._resolver = resolver
        self._table = {**_default_globals(), **resolver.globals(), **_user_table()}
        # What REDUCE, NEWOBJ and INST may call and BUILD may fill: the table's objects
        # (the table keeps them alive), except the engine's Tensor class, which is only an
        # argument of torch._tensor._rebuild_from_type_v2 (an instance made by
        # Tensor.__new__ alone would have no tensor behind it).
        from ._tensor import Tensor
        self._allowed = {id(v) for v in self._table.values() if v is not Tensor}

    def find_class(self, module, name):
        module, name = _py3_name(module, name)
        full = f"{module}.{name}"
        if module.partition(".")[0] in _BLOCKED_MODULES:
            raise _refusal(full, module)
        found = self._table.get(full)
        if found is None:
            _refuse_foreign_torch_global(module, name)
            raise _refusal(full, module)
        return found

    def persistent_load(self, pid):
        return self._resolver.persistent_load(pid)

    def _callable(self, f, opcode):
        if id(f) not in self._allowed:
            raise _Malformed(f"{opcode} may call only allowed globals, not {type(f).__name__} {f!r:.100}")
        return f

    def _refuse_extension(self):
        raise _Malformed("EXT opcodes (copyreg's extension registry) are not allowed")
    dispatch[pickle.EXT1[0]] = dispatch[pickle.EXT2[0]] = dispatch[pickle.EXT4[0]] = _refuse_extension

    def load_reduce(self):
        args = self.stack.pop()
        self.stack[-1] = self._callable(self.stack[-1], "REDUCE")(*args)
    dispatch[pickle.REDUCE[0]] = load_reduce

    def load_newobj(self):
        args = self.stack.pop()
        cls = self._callable(self.stack.pop(), "NEWOBJ")
        self.append(cls.__new__(cls, *args))
    dispatch[pickle.NEWOBJ[0]] = load_newobj

    def load_newobj_ex(self):
        kwargs, args = self.stack.pop(), self.stack.pop()
        cls = self._callable(self.stack.pop(), "NEWOBJ_EX")
        self.append(cls.__new__(cls, *args, **kwargs))
    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex

    def _instantiate(self, klass, args):
        super()._instantiate(self._callable(klass, "INST/OBJ"), args)

    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is collections.OrderedDict:
            if not isinstance(state, dict):
                raise _Malformed(f"BUILD of an OrderedDict needs a dict of attributes, not {type(state).__name__}")
            inst.__dict__.update(state)  # how a state dict carries its _metadata
        elif id(type(inst)) in self._allowed:
            self.stack.append(state)
            super().load_build()
        else:
            raise _Malformed(f"BUILD may set the state only of OrderedDicts and instances of allowed classes, "
                             f"not of {type(inst).__name__}")
    dispatch[pickle.BUILD[0]] = load_build

    def _target(self, kinds, opcode):
        target = self.stack[-1]
        if type(target) not in kinds:
            raise _Malformed(f"{opcode} acts only on {' or '.join(k.__name__ for k in kinds)}, not on "
                             f"{type(target).__name__}")
        return target

    def load_append(self):
        value = self.stack.pop()
        self._target((list,), "APPEND").append(value)
    dispatch[pickle.APPEND[0]] = load_append

    def load_appends(self):
        items = self.pop_mark()
        self._target((list,), "APPENDS").extend(items)
    dispatch[pickle.APPENDS[0]] = load_appends

    def load_setitem(self):
        value, key = self.stack.pop(), self.stack.pop()
        self._target((dict, collections.OrderedDict, collections.Counter), "SETITEM")[key] = value
    dispatch[pickle.SETITEM[0]] = load_setitem

    def load_setitems(self):
        items = self.pop_mark()
        target = self._target((dict, collections.OrderedDict, collections.Counter), "SETITEMS")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]
    dispatch[pickle.SETITEMS[0]] = load_setitems

    def load_additems(self):
        items = self.pop_mark()
        self._target((set,), "ADDITEMS").update(items)
    dispatch[pickle.ADDITEMS[0]] = load_additems


def unpickle(payload, resolver, weights_only, name):
    """The object in `payload` (data.pkl), its persistent ids answered by `resolver`
    (.persistent_load(pid); .globals(): the format's rebuild functions by full name)."""
    _check_framing(payload, name)
    unpickler_class = _WeightsOnlyUnpickler if weights_only else _FullUnpickler
    try:
        return unpickler_class(io.BytesIO(payload), resolver).load()
    except BuildFailed as failed:
        raise failed.error from None
    except (pickle.UnpicklingError, MemoryError):
        raise
    except Exception as e:
        raise pickle.UnpicklingError(f"lucid.load: the object in {name} cannot be unpickled "
                                     f"({type(e).__name__}: {e})") from e


def _check_framing(payload, name):
    """Walks data.pkl's opcodes without running any, checking that each length field
    fits the bytes that follow it. The C unpickler allocates an object of the stated
    length before it reads the bytes, so a tampered length such as 2**40 would be an
    allocation; pickletools reads only what is there."""
    import pickletools

    try:
        for op, arg, _ in pickletools.genops(payload):
            # The C unpickler sizes its memo to the largest index it is told to store
            # at: every stored object takes at least a byte of the pickle, so a real
            # index is below its length (LONG_BINPUT 2**31 would be a 16 GiB memo).
            if op.name in ("PUT", "BINPUT", "LONG_BINPUT") and not 0 <= int(arg) < len(payload):
                raise ValueError(f"memo index {arg} past the pickle's {len(payload)} bytes")
    except Exception as e:
        raise pickle.UnpicklingError(f"lucid.load: data.pkl in {name} is damaged ({e})") from None


def globals_in_pickle(payload):
    """The full names of the globals that GLOBAL and INST opcodes of `payload` name."""
    import pickletools

    names = []
    for op, arg, _ in pickletools.genops(payload):
        if op.name in ("GLOBAL", "INST"):
            module, _, name = arg.partition(" ")
            module, name = _py3_name(module, name)
            names.append(f"{module}.{name}")
    return names


def unsafe_globals(payload, resolver):
    """The globals of `payload` that a weights-only load would refuse, in order of appearance."""
    table = {**_default_globals(), **resolver.globals(), **_user_table()}
    unsafe = []
    for full in globals_in_pickle(payload):
        if (full not in table or full.partition(".")[0] in _BLOCKED_MODULES) and full not in unsafe:
            unsafe.append(full)
    return unsafe
