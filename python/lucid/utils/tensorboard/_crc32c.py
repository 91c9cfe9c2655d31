"""CRC32C (Castagnoli) checksums for the TFRecord framing of event files.

TensorBoard checks every record's length and payload against a *masked* CRC32C;
zlib only offers the IEEE polynomial, so the Castagnoli one is computed here from
a 256-entry table (a few hundred KB/s is plenty for summaries).
"""

_POLYNOMIAL = 0x82F63B78  # Castagnoli, bit-reversed (the form a table-driven CRC uses)
_MASK_DELTA = 0xA282EAD8


def _make_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLYNOMIAL if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_TABLE = _make_table()


def crc32c(data):
    """The CRC32C of `data` (bytes-like), as an unsigned 32-bit int."""
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """TFRecord's masked CRC: rotating and offsetting keeps a CRC stored next to the
    data it covers from looking like valid data itself."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF
