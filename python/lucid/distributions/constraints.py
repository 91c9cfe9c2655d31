"""The constraints a distribution's parameters and samples satisfy
(torch.distributions.constraints): `check(value)` gives a bool tensor, one entry an event;
their reprs are torch's, which the validation messages quote."""

__all__ = ["Constraint", "boolean", "cat", "corr_cholesky", "dependent", "greater_than", "greater_than_eq",
           "half_open_interval", "independent", "integer_interval", "interval", "is_dependent", "less_than",
           "lower_cholesky", "multinomial", "nonnegative", "nonnegative_integer", "open_interval",
           "open_unit_interval", "positive", "positive_definite", "positive_integer", "real", "real_vector",
           "simplex", "stack", "unit_interval"]


class Constraint:
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    """A support that depends on the parameters (Uniform's [low, high)): not checked."""

    def __init__(self, *, is_discrete=False, event_dim=0):
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")

    def __call__(self, *, is_discrete=False, event_dim=0):
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


class _Real(Constraint):
    def check(self, value):
        return value == value  # False for NaN


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _Bound(Constraint):
    def __init__(self, *bounds):
        self.bounds = bounds

    def _named(self):
        names = ("lower_bound", "upper_bound") if len(self.bounds) == 2 else (self._bound_name,)
        return dict(zip(names, self.bounds))

    def __getattr__(self, name):  # (torch's lower_bound / upper_bound attributes)
        named = self._named() if name in ("lower_bound", "upper_bound") and "bounds" in self.__dict__ else {}
        if name in named:
            return named[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __repr__(self):
        return type(self).__name__[1:] + "(" + ", ".join(f"{n}={b}" for n, b in self._named().items()) + ")"


class _GreaterThan(_Bound):
    _bound_name = "lower_bound"

    def check(self, value):
        return self.bounds[0] < value


class _GreaterThanEq(_Bound):
    _bound_name = "lower_bound"

    def check(self, value):
        return self.bounds[0] <= value


class _LessThan(_Bound):
    _bound_name = "upper_bound"

    def check(self, value):
        return value < self.bounds[0]


class _Interval(_Bound):
    def check(self, value):
        return (self.bounds[0] <= value) & (value <= self.bounds[1])


class _HalfOpenInterval(_Bound):
    def check(self, value):
        return (self.bounds[0] <= value) & (value < self.bounds[1])


class _OpenInterval(_Bound):
    """lower < value < upper (upstream Lucid's; torch has no open interval)."""

    def check(self, value):
        return (self.bounds[0] < value) & (value < self.bounds[1])


class _IntegerInterval(_Bound):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (self.bounds[0] <= value) & (value <= self.bounds[1])


class _IntegerGreaterThan(_Bound):
    is_discrete = True
    _bound_name = "lower_bound"

    def check(self, value):
        return (value % 1 == 0) & (value >= self.bounds[0])


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Vectors of nonnegative counts summing to at most upper_bound (Multinomial's support)."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)


class _IndependentConstraint(Constraint):
    """base_constraint over `reinterpreted_batch_ndims` more dims, an event valid when all its entries are."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            raise ValueError(f"Expected value.dim() >= {self.reinterpreted_batch_ndims + self.base_constraint.event_dim}"
                             f" but got {value.dim()}")
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(dim=-1)
        return result

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _PositiveDefinite(Constraint):
    """Square, symmetric (to torch's isclose) and with a Cholesky factor."""
    event_dim = 2

    def check(self, value):
        import lucid
        if value.shape[-2] != value.shape[-1]:
            return lucid.zeros(value.shape[:-2], dtype=lucid.bool, device=value.device)
        symmetric = lucid.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)
        if not bool(symmetric.all()):
            return symmetric
        return lucid.linalg.cholesky_ex(value).info == 0


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).all(-1).all(-1)
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return lower & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower-triangular factors of correlation matrices: lower Cholesky with rows of norm 1."""
    event_dim = 2

    def check(self, value):
        import lucid
        tol = lucid.finfo(value.dtype).eps * value.size(-1) * 10  # (torch's fudge factor)
        row_norm = lucid.linalg.norm(value.detach(), dim=-1)
        return _LowerCholesky().check(value) & (row_norm - 1.0).abs().le(tol).all(dim=-1)


class _Cat(Constraint):
    """cseq[i] over the i-th slice (lengths[i] long) of dim `dim` (CatTransform's domains)."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})")
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        import lucid
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return lucid.cat(checks, self.dim)


class _Stack(Constraint):
    """cseq[i] over the i-th index of dim `dim` (StackTransform's domains)."""

    def __init__(self, cseq, dim=0):
        self.cseq, self.dim = list(cseq), dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        import lucid
        slices = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return lucid.stack([c.check(v) for v, c in zip(slices, self.cseq)], self.dim)


dependent = _Dependent()
real = _Real()
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
open_unit_interval = _OpenInterval(0.0, 1.0)
simplex = _Simplex()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
interval = _Interval
half_open_interval = _HalfOpenInterval
open_interval = _OpenInterval
integer_interval = _IntegerInterval
multinomial = _Multinomial
independent = _IndependentConstraint
real_vector = _IndependentConstraint(real, 1)
positive_definite = _PositiveDefinite()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
cat = _Cat
stack = _Stack
