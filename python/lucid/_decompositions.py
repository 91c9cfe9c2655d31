"""torch's top-level decompositions outside torch.linalg: lu, lu_unpack and lu_solve (the
older names of the LU factorisation) and the randomized low-rank SVD and PCA (svd_lowrank,
pca_lowrank: Halko, Martinsson and Tropp, "Finding structure with randomness", 2009,
algorithms 4.4 and 5.1), written on lucid.linalg."""

import warnings

import lucid

from . import linalg
from . import return_types as _rt

__all__ = ["lu", "lu_unpack", "lu_solve", "svd_lowrank", "pca_lowrank"]

_warned_lu = False


def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (LU, pivots), or (LU, pivots, infos) with get_infos, as
    linalg.lu_factor_ex gives them; a singular matrix is not an error (its info is > 0)."""
    global _warned_lu
    if not _warned_lu:  # torch warns once a process
        _warned_lu = True
        warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
                      "will be removed in a future PyTorch release.", UserWarning, stacklevel=2)
    LU, pivots, info = linalg.lu_factor_ex(A, pivot=pivot)
    result = _rt._lu_with_info((LU, pivots, info)) if get_infos else (LU, pivots)
    if out is not None:
        if len(out) != len(result):
            raise TypeError(f"lu(): out must be a tuple of {len(result)} tensors, got {len(out)}")
        for dst, src in zip(out, result):
            dst.resize_(src.shape).copy_(src)
        return out
    return result


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) from lu_factor's packed LU and 1-based row swaps, with A = P L U. An
    unrequested part comes back as an empty tensor, as in torch."""
    if not isinstance(LU_data, lucid.Tensor) or not isinstance(LU_pivots, lucid.Tensor):
        raise TypeError("lu_unpack(): LU_data and LU_pivots must be Tensors")
    if LU_data.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(LU_data.shape)} instead")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    batch = tuple(LU_data.shape[:-2])
    if LU_pivots.dtype != lucid.int32:
        raise RuntimeError(f"torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. "
                           f"Note: this function is intended to be used with the output produced by torch.linalg.lu_factor")
    if tuple(LU_pivots.shape) != batch + (k,):
        raise RuntimeError(f"torch.lu_unpack: Expected LU_pivots of shape {list(batch + (k,))}, got "
                           f"{list(LU_pivots.shape)}")
    empty = lucid.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_data:
        L, U = linalg._unpack_lu(LU_data, m, n)
    else:
        L = U = empty
    P = _permutation(LU_pivots, m, batch, LU_data) if unpack_pivots else empty
    result = _rt.lu_unpack((P, L, U))
    if out is not None:
        for dst, src in zip(out, result):
            dst.resize_(src.shape).copy_(src)
        return out
    return result


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve: x with A x = b, A given by lu's (LU_data, LU_pivots)."""
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solve and will be removed in a future "
                  "PyTorch release.", UserWarning, stacklevel=2)
    x = linalg.lu_solve(LU_data, LU_pivots, b)
    return x if out is None else out.resize_(x.shape).copy_(x)


def _permutation(pivots, m, batch, like):
    """P with A = P L U from LAPACK's sequential swaps (row i with row pivots[i] - 1):
    perm is where each row of P^T A came from, and P[perm[i], i] = 1."""
    perm = lucid.arange(m, device=like.device).expand(*batch, m).clone()
    swaps = pivots.to(lucid.int64) - 1
    for i in range(pivots.shape[-1]):
        j = swaps[..., i:i + 1]
        here, there = perm[..., i:i + 1].clone(), perm.gather(-1, j)
        perm.scatter_(-1, j, here)
        perm[..., i:i + 1] = there
    P = lucid.zeros(*batch, m, m, dtype=like.dtype, device=like.device)
    return P.scatter_(-2, perm.unsqueeze(-2), 1)


def _float_dtype(A):
    return A.dtype if A.dtype.is_floating_point or A.dtype.is_complex else lucid.get_default_dtype()


def _approximate_basis(A, q, niter, M):
    """Q with orthonormal columns whose span nearly holds A's (minus M's) range: a
    Gaussian sketch A R, then niter power iterations, each re-orthonormalised by QR."""
    def product(X):
        return A @ X if M is None else A @ X - M @ X

    def adjoint_product(X):
        return A.mH @ X if M is None else A.mH @ X - M.mH @ X

    R = lucid.randn(A.shape[-1], q, dtype=_float_dtype(A), device=A.device)
    Q = linalg.qr(product(R)).Q
    for _ in range(niter):
        Q = linalg.qr(adjoint_product(Q)).Q
        Q = linalg.qr(product(Q)).Q
    return Q


def _check_rank_args(q, niter, m, n):
    if not isinstance(q, int) or not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not isinstance(niter, int) or niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V), an approximation of A - M's q largest singular triples (A ~ U diag(S) V^H),
    by a random sketch; q should be a little above the rank sought. Random: seed lucid's
    generator for repeatable results."""
    if not isinstance(A, lucid.Tensor):
        raise TypeError(f"svd_lowrank(): argument 'A' must be Tensor, not {type(A).__name__}")
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]  # (q is not checked here, as in torch: pca_lowrank checks it)
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:  # sketch the taller side
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M
    U, S, Vh = linalg.svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the centred data's (A minus its column means) approximate top-q SVD:
    V's columns are the principal directions, S**2 / (m - 1) their variances."""
    if not isinstance(A, lucid.Tensor):
        raise TypeError(f"pca_lowrank(): argument 'A' must be Tensor, not {type(A).__name__}")
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    _check_rank_args(q, niter, m, n)
    if center:
        A = A - A.mean(dim=-2, keepdim=True)
    return svd_lowrank(A, q, niter=niter)
