"""Upstream Lucid's functions in nn.functional that torch has no name for, with their
common meanings: symlog / symexp (DreamerV3's squashing), straight_through (a hard value
with a soft one's gradient), accuracy / correct_count of logits against class targets,
repeat_kv (grouped-query attention's key/value heads repeated, as Hugging Face's
transformers write it), fused_linear_relu / fused_linear_gelu (a linear layer and its
activation), nearest_codebook (the nearest codebook row's index) and two_hot (a value
split between its two nearest bins). Compositions of differentiable ops."""

__all__ = ["accuracy", "correct_count", "fused_linear_gelu", "fused_linear_relu", "nearest_codebook", "repeat_kv",
           "straight_through", "symexp", "symlog", "two_hot"]


def _lucid():
    import lucid
    return lucid


def symlog(x):
    """sign(x) log(1 + |x|)."""
    return x.sign() * x.abs().log1p()


def symexp(x):
    """symlog's inverse: sign(x) (exp(|x|) - 1)."""
    return x.sign() * x.abs().expm1()


def straight_through(hard, soft):
    """hard's values with soft's gradient: soft + (hard - soft), the difference detached."""
    return soft + (hard - soft).detach()


def _predictions_match(logits, target, dim):
    if target.dtype.is_floating_point:
        raise TypeError(f"accuracy: target must hold class indices (an integer dtype), got {target.dtype}")
    predicted = logits.argmax(dim)
    if tuple(predicted.shape) != tuple(target.shape):
        raise ValueError(f"accuracy: target of shape {tuple(target.shape)} does not match the predictions' "
                         f"{tuple(predicted.shape)} (the logits without dim {dim})")
    return predicted == target


def correct_count(logits, target, *, dim=-1):
    """How many rows' argmax along dim equals target (an int64 scalar tensor)."""
    return _predictions_match(logits, target, dim).sum()


def accuracy(logits, target, *, dim=-1):
    """The fraction of rows whose argmax along dim equals target (a float scalar tensor)."""
    match = _predictions_match(logits, target, dim)
    return match.to(logits.dtype if logits.dtype.is_floating_point else _lucid().get_default_dtype()).mean()


def repeat_kv(hidden_states, n_rep):
    """[batch, kv_heads, seq, dim] -> [batch, kv_heads * n_rep, seq, dim], each head
    repeated n_rep times in place (heads h * n_rep .. h * n_rep + n_rep - 1 are head h)."""
    if hidden_states.dim() != 4:
        raise ValueError(f"repeat_kv expects [batch, kv_heads, seq, dim], got shape {tuple(hidden_states.shape)}")
    if not isinstance(n_rep, int) or isinstance(n_rep, bool) or n_rep < 1:
        raise ValueError(f"repeat_kv: n_rep must be a positive int, got {n_rep!r}")
    if n_rep == 1:
        return hidden_states
    b, h, s, d = hidden_states.shape
    return hidden_states[:, :, None].expand(b, h, n_rep, s, d).reshape(b, h * n_rep, s, d)


def fused_linear_relu(x, weight, bias=None):
    """relu(x @ weight.T + bias)."""
    F = _lucid().nn.functional
    return F.relu(F.linear(x, weight, bias))


def fused_linear_gelu(x, weight, bias=None, approximate="none"):
    """gelu(x @ weight.T + bias, approximate)."""
    F = _lucid().nn.functional
    return F.gelu(F.linear(x, weight, bias), approximate=approximate)


def nearest_codebook(x, codebook):
    """For each row of x [..., d], the index of the nearest row of codebook [k, d] in
    Euclidean distance (int64 [...]): vector quantisation's lookup."""
    if codebook.dim() != 2 or x.shape[-1] != codebook.shape[-1]:
        raise ValueError(f"nearest_codebook: codebook must be [k, {x.shape[-1]}], got {tuple(codebook.shape)}")
    distances = (x.unsqueeze(-2) - codebook).pow(2).sum(-1)
    return distances.argmin(-1)


def two_hot(values, bins):
    """values [...] as weights over sorted bins [k] ([..., k]): each value split between its
    two nearest bins so that the weights sum to 1 and their mean over the bins is the
    value (clamped into the bins' range first)."""
    lucid = _lucid()
    if bins.dim() != 1 or bins.numel() < 2:
        raise ValueError(f"two_hot: bins must be one-dimensional with at least 2 entries, got {tuple(bins.shape)}")
    v = values.clamp(float(bins[0]), float(bins[-1]))
    upper = lucid.searchsorted(bins, v.contiguous(), right=False).clamp(1, bins.numel() - 1)
    lower = upper - 1
    lo, hi = bins[lower], bins[upper]
    weight_hi = (v - lo) / (hi - lo)
    k = bins.numel()
    F = lucid.nn.functional
    return (F.one_hot(lower, k).to(v.dtype) * (1 - weight_hi).unsqueeze(-1)
            + F.one_hot(upper, k).to(v.dtype) * weight_hi.unsqueeze(-1))
