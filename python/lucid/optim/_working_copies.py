"""float32 working copies of 16-bit tensors for the optimizers written with tensor ops
(Adafactor, Muon), as _fused_step stages them for the fused ones.

torch computes each op on a bfloat16/float16 tensor in float32 and rounds its result;
lucid's 16-bit ops round their scalar operands to 16 bits first (p.mul_(1 - lr * wd) with
0.998 multiplies by 0.996: twice the weight decay). The step therefore runs on float32
copies, and each 16-bit tensor is rounded once, when its copy is written back."""

import contextlib

from .. import _dtype as D


def _is_16bit(tensor):
    return tensor.dtype in (D.float16, D.bfloat16)


def as_float32(tensor):
    """`tensor` itself, or a float32 copy of it when it is 16-bit (for tensors only read)."""
    return tensor.float() if _is_16bit(tensor) else tensor


@contextlib.contextmanager
def float32_working_copies(*tensors):
    """Yields `tensors`, the 16-bit ones replaced by float32 copies, which are written
    back into them when the block ends (not when it raises: the step did not happen)."""
    work = [as_float32(t) for t in tensors]
    yield work
    for tensor, copy in zip(tensors, work):
        if copy is not tensor:
            tensor.copy_(copy)
