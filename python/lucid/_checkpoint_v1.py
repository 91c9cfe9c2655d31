"""The reader of lucid's own checkpoint format, version 1: what lucid.save wrote before
it wrote PyTorch's layout (python/lucid/_torch_format.py). lucid.load keeps reading it,
so that no checkpoint a user saved is lost.

A zip archive, every record stored uncompressed with a CRC-32:

    checkpoint/header.json    {"format": "lucid.checkpoint", "version": 1, "byteorder": "little"}
    checkpoint/data.pkl       the saved object, pickled; each tensor in it is the pickle
                              persistent id ("tensor", i)
    checkpoint/tensors.json   {"storages": [{"nbytes": n}, ...],
                               "tensors": [{"dtype": "float32", "device": "cpu",
                                            "shape": [2, 3], "strides": [3, 1],
                                            "storage": j, "offset": k,
                                            "requires_grad": false, "parameter": false}, ...]}
    checkpoint/storages/<j>   the bytes of storage j, little-endian, aligned to 64 bytes

Tensor i is the view (shape, strides, offset: in elements of its dtype) of storage j;
tensors of one storage load as views of one buffer. A tensor without elements has
"storage": null. The pickle names lucid's own globals (lucid._dtype._dtype_by_name,
lucid._device.device, lucid._size.Size), which the weights-only unpickler allows.
Everything in tensors.json is checked against the file's real size before any tensor
memory is allocated.
"""

from __future__ import annotations

import json
import pickle
import sys

from . import _dtype as D
from . import _safetensors as S
from ._checkpoint_io import BuildFailed, is_count
from ._creation import empty, frombuffer
from ._device import device as Device

FORMAT_NAME = "lucid.checkpoint"
FORMAT_VERSION = 1
HEADER = "checkpoint/header.json"
PICKLE = "checkpoint/data.pkl"
INDEX = "checkpoint/tensors.json"
STORAGE = "checkpoint/storages/{}"
_HEADER_LIMIT = 1 << 16  # header.json is a few dozen bytes; more means it is not ours
_MAX_INDEX = 2 ** 63  # sizes, strides and offsets must fit the engine's int64


def open_v1(reader, place):
    """(resolver of the pickle's persistent ids, data.pkl's bytes) of a version 1 file."""
    _check_header(reader)
    storage_sizes, entries = _parse_index(reader)
    payload = reader.read_small(PICKLE, reader.size)
    return _TensorBuilder(reader, storage_sizes, entries, place), payload


def _check_header(reader):
    header = _json(reader.read_small(HEADER, _HEADER_LIMIT), reader, HEADER)
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise reader.damaged(f"{HEADER} does not name the format {FORMAT_NAME!r}")
    version = header.get("version")
    if version != FORMAT_VERSION:
        raise RuntimeError(f"lucid.load: {reader.name} has checkpoint format version {version!r}; this "
                           f"lucid reads version {FORMAT_VERSION} (a newer lucid wrote it?)")
    if header.get("byteorder") != sys.byteorder:
        raise RuntimeError(f"lucid.load: {reader.name} was written on a {header.get('byteorder')}-endian "
                           f"machine; this one is {sys.byteorder}-endian and lucid cannot swap bytes")


def _json(raw, reader, record):
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as e:
        raise reader.damaged(f"{record} is not valid JSON ({e})") from None


class _TensorEntry:
    """One checked entry of tensors.json."""

    __slots__ = ("dtype", "location", "shape", "strides", "storage", "offset", "requires_grad",
                 "parameter")


def _parse_index(reader):
    """(storage sizes, [_TensorEntry...]) from tensors.json, every tensor checked to lie
    within its storage: a file can claim any size, but none larger than it really is."""
    index = _json(reader.read_small(INDEX, reader.size), reader, INDEX)
    if not (isinstance(index, dict) and isinstance(index.get("storages"), list)
            and isinstance(index.get("tensors"), list)):
        raise reader.damaged(f"{INDEX} must be an object with lists 'storages' and 'tensors'")
    sizes = []
    for j, storage in enumerate(index["storages"]):
        nbytes = storage.get("nbytes") if isinstance(storage, dict) else None
        if not is_count(nbytes):
            raise reader.damaged(f"{INDEX}: storage {j} has no valid 'nbytes'")
        if nbytes > reader.size:
            raise reader.damaged(f"{INDEX}: storage {j} claims {nbytes} bytes, more than the whole "
                                 f"{reader.size}-byte file")
        sizes.append(nbytes)
    entries = [_tensor_entry(i, raw, sizes, reader) for i, raw in enumerate(index["tensors"])]
    return sizes, entries


def _tensor_entry(i, raw, storage_sizes, reader):
    def bad(problem):
        return reader.damaged(f"{INDEX}: tensor {i} {problem}")

    keys = ("dtype", "device", "shape", "strides", "storage", "offset", "requires_grad", "parameter")
    if not isinstance(raw, dict) or any(k not in raw for k in keys):
        raise bad(f"must be an object with the keys {', '.join(keys)}")
    e = _TensorEntry()
    e.dtype = D._BY_NAME.get(raw["dtype"]) if isinstance(raw["dtype"], str) else None
    if e.dtype is None:
        raise bad(f"has unknown dtype {raw['dtype']!r:.100}")
    try:
        d = Device(raw["device"])
    except (RuntimeError, TypeError) as err:
        raise bad(f"has an invalid device ({err})") from None
    e.location = "cpu" if d.type == "cpu" else f"gpu:{d.index or 0}"
    e.shape, e.strides = raw["shape"], raw["strides"]
    if not (isinstance(e.shape, list) and isinstance(e.strides, list) and len(e.shape) == len(e.strides)
            and all(is_count(n) for n in e.shape) and all(is_count(s) for s in e.strides)):
        raise bad("needs 'shape' and 'strides': lists of non-negative integers of one length")
    e.shape, e.strides = tuple(e.shape), tuple(e.strides)
    numel = 1
    for n in e.shape:
        numel *= n
    if numel >= _MAX_INDEX:
        raise bad(f"has shape {list(e.shape)}: {numel} elements, more than lucid can address")
    e.storage, e.offset = raw["storage"], raw["offset"]
    if numel == 0:
        if e.storage is not None:
            raise bad("has no elements, so its 'storage' must be null")
    else:
        if not is_count(e.storage, len(storage_sizes)):
            raise bad(f"refers to storage {e.storage!r:.100}, which is not in the file")
        if not is_count(e.offset):
            raise bad(f"has an invalid offset {e.offset!r:.100}")
        last = e.offset + sum((n - 1) * s for n, s in zip(e.shape, e.strides))
        if (last + 1) * e.dtype.itemsize > storage_sizes[e.storage]:
            raise bad(f"(shape {list(e.shape)}, strides {list(e.strides)}, offset {e.offset}, "
                      f"{e.dtype._name}) reaches byte {(last + 1) * e.dtype.itemsize} of storage {e.storage}, "
                      f"which has {storage_sizes[e.storage]}")
    e.requires_grad, e.parameter = raw["requires_grad"], raw["parameter"]
    if not isinstance(e.requires_grad, bool) or not isinstance(e.parameter, bool):
        raise bad("needs 'requires_grad' and 'parameter' to be true or false")
    if e.requires_grad and not (e.dtype.is_floating_point or e.dtype.is_complex):
        raise bad(f"requires grad but has dtype {e.dtype._name}; only floating and complex tensors can")
    return e


class _TensorBuilder:
    """Answers the persistent id ("tensor", i) with tensor i, made on first request:
    each storage is read once, each tensor is built once, and tensors of one storage
    are views of one buffer."""

    def __init__(self, reader, storage_sizes, entries, place):
        self._reader, self._sizes, self._entries, self._place = reader, storage_sizes, entries, place
        self._tensors, self._bases, self._buffers = {}, {}, {}

    def globals(self):
        return {}  # tensors arrive as persistent ids; the pickle names no rebuild function

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "tensor"
                and is_count(pid[1], len(self._entries))):
            raise pickle.UnpicklingError(f"data.pkl refers to {pid!r:.100}, which is not a tensor of "
                                         f"the file (it has {len(self._entries)})")
        i = pid[1]
        t = self._tensors.get(i)
        if t is None:
            try:
                t = self._tensors[i] = self._build(self._entries[i])
            except Exception as e:
                raise BuildFailed(e) from e
        return t

    def _build(self, e):
        if e.storage is None:
            where = self._place(empty(0, dtype=e.dtype, device="cpu"), e.location).device
            t = empty(e.shape, dtype=e.dtype, device=where)
        else:
            base = self._base(e.storage, e.dtype, e.location)
            t = base.as_strided(e.shape, e.strides, base.storage_offset() + e.offset)
        if e.parameter:
            from .nn.parameter import Parameter  # here: lucid.nn imports much of lucid
            return Parameter(t, requires_grad=e.requires_grad)
        return t.requires_grad_(True) if e.requires_grad else t

    def _base(self, j, dtype, location):
        """Storage j as a 1-d tensor of `dtype`, placed by map_location."""
        key = (j, dtype._name, location)
        base = self._bases.get(key)
        if base is None:
            buffer = self._buffers.get(j)
            if buffer is None:
                buffer = self._buffers[j] = self._reader.storage(STORAGE.format(j), self._sizes[j])
            if dtype is D.bool:
                try:
                    S.check_bool_bytes(buffer, f"in storage {j}")
                except ValueError as e:
                    raise self._reader.damaged(str(e)) from None
            # Shares the buffer's memory: no copy beyond the one read from the file.
            base = frombuffer(buffer, dtype=dtype, count=len(buffer) // dtype.itemsize)
            # detach: whatever map_location did, the loaded tensors are leaves.
            base = self._place(base, location).detach()
            if not base.is_contiguous():
                base = base.contiguous()
            self._bases[key] = base
        return base
