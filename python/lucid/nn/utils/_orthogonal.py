"""nn.utils.parametrizations.orthogonal: module.<name> kept orthogonal (Q^T Q = I for a tall
matrix, Q Q^T = I for a wide one) as a function of an unconstrained tensor, through the
matrix exponential or the Cayley map of a skew-symmetric matrix, or a product of
Householder reflections (torch's _Orthogonal, use_trivialization included: the registered
weight is the base Q). The initial weight is orthogonalised by a QR with R's diagonal
made positive, the same Q as torch's geqrf + householder_product + sign fix."""

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.module import Module

__all__ = ["orthogonal"]


def _eye_like(x, n):
    from ... import eye
    return eye(n, dtype=x.dtype, device=x.device)


def _make_orthogonal(a):
    """The Q of a's QR decomposition with R's diagonal positive (a tall, full rank)."""
    from ... import linalg
    with no_grad():
        q, r = linalg.qr(a)
        return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _is_orthogonal(q, eps=None):
    from ... import allclose, finfo
    n, k = q.shape[-2], q.shape[-1]
    eps = 10 * n * finfo(q.dtype).eps
    return allclose(q.mT.matmul(q), _eye_like(q, k).expand(list(q.shape[:-2]) + [k, k]), atol=eps)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        from ... import linalg
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:  # embed the tall matrix in a square one
                x = _pad_cols(x, n - k)
            a = x - x.mT  # skew-symmetric
            if self.orthogonal_map == "matrix_exp":
                q = linalg.matrix_exp(a)
            else:  # the Cayley retraction (I + A/2)(I - A/2)^-1
                eye = _eye_like(a, n)
                q = linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(-1)
            tau = 2.0 / (1.0 + (a * a).sum(-2))
            q = linalg.householder_product(a, tau)
            q = q * x.diagonal(dim1=-2, dim2=-1).int().to(q.dtype).unsqueeze(-2)
        if "base" in self._buffers:
            q = self.base.matmul(q)
        if transposed:
            q = q.mT
        return q

    def right_inverse(self, q):
        from ... import cat, randn, zeros_like
        if tuple(q.shape) != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape "
                             f"{tuple(q.shape)}.")
        with no_grad():
            q_init = q
            n, k = q.shape[-2], q.shape[-1]
            if n < k:
                q = q.mT
                n, k = k, n
            if "base" not in self._buffers:
                raise NotImplementedError("orthogonal(use_trivialization=False) is not supported by lucid yet")
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:
                extra = randn(list(q.shape[:-2]) + [n, n - k], dtype=q.dtype, device=q.device)
                q = _make_orthogonal(cat([q, extra], -1))
            self.base = q
            neg_id = zeros_like(q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def _pad_cols(x, extra):
    from ... import cat
    return cat([x, x.new_zeros(list(x.shape[:-1]) + [extra])], -1)


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Makes module.<name> orthogonal (orthogonal_map "matrix_exp", "cayley" or "householder").
    use_trivialization=False (assigning through the map itself) needs geqrf, which lucid
    does not have yet."""
    from . import parametrize
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    if not use_trivialization:
        raise NotImplementedError("orthogonal(use_trivialization=False) is not supported by lucid yet: its "
                                  "householder inverse needs geqrf; use_trivialization=True (the default) works")
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
