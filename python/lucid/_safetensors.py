"""The safetensors format (https://github.com/huggingface/safetensors), byte for byte.

    8 bytes    N, the header's length, an unsigned little-endian integer
    N bytes    a JSON object, padded with spaces to a multiple of 8:
                 {"__metadata__": {str: str, ...},                       (optional)
                  name: {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
    the rest   the data buffer: each tensor's elements, row-major and little-endian, at
               [begin, end) counted from the buffer's start

This module encodes and decodes that layout; lucid.serialization does the file I/O.
Files lucid writes are the bytes the reference writer (safetensors' Rust core) writes
for the same tensors: the same JSON spelling and the same tensor order. Reading checks
what the reference checks, and every check runs before any tensor memory is allocated:
the header must lie within the file, every size must agree with its shape, and the
tensors must cover the data buffer exactly, without holes or overlaps.
"""

from __future__ import annotations

import json
import struct
import sys

from . import _dtype as D
from ._tensor import Tensor

# lucid dtype name -> safetensors dtype code.
DTYPE_CODES = {
    "bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64",
    "float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64", "complex64": "C64",
}
_DTYPE_BY_CODE = {code: D._dtype_by_name(name) for name, code in DTYPE_CODES.items()}
# Codes the format has that lucid has no dtype for: named in the error, so a user knows
# the file is fine and lucid is what lacks the type.
_CODES_LUCID_LACKS = {"U16", "U32", "U64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F4", "F6_E2M3",
                      "F6_E3M2"}
# The reference writer puts the widest types first (its Dtype enum, descending), then
# sorts by name; with the buffer starting 8-aligned, every tensor is aligned to its
# element size. lucid writes the same order so its files are byte-identical.
_WRITE_RANK = {code: rank for rank, code in enumerate(
    ["I64", "F64", "C64", "F32", "I32", "BF16", "F16", "I16", "I8", "U8", "BOOL"])}
# The reference refuses headers over 100 MB; so does lucid, before reading them.
MAX_HEADER_BYTES = 100_000_000
_METADATA_KEY = "__metadata__"


class TensorSpec:
    """One tensor's header entry: where its bytes lie in the data buffer."""

    __slots__ = ("name", "dtype", "shape", "begin", "end")

    def __init__(self, name, dtype, shape, begin, end):
        self.name, self.dtype, self.shape, self.begin, self.end = name, dtype, shape, begin, end


def _require_little_endian():
    # lucid's to_bytes() and frombuffer() use the machine's byte order; the format is
    # little-endian, so a big-endian machine would need byte swapping lucid lacks.
    if sys.byteorder != "little":
        raise RuntimeError("safetensors files are little-endian; lucid reads and writes them only on "
                           "little-endian machines")


# ---- writing ---------------------------------------------------------------------------

def plan(tensors, metadata=None):
    """(header, ordered): the file's first bytes (length prefix and padded JSON) and the
    (name, tensor) pairs in the order their bytes follow."""
    _require_little_endian()
    if not isinstance(tensors, dict):
        raise TypeError(f"save_safetensors expects a dict of name -> lucid.Tensor, but got "
                        f"{type(tensors).__name__}")
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"save_safetensors: tensor names must be str, but got {type(name).__name__} "
                            f"{name!r}")
        if name == _METADATA_KEY:
            raise ValueError(f"save_safetensors: {_METADATA_KEY!r} is reserved for the metadata and "
                             "cannot name a tensor")
        if not isinstance(t, Tensor):
            raise TypeError(f"save_safetensors: {name!r} must be a lucid.Tensor, but got "
                            f"{type(t).__name__}")
        if t.dtype._name not in DTYPE_CODES:
            raise TypeError(f"save_safetensors: {name!r} is {t.dtype}, which the safetensors format has no "
                            "code for; save it with lucid.save, or convert it")
    header = {}
    if metadata is not None:
        header[_METADATA_KEY] = _checked_metadata(metadata)
    ordered = sorted(tensors.items(), key=lambda item: (_WRITE_RANK[DTYPE_CODES[item[1].dtype._name]],
                                                        item[0]))
    offset = 0
    for name, t in ordered:
        nbytes = t.numel() * t.itemsize
        header[name] = {"dtype": DTYPE_CODES[t.dtype._name], "shape": list(t.shape),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    return encode_header(header), ordered


def _checked_metadata(metadata):
    if not isinstance(metadata, dict):
        raise TypeError(f"save_safetensors: metadata must be a dict of str -> str or None, but got "
                        f"{type(metadata).__name__}")
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"save_safetensors: metadata must map str to str (the format stores only "
                            f"strings), but it has {key!r}: {value!r}")
    return dict(metadata)


def encode_header(header):
    """The length prefix and the JSON, spelled as the reference writer spells it: no
    spaces, UTF-8 as is, padded with spaces to a multiple of 8."""
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text


def tensor_bytes(t):
    """A tensor's elements in row-major order (a strided view is gathered first)."""
    return t.detach().to_bytes()


# ---- reading ---------------------------------------------------------------------------

def header_length(prefix, file_size):
    """N from the file's first 8 bytes, checked against the file's size."""
    _require_little_endian()
    if len(prefix) < 8 or file_size < 8:
        raise ValueError(f"not a safetensors file: it has {file_size} bytes, fewer than the 8 of the "
                         "header-length prefix")
    (n,) = struct.unpack("<Q", prefix[:8])
    if n > MAX_HEADER_BYTES:
        raise ValueError(f"safetensors header claims {n} bytes, more than the {MAX_HEADER_BYTES} the "
                         "format allows (the file is damaged or not a safetensors file)")
    if 8 + n > file_size:
        raise ValueError(f"safetensors header claims {n} bytes, but the file has only {file_size - 8} "
                         "after the length prefix (the file is truncated or damaged)")
    return n


def parse_header(header, data_len):
    """([TensorSpec...], metadata) from the header's bytes, every entry checked against
    the data buffer's length `data_len`. Raises ValueError naming the first problem."""
    try:
        text = bytes(header).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"safetensors header is not valid UTF-8 ({e})") from None
    try:
        root = json.loads(text, object_pairs_hook=_refuse_duplicate_keys)
    except (ValueError, RecursionError) as e:
        raise ValueError(f"safetensors header is not valid JSON ({e})") from None
    if not isinstance(root, dict):
        raise ValueError(f"safetensors header must be a JSON object, but it is a {type(root).__name__}")
    metadata = root.pop(_METADATA_KEY, None)
    if metadata is None:
        metadata = {}
    elif not (isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())):
        raise ValueError(f"safetensors {_METADATA_KEY} must be an object of string values, but it is "
                         f"{metadata!r:.200}")
    specs = [_parse_entry(name, entry) for name, entry in root.items()]
    _check_coverage(specs, data_len)
    return specs, metadata


def _refuse_duplicate_keys(pairs):
    # JSON allows repeated keys and json.loads keeps the last; two entries under one
    # name would make one of them unreachable, so the file is refused instead.
    result = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the name {key!r} appears twice")
        result[key] = value
    return result


def _is_count(x):
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _parse_entry(name, entry):
    if not isinstance(entry, dict):
        raise ValueError(f"safetensors entry {name!r} must be an object with dtype, shape and "
                         f"data_offsets, but it is {entry!r:.200}")
    missing = [k for k in ("dtype", "shape", "data_offsets") if k not in entry]
    if missing:
        raise ValueError(f"safetensors entry {name!r} lacks {', '.join(missing)}")
    code, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if not isinstance(code, str):
        raise ValueError(f"safetensors tensor {name!r} has dtype {code!r:.200}; expected a string such as 'F32'")
    if code in _CODES_LUCID_LACKS:
        raise ValueError(f"safetensors tensor {name!r} has dtype {code}, which lucid does not support "
                         f"(lucid reads {', '.join(sorted(_DTYPE_BY_CODE))})")
    if code not in _DTYPE_BY_CODE:
        raise ValueError(f"safetensors tensor {name!r} has unknown dtype {code!r} (expected one of "
                         f"{', '.join(sorted(_DTYPE_BY_CODE))})")
    if not (isinstance(shape, list) and all(_is_count(s) and s < 2**63 for s in shape)):
        raise ValueError(f"safetensors tensor {name!r} has shape {shape!r:.200}; expected a list of "
                         "non-negative integers")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_count(o) for o in offsets)):
        raise ValueError(f"safetensors tensor {name!r} has data_offsets {offsets!r:.200}; expected "
                         "[begin, end], two non-negative integers")
    dtype = _DTYPE_BY_CODE[code]
    begin, end = offsets
    numel = 1
    for s in shape:
        numel *= s
    if end < begin or end - begin != numel * dtype.itemsize:
        raise ValueError(f"safetensors tensor {name!r}: shape {shape} of {code} needs "
                         f"{numel * dtype.itemsize} bytes, but data_offsets [{begin}, {end}] hold "
                         f"{end - begin}")
    return TensorSpec(name, dtype, tuple(shape), begin, end)


def _check_coverage(specs, data_len):
    """The tensors tile [0, data_len) exactly, as the reference requires."""
    position = 0
    for spec in sorted(specs, key=lambda s: (s.begin, s.end)):
        if spec.begin != position:
            what = "overlaps the tensor before it" if spec.begin < position else "leaves a gap before it"
            raise ValueError(f"safetensors tensor {spec.name!r} at data_offsets [{spec.begin}, {spec.end}] "
                             f"{what} (the previous tensor ends at {position})")
        position = spec.end
    if position != data_len:
        raise ValueError(f"safetensors tensors cover {position} bytes of data, but the file has "
                         f"{data_len} after the header (the file is truncated, damaged or has extra "
                         "bytes)")


def check_bool_bytes(buffer, name):
    """A bool tensor's bytes must be 0 or 1: any other byte is not a bool lucid's kernels
    can rely on."""
    data = buffer if isinstance(buffer, (bytes, bytearray)) else bytes(buffer)
    if data.translate(None, b"\x00\x01"):
        raise ValueError(f"bool tensor {name!r} holds bytes other than 0 and 1 (the file is damaged)")
