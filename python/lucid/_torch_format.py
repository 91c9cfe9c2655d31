"""PyTorch's checkpoint layout (what torch.save writes by default), written and read
without torch. The layout is described in python/lucid/serialization.py's docstring.

Writing: data.pkl must name PyTorch's globals (torch._utils._rebuild_tensor_v2,
torch.FloatStorage, torch.float16, torch.Size, ...) so that torch.load resolves them,
but lucid cannot import torch, and pickle's C pickler looks every global up (and checks
it is the object being pickled) before writing its name. So data.pkl is written by
pickle's pure-Python pickler, in which a _Global placeholder is written as a bare
GLOBAL opcode, and lucid's tensors, Parameters, dtypes, devices and Sizes are reduced
to calls of those names, as torch's own objects reduce. Everything else pickles as
pickle pickles it. The pickle is written twice: the first pass only collects the
tensors, so that each storage record can hold just the span its tensors reach (the
second pass writes the offsets into those spans).
"""

from __future__ import annotations

import collections
import io
import pickle
import sys

from . import _dtype as D
from . import _safetensors as S
from ._checkpoint_io import BuildFailed, is_count, write_record
from ._creation import empty, frombuffer
from ._device import device as Device
from ._size import Size
from ._tensor import Tensor

ARCHIVE = "archive"
_FILE_FORMAT_VERSION = b"3\n"  # what torch.save writes for a plain (non-TorchScript) checkpoint
_MAX_FILE_FORMAT_VERSION = 10  # the newest torch's reader accepts (caffe2/serialize/versions.h)
_STORAGE_CLASS = {"bool": "BoolStorage", "uint8": "ByteStorage", "int8": "CharStorage", "int16": "ShortStorage",
                  "int32": "IntStorage", "int64": "LongStorage", "float16": "HalfStorage",
                  "bfloat16": "BFloat16Storage", "float32": "FloatStorage", "float64": "DoubleStorage",
                  "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}


# ---- writing --------------------------------------------------------------------------------------

class _Global:
    """A global by name, pickled as GLOBAL module name (nothing imported, nothing checked)."""

    __slots__ = ("module", "name")
    _cache = {}

    def __new__(cls, module, name):
        g = cls._cache.get((module, name))
        if g is None:
            g = cls._cache[(module, name)] = object.__new__(cls)
            g.module, g.name = module, name
        return g

    def __call__(self, *args):  # pickle's save_reduce accepts only callables
        raise TypeError(f"{self.module}.{self.name} is a name for pickling, not callable in lucid")


class _StorageSpan:
    """Elements [first, end) of one tensor memory (in elements of source's dtype): the
    part that the saved tensors viewing that memory reach; written as data/<key>."""

    __slots__ = ("source", "first", "end", "key")

    def __init__(self, source, first, end, key):
        self.source, self.first, self.end, self.key = source, first, end, key

    @property
    def nbytes(self):
        return (self.end - self.first) * self.source.itemsize

    def read(self):
        if self.end == self.first:
            return b""
        return self.source.as_strided((self.end - self.first,), (1,), self.first).to_bytes()

    def persistent_id(self):
        t = self.source
        location = "cpu" if t.device.type == "cpu" else f"cuda:{t.device.index or 0}"
        return ("storage", _Global("torch", _STORAGE_CLASS[t.dtype._name]), self.key, location,
                self.end - self.first)


def _memory_key(t):
    # Tensors without elements may have no memory; they share one empty storage per dtype.
    if t.numel() == 0:
        return (t._device, None, t._dtype)
    return (t._device, t._storage_data_ptr, t._dtype)


def plan_storages(tensors):
    """{memory key: _StorageSpan}: tensors that view the same memory with the same dtype
    on the same device share one span, which covers what all of them reach."""
    spans = {}
    for t in tensors:
        t = t.detach()
        first = end = 0
        if t.numel():
            first = t.storage_offset()
            # lucid's strides are never negative (as in PyTorch), so the last element
            # reached is the one at the largest index in every dimension.
            end = first + sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1
        key = _memory_key(t)
        span = spans.get(key)
        if span is None:
            spans[key] = _StorageSpan(t, first, end, str(len(spans)))
        elif t.numel():
            span.first, span.end = min(span.first, first), max(span.end, end)
    return spans


class TorchPickler(pickle._Pickler):
    """Pickles as torch.save does (see the module docstring). With spans=None it only
    collects the tensors it meets (into .tensors)."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol, spans=None):
        super().__init__(file, protocol)
        self.spans, self.tensors = spans, []

    def persistent_id(self, obj):
        return obj.persistent_id() if type(obj) is _StorageSpan else None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if type(obj) is Size:
            return _Global("torch", "Size"), (tuple(obj),)
        if type(obj) is Device:
            return _Global("torch", "device"), ("cpu",) if obj.type == "cpu" else ("cuda", obj.index or 0)
        return NotImplemented

    def _reduce_tensor(self, t):
        hooks = collections.OrderedDict()  # torch's backward hooks: none travel
        if getattr(t, "_is_param", False):
            # torch pickles a Parameter as _rebuild_parameter(its data, requires_grad, hooks)
            data = t.detach()
            data._is_param = False  # a new tensor object: the Parameter itself is untouched
            return _Global("torch._utils", "_rebuild_parameter"), (data, bool(t.requires_grad), hooks)
        if self.spans is None:
            self.tensors.append(t)
            return _Global("torch._utils", "_rebuild_tensor_v2"), ()
        span = self.spans.get(_memory_key(t))
        if span is None:
            raise pickle.PicklingError("lucid.save: a tensor appeared while pickling that was not there when "
                                       "the object was first walked (a __reduce__ that makes new tensors?)")
        offset = t.storage_offset() - span.first if t.numel() else 0
        return (_Global("torch._utils", "_rebuild_tensor_v2"),
                (span, offset, tuple(t.shape), tuple(t.stride()), bool(t.requires_grad), hooks))

    def _save_global_name(self, g):
        self.write(pickle.GLOBAL + f"{g.module}\n{g.name}\n".encode())
        self.memoize(g)
    dispatch[_Global] = _save_global_name

    def _save_dtype(self, dt):
        self.save(_Global("torch", dt._name))
    dispatch[D.dtype] = _save_dtype


def pickle_for_torch(obj, protocol):
    """(data.pkl's bytes, the storage spans it refers to)."""
    collector = TorchPickler(_Discard(), protocol)
    collector.dump(obj)
    spans = plan_storages(collector.tensors)
    buffer = io.BytesIO()
    TorchPickler(buffer, protocol, spans).dump(obj)
    return buffer.getvalue(), list(spans.values())


class _Discard:
    def write(self, data):
        return len(data)


def write_archive(out, payload, spans):
    """The records in torch.save's order, tensor data aligned to 64 bytes as torch's
    .storage_alignment says."""
    import hashlib
    import zipfile

    crcs = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        def record(name, data, align=False):
            crcs.append(write_record(archive, f"{ARCHIVE}/{name}", data, align).CRC)

        record("data.pkl", payload)
        record(".format_version", b"1")
        record(".storage_alignment", b"64")
        record("byteorder", sys.byteorder.encode())
        for span in spans:
            record(f"data/{span.key}", span.read(), align=True)
        record("version", _FILE_FORMAT_VERSION)
        # torch writes 20 random digits and 20 of the records' combined CRC; these 40
        # digits come from the records alone, so equal objects still save to equal bytes.
        digest = hashlib.sha256(b"".join(c.to_bytes(4, "little") for c in crcs)).digest()
        record(".data/serialization_id", b"%020d%020d" % (int.from_bytes(digest[:8], "little"),
                                                         int.from_bytes(digest[8:16], "little")))


# ---- reading --------------------------------------------------------------------------------------

class _StorageType:
    """What torch.FloatStorage and its kin resolve to: the dtype of a storage."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype


_STORAGE_TYPES = {f"torch.{cls}": _StorageType(D._BY_NAME[name]) for name, cls in _STORAGE_CLASS.items()}
_STORAGE_TYPES["torch.UntypedStorage"] = _STORAGE_TYPES["torch.storage.UntypedStorage"] = _StorageType(D.uint8)


class _LoadedStorage:
    """A storage of the file as a 1-d tensor, placed by map_location."""

    __slots__ = ("base", "dtype", "numel")

    def __init__(self, base, dtype, numel):
        self.base, self.dtype, self.numel = base, dtype, numel


def archive_prefix(reader):
    """The folder that holds data.pkl (torch names it after the file; lucid writes 'archive')."""
    prefixes = [n[:-len("/data.pkl")] for n in reader.members if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(prefixes) != 1:
        found = f"{len(prefixes)} of them" if prefixes else "none"
        raise reader.damaged(f"a PyTorch-layout checkpoint has one record <folder>/data.pkl, and this has {found}")
    prefix = prefixes[0]
    if f"{prefix}/constants.pkl" in reader.members or any(n.startswith(f"{prefix}/code/") for n in reader.members):
        raise reader.damaged("it is a TorchScript archive (torch.jit.save); lucid cannot run TorchScript code")
    return prefix


def open_torch(reader, place):
    """(resolver of the pickle's storages and rebuild functions, data.pkl's bytes)."""
    prefix = archive_prefix(reader)
    for name in ("version", ".data/version"):
        if f"{prefix}/{name}" in reader.members:
            version = reader.read_small(f"{prefix}/{name}", 64)
            break
    else:
        raise reader.damaged(f"the record {prefix}/version is missing")
    if not version.strip().isdigit() or not 1 <= int(version) <= _MAX_FILE_FORMAT_VERSION:
        raise RuntimeError(f"lucid.load: {reader.name} has PyTorch file format version "
                           f"{version[:20].decode('ascii', 'replace').strip()!r}; "
                           f"lucid reads versions 1 to {_MAX_FILE_FORMAT_VERSION}")
    byteorder = sys.byteorder.encode()  # torch's default when the record is missing
    if f"{prefix}/byteorder" in reader.members:
        byteorder = reader.read_small(f"{prefix}/byteorder", 64)
    if byteorder != sys.byteorder.encode():
        raise RuntimeError(f"lucid.load: {reader.name} was written on a "
                           f"{byteorder[:20].decode('ascii', 'replace')}-endian machine; "
                           f"this one is {sys.byteorder}-endian and lucid cannot swap bytes")
    for name in (".format_version", ".storage_alignment", ".data/serialization_id"):
        if f"{prefix}/{name}" in reader.members:  # read for their CRCs: damage is reported, never ignored
            if not reader.read_small(f"{prefix}/{name}", 64).isdigit():
                raise reader.damaged(f"the record {prefix}/{name} is not a number")
    payload = reader.read_small(f"{prefix}/data.pkl", reader.size)
    return _TorchResolver(reader, prefix, place), payload


class _TorchResolver:
    """Answers the pickle's ('storage', type, key, location, numel) ids and provides the
    functions its torch._utils names resolve to. Each storage is read once; tensors of
    one storage are views of one buffer."""

    def __init__(self, reader, prefix, place):
        self._reader, self._prefix, self._place = reader, prefix, place
        self._storages = {}
        self._functions = {
            "torch._utils._rebuild_tensor_v2": self._rebuild_tensor_v2,
            "torch._utils._rebuild_tensor": self._rebuild_tensor,
            "torch._utils._rebuild_parameter": self._rebuild_parameter,
            "torch._utils._rebuild_parameter_with_state": self._rebuild_parameter_with_state,
            "torch._tensor._rebuild_from_type_v2": self._rebuild_from_type_v2,
            **_STORAGE_TYPES,
        }

    def globals(self):
        return self._functions

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and pid and isinstance(pid[0], bytes):
            pid = (pid[0].decode("ascii", "replace"),) + pid[1:]  # Python 2 pickles wrote bytes
        if not (type(pid) is tuple and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"data.pkl refers to {pid!r:.100}, which is not a storage of the file "
                                         "(('storage', type, key, location, numel))")
        _, kind, key, location, numel = pid
        if not (type(kind) is _StorageType and isinstance(key, str) and isinstance(location, str)
                and is_count(numel)):
            raise pickle.UnpicklingError(f"data.pkl refers to the storage {pid!r:.200}, whose type, key, "
                                         "location or size is not valid")
        try:
            return self._storage(kind.dtype, key, location, numel)
        except Exception as e:
            raise BuildFailed(e) from e

    def _storage(self, dtype, key, location, numel):
        loaded = self._storages.get(key)
        if loaded is not None:
            if loaded.dtype is not dtype or loaded.numel != numel:
                raise self._reader.damaged(f"storage {key!r:.50} is named as {numel} {dtype._name} elements and "
                                           f"as {loaded.numel} {loaded.dtype._name} elements")
            return loaded
        name = f"{self._prefix}/data/{key}"
        if numel * dtype.itemsize > self._reader.size:
            raise self._reader.damaged(f"storage {key!r:.50} claims {numel} {dtype._name} elements, more than "
                                       f"the whole {self._reader.size}-byte file holds")
        buffer = self._reader.storage(name, numel * dtype.itemsize)
        if dtype is D.bool:
            try:
                S.check_bool_bytes(buffer, f"in {name}")
            except ValueError as e:
                raise self._reader.damaged(str(e)) from None
        # Shares the buffer's memory: no copy beyond the one read from the file.
        base = frombuffer(buffer, dtype=dtype, count=numel) if numel else empty(0, dtype=dtype, device="cpu")
        # detach: whatever map_location did, the loaded tensors are leaves.
        base = self._place(base, location).detach()
        if not base.is_contiguous():
            base = base.contiguous()
        loaded = self._storages[key] = _LoadedStorage(base, dtype, numel)
        return loaded

    def _rebuild_tensor_v2(self, storage, storage_offset, size, stride, requires_grad, backward_hooks,
                           metadata=None):
        def bad(problem):
            return pickle.UnpicklingError(f"lucid.load: a tensor in {self._reader.name} {problem}")

        if type(storage) is not _LoadedStorage:
            raise bad(f"is rebuilt from {type(storage).__name__}, not from a storage of the file")
        if not (isinstance(size, (tuple, list)) and isinstance(stride, (tuple, list)) and len(size) == len(stride)
                and all(is_count(n) for n in size) and all(is_count(s) for s in stride)
                and is_count(storage_offset)):
            raise bad(f"has size {size!r:.100}, stride {stride!r:.100} and offset {storage_offset!r:.50}; they "
                      "must be non-negative integers (size and stride of one length)")
        if not isinstance(requires_grad, bool) or not isinstance(backward_hooks, dict):
            raise bad("needs requires_grad True or False and a dict of backward hooks")
        if metadata:
            raise bad(f"carries tensor metadata {metadata!r:.100}, which lucid cannot restore")
        numel = 1
        for n in size:
            numel *= n
        dtype, base = storage.dtype, storage.base
        if numel >= 2 ** 63:
            raise bad(f"has size {list(size)}: {numel} elements, more than lucid can address")
        if numel == 0:
            t = empty(tuple(size), dtype=dtype, device=base.device)
        else:
            last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
            if last >= storage.numel:
                raise bad(f"(size {list(size)}, stride {list(stride)}, offset {storage_offset}) reaches element "
                          f"{last} of a storage of {storage.numel} {dtype._name} elements")
            t = base.as_strided(tuple(size), tuple(stride), base.storage_offset() + storage_offset)
        if requires_grad:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise bad(f"requires grad but has dtype {dtype._name}; only floating and complex tensors can")
            t.requires_grad_(True)
        return t

    def _rebuild_tensor(self, storage, storage_offset, size, stride):
        return self._rebuild_tensor_v2(storage, storage_offset, size, stride, False, {})

    def _rebuild_parameter(self, data, requires_grad, backward_hooks):
        from .nn.parameter import Parameter  # here: lucid.nn imports much of lucid

        if not isinstance(data, Tensor) or not isinstance(requires_grad, bool):
            raise pickle.UnpicklingError(f"lucid.load: a Parameter in {self._reader.name} is rebuilt from "
                                         f"{type(data).__name__} and {requires_grad!r:.50}, not a tensor and a bool")
        return Parameter(data, requires_grad=requires_grad)

    def _rebuild_parameter_with_state(self, data, requires_grad, backward_hooks, state):
        return self._with_state(self._rebuild_parameter(data, requires_grad, backward_hooks), state)

    def _rebuild_from_type_v2(self, func, new_type, args, state):
        from .nn.parameter import Parameter

        if func not in (self._rebuild_tensor_v2, self._rebuild_tensor, self._rebuild_parameter) \
                or new_type not in (Tensor, Parameter) or not isinstance(args, tuple):
            raise pickle.UnpicklingError(f"lucid.load: {self._reader.name} holds a tensor of type "
                                         f"{getattr(new_type, '__name__', new_type)!r:.100}; lucid rebuilds "
                                         "torch.Tensor and torch.nn.Parameter only")
        t = func(*args)
        if new_type is Parameter and not isinstance(t, Parameter):
            t = Parameter(t, requires_grad=t.requires_grad)
        return self._with_state(t, state)

    def _with_state(self, t, state):
        """Python attributes that torch saved with a tensor (torch._utils._set_obj_state)."""
        if isinstance(state, tuple) and len(state) == 2:
            state = {**(state[0] or {}), **(state[1] or {})}
        if not isinstance(state, dict):
            raise pickle.UnpicklingError(f"lucid.load: a tensor's state must be a dict, not {type(state).__name__}")
        for attribute, value in state.items():
            try:
                setattr(t, attribute, value)
            except AttributeError:
                raise pickle.UnpicklingError(f"lucid.load: a tensor in {self._reader.name} carries the Python "
                                             f"attribute {attribute!r:.50}, which lucid tensors cannot hold "
                                             "(they have no per-object attributes)") from None
        return t
