"""lucid.nn.functional: stateless neural-network functions, as torch.nn.functional."""

import builtins as _builtins

from .. import _C

__all__ = ["linear", "pad"]


def linear(input, weight, bias=None):
    """input @ weight.T + bias (weight is [out_features, in_features] or 1-D)."""
    return _C._linear(input, weight, bias)


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: `pad` lists (left, right) pairs starting from the last
    dim. constant: new elements are `value` (negative pads crop); reflect, replicate,
    circular: new elements are read from the input through an index per padded dim
    (index_select), so the backward is index_add, the adjoint of each mode."""
    from .. import _shape
    from .._creation import tensor

    pads = [int(p) for p in pad]
    nd = input.ndim
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pads) // 2 > nd:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pads)} and input of dimension {nd}")
    pairs = [(nd - 1 - i, pads[2 * i], pads[2 * i + 1]) for i in range(len(pads) // 2)]
    if mode == "constant":
        fill = 0 if value is None else value
        out = input
        for d, lo, hi in pairs:
            n = out.shape[d]
            if n + lo + hi < 0:
                raise RuntimeError(f"The input size {n}, plus negative padding {lo} and {hi} resulted in a negative "
                                   f"output size, which is invalid. Check dimension {d} of your input.")
            out = out.narrow(d, -_builtins.min(lo, 0), n + _builtins.min(lo, 0) + _builtins.min(hi, 0))
            parts = []
            for k in (lo, hi):
                shape = list(out.shape)
                shape[d] = _builtins.max(k, 0)
                parts.append(out.new_full(shape, fill))
            out = _shape.cat([parts[0], out, parts[1]], d)
        return out
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    npad = len(pads) // 2
    if not (1 <= npad <= 3 and nd in (npad + 1, npad + 2)):
        raise NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now")
    if any(s == 0 for s in input.shape[nd - npad - 1:]):  # a batch dim (the first of npad + 2) may be empty
        raise RuntimeError(f"Expected {npad + 1}D or {npad + 2}D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(input.shape)}")
    out = input
    for d, lo, hi in pairs:
        n = input.shape[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {d} of input {list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "reflect":
            src = [abs(i) if i < n else 2 * (n - 1) - i for i in range(-lo, n + hi)]
        elif mode == "replicate":
            src = [_builtins.min(_builtins.max(i, 0), n - 1) for i in range(-lo, n + hi)]
        else:
            src = [i % n for i in range(-lo, n + hi)]
        out = _shape.index_select(out, d, tensor(src, dtype=_int64()))
    return out


def _int64():
    from .. import _dtype
    return _dtype.int64
