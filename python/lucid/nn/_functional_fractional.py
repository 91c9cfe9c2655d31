"""Fractional max pooling (torch.nn.functional.fractional_max_pool2d / 3d, Graham 2014):
max over windows of `kernel_size` whose starts step by a random fraction of the input, so
that the output has `output_size` (or input * output_ratio) elements a dim.

A plane's starts along a dim come from one uniform sample u in [0, 1), as ATen makes
them: alpha = (input - kernel) / (output - 1) and start[i] = int((i + u) alpha) -
int(u alpha), computed in the input's dtype, the last start input - kernel. The samples
are `_random_samples` ([N, C, dims]: width first for 2-d, as ATen reads them; time,
height, width for 3-d) or drawn with lucid.rand. The windows are gathered from each
plane and reduced with max, so autograd gives the gradient to each window's first
largest element, as torch's backward does. Indices are flat positions in the plane."""

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]


def _tuple(v, n, what, name):
    t = tuple(v) if isinstance(v, (list, tuple)) else (v,) * n
    if len(t) == 1:
        t = t * n
    if len(t) != n:
        raise ValueError(f"{name} requires {what} to either be a single Int or tuple of Ints.")
    return t


def _starts(u, size, out, k, dtype):
    """[..., out] window starts along one dim from samples u [...] (ATen's generate_intervals)."""
    import lucid
    if out == 1:
        return lucid.full((*u.shape, 1), size - k, dtype=lucid.int64, device=u.device)
    alpha = lucid.tensor(float(size - k), dtype=dtype, device=u.device) / lucid.tensor(float(out - 1), dtype=dtype,
                                                                                      device=u.device)
    i = lucid.arange(out - 1, dtype=dtype, device=u.device)
    u = u.to(dtype).unsqueeze(-1)
    inner = ((i + u) * alpha).trunc().long() - (u * alpha).trunc().long()
    last = lucid.full((*inner.shape[:-1], 1), size - k, dtype=lucid.int64, device=u.device)
    return lucid.cat([inner, last], -1)


def _fractional_max_pool(name, nsp, input, kernel_size, output_size, output_ratio, samples):
    import lucid
    if input.dim() not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"{name}(): Expected {nsp + 1}D or {nsp + 2}D tensor, but got: {list(input.shape)}")
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{list(input.shape)} with dimension {d} being empty.")
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    spatial = tuple(input.shape[-nsp:])
    k = _tuple(kernel_size, nsp, "kernel_size", name)
    if output_size is None:
        ratio = _tuple(output_ratio, nsp, "output_ratio", name)
        output_size = [int(s * r) for s, r in zip(spatial, ratio)]
    out = _tuple(output_size, nsp, "output_size", name)
    for dim, s, o, kk in zip(("time", "height", "width")[3 - nsp:], spatial, out, k):
        if o + kk - 1 > s:
            raise RuntimeError(f"{name}(): pool {dim} {kk} too large relative to input {dim} {s}")
    batched = input.dim() == nsp + 2
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[0], x.shape[1]
    if samples is None:
        samples = lucid.rand(n, c, nsp, dtype=input.dtype, device=input.device)
    elif tuple(samples.shape) != (n, c, nsp):
        raise RuntimeError(f"{name}(): expected _random_samples of shape {[n, c, nsp]} (batch, channels, one sample "
                           f"a spatial dim), but got {list(samples.shape)}")
    # ATen's 2-d kernel reads sample 0 for the width and 1 for the height; the 3-d one,
    # 0, 1, 2 for time, height, width
    order = (1, 0) if nsp == 2 else (0, 1, 2)
    starts = [_starts(samples[..., order[d]], spatial[d], out[d], k[d], input.dtype) for d in range(nsp)]
    # each output's window as flat positions in the plane: [n, c, *out, *k]
    flat = None
    stride = 1
    for d in reversed(range(nsp)):
        pos = starts[d].unsqueeze(-1) + lucid.arange(k[d], device=input.device)  # [n, c, out_d, k_d]
        shape = [n, c] + [1] * (2 * nsp)
        shape[2 + d], shape[2 + nsp + d] = out[d], k[d]
        term = pos.reshape(shape) * stride
        flat = term if flat is None else flat + term
        stride *= spatial[d]
    flat = flat.expand(n, c, *out, *k).reshape(n, c, -1)
    windows = x.reshape(n, c, -1).gather(2, flat).reshape(n, c, *out, -1)
    values, which = windows.max(-1)
    indices = flat.reshape(n, c, *out, -1).gather(-1, which.unsqueeze(-1)).squeeze(-1)
    if not batched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return values, indices


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
                                _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, True, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
                                _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, True, _random_samples)
    return out if return_indices else out[0]
