"""The implicit tableaux: seven collocation methods and two diagonally implicit ones.

Implicit methods solve an equation for their stages every step, which costs far more
than an explicit step but keeps them stable at step sizes where an explicit method
blows up on a stiff problem.
"""

import math

from ._collocation import collocation_coefficients, gauss_nodes, lobatto_nodes, radau_nodes
from ._tableau import ButcherTableau

__all__ = ["IMPLICIT_EULER", "IMPLICIT_MIDPOINT", "TRAPEZOID", "RADAU_IIA3", "RADAU_IIA5", "GL4", "GL6",
           "SDIRK2", "TRBDF2"]


def _collocation(nodes, order, name):
    a, b, c = collocation_coefficients(nodes)
    return ButcherTableau(a=a, b=b, c=c, order=order, name=name)


IMPLICIT_EULER = _collocation(radau_nodes(1), 1, "implicit_euler")
IMPLICIT_MIDPOINT = _collocation(gauss_nodes(1), 2, "implicit_midpoint")
TRAPEZOID = _collocation(lobatto_nodes(2), 2, "trapezoid")
RADAU_IIA3 = _collocation(radau_nodes(2), 3, "radauIIA3")
RADAU_IIA5 = _collocation(radau_nodes(3), 5, "radauIIA5")
GL4 = _collocation(gauss_nodes(2), 4, "gl4")
GL6 = _collocation(gauss_nodes(3), 6, "gl6")

# Two-stage SDIRK with gamma = 1 - 1/sqrt(2): L-stable and stiffly accurate (b is a's
# last row, so the step's result is its last stage's state).
_GAMMA = 1.0 - math.sqrt(2.0) / 2.0
SDIRK2 = ButcherTableau(a=((_GAMMA, 0.0), (1.0 - _GAMMA, _GAMMA)), b=(1.0 - _GAMMA, _GAMMA), c=(_GAMMA, 1.0),
                        order=2, name="sdirk2")

# TR-BDF2 (Bank et al.; Hosea and Shampine's tableau): a trapezoid stage to t + g*h with
# g = 2 - sqrt(2), then a BDF2 stage to t + h. The diagonal g/2 is the same for both
# implicit stages, which is what lets one Newton matrix serve the whole step.
_TR_GAMMA = 2.0 - math.sqrt(2.0)
_TR_DIAGONAL = _TR_GAMMA / 2.0
_TR_W = math.sqrt(2.0) / 4.0
TRBDF2 = ButcherTableau(a=((0.0, 0.0, 0.0), (_TR_DIAGONAL, _TR_DIAGONAL, 0.0), (_TR_W, _TR_W, _TR_DIAGONAL)),
                        b=(_TR_W, _TR_W, _TR_DIAGONAL), c=(0.0, _TR_GAMMA, 1.0), order=2, name="trbdf2")
