"""grid_sample and affine_grid (exported through _functional_resample.py).

grid_sample for 4-D bilinear / nearest input in float32 / float64 is the engine's kernel
(_C._grid_sample2d, csrc/ops/grid_sample.h); the other cases (bicubic, 5-D, other dtypes)
gather the corner values of each sample point from the flattened input, with weights
computed from the grid by differentiable ops, so the gradient with respect to the grid
is the engine's. The coordinate formulas are ATen's (GridSampler.h).
"""

from .. import _C
from ..autograd.function import Function
from ._functional_resample import _cubic_coeffs
from ..amp._autocast import policy as _autocast_policy  # Note [Autocast]

__all__ = ["grid_sample", "affine_grid"]


# ---- grid_sample ----------------------------------------------------------------------------------------
def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """reflect_coordinates: fold coord into [low, high] by mirroring (differentiable: abs,
    fmod, and a parity-chosen sign)."""
    from .. import floor, fmod, where
    if twice_low == twice_high:
        return coord * 0
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    c = (coord - lo).abs()
    extra = fmod(c, span)
    flips = floor(c / span).detach()
    return where(fmod(flips, 2) == 0, extra + lo, span - extra + lo)


def _apply_padding(coord, size, padding_mode, align_corners):
    """compute_coordinates: the source coordinate after border clipping or reflection."""
    if padding_mode == "border":
        return coord.clamp(0, size - 1)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return coord.clamp(0, size - 1)
    return coord


def _gather_points(flat, idx_list, sizes, spatial_out):
    """flat: [N, C, prod(sizes)]; idx_list: integer index tensors [N, *spatial_out], one per
    spatial dim (outermost first). Returns (values [N, C, *spatial_out], in-bounds mask)."""
    from .. import zeros_like
    n, c = flat.shape[0], flat.shape[1]
    mask = None
    lin = zeros_like(idx_list[0])
    for idx, sz in zip(idx_list, sizes):
        ok = (idx >= 0) & (idx < sz)
        mask = ok if mask is None else mask & ok
        lin = lin * sz + idx.clamp(0, sz - 1)
    lin = lin.reshape(n, 1, -1).expand(n, c, lin[0].numel())
    vals = flat.gather(2, lin).reshape([n, c] + list(spatial_out))
    return vals, mask


@_autocast_policy("grid_sample")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """torch.nn.functional.grid_sample for 4-D (N, C, H, W) and 5-D (N, C, D, H, W) inputs;
    grid[..., 0] indexes W, grid[..., 1] H (and grid[..., 2] D)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        align_corners = False
    if input.dim() not in (4, 5):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.dim() != input.dim():
        raise RuntimeError(f"grid_sampler(): expected grid to have the same number of dimensions as input, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    nsp = input.dim() - 2
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != nsp:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nsp} in last dimension, but got grid with "
                           f"sizes {list(grid.shape)}")
    if mode == "bicubic" and nsp != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if any(s == 0 for s in input.shape[2:]):
        raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                           f"sizes {list(input.shape)} with dimension {2 + list(input.shape[2:]).index(0)} being "
                           "empty")
    if not input.dtype.is_floating_point or grid.dtype != input.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be floating point tensors of the same "
                           f"dtype, but input has {input.dtype} and grid has {grid.dtype}")

    if nsp == 2 and mode != "bicubic" and input.dtype.itemsize in (4, 8):
        # the engine's kernel (csrc/ops/grid_sample.h); 5-D and bicubic compose below
        args = (0 if mode == "bilinear" else 1, ("zeros", "border", "reflection").index(padding_mode),
                bool(align_corners))
        if not (input.requires_grad or grid.requires_grad) or not _grad_enabled():
            return _C._grid_sample2d(input, grid, *args)
        return _GridSampler2D.apply(input, grid, args, mode, padding_mode, align_corners)
    return _composed(input, grid, mode, padding_mode, align_corners)


def _grad_enabled():
    from .. import is_grad_enabled
    return is_grad_enabled()


def _composed(input, grid, mode, padding_mode, align_corners):
    from .. import floor, round as _round
    nsp = input.dim() - 2
    sizes = list(input.shape[2:])            # outermost first: (D,) H, W
    spatial_out = list(grid.shape[1:-1])
    flat = input.reshape(input.shape[0], input.shape[1], -1)
    # grid's last axis is (x, y[, z]) = innermost dim first; coords[k] goes with sizes[k]
    coords = [grid.select(-1, nsp - 1 - k) for k in range(nsp)]
    if mode == "bicubic":
        src = [_unnormalize(c, s, align_corners) for c, s in zip(coords, sizes)]
        base = [floor(s).detach() for s in src]
        ts = [s - b for s, b in zip(src, base)]
        coeffs = [_cubic_coeffs(t) for t in ts]
        out = None
        for i in range(4):
            for j in range(4):
                taps = []
                for (b, sz), off in zip(zip(base, sizes), (i, j)):
                    c = _apply_padding(b + (off - 1), sz, padding_mode, align_corners)
                    taps.append(c.detach().long() if padding_mode != "zeros" else c.long())
                vals, mask = _gather_points(flat, taps, sizes, spatial_out)
                w = coeffs[0][i] * coeffs[1][j] * mask.to(input.dtype)
                term = vals * w.unsqueeze(1)
                out = term if out is None else out + term
        return out
    src = [_apply_padding(_unnormalize(c, s, align_corners), s, padding_mode, align_corners)
           for c, s in zip(coords, sizes)]
    if mode == "nearest":
        idx = [_round(s.detach()).long() for s in src]  # nearbyint: ties to even
        vals, mask = _gather_points(flat, idx, sizes, spatial_out)
        out = vals * mask.to(input.dtype).unsqueeze(1)
        if grid.requires_grad:  # torch's gradient for the grid is zero here, not absent
            out = out + (grid * 0).sum()
        return out
    # all 2^nsp corners in one gather: per dim the lower/upper index, its in-bounds mask
    # and its linear weight; a corner combines one of each per dim
    from .. import stack
    n, c = input.shape[0], input.shape[1]
    base = [floor(s).detach() for s in src]
    frac = [s - b for s, b in zip(src, base)]
    lin, wts = [], []
    for corner in range(1 << nsp):
        bits = [(corner >> (nsp - 1 - k)) & 1 for k in range(nsp)]
        li, w = None, None
        for b, f, bit, sz in zip(base, frac, bits, sizes):
            i = (b + bit).long()
            ok = ((i >= 0) & (i < sz)).to(input.dtype)
            wk = (f if bit else 1 - f) * ok
            i = i.clamp(0, sz - 1)
            li = i if li is None else li * sz + i
            w = wk if w is None else w * wk
        lin.append(li.reshape(n, -1))
        wts.append(w.reshape(n, -1))
    nc, npts = len(lin), lin[0].shape[1]
    idx = stack(lin, 1).reshape(n, 1, nc * npts).expand(n, c, nc * npts)
    vals = flat.gather(2, idx).reshape(n, c, nc, npts)
    out = (vals * stack(wts, 1).unsqueeze(1)).sum(2)
    return out.reshape([n, c] + spatial_out)


def _linspace_from_neg_one(n, align_corners, dtype, device):
    from .. import linspace, zeros
    if n <= 1:
        return zeros(1, dtype=dtype, device=device)
    r = linspace(-1, 1, n, dtype=dtype, device=device)
    return r if align_corners else r * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """torch.nn.functional.affine_grid: the sampling grid [N, H, W, 2] (or [N, D, H, W, 3]) of
    the affine maps theta [N, 2, 3] (or [N, 3, 4]) over the normalised output coordinates."""
    from .. import ones, stack
    if align_corners is None:
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{list(theta.shape)}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{list(theta.shape)}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise ValueError(f"Expected theta batch size {theta.shape[0]} to match size[0] = {size[0]}")
    kw = dict(dtype=theta.dtype, device=theta.device)
    n_sp = len(spatial)
    axes = []  # x (innermost, W) first, then y, then z
    for k in range(n_sp):
        d = n_sp - 1 - k
        lin = _linspace_from_neg_one(spatial[d], align_corners, **kw)
        shape = [1] * n_sp
        shape[d] = spatial[d]
        axes.append(lin.reshape(shape).expand(spatial))
    axes.append(ones(spatial, **kw))
    base = stack(axes, -1).reshape(1, -1, n_sp + 1)           # [1, prod(spatial), n+1]
    grid = base.matmul(theta.transpose(1, 2))                  # [N, prod(spatial), n]
    return grid.reshape([size[0]] + spatial + [n_sp])


class _GridSampler2D(Function):
    """The 2-D kernel with its kernel backward; under create_graph (grad mode on during
    backward) the gradients come from differentiating the composition instead, so
    double backward works as in torch."""

    @staticmethod
    def forward(ctx, input, grid, args, mode, padding_mode, align_corners):
        ctx.save_for_backward(input, grid)
        ctx.args = args
        ctx.spec = (mode, padding_mode, align_corners)
        return _C._grid_sample2d(input, grid, *args)

    @staticmethod
    def backward(ctx, grad):
        from ..autograd import grad as _grad
        from ..autograd.grad_mode import enable_grad
        input, grid = ctx.saved_tensors
        if _grad_enabled():
            with enable_grad():
                out = _composed(input, grid, *ctx.spec)
            wrt = [t for t in (input, grid) if t.requires_grad]
            got = iter(_grad(out, wrt, grad, create_graph=True, allow_unused=True))
            gi, gg = (next(got) if t.requires_grad else None for t in (input, grid))
        else:
            gi, gg = _C._grid_sample2d_backward(grad, input, grid, *ctx.args)
        return gi, gg, None, None, None, None
