"""Collocation tableaux, derived from their nodes instead of typed in.

A collocation method with nodes c_1..c_s is fixed by its nodes alone: with l_j the
Lagrange basis polynomial of node j, a_ij = integral of l_j from 0 to c_i and
b_j = integral of l_j from 0 to 1. Gauss nodes give the Gauss-Legendre methods
(order 2s), right Radau nodes Radau IIA (order 2s - 1), Lobatto nodes Lobatto IIIA
(order 2s - 2). The nodes have closed forms up to s = 3; the integrals are done in
40-digit decimals and rounded once, so every coefficient is correct to the last bit
rather than to however many digits someone copied.
"""

from decimal import Decimal, localcontext

__all__ = ["gauss_nodes", "radau_nodes", "lobatto_nodes", "collocation_coefficients"]

_DIGITS = 40


def _sqrt(n):
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        return Decimal(n).sqrt()


def gauss_nodes(s):
    """Roots of the shifted Legendre polynomial of degree s on [0, 1]."""
    half = Decimal(1) / 2
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        if s == 1:
            return [half]
        if s == 2:
            return [half - _sqrt(3) / 6, half + _sqrt(3) / 6]
        if s == 3:
            return [half - _sqrt(15) / 10, half, half + _sqrt(15) / 10]
    raise ValueError(f"gauss_nodes: only s <= 3 is tabulated, got {s}")


def radau_nodes(s):
    """Right Radau nodes on [0, 1]: the last is 1."""
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        if s == 1:
            return [Decimal(1)]
        if s == 2:
            return [Decimal(1) / 3, Decimal(1)]
        if s == 3:
            return [(4 - _sqrt(6)) / 10, (4 + _sqrt(6)) / 10, Decimal(1)]
    raise ValueError(f"radau_nodes: only s <= 3 is tabulated, got {s}")


def lobatto_nodes(s):
    """Lobatto nodes on [0, 1]: both ends included."""
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        if s == 2:
            return [Decimal(0), Decimal(1)]
        if s == 3:
            return [Decimal(0), Decimal(1) / 2, Decimal(1)]
    raise ValueError(f"lobatto_nodes: only s in (2, 3) is tabulated, got {s}")


def _basis_polynomial(nodes, j):
    """Ascending coefficients of the Lagrange polynomial that is 1 at nodes[j], 0 at the rest."""
    coefficients = [Decimal(1)]
    for i, node in enumerate(nodes):
        if i == j:
            continue
        scale = nodes[j] - node
        # multiply by (x - node) / scale
        shifted = [Decimal(0)] + coefficients
        coefficients = [(shifted[k] - node * (coefficients[k] if k < len(coefficients) else 0)) / scale
                        for k in range(len(shifted))]
    return coefficients


def _integral(coefficients, upper):
    """Integral from 0 to `upper` of the polynomial with these ascending coefficients."""
    return sum(c * upper ** (k + 1) / (k + 1) for k, c in enumerate(coefficients))


def collocation_coefficients(nodes):
    """(a, b, c) of the collocation method on `nodes`, as float tuples."""
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        bases = [_basis_polynomial(nodes, j) for j in range(len(nodes))]
        a = tuple(tuple(float(_integral(basis, c_i)) for basis in bases) for c_i in nodes)
        b = tuple(float(_integral(basis, Decimal(1))) for basis in bases)
    return a, b, tuple(float(node) for node in nodes)
