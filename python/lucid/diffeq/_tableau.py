"""ButcherTableau: the coefficients that define one Runge-Kutta method.

A step from t to t + h evaluates s stage derivatives

    k_i = f(t + c_i h, y + h * sum_j a_ij k_j)

and moves to y + h * sum_i b_i k_i. Every solver in lucid.diffeq reads its method from
one of these, so a new method is data: a caller can hand odeint a tableau of their own.

`a` is written one of two ways. Ragged (row i holds i entries, the zeros on and above
the diagonal left out) spells an explicit method; square (every row holds s entries)
spells one that may be implicit. The two are never mixed: a row of the wrong width
would shift every coefficient of its stage.
"""

from dataclasses import dataclass
from functools import cached_property

from ._order_conditions import order_reached

__all__ = ["ButcherTableau"]

# The consistency sums hold exactly for the built-in tableaux and to rounding for
# hand-typed ones; the slack absorbs summing a dozen floats, nothing more.
_SUM_TOLERANCE = 1e-12


def _floats(values, what):
    try:
        return tuple(float(v) for v in values)
    except TypeError as error:
        raise TypeError(f"ButcherTableau {what} must be a sequence of numbers: {error}") from None


@dataclass(frozen=True)
class ButcherTableau:
    """The coefficients of one Runge-Kutta method.

    a, b, c: stage matrix (ragged for an explicit method, square otherwise), weights
    (summing to 1) and stage times (c[i] == sum(a[i])). order: the method's order p,
    also the exponent of the adaptive step-size controller. name: the method name
    error messages use. b_error: b minus the embedded solution's weights (summing to
    0); a tableau that has it is adaptive. mid: the weights giving the state at the
    middle of a step, which the dense-output quartic passes through; required with
    b_error.
    """

    a: tuple
    b: tuple
    c: tuple
    order: int
    name: str
    b_error: tuple = None
    mid: tuple = None

    def __post_init__(self):
        # Coerced so a tableau typed with lists still ends up frozen and hashable.
        set_field = object.__setattr__
        set_field(self, "a", tuple(_floats(row, "rows of a") for row in self.a))
        set_field(self, "b", _floats(self.b, "b"))
        set_field(self, "c", _floats(self.c, "c"))
        if self.b_error is not None:
            set_field(self, "b_error", _floats(self.b_error, "b_error"))
        if self.mid is not None:
            set_field(self, "mid", _floats(self.mid, "mid"))
        self._validate()

    def _validate(self):
        s = len(self.b)
        if s == 0:
            raise ValueError("ButcherTableau needs at least one stage")
        if len(self.a) != s or len(self.c) != s:
            raise ValueError(f"ButcherTableau stage counts disagree: len(a)={len(self.a)}, len(b)={s}, "
                             f"len(c)={len(self.c)}")
        ragged = all(len(row) == i for i, row in enumerate(self.a))
        square = all(len(row) == s for row in self.a)
        if not (ragged or square):
            raise ValueError("ButcherTableau rows of a must be ragged (row i holds i entries: an explicit method) "
                             f"or square (every row holds {s}); got widths {[len(row) for row in self.a]}")
        if abs(sum(self.b) - 1.0) > _SUM_TOLERANCE:
            raise ValueError(f"ButcherTableau weights b must sum to 1, got {sum(self.b)!r}")
        for i, row in enumerate(self.a):
            if abs(sum(row) - self.c[i]) > _SUM_TOLERANCE:
                raise ValueError(f"ButcherTableau row {i}: c[{i}]={self.c[i]!r} but sum(a[{i}])={sum(row)!r}")
        if isinstance(self.order, bool) or not isinstance(self.order, int) or self.order < 1:
            raise ValueError(f"ButcherTableau order must be an int >= 1, got {self.order!r}")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("ButcherTableau name must be a non-empty string")
        if self.b_error is not None:
            if len(self.b_error) != s:
                raise ValueError(f"ButcherTableau b_error must hold {s} entries, got {len(self.b_error)}")
            if abs(sum(self.b_error)) > _SUM_TOLERANCE:
                raise ValueError("ButcherTableau b_error must sum to 0 (both embedded solutions are consistent), "
                                 f"got {sum(self.b_error)!r}")
            if self.mid is None:
                raise ValueError("ButcherTableau with b_error also needs mid, the midpoint weights of its "
                                 "dense output")
        if self.mid is not None and len(self.mid) != s:
            raise ValueError(f"ButcherTableau mid must hold {s} entries, got {len(self.mid)}")

    @property
    def stages(self):
        """Right-hand-side evaluations per step."""
        return len(self.b)

    @property
    def is_adaptive(self):
        """Carries an embedded error estimate, so a step-size controller can use it."""
        return self.b_error is not None

    @property
    def is_implicit(self):
        """Some stage depends on itself or a later stage: steps solve an equation."""
        return any(value != 0.0 for i, row in enumerate(self.a) for j, value in enumerate(row) if j >= i)

    @property
    def is_dirk(self):
        """Implicit but lower triangular: each stage is solved on its own, in order."""
        return self.is_implicit and all(value == 0.0 for i, row in enumerate(self.a)
                                        for j, value in enumerate(row) if j > i)

    @property
    def is_fsal(self):
        """First same as last: the last stage is f(t + h, y_next), the next step's first."""
        explicit_row = self.a[-1][:len(self.b) - 1]
        return (not self.is_implicit and self.b[-1] == 0.0 and self.c[-1] == 1.0
                and explicit_row == self.b[:-1])

    @cached_property
    def mid_order(self):
        """The order to which the mid weights give the state at half a step (0 without
        mid). Dense output uses the quartic through that state only when this is at
        least 4; below that the cubic Hermite of the step's ends is the more accurate."""
        return 0 if self.mid is None else order_reached(self.mid, self.square_a(), 5, x=0.5)

    def square_a(self):
        """a as an s x s tuple of rows, zeros filled in above the diagonal."""
        s = self.stages
        return tuple(row + (0.0,) * (s - len(row)) for row in self.a)
