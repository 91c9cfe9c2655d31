#!/usr/bin/env python3
"""Fuzz target: the IDX reader (lucid.utils.datasets.read_idx), which takes a path.

Each input is written to tmpfs three ways and read back: as x.idx (the bytes as is),
as x.idx.gz holding the bytes gzipped (must give exactly what x.idx gives) and as
y.idx.gz holding the bytes as is (so the fuzzer also reaches read_idx's gzip path with
broken gzip streams). ValueError is the expected rejection. A file an independent
decoder (struct + numpy, below) reads as well-formed must load with its dtype, shape
and values; one it refuses must be refused.

    python fuzz/fuzz_idx.py fuzz/corpus/idx
"""

import gzip
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as H  # noqa: E402

if __name__ == "__main__":
    import atheris

    with atheris.instrument_imports(include=["lucid.utils.datasets", "gzip"]):
        import lucid
        from lucid.utils.datasets import read_idx
else:
    import lucid
    from lucid.utils.datasets import read_idx

import numpy as np  # noqa: E402  (the reference decoder; lucid itself never imports NumPy)

TARGET = "idx"
TYPES = {0x08: ("uint8", ">u1"), 0x09: ("int8", ">i1"), 0x0B: ("int16", ">i2"), 0x0C: ("int32", ">i4"),
         0x0D: ("float32", ">f4"), 0x0E: ("float64", ">f8")}


def reference(data):
    """(dtype name, shape, native-order bytes) of a well-formed IDX file, else None."""
    if len(data) < 4:
        return None
    zero, code, ndims = struct.unpack(">HBB", data[:4])
    header = 4 + 4 * ndims
    if zero != 0 or code not in TYPES or ndims == 0 or len(data) < header:
        return None
    dims = struct.unpack(f">{ndims}I", data[4:header])
    name, big = TYPES[code]
    count = 1
    for d in dims:
        count *= d
    if len(data) - header != count * np.dtype(big).itemsize:
        return None
    values = np.frombuffer(data, dtype=big, offset=header, count=count)
    return name, dims, values.astype(np.dtype(big).newbyteorder("=")).tobytes()


def _read(path):
    t = read_idx(path)
    return t.dtype._name, tuple(t.shape), H.touch_tensor(t)


def TestOneInput(data):
    data = bytes(data)
    expected = reference(data)
    ok, got = H.attempt(TARGET, data, lambda: _read(H.write_scratch("x.idx", data)))
    if ok and expected is None:
        raise H.Finding(f"read_idx accepted a malformed IDX file as {got[0]} {got[1]}")
    if expected is not None and not ok:
        H.note(TARGET, "false-rejection", f"read_idx refuses a well-formed IDX file ({expected[0]}, shape "
               f"{list(expected[1])}) with {got.__name__}", data, key=("false-rejection", got.__name__,
                                                                       0 in expected[1]))
    if ok:
        name, dims, body = expected
        if got[0] != name or got[1] != tuple(dims):
            raise H.Finding(f"read_idx gives {got[0]} {got[1]} for an IDX file of {name} {dims}")
        if got[2] is not None and got[2] != body:
            raise H.Finding("read_idx's values differ from the file's")
    ok_gz, got_gz = H.attempt(TARGET, data, lambda: _read(H.write_scratch("x.idx.gz",
                                                                         gzip.compress(data, 1, mtime=0))))
    if (ok, got if ok else None) != (ok_gz, got_gz if ok_gz else None):
        raise H.Finding("read_idx reads a file and the same file gzipped differently")
    H.attempt(TARGET, data, lambda: _read(H.write_scratch("y.idx.gz", data)))


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
