"""Butcher's order conditions, over rooted trees.

A Runge-Kutta combination with weights w reproduces y(t0 + x h) up to order p exactly
when, for every rooted tree T with at most p nodes, w . Phi(T) = x^|T| / gamma(T),
Phi(T) being the tree's elementary weight vector and gamma(T) its density. Here a tree
is the sorted tuple of its root's subtrees, the single node being ().
"""

from functools import lru_cache
from math import prod

__all__ = ["trees", "order_reached"]


def _partitions(n, largest):
    """The ways to write n as a non-increasing sum of parts at most `largest`."""
    if n == 0:
        yield ()
        return
    for part in range(min(n, largest), 0, -1):
        for rest in _partitions(n - part, part):
            yield (part, *rest)


@lru_cache(maxsize=None)
def trees(order):
    """Every rooted tree with `order` nodes, each once."""
    if order == 1:
        return ((),)
    found = set()
    for sizes in _partitions(order - 1, order - 1):
        choices = [()]
        for size in sizes:
            choices = [chosen + (tree,) for chosen in choices for tree in trees(size)]
        found.update(tuple(sorted(children)) for children in choices)
    return tuple(sorted(found))


def _size(tree):
    return 1 + sum(_size(child) for child in tree)


def _density(tree):
    return _size(tree) * prod(_density(child) for child in tree)


def _elementary_weights(tree, a):
    s = len(a)
    weights = [1.0] * s
    for child in tree:
        inner = _elementary_weights(child, a)
        weights = [weights[i] * sum(a[i][j] * inner[j] for j in range(s)) for i in range(s)]
    return weights


def condition_residual(weights, a, order, x=1.0):
    """The largest |w . Phi(T) - x^|T| / gamma(T)| over the trees with `order` nodes."""
    return max(abs(sum(w * p for w, p in zip(weights, _elementary_weights(tree, a))) - x ** order / _density(tree))
               for tree in trees(order))


def order_reached(weights, a, up_to, x=1.0, tolerance=1e-10):
    """The highest p <= up_to for which every condition of order <= p holds."""
    for order in range(1, up_to + 1):
        if condition_residual(weights, a, order, x) > tolerance:
            return order - 1
    return up_to
