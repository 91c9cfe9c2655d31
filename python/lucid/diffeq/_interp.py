"""Polynomials through one step, for output times and events that fall inside it.

Each is written in the step fraction x = (t - t0) / (t1 - t0), as a list of tensor
coefficients in ascending powers of x.
"""

__all__ = ["linear", "cubic_hermite", "quartic", "evaluate"]


def linear(y0, y1):
    """The line through the step's two ends."""
    return [y0, y1 - y0]


def cubic_hermite(y0, y1, f0, f1, dt):
    """The cubic matching the ends' values and slopes (f * dt, in units of x)."""
    slope0, slope1 = f0 * dt, f1 * dt
    rise = y1 - y0
    return [y0, slope0, 3.0 * rise - 2.0 * slope0 - slope1, slope0 + slope1 - 2.0 * rise]


def quartic(y0, y1, y_mid, f0, f1, dt):
    """The quartic matching the ends' values and slopes and the state at x = 1/2.

    With p = y0 + d x + c x^2 + b x^3 + a x^4 and d = f0 dt, the three remaining
    conditions read r1 = a + b + c (from p(1)), r2 = 4a + 3b + 2c (from p'(1)) and
    16 r3 = a + 2b + 4c (from p(1/2)); solving them gives the lines below.
    """
    d = f0 * dt
    r1 = y1 - y0 - d
    r2 = f1 * dt - d
    r3 = y_mid - y0 - 0.5 * d
    a = 16.0 * r3 + 2.0 * r2 - 8.0 * r1
    b = r2 - 2.0 * r1 - 2.0 * a
    c = r1 - a - b
    return [y0, d, c, b, a]


def evaluate(coefficients, t0, t1, t):
    """The polynomial at time t of the step [t0, t1] (Horner's rule)."""
    x = (t - t0) / (t1 - t0)
    value = coefficients[-1]
    for coefficient in reversed(coefficients[:-1]):
        value = value * x + coefficient
    return value
