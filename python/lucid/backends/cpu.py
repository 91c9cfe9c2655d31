"""lucid.backends.cpu, as torch.backends.cpu."""

from .. import _C

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """The vector instruction set lucid's CPU kernels use here, in torch's names: "DEFAULT"
    (the x86-64 baseline, or a CPU that is not x86), "AVX2" or "AVX512". Chosen once at start
    from cpuid and capped by LUCID_CPU_ISA (csrc/core/isa.h)."""
    return _C._cpu_capability()
