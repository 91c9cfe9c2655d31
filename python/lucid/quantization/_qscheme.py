"""Quantization schemes (QScheme) and integer-grid descriptors (QDtype).

lucid, like upstream Lucid, has no quantized tensor type: a quantized tensor is an
ordinary integer tensor (the "codes") plus a float ``scale`` and ``zero_point`` kept
beside it. ``QScheme`` says how those parameters are shared (one pair per tensor or per
channel, free or pinned zero point); ``QDtype`` says which integer grid the codes live on
and which lucid dtype stores them.
"""

import enum
from dataclasses import dataclass

__all__ = ["QScheme", "QDtype", "per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
           "per_channel_symmetric", "qint8", "quint8", "qint32", "qint4"]


class QScheme(enum.Enum):
    """Granularity (per tensor / per channel) crossed with symmetry (affine / symmetric)."""

    PER_TENSOR_AFFINE = "per_tensor_affine"
    PER_TENSOR_SYMMETRIC = "per_tensor_symmetric"
    PER_CHANNEL_AFFINE = "per_channel_affine"
    PER_CHANNEL_SYMMETRIC = "per_channel_symmetric"

    @property
    def is_per_channel(self):
        return self in (QScheme.PER_CHANNEL_AFFINE, QScheme.PER_CHANNEL_SYMMETRIC)

    @property
    def is_symmetric(self):
        return self in (QScheme.PER_TENSOR_SYMMETRIC, QScheme.PER_CHANNEL_SYMMETRIC)

    def __repr__(self):
        return f"lucid.quantization.{self.value}"


per_tensor_affine = QScheme.PER_TENSOR_AFFINE
per_tensor_symmetric = QScheme.PER_TENSOR_SYMMETRIC
per_channel_affine = QScheme.PER_CHANNEL_AFFINE
per_channel_symmetric = QScheme.PER_CHANNEL_SYMMETRIC


@dataclass(frozen=True)
class QDtype:
    """An integer grid: bit width, signedness, inclusive [quant_min, quant_max], and the
    name of the lucid dtype that stores its codes."""

    name: str
    bits: int
    signed: bool
    quant_min: int
    quant_max: int
    storage: str

    def __repr__(self):
        return f"lucid.quantization.{self.name}"

    @property
    def storage_dtype(self):
        import lucid
        return getattr(lucid, self.storage)


qint8 = QDtype("qint8", 8, True, -128, 127, "int8")
# Upstream stores quint8 codes in int16 because its engine has no uint8; lucid has uint8,
# which is also what torch's quint8 int_repr() gives, so the codes are stored there.
quint8 = QDtype("quint8", 8, False, 0, 255, "uint8")
qint32 = QDtype("qint32", 32, True, -(2 ** 31), 2 ** 31 - 1, "int32")
# 4-bit codes are kept unpacked, one per int8 element (upstream does the same).
qint4 = QDtype("qint4", 4, True, -8, 7, "int8")


def check_qscheme(qscheme, where):
    if not isinstance(qscheme, QScheme):
        raise TypeError(f"{where}: qscheme must be a lucid.quantization.QScheme (e.g. "
                        f"lucid.quantization.per_tensor_affine), got {qscheme!r}")
    return qscheme


def check_qdtype(qdtype, where):
    if not isinstance(qdtype, QDtype):
        raise TypeError(f"{where}: qdtype must be a lucid.quantization.QDtype (qint8, quint8, "
                        f"qint4 or qint32), got {qdtype!r}")
    return qdtype
