"""one_hot, normalize, cosine_similarity, pairwise_distance, pdist and bilinear, as in
torch.nn.functional; compositions of differentiable engine ops (norms via lucid.norm)."""

__all__ = ["one_hot", "normalize", "cosine_similarity", "pairwise_distance", "pdist", "bilinear"]

from ..amp._autocast import policy as _autocast_policy  # Note [Autocast]


def one_hot(tensor, num_classes=-1):
    """int64 [*] class indices -> int64 [*, num_classes]."""
    from .. import arange
    from .._dtype import int64
    if tensor.dtype != int64:
        raise RuntimeError(f"one_hot is only applicable to index tensor of type LongTensor, got {tensor.dtype}")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if int(tensor.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(tensor.max()) + 1
        elif int(tensor.max()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    if num_classes < -1:
        raise RuntimeError(f"num_classes should be -1 or non-negative, got {num_classes}")
    classes = arange(num_classes, dtype=int64, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()


def _check_float(name, *ts):
    for t in ts:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(f"{name}(): expected a floating-point input, but got {t.dtype}")


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps)."""
    from .. import norm
    _check_float("normalize", input)
    denom = norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    res = input / denom
    if out is not None:
        return out.copy_(res)
    return res


@_autocast_policy("cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1/||x1|| * x2/||x2||, dim), each norm clamped at eps. As ATen, the clamp is applied
    without autograd (the gradient is that of the unclamped norm)."""
    from .. import broadcast_to, norm
    if not x1.dtype.is_floating_point:
        x1 = x1.to(x2.dtype if x2.dtype.is_floating_point else _default_float())
    if not x2.dtype.is_floating_point:
        x2 = x2.to(x1.dtype)
    shape = _broadcast(x1.shape, x2.shape)
    x1, x2 = broadcast_to(x1, shape), broadcast_to(x2, shape)
    n1 = norm(x1, 2, dim, keepdim=True)
    n2 = norm(x2, 2, dim, keepdim=True)
    n1 = n1 + (n1.detach().clamp_min(eps) - n1.detach())
    n2 = n2 + (n2.detach().clamp_min(eps) - n2.detach())
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _default_float():
    from .. import get_default_dtype
    return get_default_dtype()


def _broadcast(a, b):
    a, b = list(a), list(b)
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i}")
        out.append(y if x == 1 else x)
    return out


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim (of the broadcast shape)."""
    from .. import norm
    out_dim = max(x1.dim(), x2.dim())
    inner = out_dim - 1 if out_dim > 0 else 0
    return norm(x1 - x2 + eps, p, inner, keepdim=keepdim)


@_autocast_policy("pdist")
def pdist(input, p=2):
    """The p-norm distances between the rows of a 2-D input, for each pair i < j (row-major)."""
    from .. import norm
    from .._creation import tensor
    from .._dtype import int64
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"pdist only supports floating-point dtypes, got: {input.dtype}")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    ii = [i for i in range(n) for _ in range(i + 1, n)]
    jj = [j for i in range(n) for j in range(i + 1, n)]
    if not ii:
        return input.new_zeros(0)
    a = input.index_select(0, tensor(ii, dtype=int64, device=input.device))
    b = input.index_select(0, tensor(jj, dtype=int64, device=input.device))
    return norm(a - b, p, 1)


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]."""
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional, but got {weight.dim()}D")
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and "
                           f"{list(input2.shape[:-1])}")
    o, i1, i2 = weight.shape
    if input1.shape[-1] != i1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {i1}")
    if input2.shape[-1] != i2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {i2}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != o):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0] if bias.dim() else 0}"
                           f" but expected {o}")
    lead = list(input1.shape[:-1])
    a = input1.reshape(-1, i1)
    b = input2.reshape(-1, i2)
    t = a.matmul(weight.permute(1, 0, 2).reshape(i1, o * i2)).reshape(-1, o, i2)   # [B, o, i2]
    y = (t * b.unsqueeze(1)).sum(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(lead + [o])
