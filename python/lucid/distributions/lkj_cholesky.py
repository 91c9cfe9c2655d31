"""LKJCholesky (torch.distributions'): the LKJ law over correlation matrices with density
proportional to det(C)^(concentration - 1), given by the Cholesky factor L of C.
Sampled by the onion method (Lewandowski, Kurowicka and Joe 2009, section 3.2),
vectorised over rows and batches: row i's squared off-diagonal length is a Beta draw, its
direction uniform on the sphere. As torch writes it."""

import math

from .._size import Size
from . import constraints
from .distribution import Distribution, _lucid, broadcast_all
from .gamma import Beta

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        lucid = _lucid()
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # the onion method's Beta(i / 2, concentration + (dim - 2 - i) / 2) for row i (the
        # first row's draw unused)
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = lucid.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = lucid.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.shape, Size((dim, dim)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        lucid = _lucid()
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        shape = tuple(self._extended_shape(sample_shape))
        u_normal = lucid.randn(shape, dtype=y.dtype, device=y.device).tril(-1)
        u_sphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        u_sphere[..., 0, :] = 0.0  # (the first row has no off-diagonal entry: 0 / 0 there)
        w = lucid.sqrt(y) * u_sphere
        diagonal = lucid.clamp(1 - lucid.sum(w ** 2, dim=-1), min=lucid.finfo(w.dtype).tiny).sqrt()
        return w + lucid.diag_embed(diagonal)

    def log_prob(self, value):
        lucid = _lucid()
        if self._validate_args:
            self._validate_sample(value)
        # det(C)^(c - 1) times the Jacobian from L to C: prod over i of L_ii^(2c - 2 + D - i)
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = lucid.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = lucid.sum(order * diagonal.log(), dim=-1)
        # the normalising constant (LKJ 2009, page 1999)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = 0.5 * dm1 * math.log(math.pi) + lucid.mvlgamma(alpha - 0.5, dm1) - lucid.lgamma(alpha) * dm1
        return unnormalized - normalize
