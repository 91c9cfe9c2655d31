"""A small PNG encoder (8-bit gray+alpha, RGB or RGBA) so add_image needs no Pillow."""

import struct
import zlib

# PNG colour types by channel count (1-channel images are expanded to RGB before).
_COLOR_TYPES = {2: 4, 3: 2, 4: 6}


def _chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def encode_png(pixels, height, width, channels):
    """`pixels`: the HWC uint8 image as row-major bytes."""
    if channels not in _COLOR_TYPES:
        raise ValueError(f"PNG images need 2, 3 or 4 channels, got {channels}")
    stride = width * channels
    if len(pixels) != height * stride:
        raise ValueError(f"expected {height * stride} pixel bytes, got {len(pixels)}")
    # Filter type 0 (None) for every scanline: simple, and zlib does the compressing.
    raw = b"".join(b"\x00" + pixels[row * stride:(row + 1) * stride] for row in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPES[channels], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(raw, 6)) + _chunk(b"IEND", b""))
