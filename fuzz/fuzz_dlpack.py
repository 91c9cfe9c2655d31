#!/usr/bin/env python3
"""Fuzz target: DLPack import (lucid.from_dlpack / lucid.asarray; csrc/bindings/dlpack.cpp).

The input bytes describe a DLPack producer: a DLManagedTensor or a
DLManagedTensorVersioned built with ctypes (ndim, shape and strides arrays, dtype
code/bits/lanes, device type/id, byte_offset, version, flags, deleter or none), over a
ctypes buffer of the input's chosen size, wrapped in a PyCapsule named as the standard
says (sometimes named wrongly), handed over as a capsule or through an object with
__dlpack__ / __dlpack_device__.

A producer is trusted to describe valid memory, so lucid cannot check bounds; what it
must do is refuse malformed metadata (negative ndim, missing shape, negative sizes, an
unknown dtype or device, sizes and strides whose byte extent overflows int64) with an
Exception, and otherwise build the tensor the metadata describes. Oracles:
  - an accepted tensor has the declared dtype, shape and strides, and its byte extent
    fits int64; when the metadata's reach lies inside the buffer, the tensor is read
    in full and must hold the buffer's bytes; a read-only (versioned, flag 1) import
    is a copy that writes never reach;
  - the producer's deleter runs exactly once after everything is dropped, whether lucid
    accepted the capsule or not (the capsule's destructor runs it for a capsule lucid
    did not consume, as the standard says); a consumed capsule is refused the second
    time.

    python fuzz/fuzz_dlpack.py fuzz/corpus/dlpack
"""

import ctypes as C
import gc
import itertools
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

TARGET = "dlpack"
CLEAR = (RuntimeError, TypeError, ValueError, BufferError)
INT64_MAX = 2 ** 63 - 1


# ---- the DLPack ABI (csrc/bindings/dlpack_abi.h) -----------------------------------------------

class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32), ("dtype", DLDataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


DELETER = C.CFUNCTYPE(None, C.c_void_p)


class DLManagedTensor(C.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p), ("deleter", DELETER)]


class DLPackVersion(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class DLManagedTensorVersioned(C.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", C.c_void_p), ("deleter", DELETER),
                ("flags", C.c_uint64), ("dl_tensor", DLTensor)]


NAME = b"dltensor"
NAME_VERSIONED = b"dltensor_versioned"
# Wrong names: a capsule under any of these must be refused, and nobody owns it.
WRONG_NAMES = [b"used_dltensor", b"used_dltensor_versioned", b"DLTENSOR", b"", None]

_api = C.pythonapi
_api.PyCapsule_New.restype = C.py_object
_api.PyCapsule_New.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
_api.PyCapsule_IsValid.restype = C.c_int
_api.PyCapsule_IsValid.argtypes = [C.c_void_p, C.c_char_p]
_api.PyCapsule_GetPointer.restype = C.c_void_p
_api.PyCapsule_GetPointer.argtypes = [C.c_void_p, C.c_char_p]

# Deleter calls by managed-tensor address, for the current input.
_deleted = {}
_managed = {}  # address -> the ctypes struct, for the capsule destructor


@DELETER
def _deleter(address):
    _deleted[address] = _deleted.get(address, 0) + 1


CAPSULE_DESTRUCTOR = C.CFUNCTYPE(None, C.c_void_p)


@CAPSULE_DESTRUCTOR
def _capsule_destructor(capsule):
    # What a producer's capsule does when it dies: if nobody consumed it (it still has
    # its live name), it calls the managed tensor's deleter itself.
    for name in (NAME, NAME_VERSIONED):
        if _api.PyCapsule_IsValid(capsule, name):
            address = _api.PyCapsule_GetPointer(capsule, name)
            mt = _managed.get(address)
            if mt is not None and mt.deleter:
                mt.deleter(address)


# ---- building a producer from the bytes ----------------------------------------------------

DTYPES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64", (1, 8): "uint8",
          (2, 16): "float16", (2, 32): "float32", (2, 64): "float64", (4, 16): "bfloat16",
          (5, 64): "complex64", (6, 8): "bool"}


VALID_DTYPES = sorted(DTYPES)
ITEMSIZE = {"int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint8": 1, "float16": 2, "float32": 4,
            "float64": 8, "bfloat16": 2, "complex64": 8, "bool": 1}


class Producer:
    pass


def build(b):
    p = Producer()
    p.data = b.data
    p.versioned = b.bool()
    mode = b.u8()
    if mode < 200:
        p.ndim = mode % 7
    else:
        p.ndim = b.pick([8, 31, 64, 255, 1000, 4097, 2 ** 31 - 1, -1, -2, -(2 ** 31), 2 ** 16 + 1])
    # A shape array exists for ndim > 0 unless the input asks for NULL; a very large
    # ndim always comes with NULL arrays (a producer would not hand over short ones).
    huge = p.ndim > 4097
    p.shape_null = huge or (p.ndim != 0 and b.u8() < 12)
    p.strides_null = huge or p.ndim == 0 or b.u8() < 100
    n_entries = 0 if huge else 4 if p.ndim < 0 else p.ndim
    # values as the int64 a C producer stores; past the 16th dimension all ones
    p.shape = [_wrap64(b.small_or_wild(small=5)) for _ in range(min(n_entries, 16))] + [1] * max(0, n_entries - 16)
    p.strides = [_wrap64(b.small_or_wild(small=12)) for _ in range(min(n_entries, 16))] + [1] * max(0, n_entries - 16)
    code = b.u8()
    if code < 180:  # mostly a dtype lucid has
        p.code, p.bits = VALID_DTYPES[code % len(VALID_DTYPES)]
    else:
        p.code = code % 8 if code < 240 else code
        bits = b.u8()
        p.bits = [8, 16, 32, 64, 128][bits % 5] if bits < 230 else bits
    lanes = b.u8()
    p.lanes = 1 if lanes < 240 else b.u16()
    device = b.u8()
    p.device_type = [1, 1, 1, 1, 1, 3, 2, 13, 0, -1][device % 10] if device < 250 else b.i32()
    p.device_id = 0 if b.u8() < 200 else b.i32()
    if p.device_type == 2 and lucid.gpu.is_available():
        p.device_type = 1  # a CPU buffer declared as CUDA memory would be a producer's lie
    p.size = b.below(2048)
    offset_mode = b.u8()
    p.byte_offset = 0 if offset_mode < 150 else b.below(p.size + 1) if offset_mode < 240 else b.u64()
    p.data_null = b.u8() < 8
    p.has_deleter = b.u8() < 240
    p.version = (1 if b.u8() < 230 else b.u32(), b.u32() if b.bool() else 0)
    p.flags = b.u64() if b.u8() >= 128 else 0
    name = b.u8()
    p.wrong_name = None if name < 240 else b.pick(WRONG_NAMES)
    p.name_is_wrong = name >= 240
    p.how = b.u8() % 6  # how the capsule is handed over (see hand_over)
    p.device_answer = None if b.u8() < 230 else (b.i32(), b.i32())
    p.fill = b.take(min(p.size, b.remaining()))
    return p


def make_capsule(p, keep):
    buffer = (C.c_uint8 * max(p.size, 1)).from_buffer_copy(p.fill.ljust(max(p.size, 1), b"\x00"))
    keep.append(buffer)
    p.buffer = buffer
    mt = DLManagedTensorVersioned() if p.versioned else DLManagedTensor()
    keep.append(mt)
    dl = mt.dl_tensor
    dl.data = None if p.data_null else C.addressof(buffer)
    dl.device = DLDevice(p.device_type, p.device_id)
    dl.ndim = p.ndim
    dl.dtype = DLDataType(p.code, p.bits, p.lanes)
    if p.shape and not p.shape_null:
        shape = (C.c_int64 * len(p.shape))(*p.shape)
        keep.append(shape)
        dl.shape = C.cast(shape, C.POINTER(C.c_int64))
    if p.strides and not p.strides_null:
        strides = (C.c_int64 * len(p.strides))(*p.strides)
        keep.append(strides)
        dl.strides = C.cast(strides, C.POINTER(C.c_int64))
    dl.byte_offset = p.byte_offset
    mt.manager_ctx = C.addressof(buffer)
    if p.has_deleter:
        mt.deleter = _deleter
    if p.versioned:
        mt.version = DLPackVersion(*p.version)
        mt.flags = p.flags
    address = C.addressof(mt)
    _managed[address] = mt
    name = (NAME_VERSIONED if p.versioned else NAME) if not p.name_is_wrong else p.wrong_name
    capsule = _api.PyCapsule_New(address, name, C.cast(_capsule_destructor, C.c_void_p))
    return capsule, address


def _wrap64(v):
    """v as the int64 a C producer would store (wrapping, as a cast does)."""
    v &= 2 ** 64 - 1
    return v - 2 ** 64 if v >= 2 ** 63 else v


class Exporter:
    """An object with __dlpack__ and __dlpack_device__, as array libraries have."""

    def __init__(self, capsule, device, takes_max_version):
        self.capsule, self.device, self.takes_max_version = capsule, device, takes_max_version

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, **kwargs):
        if kwargs and not self.takes_max_version:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        return self.capsule


def hand_over(p, capsule):
    device = p.device_answer or (p.device_type, p.device_id)
    if p.how == 0 or p.how == 1:
        return lucid.from_dlpack(capsule)
    if p.how == 2:
        return lucid.from_dlpack(Exporter(capsule, device, True))
    if p.how == 3:
        return lucid.from_dlpack(Exporter(capsule, device, False))
    if p.how == 4:
        return lucid.asarray(Exporter(capsule, device, True))
    return lucid.as_tensor(Exporter(capsule, device, True))


# ---- the oracle ------------------------------------------------------------------------------

def declared(p):
    """What the metadata describes, in exact arithmetic: (valid, dtype, shape, strides in
    elements, byte extent or None when it does not fit int64)."""
    if p.ndim < 0 or (p.ndim > 0 and p.shape_null) or p.lanes != 1:
        return None
    dtype = DTYPES.get((p.code, p.bits))
    if dtype is None or p.device_type not in (1, 2, 3):
        return None
    shape = p.shape[:max(p.ndim, 0)]
    if any(s < 0 for s in shape):
        return None
    numel = 1
    for s in shape:
        numel *= s
    if numel > INT64_MAX:
        return None
    item = ITEMSIZE[dtype]
    if p.strides_null or p.ndim == 0:
        strides, acc = [], 1
        for s in reversed(shape):
            strides.append(acc)
            acc *= max(s, 1)
        strides.reverse()
    else:
        strides = p.strides[:p.ndim]
        if any(st < 0 and s > 1 for st, s in zip(strides, shape)):
            return None
        strides = [max(st, 0) for st in strides]
    extent = 0 if numel == 0 else item + sum((s - 1) * st * item for s, st in zip(shape, strides))
    fits = numel == 0 or (all(st * item <= INT64_MAX for st in strides) and extent <= INT64_MAX)
    return dtype, tuple(shape), tuple(strides), item, extent, fits


def expected_bytes(p, shape, strides, item):
    if 0 in shape:
        return b""
    raw = bytes(p.buffer)
    out = []
    for index in itertools.product(*[range(s) for s in shape]):
        at = p.byte_offset + sum(i * st * item for i, st in zip(index, strides))
        out.append(raw[at:at + item])
    return b"".join(out)


def check_tensor(p, t):
    d = declared(p)
    if d is None:
        raise H.Finding(f"from_dlpack accepted malformed metadata (ndim {p.ndim}, dtype code {p.code} bits "
                        f"{p.bits} lanes {p.lanes}, device {p.device_type}, shape {p.shape[:8]})")
    dtype, shape, strides, item, extent, fits = d
    if not fits:
        raise H.Finding(f"from_dlpack accepted shape {list(shape)} with strides {list(strides)} of "
                        f"{item}-byte elements, whose byte extent does not fit int64")
    if t.dtype._name != dtype or tuple(t.shape) != shape:
        raise H.Finding(f"from_dlpack made {t.dtype._name} {list(t.shape)} from {dtype} {list(shape)}")
    readonly = p.versioned and p.flags & 1
    numel = t.numel()
    if not readonly and numel > 1:
        got_strides = tuple(t.stride())
        relevant = [(g, e) for g, e, s in zip(got_strides, strides, shape) if s > 1]
        if any(g != e for g, e in relevant):
            raise H.Finding(f"from_dlpack made strides {list(got_strides)} from declared {list(strides)} "
                            f"(shape {list(shape)})")
    inside = numel == 0 or (not p.data_null and p.byte_offset + extent <= p.size)
    if not inside or p.device_type == 2:
        return  # the metadata reaches past the buffer: a lying producer; not read
    if numel <= H.TOUCH_LIMIT:
        got = H.touch_tensor(t)
        if got is not None and got != expected_bytes(p, shape, strides, item):
            raise H.Finding("the imported tensor's bytes differ from the producer's buffer")
        if readonly and numel:
            before = bytes(p.buffer)
            t.zero_()
            if bytes(p.buffer) != before:
                raise H.Finding("writing a read-only import reached the producer's buffer")
    else:
        H.touch_tensor(t)


def producer(shape, strides=None, code=2, bits=32, size=64, fill=b"", versioned=False, flags=0,
             device_type=1, byte_offset=0, how=0):
    """A well-formed producer with the given fields (for regression tests)."""
    p = Producer()
    p.data = b""
    p.versioned, p.ndim = versioned, len(shape)
    p.shape, p.shape_null = [_wrap64(s) for s in shape], False
    p.strides = [_wrap64(s) for s in strides] if strides is not None else [1] * len(shape)
    p.strides_null = strides is None
    p.code, p.bits, p.lanes = code, bits, 1
    p.device_type, p.device_id = device_type, 0
    p.size, p.fill, p.byte_offset = size, fill[:size], byte_offset
    p.data_null, p.has_deleter = False, True
    p.version, p.flags = (1, 0), flags
    p.wrong_name, p.name_is_wrong = None, False
    p.how, p.device_answer = how, None
    return p


def TestOneInput(data):
    b = H.Bytes(data)
    exercise(build(b))


def exercise(p):
    """Hands the producer's capsule to lucid and checks everything the oracle checks."""
    data = p.data
    d = declared(p)
    if H.GUARDS and d is not None and not d[5]:
        # Known bugs (tests/python/test_fuzz_regressions.py): sizes and strides whose byte
        # extent overflows int64 are accepted with wrapped strides (reads go anywhere), or
        # refused after lucid took ownership (the deleter then runs twice).
        return
    if p.versioned and p.flags & 1 and d is not None and d[5]:
        # A read-only import is copied, which reads everything the metadata reaches: keep
        # the flag only where that lies inside the buffer and the copy is small.
        numel = 1
        for s in d[1]:
            numel *= s
        inside = numel == 0 or (not p.data_null and p.byte_offset + d[4] <= p.size)
        if not inside or numel * d[3] > 1 << 24 or p.device_type == 2:
            p.flags &= ~1
    _deleted.clear()
    _managed.clear()
    keep = []
    capsule, address = make_capsule(p, keep)
    ok, t = H.attempt(TARGET, data, lambda: hand_over(p, capsule), CLEAR)
    if ok:
        check_tensor(p, t)
        if p.how == 1:
            again, _ = H.attempt(TARGET, data, lambda: lucid.from_dlpack(capsule), CLEAR)
            if again:
                raise H.Finding("from_dlpack accepted a capsule that was already consumed")
    t = None
    capsule = None
    expected = 1 if (p.has_deleter and not p.name_is_wrong) else 0
    calls = _deleted.get(address, 0)
    if calls < expected:
        gc.collect()
        calls = _deleted.get(address, 0)
    if calls != expected:
        raise H.Finding(f"the producer's deleter ran {calls} times (expected {expected}; lucid "
                        f"{'accepted' if ok else 'refused'} the capsule)")
    _managed.clear()
    del keep
    return ok


if __name__ == "__main__":
    H.instrument_harness(globals())
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
