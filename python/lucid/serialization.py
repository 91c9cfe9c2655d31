"""Saving and loading tensors.

lucid.save / lucid.load write and read checkpoints of any picklable object that holds
tensors: a tensor, a state dict, optimizer state, nested dicts, lists and tuples.
lucid.save_safetensors / lucid.load_safetensors write and read the safetensors format
(python/lucid/_safetensors.py describes it), which other frameworks read too.

Checkpoint format, version 1
----------------------------
A zip archive that any zip tool can list. Every record is stored uncompressed with a
CRC-32, so damage anywhere in the file is detected when it is loaded:

    checkpoint/header.json    {"format": "lucid.checkpoint", "version": 1, "byteorder": "little"}
    checkpoint/data.pkl       the saved object, pickled; each tensor in it is the pickle
                              persistent id ("tensor", i)
    checkpoint/tensors.json   {"storages": [{"nbytes": n}, ...],
                               "tensors": [{"dtype": "float32", "device": "cpu",
                                            "shape": [2, 3], "strides": [3, 1],
                                            "storage": j, "offset": k,
                                            "requires_grad": false, "parameter": false}, ...]}
    checkpoint/storages/<j>   the bytes of storage j, little-endian; the record's data
                              starts on a 64-byte boundary of the file, so that
                              load(mmap=True) can use it in place

Tensor i is the view (shape, strides, offset: in elements of its dtype) of storage j.
Tensors that viewed the same memory share one storage record and load as views of one
buffer again; a record holds only the span of the memory that its tensors reach. A
tensor without elements has "storage": null. A tensor keeps its dtype, shape, device,
requires_grad and Parameter-ness; like PyTorch, not its .grad or its graph.

Tensors live outside the pickle so that the pickle names no lucid function at all:
weights_only=True can allow plain containers only, and everything about a tensor is
JSON that is checked against the file's real size before any of its memory is
allocated.

Writes to a path are atomic: the new file is complete and on disk before it replaces
the old one, and a failure at any point leaves the old one as it was.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import mmap as _mmap
import os
import pickle
import stat
import struct
import sys

from . import _dtype as D
from . import _safetensors as S
from . import gpu
from ._creation import empty, frombuffer
from ._device import device as Device
from ._size import Size
from ._tensor import Tensor

__all__ = ["save", "load", "save_safetensors", "load_safetensors", "load_safetensors_metadata",
           "save_safetensors_to_bytes", "load_safetensors_from_bytes"]

FORMAT_NAME = "lucid.checkpoint"
FORMAT_VERSION = 1
_HEADER = "checkpoint/header.json"
_PICKLE = "checkpoint/data.pkl"
_INDEX = "checkpoint/tensors.json"
_STORAGE = "checkpoint/storages/{}"
_HEADER_LIMIT = 1 << 16  # header.json is a few dozen bytes; more means it is not ours
_ALIGNMENT = 64
_PAD_FIELD_ID = 0x756C  # a zip "extra field" id of our own; zip readers skip unknown ones
# zipfile and pickletools are imported where used: together with what they import they
# would add about 15 ms to every `import lucid`.
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # no timestamps: the same object saves to the same bytes
_CHUNK = 16 << 20  # records are read in pieces, so no second full-size copy is made
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # a zip local header: signature ... name and extra lengths
_ZIP64_LOCAL_FIELD = 20  # what force_zip64=True adds to each local header
_MAX_INDEX = 2 ** 63  # sizes, strides and offsets must fit the engine's int64


# ---- atomic writes -----------------------------------------------------------------------

@contextlib.contextmanager
def _atomic_write(path):
    """Yields a binary file whose contents replace `path` in one step on normal exit:
    they go to a temporary file beside it, are flushed and fsynced, renamed over `path`,
    and the directory is fsynced. On an exception the temporary file is removed and
    whatever was at `path` is untouched."""
    target = os.path.realpath(os.fsdecode(path))  # through a symlink, to the file it names
    directory, base = os.path.split(target)
    temporary = os.path.join(directory, f".{base}.{os.urandom(8).hex()}.tmp")
    # O_EXCL: never clobber a file that happens to have the name; 0o666 lets the umask
    # give the permissions an ordinary new file would get.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        with contextlib.suppress(FileNotFoundError):
            # Replacing a file keeps its permissions: a private checkpoint stays private.
            os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_directory(directory)


def _fsync_directory(directory):
    """Makes the rename itself durable (POSIX; Windows cannot open a directory)."""
    if os.name != "posix":
        return
    fd = os.open(directory or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


# ---- lucid.save ----------------------------------------------------------------------------

def save(obj, f, pickle_protocol=2):
    """Saves `obj` (tensors, state dicts, nested containers of tensors and plain values)
    to `f`: a path (written atomically) or a binary file object open for writing.
    The format is described at the top of this module."""
    if (isinstance(pickle_protocol, bool) or not isinstance(pickle_protocol, int)
            or not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL):
        raise ValueError(f"lucid.save: pickle_protocol must be an int from 2 to {pickle.HIGHEST_PROTOCOL} "
                         f"(protocols 0 and 1 cannot carry the tensors' persistent ids), but got "
                         f"{pickle_protocol!r}")
    if not _is_path(f) and not hasattr(f, "write"):
        raise TypeError(f"lucid.save: f must be a path (str or os.PathLike) or a binary file object with "
                        f"write(), but got {type(f).__name__}")
    # Everything that can fail on the object's account (pickling it) happens before the
    # destination is touched.
    payload, tensors = _pickle_with_tensors(obj, pickle_protocol)
    spans, entries = _plan_storages(tensors)
    if _is_path(f):
        with _atomic_write(f) as out:
            _write_archive(out, payload, spans, entries)
    else:
        _write_archive(f, payload, spans, entries)


class _TensorPickler(pickle.Pickler):
    """Pickles an object with each tensor replaced by ("tensor", i), i its place in
    self.tensors. The same tensor object met twice gets the same i, so it loads as one
    object again."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.tensors = []
        self._index_by_id = {}

    def persistent_id(self, obj):
        if not isinstance(obj, Tensor):
            return None
        i = self._index_by_id.get(id(obj))
        if i is None:
            i = self._index_by_id[id(obj)] = len(self.tensors)
            self.tensors.append(obj)  # keeps it alive, so its id cannot be reused meanwhile
        return ("tensor", i)


def _pickle_with_tensors(obj, protocol):
    buffer = io.BytesIO()
    pickler = _TensorPickler(buffer, protocol)
    pickler.dump(obj)
    return buffer.getvalue(), pickler.tensors


class _StorageSpan:
    """Elements [first, end) of one tensor memory (in elements of source's dtype): the
    part that the saved tensors viewing that memory reach."""

    __slots__ = ("source", "first", "end")

    def __init__(self, source, first, end):
        self.source, self.first, self.end = source, first, end

    @property
    def nbytes(self):
        return (self.end - self.first) * self.source.itemsize

    def read(self):
        return self.source.as_strided((self.end - self.first,), (1,), self.first).to_bytes()


def _plan_storages(tensors):
    """([_StorageSpan...], tensors.json's "tensors" entries): tensors that view the
    same memory with the same dtype on the same device share one span."""
    spans, span_by_memory, placed = [], {}, []
    for t in tensors:
        t = t.detach()
        if t.numel() == 0:
            placed.append((t, None))
            continue
        first = t.storage_offset()
        # lucid's strides are never negative (as in PyTorch), so the last element
        # reached is the one at the largest index in every dimension.
        end = first + sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1
        key = (t._device, t._storage_data_ptr, t._dtype)
        j = span_by_memory.get(key)
        if j is None:
            j = span_by_memory[key] = len(spans)
            spans.append(_StorageSpan(t, first, end))
        else:
            spans[j].first = min(spans[j].first, first)
            spans[j].end = max(spans[j].end, end)
        placed.append((t, j))
    entries = []
    for (t, j), original in zip(placed, tensors):
        entries.append({
            "dtype": t.dtype._name, "device": _location_name(t.device), "shape": list(t.shape),
            "strides": list(t.stride()), "storage": j,
            "offset": 0 if j is None else t.storage_offset() - spans[j].first,
            "requires_grad": bool(original.requires_grad),
            "parameter": bool(getattr(original, "_is_param", False)),
        })
    return spans, entries


def _write_archive(out, payload, spans, entries):
    import zipfile

    header = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "byteorder": sys.byteorder}
    index = {"storages": [{"nbytes": span.nbytes} for span in spans], "tensors": entries}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        _write_record(archive, _HEADER, json.dumps(header).encode())
        _write_record(archive, _PICKLE, payload)
        for j, span in enumerate(spans):
            _write_record(archive, _STORAGE.format(j), span.read(), align=True)
        _write_record(archive, _INDEX, json.dumps(index, separators=(",", ":")).encode())


def _write_record(archive, name, data, align=False):
    import zipfile

    info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = 0o644 << 16  # -rw-r--r-- for zip tools that extract
    if align:
        info.extra = _alignment_padding(archive, name)
    # force_zip64 makes every local header the same known size (the zip64 field is
    # always there), which the alignment arithmetic relies on.
    with archive.open(info, "w", force_zip64=True) as out:
        out.write(data)


def _alignment_padding(archive, name):
    """An extra field that pads the record's local header so its data starts on a
    64-byte boundary of the file. archive.start_dir is where zipfile writes the next
    local header; if that ever changes, records merely lose their alignment (load then
    copies them instead of mapping them)."""
    data_start = archive.start_dir + _LOCAL_HEADER.size + len(name.encode()) + _ZIP64_LOCAL_FIELD
    pad = -(data_start + 4) % _ALIGNMENT  # 4: the extra field's own id and length
    return struct.pack("<HH", _PAD_FIELD_ID, pad) + bytes(pad)


# ---- lucid.load ----------------------------------------------------------------------------

def load(f, map_location=None, weights_only=True, mmap=None):
    """Loads an object saved by lucid.save from `f`, a path or a binary file object.

    map_location: where tensors go. None: back to the device each was saved from. A
    device ("cpu", "gpu:0", lucid.device): all of them there. A dict such as
    {"gpu:1": "gpu:0"}: saved locations remapped, others unchanged. A callable
    (tensor, location): called once per stored storage with its contents as a 1-d CPU
    tensor and the saved location ("cpu", "gpu:0"); it returns that tensor wherever it
    should go, or None for the saved location.

    weights_only=True (the default) unpickles only tensors, dicts, OrderedDicts, lists,
    tuples, sets, str, bytes, numbers, None, lucid dtypes, devices and Sizes, and
    refuses every other global, so a file from anywhere can be loaded without running
    its code. weights_only=False unpickles anything, which runs whatever code the file
    names: use it only for files you trust.

    mmap=True maps a file at a path into memory (copy-on-write: changing a tensor never
    changes the file) and uses the stored tensor bytes in place, loading pages as they
    are touched. The tensor bytes' CRC is then not checked (that would read them all).
    """
    place = _placement(map_location)
    if not isinstance(weights_only, bool):
        raise TypeError(f"lucid.load: weights_only must be True or False, but got {weights_only!r}")
    if mmap not in (None, False, True):
        raise TypeError(f"lucid.load: mmap must be None, True or False, but got {mmap!r}")
    with _open_for_reading(f, bool(mmap)) as (file, size, name, mapped):
        reader = _ArchiveReader(file, size, name, mapped)
        reader.check_header()
        storage_sizes, entries = _parse_index(reader)
        payload = reader.read_small(_PICKLE, size)
        builder = _TensorBuilder(reader, storage_sizes, entries, place)
        return _unpickle(payload, builder, weights_only, name)


@contextlib.contextmanager
def _open_for_reading(f, use_mmap):
    """(file, size, name for messages, mmap or None) for a path or a file object."""
    if _is_path(f):
        name = os.fsdecode(f)
        with open(f, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            yield file, size, repr(name), _map(file.fileno(), size) if use_mmap else None
        return
    if not hasattr(f, "read"):
        raise TypeError(f"lucid.load: f must be a path (str or os.PathLike) or a binary file object with "
                        f"read(), but got {type(f).__name__}")
    name = f"the checkpoint in {type(f).__name__}"
    seekable = getattr(f, "seekable", None)
    if not (seekable and seekable()):
        f = io.BytesIO(f.read())  # zip needs to seek (its directory is at the end)
    start = f.tell()
    size = f.seek(0, io.SEEK_END)
    f.seek(start)
    mapped = None
    if use_mmap:
        try:
            fileno = f.fileno()
        except (AttributeError, OSError, io.UnsupportedOperation):
            raise ValueError("lucid.load: mmap=True needs a path or a file object backed by a real file "
                             "(one with fileno())") from None
        mapped = _map(fileno, size)
    yield f, size, name, mapped


def _map(fileno, size):
    """The file mapped copy-on-write: tensors over it may be written, the file never is."""
    if size == 0:
        return None  # mmap cannot map an empty file; the reader reports it as empty
    return _mmap.mmap(fileno, 0, access=_mmap.ACCESS_COPY)


class _ArchiveReader:
    """The records of a checkpoint archive. Each record's claimed size is checked
    against the file's real size before anything is allocated for it."""

    def __init__(self, file, size, name, mapped):
        import zipfile

        self.name, self.size, self.mapped = name, size, mapped
        self._refuse_other_formats(file)
        try:
            self.zip = zipfile.ZipFile(file)
            infos = self.zip.infolist()
        except MemoryError:
            raise
        except Exception as e:  # zipfile raises many kinds on damaged input
            raise self.damaged(f"its zip structure is broken ({type(e).__name__}: {e})") from e
        self.members = {}
        for info in infos:
            if info.filename in self.members:
                raise self.damaged(f"the record {info.filename} appears twice")
            self.members[info.filename] = info

    def damaged(self, problem):
        return RuntimeError(f"lucid.load: {self.name} is not a readable lucid checkpoint: {problem}")

    def _refuse_other_formats(self, file):
        start = file.tell()
        head = file.read(16)
        file.seek(start)
        if self.size == 0 or not head:
            raise self.damaged("the file is empty")
        if head.startswith(b"PK\x03\x04"):
            return
        if head[:1] == b"\x80":
            raise self.damaged("it is a plain pickle (pickle.dump or an old torch.save), not a checkpoint "
                               "archive; lucid.load does not unpickle plain pickles")
        if len(head) >= 9 and head[8:9] == b"{":
            raise self.damaged("it looks like a safetensors file: use lucid.load_safetensors")
        raise self.damaged("it does not start with a zip signature (the file is truncated at the front, "
                           "damaged or in another format)")

    def info(self, name):
        info = self.members.get(name)
        if info is None:
            if name == _HEADER and any(n.endswith("/data.pkl") for n in self.members):
                raise self.damaged("it looks like a PyTorch checkpoint (torch.save); lucid reads its own "
                                   "format and safetensors")
            raise self.damaged(f"the record {name} is missing")
        if info.compress_type != 0:  # zipfile.ZIP_STORED
            raise self.damaged(f"the record {name} is compressed; lucid checkpoints store records as is")
        if (info.file_size != info.compress_size or info.header_offset < 0
                or info.header_offset + info.file_size > self.size):
            raise self.damaged(f"the record {name} claims {info.file_size} bytes at offset "
                               f"{info.header_offset}, past the end of the {self.size}-byte file")
        return info

    def read_small(self, name, limit):
        """A metadata record's bytes, its CRC checked."""
        info = self.info(name)
        if info.file_size > limit:
            raise self.damaged(f"the record {name} has {info.file_size} bytes, more than the {limit} it "
                               "can have")
        buffer = bytearray(info.file_size)
        self._read_into(info, buffer)
        return bytes(buffer)

    def storage(self, j, nbytes):
        """Storage j's bytes as a writable buffer: a slice of the mapped file when mapped
        and aligned, else a bytearray of its own."""
        info = self.info(_STORAGE.format(j))
        if info.file_size != nbytes:
            raise self.damaged(f"storage {j} should have {nbytes} bytes, but its record has "
                               f"{info.file_size}")
        if self.mapped is not None:
            start = self._data_start(info)
            if start % _ALIGNMENT == 0:
                return memoryview(self.mapped)[start:start + nbytes]
        buffer = bytearray(nbytes)
        self._read_into(info, buffer)
        return buffer

    def _read_into(self, info, buffer):
        view = memoryview(buffer)
        try:
            with self.zip.open(info) as record:
                done = 0
                while done < len(view):
                    got = record.readinto(view[done:done + _CHUNK])
                    if not got:
                        raise EOFError(f"the record ends after {done} of its {len(view)} bytes")
                    done += got
                if record.read(1):  # reaching the end is also what makes zipfile check the CRC
                    raise ValueError("the record is longer than its stated size")
        except MemoryError:
            raise
        except Exception as e:
            raise self.damaged(f"the record {info.filename} cannot be read ({type(e).__name__}: {e})") from e

    def _data_start(self, info):
        """Where a record's bytes begin: after its local header, whose name and extra
        fields have their own lengths."""
        local = self.mapped[info.header_offset:info.header_offset + _LOCAL_HEADER.size]
        if len(local) != _LOCAL_HEADER.size:
            raise self.damaged(f"the record {info.filename} has its header past the end of the file")
        signature, name_length, extra_length = _LOCAL_HEADER.unpack(local)
        start = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
        name_start = info.header_offset + _LOCAL_HEADER.size
        stored_name = self.mapped[name_start:name_start + name_length]
        if signature != b"PK\x03\x04" or stored_name != info.filename.encode():
            raise self.damaged(f"the local header of the record {info.filename} is damaged")
        if start + info.file_size > self.size:
            raise self.damaged(f"the record {info.filename} runs past the end of the file")
        return start

    def check_header(self):
        raw = self.read_small(_HEADER, _HEADER_LIMIT)
        header = _json(raw, self, _HEADER)
        if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
            raise self.damaged(f"{_HEADER} does not name the format {FORMAT_NAME!r}")
        version = header.get("version")
        if version != FORMAT_VERSION:
            raise RuntimeError(f"lucid.load: {self.name} has checkpoint format version {version!r}; this "
                               f"lucid reads version {FORMAT_VERSION} (a newer lucid wrote it?)")
        if header.get("byteorder") != sys.byteorder:
            raise RuntimeError(f"lucid.load: {self.name} was written on a {header.get('byteorder')}-endian "
                               f"machine; this one is {sys.byteorder}-endian and lucid cannot swap bytes")


def _json(raw, reader, record):
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as e:
        raise reader.damaged(f"{record} is not valid JSON ({e})") from None


# ---- tensors.json ----------------------------------------------------------------------------

class _TensorEntry:
    """One checked entry of tensors.json."""

    __slots__ = ("dtype", "location", "shape", "strides", "storage", "offset", "requires_grad",
                 "parameter")


def _is_count(x, limit=_MAX_INDEX):
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < limit


def _parse_index(reader):
    """(storage sizes, [_TensorEntry...]) from tensors.json, every tensor checked to lie
    within its storage: a file can claim any size, but none larger than it really is."""
    index = _json(reader.read_small(_INDEX, reader.size), reader, _INDEX)
    if not (isinstance(index, dict) and isinstance(index.get("storages"), list)
            and isinstance(index.get("tensors"), list)):
        raise reader.damaged(f"{_INDEX} must be an object with lists 'storages' and 'tensors'")
    sizes = []
    for j, storage in enumerate(index["storages"]):
        nbytes = storage.get("nbytes") if isinstance(storage, dict) else None
        if not _is_count(nbytes):
            raise reader.damaged(f"{_INDEX}: storage {j} has no valid 'nbytes'")
        if nbytes > reader.size:
            raise reader.damaged(f"{_INDEX}: storage {j} claims {nbytes} bytes, more than the whole "
                                 f"{reader.size}-byte file")
        sizes.append(nbytes)
    entries = [_tensor_entry(i, raw, sizes, reader) for i, raw in enumerate(index["tensors"])]
    return sizes, entries


def _tensor_entry(i, raw, storage_sizes, reader):
    def bad(problem):
        return reader.damaged(f"{_INDEX}: tensor {i} {problem}")

    keys = ("dtype", "device", "shape", "strides", "storage", "offset", "requires_grad", "parameter")
    if not isinstance(raw, dict) or any(k not in raw for k in keys):
        raise bad(f"must be an object with the keys {', '.join(keys)}")
    e = _TensorEntry()
    e.dtype = D._BY_NAME.get(raw["dtype"]) if isinstance(raw["dtype"], str) else None
    if e.dtype is None:
        raise bad(f"has unknown dtype {raw['dtype']!r:.100}")
    try:
        e.location = _location_name(Device(raw["device"]))
    except (RuntimeError, TypeError) as err:
        raise bad(f"has an invalid device ({err})") from None
    e.shape, e.strides = raw["shape"], raw["strides"]
    if not (isinstance(e.shape, list) and isinstance(e.strides, list) and len(e.shape) == len(e.strides)
            and all(_is_count(n) for n in e.shape) and all(_is_count(s) for s in e.strides)):
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
        if not _is_count(e.storage, len(storage_sizes)):
            raise bad(f"refers to storage {e.storage!r:.100}, which is not in the file")
        if not _is_count(e.offset):
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


# ---- map_location ----------------------------------------------------------------------------

def _location_name(d):
    """"cpu" or "gpu:N": a saved location, and a map_location dict's keys, in one spelling."""
    return "cpu" if d.type == "cpu" else f"gpu:{d.index or 0}"


def _placement(map_location):
    """map_location as a function (cpu_tensor, saved_location) -> the tensor where it belongs."""
    if map_location is None:
        return lambda t, location: _to_device(t, Device(location), location)
    if isinstance(map_location, (str, Device)):
        target = Device(map_location)
        return lambda t, location: _to_device(t, target, location)
    if isinstance(map_location, dict):
        table = {_location_name(Device(k)): Device(v) for k, v in map_location.items()}
        return lambda t, location: _to_device(t, table.get(location, Device(location)), location)
    if callable(map_location):
        def place(t, location):
            moved = map_location(t, location)
            if moved is None:
                return _to_device(t, Device(location), location)
            if not isinstance(moved, Tensor) or moved.dtype != t.dtype or tuple(moved.shape) != tuple(t.shape):
                raise TypeError(f"lucid.load: map_location returned {moved!r:.100} for a {t.dtype} storage of "
                                f"{t.numel()} elements; it must return a tensor of that dtype and shape "
                                "(or None)")
            return moved
        return place
    raise TypeError(f"lucid.load: map_location must be None, a device, a dict of devices or a callable "
                    f"(tensor, location), but got {type(map_location).__name__}")


def _to_device(t, target, saved_location):
    if target.type == "gpu":
        _require_gpu(target, f"lucid.load: a tensor saved on {saved_location} cannot be restored onto "
                             f"{_location_name(target)}", f"Pass map_location='cpu' (or a dict such as "
                             f"{{'{saved_location}': 'cpu'}}) to load it elsewhere")
    return t if t.device == target else t.to(target)


def _require_gpu(target, what, remedy):
    count = gpu.device_count()
    if (target.index or 0) >= count:
        here = "lucid has no usable GPU here" if count == 0 else f"this machine has {count} GPU(s)"
        raise RuntimeError(f"{what}: {here}. {remedy}")


# ---- unpickling --------------------------------------------------------------------------------

class _TensorBuilder:
    """Makes tensor i on first request (the unpickler asks by persistent id): each
    storage is read once, each tensor is built once, and tensors of one storage are
    views of one buffer."""

    def __init__(self, reader, storage_sizes, entries, place):
        self._reader, self._sizes, self._entries, self._place = reader, storage_sizes, entries, place
        self._tensors, self._bases, self._buffers = {}, {}, {}

    def __len__(self):
        return len(self._entries)

    def tensor(self, i):
        t = self._tensors.get(i)
        if t is None:
            t = self._tensors[i] = self._build(self._entries[i])
        return t

    def _build(self, e):
        if e.storage is None:
            where = self._place(empty(0, dtype=e.dtype), e.location).device
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
                buffer = self._buffers[j] = self._reader.storage(j, self._sizes[j])
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


class _BuildFailed(Exception):
    """Carries an error from building a tensor (map_location, a missing GPU) through the
    unpickler, so that it reaches the caller as itself rather than as a pickle error."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


class _TensorUnpickler(pickle.Unpickler):
    """Unpickles data.pkl, answering its persistent ids with the tensors of
    tensors.json. Every global is allowed: for trusted files only (weights_only=False)."""

    def __init__(self, file, builder):
        super().__init__(file)
        self._builder = builder

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "tensor"
                and _is_count(pid[1], len(self._builder))):
            raise pickle.UnpicklingError(f"data.pkl refers to {pid!r:.100}, which is not a tensor of "
                                         f"the file (it has {len(self._builder)})")
        try:
            return self._builder.tensor(pid[1])
        except Exception as e:
            raise _BuildFailed(e) from e


def _refuse_bytes_of_a_size(what):
    # bytes(n) and bytearray(n) allocate n zero bytes: a file could ask for any n.
    def make(data=b""):
        if not isinstance(data, (bytes, bytearray)):
            raise pickle.UnpicklingError(f"weights_only load: {what} may only be rebuilt from bytes, "
                                         f"not from {type(data).__name__}")
        return (bytes if what == "bytes" else bytearray)(data)
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


# The globals a weights_only load resolves, each to a callable that can only build
# data: no attribute access, no imports, no size-only allocations. Protocol 2 spells
# builtins "__builtin__".
_WEIGHTS_ONLY_GLOBALS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("_codecs", "encode"): _latin1_encode,
    ("lucid._dtype", "_dtype_by_name"): _dtype_by_name,
    ("lucid._device", "device"): Device,
    ("lucid._size", "Size"): Size,
}
for _module in ("builtins", "__builtin__"):
    _WEIGHTS_ONLY_GLOBALS.update({
        (_module, "set"): set, (_module, "frozenset"): frozenset, (_module, "complex"): complex,
        (_module, "slice"): slice, (_module, "bytes"): _refuse_bytes_of_a_size("bytes"),
        (_module, "bytearray"): _refuse_bytes_of_a_size("bytearray"),
    })
del _module


class _WeightsOnlyUnpickler(_TensorUnpickler):
    def find_class(self, module, name):
        allowed = _WEIGHTS_ONLY_GLOBALS.get((module, name))
        if allowed is None:
            raise pickle.UnpicklingError(
                f"lucid.load(weights_only=True) refused the global '{module}.{name}': a weights-only load "
                "rebuilds only tensors, plain containers and values, lucid dtypes, devices and Sizes. If "
                "you trust this file's source, load it with weights_only=False (which runs the code the "
                "file names)")
        return allowed


def _unpickle(payload, builder, weights_only, name):
    _check_pickle_framing(payload, name)
    unpickler_class = _WeightsOnlyUnpickler if weights_only else _TensorUnpickler
    try:
        return unpickler_class(io.BytesIO(payload), builder).load()
    except _BuildFailed as failed:
        raise failed.error from None
    except (pickle.UnpicklingError, MemoryError):
        raise
    except Exception as e:
        raise pickle.UnpicklingError(f"lucid.load: the object in {name} cannot be unpickled "
                                     f"({type(e).__name__}: {e})") from e


def _check_pickle_framing(payload, name):
    """Walks data.pkl's opcodes without running any, checking that each length field
    fits the bytes that follow it. The unpickler allocates an object of the stated
    length before it reads the bytes, so a tampered length such as 2**40 would be an
    allocation; pickletools reads only what is there."""
    import pickletools

    try:
        for op, arg, _ in pickletools.genops(payload):
            # The unpickler sizes its memo to the largest index it is told to store
            # at: every stored object takes at least a byte of the pickle, so a real
            # index is below its length (LONG_BINPUT 2**31 would be a 16 GiB memo).
            if op.name in ("PUT", "BINPUT", "LONG_BINPUT") and not 0 <= int(arg) < len(payload):
                raise ValueError(f"memo index {arg} past the pickle's {len(payload)} bytes")
    except Exception as e:
        raise pickle.UnpicklingError(f"lucid.load: data.pkl in {name} is damaged ({e})") from None


# ---- safetensors ------------------------------------------------------------------------------

def save_safetensors_to_bytes(tensors, metadata=None):
    """The safetensors file for `tensors` (dict of name -> Tensor) as bytes."""
    header, ordered = S.plan(tensors, metadata)
    return header + b"".join(S.tensor_bytes(t) for _, t in ordered)


def save_safetensors(tensors, path, metadata=None):
    """Writes `tensors` (dict of name -> Tensor) to a safetensors file at `path`,
    atomically. `metadata` is an optional dict of str -> str stored in the header.

    Each tensor is written by its logical contents (a strided view as the values it
    shows). Tensors that share memory are each written out in full, as
    safetensors.numpy does, and load as separate tensors."""
    if not _is_path(path):
        raise TypeError(f"save_safetensors: path must be a str or os.PathLike, but got {type(path).__name__} "
                        "(save_safetensors_to_bytes gives the bytes)")
    header, ordered = S.plan(tensors, metadata)
    with _atomic_write(path) as out:
        out.write(header)
        for _, t in ordered:
            out.write(S.tensor_bytes(t))


def load_safetensors_from_bytes(data, device="cpu"):
    """dict of name -> Tensor from the bytes of a safetensors file."""
    try:
        view = memoryview(data).cast("B")
    except TypeError:
        raise TypeError(f"load_safetensors_from_bytes expects bytes, bytearray or memoryview, but got "
                        f"{type(data).__name__}") from None
    header_len = S.header_length(view[:8], len(view))
    specs, _ = S.parse_header(view[8:8 + header_len], len(view) - 8 - header_len)
    start = 8 + header_len
    return _safetensors_tensors(specs, lambda spec: bytearray(view[start + spec.begin:start + spec.end]),
                                device)


def load_safetensors(path, device="cpu"):
    """dict of name -> Tensor from the safetensors file at `path`, on `device`.
    The header is checked in full (sizes, offsets, dtypes) before any tensor memory is
    allocated; problems raise ValueError naming them."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        header_len = S.header_length(f.read(8), size)
        specs, _ = S.parse_header(f.read(header_len), size - 8 - header_len)
        start = 8 + header_len

        def read(spec):
            buffer = bytearray(spec.end - spec.begin)
            f.seek(start + spec.begin)
            if f.readinto(buffer) != len(buffer):
                raise ValueError(f"safetensors tensor {spec.name!r}: the file changed while it was read")
            return buffer

        return _safetensors_tensors(specs, read, device)


def load_safetensors_metadata(path):
    """The header's __metadata__ (dict of str -> str; {} when there is none) of the
    safetensors file at `path`; no tensor is read."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        header_len = S.header_length(f.read(8), size)
        return S.parse_header(f.read(header_len), size - 8 - header_len)[1]


def _safetensors_tensors(specs, read, where):
    target = Device(where)
    if target.type == "gpu":  # a missing GPU is reported before anything is read
        _require_gpu(target, f"load_safetensors: cannot load onto {_location_name(target)}",
                     "Pass device='cpu'")
    tensors = {}
    for spec in specs:
        if spec.begin == spec.end:
            tensors[spec.name] = empty(spec.shape, dtype=spec.dtype, device=target)
            continue
        buffer = read(spec)
        if spec.dtype is D.bool:
            S.check_bool_bytes(buffer, spec.name)
        t = frombuffer(buffer, dtype=spec.dtype).reshape(spec.shape)
        tensors[spec.name] = t if target.type == "cpu" else t.to(target)
    return tensors
