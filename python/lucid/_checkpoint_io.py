"""The file side of lucid.save / lucid.load: atomic writes, zip records whose data is
aligned for mmap, and a reader of zip records that checks every size against the file
before allocating and every CRC-32 as it reads. Both checkpoint formats
(python/lucid/_torch_format.py, python/lucid/_checkpoint_v1.py) are built on it."""

from __future__ import annotations

import contextlib
import io
import mmap as _mmap
import os
import stat
import struct

ALIGNMENT = 64
_PAD_FIELD_ID = 0x756C  # a zip "extra field" id of our own; zip readers skip unknown ones
# zipfile is imported where used: with what it imports it would add about 15 ms to every
# `import lucid`.
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # no timestamps: the same object saves to the same bytes
_CHUNK = 16 << 20  # records are read in pieces, so no second full-size copy is made
LOCAL_HEADER = struct.Struct("<4s22xHH")  # a zip local header: signature ... name and extra lengths
_ZIP64_LOCAL_FIELD = 20  # what force_zip64=True adds to each local header


def is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


# ---- writing -----------------------------------------------------------------------------------

@contextlib.contextmanager
def atomic_write(path):
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


def write_record(archive, name, data, align=False):
    """Adds one uncompressed record (with its CRC-32) to the zipfile.ZipFile `archive`;
    align=True starts its data on a 64-byte boundary of the file."""
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
    return info


def _alignment_padding(archive, name):
    """An extra field that pads the record's local header so its data starts on a
    64-byte boundary of the file. archive.start_dir is where zipfile writes the next
    local header; if that ever changes, records merely lose their alignment (load then
    copies them instead of mapping them)."""
    data_start = archive.start_dir + LOCAL_HEADER.size + len(name.encode()) + _ZIP64_LOCAL_FIELD
    pad = -(data_start + 4) % ALIGNMENT  # 4: the extra field's own id and length
    return struct.pack("<HH", _PAD_FIELD_ID, pad) + bytes(pad)


# ---- reading -----------------------------------------------------------------------------------

@contextlib.contextmanager
def open_for_reading(f, use_mmap):
    """(file, size, name for messages, mmap or None) for a path or a file object."""
    if is_path(f):
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


class ArchiveReader:
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
            raise self.damaged("it is a plain pickle (pickle.dump, or torch.save with "
                               "_use_new_zipfile_serialization=False), not a checkpoint archive; lucid.load "
                               "does not unpickle plain pickles")
        if len(head) >= 9 and head[8:9] == b"{":
            raise self.damaged("it looks like a safetensors file: use lucid.load_safetensors")
        raise self.damaged("it does not start with a zip signature (the file is truncated at the front, "
                           "damaged or in another format)")

    def info(self, name):
        info = self.members.get(name)
        if info is None:
            raise self.damaged(f"the record {name} is missing")
        if info.compress_type != 0:  # zipfile.ZIP_STORED
            raise self.damaged(f"the record {name} is compressed; checkpoints store records as is")
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

    def storage(self, name, nbytes):
        """The record `name` (tensor bytes) as a writable buffer: a slice of the mapped
        file when mapped and aligned, else a bytearray of its own."""
        info = self.info(name)
        if info.file_size != nbytes:
            raise self.damaged(f"{name} should have {nbytes} bytes, but its record has {info.file_size}")
        if self.mapped is not None:
            start = self._data_start(info)
            if start % ALIGNMENT == 0:
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
        local = self.mapped[info.header_offset:info.header_offset + LOCAL_HEADER.size]
        if len(local) != LOCAL_HEADER.size:
            raise self.damaged(f"the record {info.filename} has its header past the end of the file")
        signature, name_length, extra_length = LOCAL_HEADER.unpack(local)
        start = info.header_offset + LOCAL_HEADER.size + name_length + extra_length
        name_start = info.header_offset + LOCAL_HEADER.size
        stored_name = self.mapped[name_start:name_start + name_length]
        if signature != b"PK\x03\x04" or stored_name != info.filename.encode():
            raise self.damaged(f"the local header of the record {info.filename} is damaged")
        if start + info.file_size > self.size:
            raise self.damaged(f"the record {info.filename} runs past the end of the file")
        return start


def is_count(x, limit=2 ** 63):
    """A non-negative int below `limit` (by default: one the engine's int64 holds)."""
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < limit


class BuildFailed(Exception):
    """Carries an error from building a tensor (map_location, a missing GPU, a damaged
    record) through the unpickler, so that it reaches the caller as itself rather than
    as a pickle error."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error
