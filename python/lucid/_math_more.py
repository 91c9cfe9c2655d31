"""torch's remaining elementwise helpers and index writes, composed from lucid's ops (so
they run on either device, with those ops' gradients): heaviside, signbit, copysign,
sinc, float_power, ldexp, index_fill, index_copy, diag_embed, masked_scatter, put; the
activations as Tensor methods (upstream Lucid's), and Tensor.unfold (a strided view)."""

import math

from . import _dtype as D
from . import _out, return_types
from ._tensor import Tensor


def _lucid():
    import lucid
    return lucid


def heaviside(input, values):
    """0 below zero, 1 above, `values` at zero (NaN counts as below)."""
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    return _lucid().where(input == 0, values, (input > 0).to(input.dtype))


def signbit(input):
    """Whether each entry's sign bit is set (-0.0 included; a NaN's sign is not read)."""
    if input.dtype == D.bool:
        return input.new_zeros(input.shape, dtype=D.bool)
    if not input.dtype.is_floating_point:
        return input < 0
    return (input < 0) | ((input == 0) & (input.reciprocal() < 0))


def copysign(input, other):
    """|input| with the sign of other (other may be a number), as a floating tensor."""
    L = _lucid()
    if not isinstance(other, Tensor):
        other = L.tensor(float(other), device=input.device)
    dtype = D.promote_types(input.dtype, other.dtype)
    if dtype.is_complex:
        raise NotImplementedError(f"copysign is not implemented for dtype {str(dtype).replace('lucid.', '')}")
    if not dtype.is_floating_point:
        dtype = L.get_default_dtype()
    magnitude = input.to(dtype).abs()
    return L.where(signbit(other), -magnitude, magnitude)


def sinc(input):
    """sin(pi x) / (pi x), 1 at 0 (where its gradient is 0)."""
    L = _lucid()
    # (complex input stays complex: casting it to a real dtype dropped the imaginary part)
    x = input if input.dtype.is_floating_point or input.dtype.is_complex else input.to(L.get_default_dtype())
    zero = x == 0
    safe = L.where(zero, L.ones_like(x), x) * math.pi
    return L.where(zero, L.ones_like(x), safe.sin() / safe)


def float_power(input, exponent):
    """input ** exponent in double precision: float64, or complex128 when either is
    complex (torch's)."""
    L = _lucid()
    cplx = any((isinstance(v, Tensor) and v.dtype.is_complex) or isinstance(v, complex) for v in (input, exponent))
    dt = D.complex128 if cplx else D.float64
    scalar = complex if cplx else float
    base = input.to(dt) if isinstance(input, Tensor) else L.tensor(scalar(input), dtype=dt, device=exponent.device)
    power = exponent.to(dt) if isinstance(exponent, Tensor) else scalar(exponent)
    return base.pow(power)


def ldexp(input, other):
    """input * 2 ** other."""
    L = _lucid()
    dtype = input.dtype if input.dtype.is_floating_point else L.get_default_dtype()
    return input.to(dtype) * L.pow(L.tensor(2.0, dtype=dtype, device=input.device), other.to(dtype))


def frexp(input):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent, 0.5 <= |mantissa| < 1
    (exponent int32); zeros, infinities and NaN keep their value with exponent 0."""
    L = _lucid()
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    regular = input.isfinite() & (input != 0)
    a = L.where(regular, input.abs(), L.ones_like(input))
    e = L.floor(L.log2(a)) + 1

    def scaled(e):  # a * 2^-e in two exact steps (2^-e alone overflows for subnormal a)
        half = L.floor(e * -0.5)
        return a * L.exp2(half) * L.exp2(-e - half)

    m = scaled(e)  # (log2 may round across a power of two: one step either way)
    e = e + (m >= 1).to(e.dtype) - (m < 0.5).to(e.dtype)
    mantissa = L.where(regular, scaled(e) * input.sign(), input)
    return return_types.frexp((mantissa, L.where(regular, e, L.zeros_like(e)).to(D.int32)))


def _slices_mask(input, dim, index):
    """A bool tensor broadcastable to input: True on the slices of dim at index."""
    L = _lucid()
    d = dim % max(input.ndim, 1)
    n = input.shape[d] if input.ndim else 1
    if index.ndim > 1:
        raise IndexError("Index is supposed to be a vector")
    mask = L.zeros(n, dtype=D.bool, device=input.device)
    mask[index] = True
    shape = [1] * input.ndim
    if input.ndim:
        shape[d] = n
    return mask.reshape(shape)


def index_fill(input, dim, index, value):
    """input with the slices of dim at index set to value."""
    return input.masked_fill(_slices_mask(input, dim, index), value)


def index_fill_(input, dim, index, value):
    return input.masked_fill_(_slices_mask(input, dim, index), value)


def _copy_index(input, dim, index, source):
    if index.ndim > 1:
        raise IndexError("index_copy_(): Index should have dimension 1 or 0 (got " + str(index.ndim) + ")")
    d = dim % max(input.ndim, 1)
    if source.ndim and index.numel() != source.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to "
                         f"source.size(dim) ({source.shape[d]})")
    shape = [1] * source.ndim
    if source.ndim:
        shape[d] = index.numel()
    return d, index.reshape(shape).expand(*source.shape)


def index_copy(input, dim, index, source):
    """input with source's slices i written at the slices index[i] of dim."""
    d, idx = _copy_index(input, dim, index, source)
    return input.scatter(d, idx, source)


def index_copy_(input, dim, index, source):
    d, idx = _copy_index(input, dim, index, source)
    return input.scatter_(d, idx, source)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose (dim1, dim2) planes hold input's last dim on their offset-th diagonal."""
    L = _lucid()
    nd = input.ndim + 1
    d1, d2 = dim1 % nd, dim2 % nd
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] + abs(offset) if input.ndim else 1 + abs(offset)
    out = L.zeros(*input.shape[:-1], n, n, dtype=input.dtype, device=input.device)
    out.diagonal(offset, -2, -1).copy_(input)
    return out.movedim([nd - 2, nd - 1], [d1, d2])


def masked_scatter(input, mask, source):
    """input with its entries where mask is True replaced by source's first entries, in
    order (mask broadcast to input)."""
    L = _lucid()
    if mask.dtype != D.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    mask = mask.expand(*input.shape)
    count = int(mask.sum().item())
    if count > source.numel():
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as ones in mask "
                           f"({count}), got {source.numel()}")
    out = input.clone()
    out[mask] = source.reshape(-1)[:count].to(input.dtype)
    return out


def masked_scatter_(input, mask, source):
    return input.copy_(masked_scatter(input, mask, source))


def put(input, index, source, accumulate=False):
    """input with source written (or added) at the positions index of its flattened self."""
    return put_(input.clone(), index, source, accumulate)


def put_(input, index, source, accumulate=False):
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    flat = input.view(-1)
    flat.index_put_((index.reshape(-1),), source.reshape(-1).to(input.dtype), accumulate)
    return input


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of x1 [*, P, M] and each row of x2 [*, R, M]:
    [*, P, R]. Computed from the differences (exact; torch may take the matrix-product
    form for p = 2, which rounds differently)."""
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
                           f"{x2.shape[-1]}")
    if not (x1.dtype.is_floating_point and x2.dtype.is_floating_point):
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    differences = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _lucid().norm(differences, p, -1)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2) (beta = 0 ignores input, NaN included)."""
    L = _lucid()
    product = L.outer(vec1, vec2)
    product = product if alpha == 1 else product * alpha
    if beta == 0:
        return product.expand(*L.broadcast_shapes(input.shape, product.shape)).clone()
    return (input if beta == 1 else input * beta) + product


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * the sum over the batch of batch1[i] @ batch2[i]."""
    L = _lucid()
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, got {batch1.ndim}D and batch2 {batch2.ndim}D")
    product = L.bmm(batch1, batch2).sum(0)
    product = product if alpha == 1 else product * alpha
    if beta == 0:
        return product.expand(*L.broadcast_shapes(input.shape, product.shape)).clone()
    return (input if beta == 1 else input * beta) + product


def adjoint(input):
    """The conjugate transpose of the last two dims (torch's mH): a view for a real
    tensor; for a complex one a copy, lucid's conj being one (docs/ENGINE.md)."""
    if input.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. Got "
                           f"{input.ndim}-D tensor.")
    t = input.transpose(-2, -1)
    return t.conj() if input.dtype.is_complex else t


def unfold(input, dimension, size, step):
    """Every window of `size` entries of dimension, `step` apart, as a new last dim: a
    view (overlapping windows' gradients add up, through as_strided's backward)."""
    d = dimension % max(input.ndim, 1)
    n = input.shape[d] if input.ndim else 1
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if input.ndim == 0:
        return input.reshape(size)
    windows = (n - size) // step + 1
    shape, stride = list(input.shape), list(input.stride())
    shape[d], inner = windows, stride[d]
    stride[d] = inner * step
    return input.as_strided(shape + [size], stride + [inner], input.storage_offset())


ACTIVATIONS = {"gelu": "gelu", "silu": "silu", "mish": "mish", "selu": "selu", "softplus": "softplus",
               "relu6": "relu6", "hard_sigmoid": "hardsigmoid", "hard_swish": "hardswish"}


def _in_place(fn, name):
    """Tensor.<name>: fn's result written into self, as torch's in-place forms: its
    dtype must cast to self's (float_power_ needs self in float64 / complex128), and its
    broadcast shape must be self's."""
    from ._elementwise import can_cast

    def method(self, *args, **kwargs):
        result = fn(self, *args, **kwargs)
        if name == "float_power_" and result.dtype != self.dtype:
            raise RuntimeError(f"the base given to float_power_ has dtype {D._torch_name(self.dtype)} but the "
                               f"operation's result requires dtype {D._torch_name(result.dtype)}")
        if not can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"result type {D._torch_name(result.dtype)} can't be cast to the desired output type "
                               f"{D._torch_name(self.dtype)}")
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(result.shape)}")
        return self.copy_(result)
    method.__name__ = name
    method.__doc__ = f"In place: self = {fn.__name__}(self, ...)."
    return method



def install(namespace):
    """lucid's functions and Tensor's methods from this module."""
    for fn in (heaviside, signbit, copysign, sinc, float_power, ldexp, frexp, index_fill, index_copy, diag_embed,
               masked_scatter, put):
        namespace[fn.__name__] = fn
        setattr(Tensor, fn.__name__, fn)
    namespace["frexp"] = _out.with_out_pair(frexp, "frexp")  # (mantissa, exponent) out=
    namespace["cdist"] = cdist
    for fn in (addr, addbmm, adjoint):
        namespace[fn.__name__] = fn
        setattr(Tensor, fn.__name__, fn)
    for fn in (index_fill_, index_copy_, masked_scatter_, put_):
        setattr(Tensor, fn.__name__, fn)
    from ._complex import conj_physical
    for fn in (copysign, heaviside, sinc, float_power, ldexp, addr, addbmm, conj_physical):
        setattr(Tensor, fn.__name__ + "_", _in_place(fn, fn.__name__ + "_"))
    for name in ("hsplit", "vsplit", "dsplit"):
        setattr(Tensor, name, namespace[name])
    Tensor.unfold = unfold
    F = namespace["nn"].functional
    for method, name in ACTIVATIONS.items():
        setattr(Tensor, method, _activation(getattr(F, name)))


def _activation(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__, method.__doc__ = fn.__name__, fn.__doc__
    return method
