#!/usr/bin/env python3
"""Fuzz target: buffer-protocol import (csrc/bindings/convert.cpp): lucid.frombuffer,
lucid.tensor, lucid.asarray, lucid.as_tensor and lucid.from_numpy over objects that
export buffers.

The input bytes choose an exporter and fill it: bytes, bytearray, a memoryview cast to
a struct format and shape (sometimes sliced with a step), an array.array of any
typecode, a ctypes array, or a NumPy array of any dtype (supported or not, either
byte order), any shape, and layout: C or Fortran order, a reversed or stepped slice,
a view with arbitrary in-bounds strides (negative, zero, not a multiple of the item
size) at a misaligned offset, read-only or writable, 0-d or empty. Then one of the
import functions is called with fuzzed arguments (dtype, count, offset, copy).
TypeError, ValueError, RuntimeError and BufferError are the expected rejections.

Oracles, for what is accepted:
  - frombuffer: count * itemsize fits between offset and the buffer's end, and the
    tensor holds exactly those bytes;
  - a NumPy array: the tensor has the array's shape, its dtype, and its values;
  - other buffers (read as sequences of numbers, as PyTorch does): the tensor equals
    lucid.tensor of the same values as a list;
  - writing into a tensor imported from read-only memory never changes that memory;
  - once the tensor is gone, the exporter's buffer is released (a bytearray can be
    resized again, a NumPy array's reference count is back where it was).

    python fuzz/fuzz_buffer.py fuzz/corpus/buffer
"""

import array
import ctypes as C
import gc
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as H  # noqa: E402

if __name__ == "__main__":
    import atheris

    with atheris.instrument_imports(include=["lucid._creation"]):
        import lucid
else:
    import lucid

import numpy as np  # noqa: E402  (to build exporters and as the reference; lucid never imports it)

TARGET = "buffer"
CLEAR = (TypeError, ValueError, RuntimeError, BufferError)

LUCID_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
                "float64", "complex64"]
# NumPy dtypes lucid takes, by their lucid name; anything else must be refused.
NP_TO_LUCID = {"bool": "bool", "uint8": "uint8", "int8": "int8", "int16": "int16", "int32": "int32",
               "int64": "int64", "float16": "float16", "float32": "float32", "float64": "float64",
               "complex64": "complex64"}
NP_DTYPES = ["u1", "i1", "i2", "i4", "i8", "f2", "f4", "f8", "c8", "?", "u2", "u4", "u8", "c16", ">i4", ">f8",
             ">i2", "<f4", "=i8", "V4", "S3", "U2", "M8[s]", "m8[s]", "g", "intc", "longlong", "i4,i2"]
MV_FORMATS = ["B", "b", "h", "H", "i", "I", "l", "L", "q", "Q", "f", "d", "?", "c", "n", "N", "P"]  # no "e": cast refuses it
ARRAY_CODES = ["b", "B", "h", "H", "i", "I", "l", "L", "q", "Q", "f", "d"]
CTYPES = [C.c_int8, C.c_uint8, C.c_int16, C.c_uint16, C.c_int32, C.c_int64, C.c_float, C.c_double, C.c_bool,
          C.c_char, C.c_longdouble]


def _shape_for(b, count):
    """A shape of 0-4 dims whose product is `count` (or any, for an empty array)."""
    ndim = b.below(5)
    shape = []
    left = count
    for _ in range(max(ndim - 1, 0)):
        d = b.below(5) + 1
        if left % d == 0:
            shape.append(d)
            left //= d
        else:
            shape.append(1)
    if ndim:
        shape.append(left)
    elif count != 1:
        shape = [count]
    return tuple(shape)


class Case:
    pass


def build(b):
    """(exporter, description) from the bytes."""
    kind = b.below(9)
    size = b.below(257)
    raw = b.take(size)
    c = Case()
    c.kind = kind
    if kind == 0:
        return bytes(raw), "bytes"
    if kind == 1:
        return bytearray(raw), "bytearray"
    if kind == 2:
        fmt = b.pick(MV_FORMATS)
        base = bytearray(raw) if b.bool() else bytes(raw)
        item = C.sizeof({"B": C.c_uint8, "b": C.c_int8, "h": C.c_int16, "H": C.c_uint16, "i": C.c_int,
                         "I": C.c_uint, "l": C.c_long, "L": C.c_ulong, "q": C.c_longlong, "Q": C.c_ulonglong,
                         "f": C.c_float, "d": C.c_double, "e": C.c_int16, "?": C.c_bool, "c": C.c_char,
                         "n": C.c_ssize_t, "N": C.c_size_t, "P": C.c_void_p}[fmt])
        n = len(base) // item
        shape = _shape_for(b, n)
        view = memoryview(base)[:n * item].cast("B").cast(fmt, shape) if n else memoryview(base)[:0].cast(fmt)
        if view.ndim == 1 and b.bool():
            view = view[b.below(3)::b.pick([1, 2, 3, -1, -2])]
        return view, f"memoryview({type(base).__name__}) format {fmt} shape {view.shape}"
    if kind == 3:
        code = b.pick(ARRAY_CODES)
        a = array.array(code)
        a.frombytes(raw[:len(raw) // a.itemsize * a.itemsize])
        return a, f"array.array({code!r})"
    if kind == 4:
        ctype = b.pick(CTYPES)
        n = len(raw) // C.sizeof(ctype)
        obj = (ctype * n).from_buffer_copy(raw[:n * C.sizeof(ctype)]) if n else (ctype * 0)()
        return obj, f"ctypes {ctype.__name__} * {n}"
    # NumPy arrays: the rest of the kinds
    dtype = np.dtype(b.pick(NP_DTYPES))
    buf = bytearray(raw) + bytearray(16)
    layout = b.below(7)
    n = len(raw) // dtype.itemsize
    try:
        if layout == 0:  # any strides, any (possibly misaligned) offset, inside the buffer
            ndim = b.below(4)
            shape = tuple(b.below(5) for _ in range(ndim))
            strides = tuple(b.pick([0, 1, 2, 3, 4, 8, 16, -1, -4, -8, -16, dtype.itemsize, -dtype.itemsize,
                                    7 * dtype.itemsize]) for _ in range(ndim))
            arr = np.ndarray(shape, dtype, buffer=buf, offset=b.below(len(buf) + 1), strides=strides)
        elif layout == 1:
            arr = np.frombuffer(buf, dtype, count=n, offset=1) if n and len(buf) >= 1 + n * dtype.itemsize \
                else np.zeros(0, dtype)
        else:
            arr = np.frombuffer(buf, dtype, count=n).reshape(_shape_for(b, n)) if n else np.zeros(
                (b.below(3), 0), dtype)
            if layout == 2 and arr.ndim >= 2:
                arr = arr.T
            elif layout == 3 and arr.ndim >= 1:
                arr = arr[::-1]
            elif layout == 4 and arr.ndim >= 1:
                arr = arr[b.below(2)::b.below(3) + 1]
            elif layout == 5:
                arr = np.asfortranarray(arr)
    except (ValueError, TypeError):
        arr = np.zeros(3, "f4")
    if arr.size == 1 and b.u8() < 30:
        arr = arr.reshape(())
    if b.u8() < 64:
        arr.flags.writeable = False
    return arr, f"ndarray {arr.dtype.str} shape {arr.shape} strides {arr.strides} " \
                f"{'read-only' if not arr.flags.writeable else 'writable'}"


def _bytes_of(obj):
    """The exporter's elements' bytes in C order."""
    if isinstance(obj, np.ndarray):
        return obj.tobytes()
    try:
        return memoryview(obj).cast("B").tobytes()
    except TypeError:
        return memoryview(obj).tobytes()


def _readonly(obj):
    if isinstance(obj, np.ndarray):
        return not obj.flags.writeable
    try:
        return memoryview(obj).readonly
    except (TypeError, ValueError):
        return True


def check_frombuffer(obj, t, dtype, count, offset):
    if isinstance(obj, np.ndarray):
        length = obj.nbytes
    else:
        with memoryview(obj) as view:
            length = view.nbytes
    item = t.itemsize
    if offset < 0 or t.numel() * item > length - offset or t.dim() != 1:
        raise H.Finding(f"frombuffer(count={count}, offset={offset}, dtype={dtype}) over {length} bytes gave "
                        f"{t.numel()} elements of {item} bytes")
    if count >= 0 and t.numel() != count:
        raise H.Finding(f"frombuffer(count={count}) gave {t.numel()} elements")
    got = H.touch_tensor(t)
    if got is not None and got != _bytes_of(obj)[offset:offset + len(got)]:
        raise H.Finding("frombuffer's tensor differs from the buffer's bytes")


def check_numpy(arr, t, dtype):
    name = NP_TO_LUCID.get(arr.dtype.name) if arr.dtype.isnative else None
    if name is None:
        raise H.Finding(f"a NumPy array of dtype {arr.dtype.str} was accepted as {t.dtype._name}")
    if tuple(t.shape) != arr.shape:
        raise H.Finding(f"NumPy array of shape {arr.shape} became {list(t.shape)}")
    if dtype is None or dtype == name:
        if t.dtype._name != name:
            raise H.Finding(f"NumPy {arr.dtype.name} became {t.dtype._name}")
        got = H.touch_tensor(t)
        if got is not None and got != np.ascontiguousarray(arr).tobytes():
            raise H.Finding(f"the tensor's values differ from the NumPy array's ({arr.dtype.str}, shape "
                            f"{arr.shape}, strides {arr.strides})")
    else:
        H.touch_tensor(t)


def check_sequence(obj, t, dtype, data):
    """A non-NumPy buffer is read as a sequence of numbers: the same as its values as a list."""
    try:
        values = memoryview(obj).tolist() if not isinstance(obj, (bytes, bytearray)) else list(obj)
    except (NotImplementedError, TypeError, ValueError):
        H.touch_tensor(t)
        return
    ok, ref = H.attempt(TARGET, data, lambda: lucid.tensor(values, dtype=dtype and getattr(lucid, dtype)),
                        CLEAR)
    got = H.touch_tensor(t)
    if ok and got is not None:
        if (t.dtype, tuple(t.shape), repr(t.tolist())) != (ref.dtype, tuple(ref.shape), repr(ref.tolist())):
            raise H.Finding(f"lucid.tensor of a buffer differs from lucid.tensor of its values as a list "
                            f"({t.dtype} {list(t.shape)} vs {ref.dtype} {list(ref.shape)})")


def call(b, obj):
    """(function name, arguments, thunk)."""
    fn = b.below(6)
    dtype = b.pick(LUCID_DTYPES) if b.u8() < 80 else None
    if fn == 0:
        count = b.small_or_wild(small=64) if b.u8() < 128 else -1
        offset = b.small_or_wild(small=32) if b.u8() < 128 else 0
        dtype = dtype or "uint8"
        return "frombuffer", (dtype, count, offset), lambda: lucid.frombuffer(
            obj, dtype=getattr(lucid, dtype), count=count, offset=offset)
    dt = dtype and getattr(lucid, dtype)
    if fn == 1:
        return "tensor", (dtype,), lambda: lucid.tensor(obj, dtype=dt)
    if fn == 2:
        copy = b.pick([None, True, False])
        return "asarray", (dtype, copy), lambda: lucid.asarray(obj, dtype=dt, copy=copy)
    if fn == 3:
        return "as_tensor", (dtype,), lambda: lucid.as_tensor(obj, dtype=dt)
    if fn == 4:
        return "from_numpy", (None,), lambda: lucid.from_numpy(obj)
    return "asarray", (None, None), lambda: lucid.asarray(obj)


def _refs(obj):
    return sys.getrefcount(obj)  # counted one call deep, as released() counts it


def released(obj, refcount):
    if isinstance(obj, bytearray):
        try:
            obj.append(0)
            obj.pop()
            return True
        except BufferError:
            return False
    if isinstance(obj, np.ndarray):
        return sys.getrefcount(obj) <= refcount
    return True


def TestOneInput(data):
    data = bytes(data)
    b = H.Bytes(data)
    obj, what = build(b)
    name, args, thunk = call(b, obj)
    if H.GUARDS and isinstance(obj, memoryview) and obj.ndim != 1 and name != "frombuffer":
        # Known bug (tests/python/test_fuzz_regressions.py): lucid.tensor of a memoryview
        # that is 0-d or of two or more dimensions crashes (indexing it fails and lucid
        # does not check).
        return
    if H.GUARDS and name == "frombuffer" and args[1] > 0 and args[1] * 16 + max(args[2], 0) > 2 ** 63 - 1:
        # Known bug: frombuffer's count * itemsize overflows, and the check passes.
        return
    is_numpy = isinstance(obj, np.ndarray)
    before = _bytes_of(obj)
    readonly = _readonly(obj)
    refcount = _refs(obj)
    ok, t = H.attempt(TARGET, data, thunk, CLEAR)
    if ok:
        if name == "frombuffer":
            check_frombuffer(obj, t, *args)
        elif is_numpy:
            check_numpy(obj, t, args[0])
        elif name in ("tensor", "asarray", "as_tensor"):
            check_sequence(obj, t, args[0], data)
        if readonly and 0 < t.numel() <= H.TOUCH_LIMIT:
            t.zero_()
            if _bytes_of(obj) != before:
                raise H.Finding(f"writing into a tensor from {name} changed read-only memory ({what})")
    t = None
    if not released(obj, refcount):
        gc.collect()
        if not released(obj, refcount):
            raise H.Finding(f"{name}{args} kept the buffer of {what} exported after the tensor was dropped")


if __name__ == "__main__":
    H.instrument_harness(globals())
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
