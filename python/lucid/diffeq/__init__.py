"""lucid.diffeq: ODE solvers for dy/dt = f(t, y), upstream Lucid's lucid.diffeq in the style of torchdiffeq.

odeint integrates to the times you name (differentiable through its steps),
odeint_adjoint differentiates by the adjoint method at constant memory, odeint_dense
returns a continuous solution to query afterwards, and odeint_event integrates until a
condition changes sign. Methods are ButcherTableau objects, reached by name or passed
directly (a tableau of your own works too):

- adaptive, with embedded error estimates: DOPRI5 ("dopri5", the default), DOPRI8,
  TSIT5, BOSH3, FEHLBERG2, ADAPTIVE_HEUN;
- fixed-step explicit: EULER, MIDPOINT, HEUN2, HEUN3, RK4 ("rk4": Kutta's 3/8 rule, as
  in torchdiffeq), RK4_CLASSIC;
- fixed-step implicit, their stages solved by Newton's method: IMPLICIT_EULER,
  IMPLICIT_MIDPOINT, TRAPEZOID, RADAU_IIA3 ("radauIIA3"), RADAU_IIA5, GL4, GL6,
  SDIRK2, TRBDF2;
- Adams multistep (names only): "explicit_adams", "implicit_adams", "fixed_adams".

The solvers run lucid ops on the state, so they work on any device and dtype lucid
does, and autograd differentiates them.
"""

from ._adjoint import odeint_adjoint
from ._odeint import odeint, odeint_dense, odeint_event
from ._tableau import ButcherTableau
from ._tableau_dopri8 import DOPRI8
from ._tableaux_explicit import (ADAPTIVE_HEUN, BOSH3, DOPRI5, EULER, FEHLBERG2, HEUN2, HEUN3, MIDPOINT, RK4,
                                 RK4_CLASSIC, TSIT5)
from ._tableaux_implicit import (GL4, GL6, IMPLICIT_EULER, IMPLICIT_MIDPOINT, RADAU_IIA3, RADAU_IIA5, SDIRK2,
                                 TRAPEZOID, TRBDF2)

__all__ = ["odeint", "odeint_adjoint", "odeint_dense", "odeint_event", "ButcherTableau",
           "DOPRI5", "DOPRI8", "TSIT5", "BOSH3", "FEHLBERG2", "ADAPTIVE_HEUN",
           "EULER", "MIDPOINT", "HEUN2", "HEUN3", "RK4", "RK4_CLASSIC",
           "IMPLICIT_EULER", "IMPLICIT_MIDPOINT", "TRAPEZOID", "RADAU_IIA3", "RADAU_IIA5", "GL4", "GL6",
           "SDIRK2", "TRBDF2"]
