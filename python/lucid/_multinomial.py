"""lucid.multinomial / Tensor.multinomial: indices drawn from rows of (unnormalised)
category weights, as torch.multinomial.

Note [Multinomial by inverse CDF]
A draw with replacement is the number of normalised cumulative weights at or below a uniform
u in [0, 1): the categories before the chosen one. Dividing the cumulative sums by their last
entry makes that entry exactly 1, so u < 1 never runs past the last category, and a category
of weight 0 (equal to its predecessor's sum) can never be chosen. Without replacement, the
samples are drawn one at a time, each from the weights left after zeroing those drawn; this
gives torch's distribution (successive draws in proportion to the remaining weights), not its
exact values, which come from a different generator.

Note [Zero weights without replacement]
Once a row's positive weights are all drawn, torch (CPU) goes on with the zero-weight
categories (in its top-k's order) instead of raising, and so does this: a row with no weight
left draws its first category not drawn yet.
"""

from . import _dtype as D
from ._creation import arange
from ._random import _gen, rand
from ._shape import cat
from ._tensor import Tensor

__all__ = ["multinomial"]

_MAX_CATEGORIES = 1 << 24  # torch's limit (float32 indices stay exact below it)
_CHUNK_ELEMENTS = 1 << 22  # rows x samples x categories compared at a time


def _check(input, num_samples, replacement):
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' must be Tensor, not {type(input).__name__}")
    if isinstance(num_samples, bool) or not isinstance(num_samples, int):
        raise TypeError(f"multinomial(): argument 'num_samples' must be int, not {type(num_samples).__name__}")
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = input.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n > _MAX_CATEGORIES:
        raise RuntimeError("number of categories cannot exceed 2^24")


def _draw(weights, count, gen):
    """(rows, count) int64 indices drawn with replacement from float64 `weights` (rows, n)."""
    cdf = weights.cumsum(-1)
    cdf = (cdf / cdf[:, -1:]).unsqueeze(1)  # Note [Multinomial by inverse CDF]
    rows, n = weights.shape
    step = max(1, _CHUNK_ELEMENTS // max(1, rows * n))
    pieces = []
    for start in range(0, count, step):
        u = rand(rows, min(step, count - start), dtype=D.float64, device=weights.device, generator=gen)
        pieces.append((u.unsqueeze(-1) >= cdf).sum(-1))
    return pieces[0] if len(pieces) == 1 else cat(pieces, 1)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices of `num_samples` categories per row of `input`, each drawn with probability
    proportional to its weight; without replacement, each category at most once per row."""
    _check(input, num_samples, replacement)
    _gen(generator)  # the type check, before any work
    weights = input.detach().to(D.float64).reshape(-1, input.shape[-1])
    if not (weights.isfinite().all().item() and (weights >= 0).all().item()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if not (weights.sum(-1) > 0).all().item():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if replacement:
        out = _draw(weights, num_samples, generator)
    else:
        categories = arange(weights.shape[1], device=weights.device)
        left = weights > -1  # categories not drawn yet (all, at first)
        picks = []
        for _ in range(num_samples):
            # Note [Zero weights without replacement]
            spent = (weights.sum(-1, keepdim=True) <= 0).to(D.float64)
            first_left = (left & (left.cumsum(-1) == 1)).to(D.float64)
            picks.append(_draw(spent * first_left + (1 - spent) * weights, 1, generator))
            left = left & (categories != picks[-1])
            weights = weights * left
        out = cat(picks, 1)
    return out if input.dim() == 2 else out.reshape(num_samples)
