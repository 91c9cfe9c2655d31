"""embedding and embedding_bag, built on the engine's index ops: index_select
forward, index_add backward (both C++), so the default path is two kernels.

padding_idx keeps the padding row out of the gradient with where(pad, row.detach(), row);
scale_grad_by_freq scales each looked-up row's gradient by 1 / (its count in the batch)
with row.detach() + (row * s - (row * s).detach()): the forward value is the row itself
(x - x == 0 exactly) and the gradient is s. Both stay differentiable ops (double backward)."""

__all__ = ["embedding", "embedding_bag"]


def _check_indices(name, input):
    from .. import int32, int64
    if input.dtype not in (int64, int32):
        raise RuntimeError(f"{name}(): expected indices of dtype int64 or int32 (Long, Int), but got {input.dtype}")


def _padding_idx(padding_idx, num):
    if padding_idx is None:
        return None
    if padding_idx > 0 and padding_idx >= num:
        raise AssertionError("Padding_idx must be within num_embeddings")
    if padding_idx < 0:
        if padding_idx < -num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx += num
    return padding_idx


def _renorm_(weight, idx, max_norm, norm_type):
    """torch.embedding_renorm_: rows looked up by idx whose norm exceeds max_norm are
    scaled in place to max_norm / (norm + 1e-7) (outside autograd, as torch)."""
    from .. import ones, where, zeros
    from ..autograd import no_grad
    with no_grad():
        dev = weight.device
        used = zeros(weight.shape[0], dtype=weight.dtype, device=dev).index_add(
            0, idx, ones(idx.numel(), dtype=weight.dtype, device=dev)) > 0
        norms = weight.norm(p=norm_type, dim=1)
        scale = where(used & (norms > max_norm), max_norm / (norms + 1e-7), ones((), dtype=weight.dtype))
        weight.mul_(scale.unsqueeze(1))


def _freq_scale(rows, idx, num, padding_idx):
    """rows whose gradient is divided by the count of their index in idx (and zero for
    padding_idx), forward value unchanged."""
    from .. import ones, zeros
    counts = zeros(num, dtype=rows.dtype, device=rows.device).index_add(
        0, idx, ones(idx.numel(), dtype=rows.dtype, device=rows.device))
    s = (1.0 / counts.clamp_min(1)).index_select(0, idx)
    if padding_idx is not None:
        s = s * (idx != padding_idx).to(rows.dtype)
    a = rows * s.unsqueeze(1)
    return rows.detach() + (a - a.detach())


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """weight[input]: rows of weight [num_embeddings, embedding_dim] looked up by the
    integer tensor input; the result has shape input.shape + (embedding_dim,)."""
    if sparse:
        raise NotImplementedError("embedding(): sparse=True (sparse gradients) is not supported by lucid; "
                                  "use sparse=False (dense gradients)")
    _check_indices("embedding", input)
    if weight.dim() != 2:
        raise RuntimeError(f"embedding(): 'weight' must be 2-D, got a {weight.dim()}-D tensor")
    num, dim = weight.shape
    padding_idx = _padding_idx(padding_idx, num)
    idx = input.reshape(-1)
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    rows = weight.index_select(0, idx)
    if scale_grad_by_freq and rows.requires_grad:
        rows = _freq_scale(rows, idx, num, padding_idx)
    elif padding_idx is not None and rows.requires_grad:
        from .. import where
        rows = where((idx == padding_idx).unsqueeze(1), rows.detach(), rows)
    return rows.view(*input.shape, dim)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxes of bags of embeddings: input 2-D [B, L] (B bags of L) or 1-D
    with offsets (bag b is input[offsets[b]:offsets[b+1]]). Empty bags give zeros;
    padding_idx entries are left out of their bag (and of its count for mean)."""
    from .. import arange, full, ones, where, zeros
    from .. import int64
    if sparse:
        raise NotImplementedError("embedding_bag(): sparse=True (sparse gradients) is not supported by lucid; "
                                  "use sparse=False (dense gradients)")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    _check_indices("embedding_bag", input)
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}').")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not "
                             f"None, then it must have the same shape as the input ({tuple(input.shape)})")
    num, dim = weight.shape
    padding_idx = _padding_idx(padding_idx, num)
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type Tensor")
        b, length = input.shape
        dev = input.device
        offsets = (arange(0, b * length, length, dtype=int64, device=dev) if length
                   else zeros(b, dtype=int64, device=dev))
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    offsets = offsets.to(int64)
    n = input.numel()
    nb = offsets.numel() - 1 if include_last_offset else offsets.numel()
    if offsets.numel() and offsets[0].item() != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                           f"from position 0. However, got {offsets[0].item()}")
    end = offsets[-1].item() if include_last_offset and offsets.numel() else n
    if end > n:
        raise RuntimeError(f"embedding_bag: the last offset ({end}) is beyond the input's length ({n})")
    idx = input.to(int64)[:end]
    psw = per_sample_weights[:end] if per_sample_weights is not None else None
    starts = offsets[:nb]
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    # bag of each position: a running count of the bag starts at or before it
    dev = weight.device
    marks = zeros(end + 1, dtype=int64, device=dev).index_add(0, starts.clamp(0, end), ones(nb, dtype=int64, device=dev))
    seg = marks.cumsum(0)[:end] - 1
    if padding_idx is not None:
        keep = idx != padding_idx
        idx, seg = idx[keep], seg[keep]
        psw = psw[keep] if psw is not None else None
    rows = weight.index_select(0, idx)
    if scale_grad_by_freq and rows.requires_grad:
        rows = _freq_scale(rows, idx, num, None)
    if psw is not None:
        rows = rows * psw.unsqueeze(1)
    if mode != "max":
        out = zeros(nb, dim, dtype=rows.dtype, device=dev).index_add(0, seg, rows)
        if mode == "mean":
            counts = zeros(nb, dtype=rows.dtype, device=dev).index_add(0, seg, ones(seg.numel(), dtype=rows.dtype, device=dev))
            out = out / counts.clamp_min(1).unsqueeze(1)
        return out
    counts = zeros(nb, dtype=int64, device=dev).index_add(0, seg, ones(seg.numel(), dtype=int64, device=dev))
    maxlen = counts.max().item() if nb else 0
    if maxlen == 0:
        return zeros(nb, dim, dtype=rows.dtype, device=dev) + rows.sum() * 0  # keeps weight in the graph
    first = counts.cumsum(0) - counts  # position of each bag's first kept element
    pos = arange(seg.numel(), dtype=int64, device=dev) - first.index_select(0, seg)
    dense = full((nb, maxlen, dim), float("-inf"), dtype=rows.dtype, device=dev)
    dense[seg, pos] = rows
    out = dense.max(dim=1).values
    return where((counts > 0).unsqueeze(1), out, zeros((), dtype=rows.dtype))
