"""A minimal protocol-buffer encoder: just the wire types the event-file messages use.

Each helper returns the bytes of one field (key + payload); a message is the
concatenation of its fields. Callers leave out proto3 fields that hold their default
value (as protobuf does) except for members of a oneof, which are always written.
"""

import struct

_VARINT, _FIXED64, _LENGTH_DELIMITED, _FIXED32 = 0, 1, 2, 5


def varint(value):
    """Base-128 varint; negative int64/int32 values are written as 10-byte two's
    complement, as protobuf does."""
    value = int(value)
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _key(field, wire_type):
    return varint((field << 3) | wire_type)


def int_field(field, value):
    """int32/int64/uint32/bool/enum."""
    return _key(field, _VARINT) + varint(value)


def double_field(field, value):
    return _key(field, _FIXED64) + struct.pack("<d", float(value))


def float_field(field, value):
    return _key(field, _FIXED32) + struct.pack("<f", float(value))


def bytes_field(field, value):
    """string/bytes/embedded message (`value` already encoded)."""
    if isinstance(value, str):
        value = value.encode("utf-8")
    return _key(field, _LENGTH_DELIMITED) + varint(len(value)) + bytes(value)


def packed_doubles(field, values):
    payload = struct.pack(f"<{len(values)}d", *[float(v) for v in values])
    return bytes_field(field, payload)


def packed_floats(field, values):
    payload = struct.pack(f"<{len(values)}f", *[float(v) for v in values])
    return bytes_field(field, payload)


def optional(encode, field, value):
    """`encode(field, value)` unless `value` is the proto3 default (0, "", b"")."""
    return encode(field, value) if value else b""
