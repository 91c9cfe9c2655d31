"""Random numbers: Generator (counter-based Philox), seeding, and the random creation
functions. Values are drawn on the CPU and copied to a GPU target; being
counter-based, a draw depends only on (seed, offset, element index)."""

from __future__ import annotations

import builtins

from . import _C
from . import _dtype as D
from ._device import _resolve as _resolve_device
from ._creation import _size_arg
from ._size import _parse_size
from ._tensor import Tensor

__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
    "set_rng_state", "rand", "rand_like", "randn", "randn_like", "randint", "randint_like",
    "randperm", "normal", "bernoulli", "poisson", "binomial",
]


class Generator:
    """A random number generator (torch.Generator). Only CPU generators exist so far;
    random tensors on a GPU are drawn on the CPU and uploaded."""

    def __init__(self, device="cpu"):
        self.device = _resolve_device(device)
        self._gen = _C.Generator()

    @classmethod
    def _from_engine(cls, gen):
        g = cls.__new__(cls)
        g.device = _resolve_device("cpu")
        g._gen = gen
        return g

    def manual_seed(self, seed):
        self._gen.manual_seed(_seed_value(seed))
        return self

    def seed(self):
        return self._gen.seed()

    def initial_seed(self):
        return self._gen.initial_seed()

    def get_state(self):
        from ._creation import tensor
        return tensor(list(self._gen.get_state()), dtype=D.uint8, device="cpu")  # a CPU ByteTensor, as torch's

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor) or new_state.dtype is not D.uint8:
            got = new_state.dtype if isinstance(new_state, Tensor) else type(new_state).__name__
            raise TypeError(f"RNG state must be a lucid.ByteTensor (uint8 tensor), got {got}")
        self._gen.set_state(bytes(new_state.to_bytes()))
        return self

    def get_offset(self):
        return self._gen.offset

    def set_offset(self, offset):
        self._gen.offset = offset
        return self


default_generator = Generator._from_engine(_C.default_generator())


def _seed_value(seed):
    if isinstance(seed, Tensor):
        seed = seed.item()
    if isinstance(seed, builtins.bool) or not isinstance(seed, builtins.int):
        raise TypeError(f"seed must be an int, but got {type(seed).__name__}")
    if not -0x8000_0000_0000_0000 <= seed <= 0xFFFF_FFFF_FFFF_FFFF:
        raise ValueError(f"Overflow when unpacking long long: seed {seed} does not fit in 64 bits")
    return seed & 0xFFFF_FFFF_FFFF_FFFF  # negative seeds wrap, as in PyTorch


def manual_seed(seed):
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def _gen(generator):
    if generator is None:
        return default_generator._gen
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a lucid.Generator, but got {type(generator).__name__}")
    return generator._gen


def _spec(size, dtype, device, what, default=None):
    """(shape, dtype, device code) of a random creation call."""
    shape = _parse_size(size, what)
    dtype = (default or D.get_default_dtype()) if dtype is None else D._check(dtype)
    return shape, dtype._code, _resolve_device(device)._code


def _done(impl, requires_grad):
    t = impl
    if requires_grad:
        t.requires_grad = True
    return t


def rand(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1)."""
    impl = _C.uniform(*_spec(_size_arg(args, size, "rand"), dtype, device, "rand"), 0.0, 1.0, _gen(generator))
    return _done(impl, requires_grad)


def randn(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples."""
    impl = _C.normal(*_spec(_size_arg(args, size, "randn"), dtype, device, "randn"), 0.0, 1.0, _gen(generator))
    return _done(impl, requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad=False):
    return rand(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False):
    return randn(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, device=None,
            requires_grad=False):
    """randint(high, size) or randint(low, high, size), any of them by keyword:
    integers in [low, high)."""
    given = {k: v for k, v in (("low", low), ("high", high), ("size", size)) if v is not None}
    bound = _bind(("high", "size"), args, given) or _bind(("low", "high", "size"), args, given)
    if bound is None:
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in given.items()])
        raise TypeError(f"randint() received an invalid combination of arguments - got ({got}), but expected "
                        "one of: (int high, tuple of ints size), (int low, int high, tuple of ints size)")
    size = bound["size"]
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    low, high = _int_arg(bound.get("low", 0), "low"), _int_arg(bound["high"], "high")
    impl = _C.integers(*_spec((size,), dtype, device, "randint", default=D.int64), low, high,
                       _gen(generator))
    return _done(impl, requires_grad)


def _bind(params, args, given):
    """{param: value} when args (positional) and given (keywords) fill exactly
    params, else None: one overload of a PyTorch signature."""
    if len(args) > len(params) or any(k in given for k in params[:len(args)]):
        return None
    bound = {**dict(zip(params, args)), **given}
    return bound if set(bound) == set(params) else None


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False):
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, dtype=dtype or input.dtype,
                   device=device or input.device, requires_grad=requires_grad)


def _int_arg(v, what):
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, builtins.bool) or not hasattr(v, "__index__"):
        raise TypeError(f"randint(): argument '{what}' must be int, not {type(v).__name__}")
    return v.__index__()


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    n = _int_arg(n, "n")
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got {n}")
    dtype = D.int64 if dtype is None else D._check(dtype)
    impl = _C.randperm(n, dtype._code, _resolve_device(device)._code, _gen(generator))
    t = impl
    if requires_grad:
        t.requires_grad = True
    return t


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False):
    """Samples of N(mean, std^2): normal(float, float, size), or elementwise with
    tensor mean and/or std (broadcast together)."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is not None:
            raise TypeError("normal() with tensor mean or std takes no size: the output has "
                            "their broadcast shape")
        ref = mean if isinstance(mean, Tensor) else std
        mean_t, std_t = (_as_scalar_tensor(v, ref) for v in (mean, std))
        for t in (mean_t, std_t):
            if not (t.dtype.is_floating_point or t.dtype.is_complex):
                raise NotImplementedError(f"normal is not implemented for dtype {t.dtype}: mean "
                                          "and std must be floating point")
        shape = _broadcast_shape(mean_t.shape, std_t.shape)
        out_dtype = ref.dtype if dtype is None else D._check(dtype)  # mean's dtype, as PyTorch
        out_device = ref.device if device is None else _resolve_device(device)
        impl = _C.normal_tensor(mean_t, std_t, shape, out_dtype._code,
                                out_device._code, _gen(generator))
        return _done(impl, requires_grad)
    if size is None:
        raise TypeError("normal() with float mean and std needs a size")
    impl = _C.normal(*_spec((size,), dtype, device, "normal"), builtins.float(mean),
                     builtins.float(std), _gen(generator))
    return _done(impl, requires_grad)


def _as_scalar_tensor(v, ref):
    if isinstance(v, Tensor):
        return v
    from ._creation import tensor
    return tensor(builtins.float(v), dtype=ref.dtype)


def _broadcast_shape(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               "at non-singleton dimension")
        out.append(y if x == 1 else x)
    return out


def bernoulli(input, p=None, *, generator=None):
    """0/1 samples: with probability input[i] (p=None) or p for every element."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' must be Tensor, not {type(input).__name__}")
    return _C.bernoulli(input, None if p is None else builtins.float(p), _gen(generator))


def poisson(input, generator=None):
    """A Poisson(input[i]) count per element, in input's (floating) dtype; no gradient,
    as torch's."""
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return _C.poisson(input, _gen(generator))


def binomial(count, prob, generator=None):
    """A Binomial(count[i], prob[i]) sample per element of their broadcast shape, in
    count's (floating) dtype, which prob's must be; no gradient, as torch's."""
    for position, (name, value) in enumerate((("count", count), ("prob", prob)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"binomial(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")
    return _C.binomial(count, prob, _gen(generator))


def _random_bounds(dtype, from_, to):
    """Tensor.random_'s [low, high) for random_(), random_(to) and random_(from, to)."""
    if to is None:
        if from_ != 0:
            return 0, from_  # random_(to)
        if dtype.is_floating_point:
            digits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[dtype._name]
            return 0, (1 << digits) + 1
        if dtype is D.bool:
            return 0, 2
        return 0, D.iinfo(dtype).max + (0 if dtype is D.int64 else 1)
    return from_, to
