#!/usr/bin/env python3
"""Fuzz target: lucid.load's checkpoint formats (python/lucid/serialization.py): the zip
archive in PyTorch's layout (data.pkl, version, byteorder, data/<key>) and in lucid's
format version 1 (header.json, tensors.json, storages/<j>), data.pkl through the
weights-only unpickler (python/lucid/_unpickle.py).

Each input is a would-be checkpoint, loaded with the default weights_only=True (never
False: that would run whatever code the bytes name) from a file object, and for a
quarter of the inputs also from a file on tmpfs with mmap=True. RuntimeError and
pickle.UnpicklingError are the expected rejections. Whatever loads is walked and every
tensor in it read; a load from the file object and one through mmap must give the same
object (mmap skips the tensor bytes' CRC, so it may accept what the other refuses, not
the other way round).

    python fuzz/fuzz_load.py fuzz/corpus/load -dict=fuzz/load.dict
"""

import io
import math
import os
import pickle
import random
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as H  # noqa: E402

if __name__ == "__main__":
    import atheris

    with atheris.instrument_imports(include=["lucid", "json", "zipfile", "pickle", "pickletools"]):
        import lucid
        import lucid.serialization  # noqa: F401
        import zipfile  # noqa: F401
        import pickletools  # noqa: F401
else:
    import lucid

TARGET = "load"
CLEAR = (RuntimeError, pickle.UnpicklingError)


def _read(obj):
    """The loaded object in comparable form: tensors as (dtype, shape, bytes)."""
    out = []

    def visit(x):
        if isinstance(x, lucid.Tensor):
            out.append(("tensor", x.dtype._name, tuple(x.shape), H.touch_tensor(x)))
        elif isinstance(x, float) and math.isnan(x):
            out.append("nan")
        elif isinstance(x, complex) and (math.isnan(x.real) or math.isnan(x.imag)):
            out.append("nan-complex")
        else:
            try:
                hash(x)
                out.append(x)
            except TypeError:
                out.append(type(x).__name__)

    H.walk(obj, visit)
    return out


def _huge_memo_index(data):
    """Whether data.pkl puts or gets a memo entry past 2**20: the unpickler grows its memo
    table to twice the index (8 bytes an entry, zeroed) before anything else."""
    import pickletools
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            payload = z.read(next(n for n in z.namelist() if n.endswith("/data.pkl")))
        return any(op.name in ("PUT", "BINPUT", "LONG_BINPUT", "GET", "BINGET", "LONG_BINGET")
                   and isinstance(arg, int) and arg > 1 << 20 for op, arg, _ in pickletools.genops(payload))
    except Exception:  # noqa: BLE001 - not an archive, or a broken pickle: lucid refuses it anyway
        return False


def TestOneInput(data):
    data = bytes(data)
    if H.GUARDS and b"data.pkl" in data and _huge_memo_index(data):
        # Known bug (tests/python/test_fuzz_regressions.py): a memo index of 2**25 makes
        # lucid.load allocate and zero 512 MiB; 2**31, a MemoryError.
        return
    ok, loaded = H.attempt(TARGET, data, lambda: _read(lucid.load(io.BytesIO(data))), CLEAR)
    if zlib.crc32(data) % 4:
        return
    path = H.write_scratch("input.lucid", data)
    ok_map, mapped = H.attempt(TARGET, data, lambda: _read(lucid.load(path, mmap=True)), CLEAR)
    if ok and not ok_map:
        raise H.Finding("lucid.load accepts the checkpoint from a file object but refuses it with mmap=True")
    if ok and loaded != mapped:
        raise H.Finding("lucid.load from a file object and with mmap=True give different objects")


# ---- structure-aware mutation ----------------------------------------------------------------
# Every record carries a CRC-32, so a flipped byte inside a record is caught by the CRC
# check long before the parsers behind it see it. Most of the time the mutator unpacks
# the archive, mutates one record (or drops, duplicates or renames one) and writes a
# fresh archive with correct CRCs.

def _records(data):
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return [(info.filename, z.read(info)) for info in z.infolist()]


def _archive(records, rng):
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        for name, body in records:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            if rng.random() < 0.02:
                info.compress_type = zipfile.ZIP_DEFLATED
            with z.open(info, "w", force_zip64=rng.random() < 0.9) as f:
                f.write(body)
    return out.getvalue()


def CustomMutator(data, max_size, seed):
    import atheris

    rng = random.Random(seed)
    if rng.random() < 0.8:
        try:
            records = _records(data)
        except Exception:  # noqa: BLE001 - not an archive (yet): mutate it as bytes
            records = None
        if records:
            i = rng.randrange(len(records))
            name, body = records[i]
            mode = rng.randrange(10)
            if mode < 7:
                records[i] = (name, atheris.Mutate(body, len(body) + 64))
            elif mode == 7:
                del records[i]
            elif mode == 8:
                records.insert(rng.randrange(len(records) + 1), records[i])
            else:
                records[i] = (rng.choice(["archive/data/0", "archive/data/1", "archive/data.pkl", "archive/version",
                                          "archive/byteorder", "x/data.pkl", "checkpoint/storages/0",
                                          "checkpoint/data.pkl", "checkpoint/tensors.json", name + "x"]), body)
            try:
                out = _archive(records, rng)
            except Exception:  # noqa: BLE001
                out = None
            if out is not None and len(out) <= max_size:
                return out
    return atheris.Mutate(data, max_size)


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput, custom_mutator=CustomMutator)
    atheris.Fuzz()
