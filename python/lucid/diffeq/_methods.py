"""Method names -> tableaux, and the Adams method names, which have no tableau."""

from ._tableau import ButcherTableau
from ._tableau_dopri8 import DOPRI8
from ._tableaux_explicit import (ADAPTIVE_HEUN, BOSH3, DOPRI5, EULER, FEHLBERG2, HEUN2, HEUN3, MIDPOINT, RK4,
                                 RK4_CLASSIC, TSIT5)
from ._tableaux_implicit import (GL4, GL6, IMPLICIT_EULER, IMPLICIT_MIDPOINT, RADAU_IIA3, RADAU_IIA5, SDIRK2,
                                 TRAPEZOID, TRBDF2)

__all__ = ["DEFAULT_METHOD", "TABLEAUX", "ADAMS_METHODS", "resolve_method", "adams_kind", "check_method"]

TABLEAUX = {tableau.name: tableau for tableau in (
    EULER, MIDPOINT, HEUN2, HEUN3, RK4, RK4_CLASSIC, ADAPTIVE_HEUN, FEHLBERG2, BOSH3, DOPRI5, DOPRI8, TSIT5,
    IMPLICIT_EULER, IMPLICIT_MIDPOINT, TRAPEZOID, RADAU_IIA3, RADAU_IIA5, GL4, GL6, SDIRK2, TRBDF2)}

# Adams names -> whether the Adams-Moulton corrector runs. "implicit_adams" and
# "fixed_adams" are the reference library's two names for one predictor-corrector.
ADAMS_METHODS = {"explicit_adams": False, "implicit_adams": True, "fixed_adams": True}

DEFAULT_METHOD = DOPRI5


def adams_kind(method):
    """For an Adams method name, whether it corrects; None for anything else."""
    return ADAMS_METHODS.get(method) if isinstance(method, str) else None


def resolve_method(method):
    """The tableau `method` names (None: dopri5). Adams names are not tableaux: callers
    check adams_kind first."""
    if method is None:
        return DEFAULT_METHOD
    if isinstance(method, ButcherTableau):
        return method
    if isinstance(method, str):
        tableau = TABLEAUX.get(method)
        if tableau is None:
            known = ", ".join(sorted([*TABLEAUX, *ADAMS_METHODS]))
            raise ValueError(f"unknown method {method!r}; expected one of: {known}, or a ButcherTableau")
        return tableau
    raise TypeError(f"method must be a str, a ButcherTableau or None, got {type(method).__name__}")


def check_method(method):
    """Fails fast on a bad method name or type, before any integration."""
    if adams_kind(method) is None:
        resolve_method(method)
