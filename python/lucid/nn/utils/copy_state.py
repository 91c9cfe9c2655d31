"""Upstream Lucid's nn.utils.copy_parameters_and_buffers: one module's parameter and
buffer values written into another of the same layout, in place (an EMA or averaged
copy of a model, a mirror on another device). dest's tensors stay the same objects, so
an optimizer holding them keeps working; the copies are not recorded by autograd."""

from ..modules.module import Module

__all__ = ["copy_parameters_and_buffers"]


def copy_parameters_and_buffers(source, dest):
    """Copies every parameter and buffer of `source` into the one of `dest` with the
    same name (converted to dest's device and dtype). A name of source's that dest
    lacks is a KeyError, a shape that differs a ValueError; both are checked for every
    tensor before any is written, so a failed call leaves dest as it was. Buffers that
    are None on either side are skipped."""
    for name, m in (("source", source), ("dest", dest)):
        if not isinstance(m, Module):
            raise TypeError(f"copy_parameters_and_buffers: {name} must be a Module, got {type(m).__name__}")
    pairs = []
    for kind, src, dst in (("parameter", source.named_parameters(), dict(dest.named_parameters())),
                           ("buffer", source.named_buffers(), dict(dest.named_buffers()))):
        for name, s in src:
            if name not in dst:
                raise KeyError(f"copy_parameters_and_buffers: {kind} {name!r} of source is missing on dest")
            d = dst[name]
            if tuple(d.shape) != tuple(s.shape):
                raise ValueError(f"copy_parameters_and_buffers: {kind} {name!r} has shape {tuple(s.shape)} on "
                                 f"source but {tuple(d.shape)} on dest")
            pairs.append((s, d))
    from ... import no_grad
    with no_grad():
        for s, d in pairs:
            d.copy_(s)
