"""lucid.nn.attention (torch.nn.attention): which kernels scaled_dot_product_attention
may use. SDPBackend names them and sdpa_kernel(backends) allows only those inside a
block, through the same switches as lucid.backends.cuda.enable_*_sdp.

lucid's GPU has one fused kernel, cuDNN's flash attention (float16 / bfloat16), which
serves FLASH_ATTENTION, EFFICIENT_ATTENTION and CUDNN_ATTENTION alike (each is a fused,
memory-efficient attention), and the composite form (MATH). The CPU has only the
composite form, which runs whatever is allowed, as the switches select GPU kernels."""

import contextlib
import enum

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """torch's names and values for the attention kernels."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCHES = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
             SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}


def _backend_list(backends):
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(backends)
    for b in backends:
        if not isinstance(b, SDPBackend):
            raise TypeError(f"sdpa_kernel: expected SDPBackend members, got {type(b).__name__}")
    return backends


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention may use only `backends` (an
    SDPBackend or a list of them); the switches are restored after. set_priority is
    accepted for torch's signature: lucid tries its fused kernel first, then MATH."""
    from ...backends.cuda import _sdp  # (lucid.backends loads after lucid.nn)
    allowed = {_SWITCHES[b] for b in _backend_list(backends) if b in _SWITCHES}
    before = dict(_sdp)
    try:
        for switch in _sdp:
            _sdp[switch] = switch in allowed
        yield
    finally:
        _sdp.update(before)
