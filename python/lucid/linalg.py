"""lucid.linalg, as torch.linalg: decompositions, solvers, inverses, determinants,
norms and the functions built on them, batched over leading dims, float32, float64,
complex64 and complex128.

The decompositions are engine ops (csrc/ops/decompose.h: LAPACK on the CPU, cuSOLVER
on the GPU); this module broadcasts their operands, turns LAPACK's `info` into torch's errors
(LinAlgError naming the batch element), and gives each its gradient: torch's formulas
(FunctionsManual.cpp, with its convention for complex inputs: the gradient is the
conjugate Wirtinger derivative), written with lucid ops so that they are differentiable
again.
Composite functions (norms, pinv, matrix_exp, lstsq, ...) are compositions of these,
differentiable through them."""

import builtins
import math

from . import _C
from . import _dtype as D
from . import return_types as _rt
from .autograd.function import Function

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
    "eigvalsh",
    "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor",
    "lu_factor_ex", "lu_solve",
    "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "matrix_sqrth", "multi_dot", "norm", "pinv",
    "polar", "qr",
    "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander",
    "vecdot", "vector_norm", "dot", "inner", "outer",
]


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a matrix the algorithm cannot handle (singular, not
    positive-definite, no convergence)."""


# ---- operand checks and errors ---------------------------------------------------------

def _check_float(op, A):
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {D._torch_name(A.dtype)}")
    if A.dtype not in (D.float32, D.float64, D.complex64, D.complex128):
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got {D._torch_name(A.dtype)}")


def _check_matrix(op, A, square=False, name="A"):
    _check_float(op, A)
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _raise_info(op, info, message):
    """LinAlgError for the first nonzero entry of `info` (message(code) says why),
    naming its batch element when there is a batch; nothing when all are zero."""
    if info.numel() == 0 or not bool((info != 0).any()):
        return
    flat = info.reshape(-1).tolist()
    at = next(i for i, c in enumerate(flat) if c != 0)
    batch = f"(Batch element {at}): " if info.ndim > 0 else ""
    raise LinAlgError(f"{op}: {batch}{message(flat[at])}")


def _singular(code):
    return (f"The diagonal element {code} is zero, the inversion could not be completed because the input "
            "matrix is singular.")


def _not_pd(code):
    return (f"The factorization could not be completed because the input is not positive-definite (the "
            f"leading minor of order {code} is not positive-definite).")


def _mH(A):
    """The conjugate transpose (the transpose of a real matrix: no copy)."""
    return A.mT.conj() if A.dtype.is_complex else A.mT


def _eye_like(A, n=None):
    from . import eye
    n = A.shape[-1] if n is None else n
    return eye(n, dtype=A.dtype, device=A.device)


def _broadcast_batches(A, B):
    """A [*, n, n] and B [*, n, k] with their batch dims broadcast to one shape."""
    from . import broadcast_shapes
    batch = tuple(broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2])))
    return A.expand(*batch, *A.shape[-2:]), B.expand(*batch, *B.shape[-2:])


# ---- LU: lu_factor, lu, lu_solve, solve, inv, det, slogdet ---------------------------

def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info): A = P L U with partial pivoting, L and U packed in LU,
    pivots the 1-based row swaps (int32), info > 0 where U is exactly singular."""
    _check_matrix("linalg.lu_factor_ex", A)
    if not pivot:
        raise NotImplementedError("linalg.lu_factor: LU without pivoting is not implemented on the CPU (as torch)")
    LU, pivots, info = _LuFactor.apply(A)
    if check_errors:
        _raise_info("linalg.lu_factor_ex", info, lambda c: f"U[{c},{c}] is zero and using it on lu_solve would "
                    "result in a division by zero. If you still want to perform the factorization, consider "
                    "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return _rt.linalg_lu_factor_ex((LU, pivots, info))


def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots) of A = P L U; raises where U is singular, as torch."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    _raise_info("linalg.lu_factor", info, lambda c: f"U[{c},{c}] is zero and using it on lu_solve would result "
                "in a division by zero. If you still want to perform the factorization, consider calling "
                "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return _rt.linalg_lu_factor((LU, pivots))


def _permutation(pivots, m, dtype):
    """The [*, m, m] permutation P with A = P L U: LAPACK's 1-based row swaps (sequential)
    applied to 0..m-1 on the host, then those rows of the identity, transposed."""
    from . import eye, tensor
    batch = tuple(pivots.shape[:-1])
    rows = []
    for swaps in pivots.reshape(math.prod(batch), pivots.shape[-1]).tolist():
        order = list(range(m))
        for i, j in enumerate(swaps):
            order[i], order[j - 1] = order[j - 1], order[i]
        rows.extend(order)  # row i of P^T A is row order[i] of A
    index = tensor(rows, dtype=D.int64, device=pivots.device)
    return eye(m, dtype=dtype, device=pivots.device).index_select(0, index).reshape(*batch, m, m).mT


def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U: L unit lower [*, m, k], U upper [*, k, n], k = min(m, n)."""
    _check_matrix("linalg.lu", A)
    if not pivot:
        raise NotImplementedError("linalg.lu: LU without pivoting is not implemented on the CPU (as torch)")
    return _rt.linalg_lu(_Lu.apply(A))


def _unpack_lu(LU, m, n):
    k = min(m, n)
    L = LU[..., :, :k].tril(-1) + _eye_like(LU, m)[:, :k]
    U = LU[..., :k, :].triu()
    return L, U


class _LuFactor(Function):
    """lu_factor with torch's gradient for square A (linalg_lu_backward through L and U)."""

    @staticmethod
    def forward(ctx, A):
        LU, pivots, info = _C._linalg_lu_factor(A)
        ctx.save_for_backward(LU, pivots)
        ctx.mark_non_differentiable(pivots, info)
        return LU, pivots, info

    @staticmethod
    def backward(ctx, gLU, gpivots, ginfo):
        LU, pivots = ctx.saved_tensors
        m, n = LU.shape[-2], LU.shape[-1]
        if m != n:
            raise NotImplementedError("linalg.lu_factor: the derivative is implemented for square matrices")
        L, U = _unpack_lu(LU, m, n)
        P = _permutation(pivots, m, LU.dtype)
        return _lu_backward(P, L, U, gLU.tril(-1), gLU.triu())


def _lu_backward(P, L, U, gL, gU):
    """torch's linalg_lu_backward for square A = P L U:
    gA = P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H."""
    phi = (_mH(L) @ gL).tril(-1) + (gU @ _mH(U)).triu()
    X = solve_triangular(_mH(L), phi, upper=True, unitriangular=True)
    return P @ solve_triangular(_mH(U), X, upper=False, left=False)


class _Lu(Function):
    @staticmethod
    def forward(ctx, A):
        LU, pivots, _ = _C._linalg_lu_factor(A)
        m, n = A.shape[-2], A.shape[-1]
        L, U = _unpack_lu(LU, m, n)
        P = _permutation(pivots, m, A.dtype)
        ctx.save_for_backward(P, L, U)
        ctx.mark_non_differentiable(P)
        return P, L, U

    @staticmethod
    def backward(ctx, gP, gL, gU):
        P, L, U = ctx.saved_tensors
        if L.shape[-2] != U.shape[-1]:
            raise NotImplementedError("linalg.lu: the derivative is implemented for square matrices")
        return _lu_backward(P, L, U, gL, gU)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (left) or X A = B, A given by lu_factor's (LU, pivots); adjoint: A^H."""
    _check_matrix("linalg.lu_solve", LU, square=True, name="LU")
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return _mH(lu_solve(LU, pivots, _mH(B), left=True, adjoint=not adjoint))
    return _LuSolve.apply(LU, pivots, B, adjoint)


class _LuSolve(Function):
    @staticmethod
    def forward(ctx, LU, pivots, B, adjoint):
        X = _C._linalg_lu_solve(LU, pivots, B, adjoint)
        ctx.save_for_backward(LU, pivots, X)
        ctx.adjoint = adjoint
        return X

    @staticmethod
    def backward(ctx, g):
        LU, pivots, X = ctx.saved_tensors
        gB = lu_solve(LU, pivots, g, adjoint=not ctx.adjoint) if ctx.needs_input_grad[2] else None
        gLU = _lu_solve_backward_lu(LU, pivots, X, g, ctx.adjoint) if ctx.needs_input_grad[0] else None
        return gLU, None, gB, None


def _lu_solve_backward_lu(LU, pivots, X, gX, adjoint):
    """torch's linalg_lu_solve_LU (left=True; A = P L U): for A X = B, with
    gR = -U^-H gX X^H, gLU = triu(gR) + tril(L^-H gR U^H, -1); for A^H X = B, with
    gR = -P^T X gX^H P L^-H, gLU = tril(gR, -1) + triu(L^H gR U^-H)."""
    n = LU.shape[-1]
    L, U = _unpack_lu(LU, n, n)
    if not adjoint:
        gR = solve_triangular(_mH(U), -(gX @ _mH(X)), upper=False)
        gL = solve_triangular(_mH(L), gR @ _mH(U), upper=True, unitriangular=True).tril(-1)
        return gL + gR.triu()
    P = _permutation(pivots, n, LU.dtype)
    gR = -(P.mT @ X @ _mH(gX) @ P)
    gR = solve_triangular(_mH(L), gR, upper=True, left=False, unitriangular=True)
    gU = solve_triangular(_mH(U), _mH(L) @ gR, upper=False, left=False).triu()
    return gR.tril(-1) + gU


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(X, info) with A X = B (left) or X A = B; B a vector [*, n] when its shape says so (torch's rule)."""
    _check_matrix("linalg.solve", A, square=True)
    _check_float("linalg.solve", B)
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{A.dtype} and B of type {B.dtype} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    Bm = B.unsqueeze(-1) if vector else B
    if not left:
        X, info = solve_ex(_mH(A), _mH(Bm), left=True, check_errors=check_errors)
        return _rt.linalg_solve_ex((_mH(X).squeeze(-1) if vector else _mH(X), info))
    if Bm.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {Bm.shape[-2]}x{Bm.shape[-1]})")
    A, Bm = _broadcast_batches(A, Bm)
    X, info = _Solve.apply(A, Bm)
    if check_errors:
        _raise_info("linalg.solve_ex", info, lambda c: "The solver failed because the input matrix is singular.")
    return _rt.linalg_solve_ex((X.squeeze(-1) if vector else X, info))


def solve(A, B, *, left=True, out=None):
    """X with A X = B (left) or X A = B; LinAlgError when A is singular."""
    X, info = solve_ex(A, B, left=left)
    _raise_info("linalg.solve", info, lambda c: "The solver failed because the input matrix is singular.")
    return X


class _Solve(Function):
    """X = A^-1 B by LU; gB = A^-H gX, gA = -gB X^H (torch's linalg_solve_backward)."""

    @staticmethod
    def forward(ctx, A, B):
        # A real row-major A is A^T in LAPACK's column-major layout: factor A^T (its copy
        # into that layout a straight copy, not a transposing one) and solve with its
        # transpose, as torch's linalg_solve does (so info's pivot is torch's too)
        ctx.transposed = not A.is_complex() and A.is_contiguous()
        LU, pivots, info = _C._linalg_lu_factor(A.mT if ctx.transposed else A)
        X = _C._linalg_lu_solve(LU, pivots, B, ctx.transposed)
        ctx.save_for_backward(A, LU, pivots, X)
        ctx.mark_non_differentiable(info)
        return X, info

    @staticmethod
    def backward(ctx, gX, ginfo):
        A, LU, pivots, X = ctx.saved_tensors
        from .autograd.grad_mode import is_grad_enabled
        if is_grad_enabled():  # create_graph: through solve itself, differentiable again
            gB = solve(_mH(A), gX)
        else:  # the forward's factors: no second LU
            gB = _C._linalg_lu_solve(LU, pivots, gX, not ctx.transposed)
        gA = -(gB @ _mH(X)) if ctx.needs_input_grad[0] else None
        return gA, gB if ctx.needs_input_grad[1] else None


def inv_ex(A, *, check_errors=False, out=None):
    """(A^-1, info)."""
    _check_matrix("linalg.inv_ex", A, square=True)
    eye = _eye_like(A).expand(*A.shape)
    X, info = solve_ex(A, eye)
    if check_errors:
        _raise_info("linalg.inv_ex", info, _singular)
    return _rt.linalg_inv_ex((X, info))


def inv(A, *, out=None):
    """A^-1; LinAlgError when A is singular."""
    _check_matrix("linalg.inv", A, square=True)
    X, info = inv_ex(A)
    _raise_info("linalg.inv", info, _singular)
    return X


def _lu_det(A):
    """(det, LU, pivots) of square A from its LU: the product of U's diagonal, negated
    once per row swap."""
    LU, pivots, _ = _C._linalg_lu_factor(A)
    from . import arange
    n = A.shape[-1]
    swaps = (pivots.long() != arange(1, n + 1, device=A.device)).sum(-1)
    sign = 1 - 2 * (swaps % 2).to(A.dtype)
    return sign * LU.diagonal(0, -2, -1).prod(-1), LU, pivots


def _cofactor_adjoint(A):
    """conj(det A) A^-H (det(A) A^-T for a real A) written through the SVD A = U S Vh,
    which holds for singular A too: conj(det(U) det(Vh)) U diag(prod_{j != i} s_j) Vh
    (torch's linalg_det_backward for singular inputs; used for all, so one formula
    serves every matrix)."""
    U, S, Vh = svd(A, full_matrices=False)
    from . import cat, ones_like
    ones = ones_like(S[..., :1])
    left = cat([ones, S[..., :-1]], -1).cumprod(-1)                     # prod_{j < i} s_j
    right = cat([ones, S[..., 1:].flip(-1)], -1).cumprod(-1).flip(-1)   # prod_{j > i} s_j
    sign = (_lu_det(U.detach())[0] * _lu_det(Vh.detach())[0]).conj()
    return (sign.unsqueeze(-1).unsqueeze(-1) * (U * (left * right).unsqueeze(-2).to(U.dtype))) @ Vh


class _Det(Function):
    @staticmethod
    def forward(ctx, A):
        d = _lu_det(A)[0]
        ctx.save_for_backward(A)
        return d

    @staticmethod
    def backward(ctx, g):  # gA = g conj(det A) A^-H
        A, = ctx.saved_tensors
        return g.unsqueeze(-1).unsqueeze(-1) * _cofactor_adjoint(A)


def det(A, *, out=None):
    """The determinant of each square matrix (by LU; gradient through the SVD, exact for
    singular matrices too)."""
    _check_matrix("linalg.det", A, square=True)
    return _Det.apply(A)


class _Slogdet(Function):
    """(sign, log|det|): sign is det / |det| (complex for a complex A, where it is
    differentiable; +-1 for a real one)."""

    @staticmethod
    def forward(ctx, A):
        d, LU, pivots = _lu_det(A)
        from ._complex import sgn
        logabs = LU.diagonal(0, -2, -1).abs().log().sum(-1)
        s = sgn(d)
        ctx.save_for_backward(A, LU, pivots, s)
        if not A.dtype.is_complex:
            ctx.mark_non_differentiable(s)
        return s, logabs

    @staticmethod
    def backward(ctx, gsign, glogabs):
        A, LU, pivots, s = ctx.saved_tensors
        # With delta = tr(A^-1 dA): d log|det| = Re(delta) and d sign = sign i Im(delta),
        # so delta's gradient is g = glogabs + i Im(gsign conj(sign)) (torch's
        # slogdet_backward) and gA = g A^-H (create_graph: through inv, differentiable
        # again; else from the forward's factors)
        g = glogabs
        if A.dtype.is_complex and gsign is not None:
            from . import complex as _complex
            g = _complex(glogabs, (gsign * s.conj()).imag)
        from .autograd.grad_mode import is_grad_enabled
        if is_grad_enabled():
            invH = _mH(inv(A))
        else:
            invH = _C._linalg_lu_solve(LU, pivots, _eye_like(LU).expand(*LU.shape), True)
        return g.unsqueeze(-1).unsqueeze(-1) * invH


def slogdet(A, *, out=None):
    """(sign, log|det|) of each square matrix."""
    _check_matrix("linalg.slogdet", A, square=True)
    return _rt.linalg_slogdet(_Slogdet.apply(A))


def _logdet(A):
    """torch.logdet: log det A, NaN for a negative determinant, -inf for zero (complex:
    log|det| + i arg(det))."""
    from . import where
    sign, logabs = slogdet(A)
    if A.dtype.is_complex:
        from . import complex as _complex
        return _complex(logabs, sign.angle())
    return where(sign < 0, float("nan"), logabs)


# ---- Cholesky and triangular solves ----------------------------------------------------

class _Cholesky(Function):
    """L of A = L L^H; gA = L^-H Phi L^-1 with Phi = (tril(X) + tril(X, -1)^H) / 2 for
    X = L^H gL (torch's cholesky_backward: L^-1 dA L^-H = Y + Y^H for the lower
    triangular Y = L^-1 dL)."""

    @staticmethod
    def forward(ctx, A):
        L, info = _C._linalg_cholesky(A)  # (L's upper triangle zeroed; info stops at a NaN pivot)
        ctx.save_for_backward(L)
        ctx.mark_non_differentiable(info)
        return L, info

    @staticmethod
    def backward(ctx, gL, ginfo):
        L, = ctx.saved_tensors
        X = (_mH(L) @ gL).tril()
        phi = 0.5 * (X + _mH(X.tril(-1)))
        return solve_triangular(_mH(L), solve_triangular(L, phi, upper=False, left=False), upper=True)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): A = L L^H (upper: A = U^H U, U returned); info > 0 names the order of
    the first leading minor that is not positive-definite."""
    _check_matrix("linalg.cholesky", A, square=True)
    L, info = _Cholesky.apply(A)
    if check_errors:
        _raise_info("linalg.cholesky_ex", info, _not_pd)
    return _rt.linalg_cholesky_ex((_mH(L) if upper else L, info))


def cholesky(A, *, upper=False, out=None):
    """L with A = L L^H (upper: U with A = U^H U); LinAlgError unless A is positive-definite."""
    L, info = cholesky_ex(A, upper=upper)
    _raise_info("linalg.cholesky", info, _not_pd)
    return L


class _SolveTriangular(Function):
    """X with A X = B (left) or X A = B, A triangular; gB = A^-H gX (left), gA = -gB X^H
    kept to A's triangle (torch's linalg_solve_triangular_backward)."""

    @staticmethod
    def forward(ctx, A, B, upper, left, unitriangular):
        X = _C._linalg_solve_triangular(A, B, upper, left, unitriangular)
        ctx.save_for_backward(A, X)
        ctx.flags = (upper, left, unitriangular)
        return X

    @staticmethod
    def backward(ctx, g):
        A, X = ctx.saved_tensors
        upper, left, unit = ctx.flags
        gB = solve_triangular(_mH(A), g, upper=not upper, left=left, unitriangular=unit)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = -(gB @ _mH(X)) if left else -(_mH(X) @ gB)
            gA = gA.triu(1 if unit else 0) if upper else gA.tril(-1 if unit else 0)
        return gA, gB if ctx.needs_input_grad[1] else None, None, None, None


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (left) or X A = B for triangular A (its other triangle not read)."""
    _check_matrix("linalg.solve_triangular", A, square=True)
    _check_matrix("linalg.solve_triangular", B, name="B")
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, but found A of "
                           f"type {A.dtype} and B of type {B.dtype} instead")
    A, B = _broadcast_batches(A, B)
    return _SolveTriangular.apply(A, B, bool(upper), bool(left), bool(unitriangular))


# ---- QR and Householder products --------------------------------------------------------

def householder_product(A, tau, *, out=None):
    """The first n columns of the product of the Householder reflectors stored in A's
    columns below the diagonal with scales tau (LAPACK's orgqr)."""
    _check_matrix("linalg.householder_product", A, name="input")
    return _HouseholderProduct.apply(A, tau)


class _HouseholderProduct(Function):
    """orgqr, with the gradient of the same product written as lucid ops (the
    reflectors H_i = I - tau_i v_i v_i^T applied to the identity's first n columns,
    last first: k rank-one updates) by autograd; under create_graph that graph stays
    attached, so the gradient is differentiable again."""

    @staticmethod
    def forward(ctx, A, tau):
        ctx.save_for_backward(A, tau)
        return _C._linalg_householder_product(A, tau)

    @staticmethod
    def backward(ctx, g):
        from .autograd import grad
        from .autograd.grad_mode import enable_grad, is_grad_enabled
        A, tau = ctx.saved_tensors
        create_graph = is_grad_enabled()
        with enable_grad():
            a, t = (x if create_graph and x.requires_grad else x.detach().requires_grad_() for x in (A, tau))
            m, n, k = a.shape[-2], a.shape[-1], t.shape[-1]
            V = a[..., :, :k].tril(-1) + _eye_like(a, m)[:, :k]
            Q = _eye_like(a, m)[:, :n].expand(*a.shape[:-2], m, n)
            for i in reversed(range(k)):
                v = V[..., :, i:i + 1]
                Q = Q - (t[..., i:i + 1].unsqueeze(-1) * v) @ (_mH(v) @ Q)
            gA, gtau = grad(Q, (a, t), g, create_graph=create_graph)
        return gA, gtau


def _qr_backward_tall(gQ, gR, Q, R):
    """The gradient of A = Q R for m >= n. With X = Q^H dA R^-1: Q^H dQ = C = tril(X, -1) -
    tril(X, -1)^H (skew, as Q^H Q = I; for complex A, with R's diagonal real, C's diagonal
    is i Im(X's)) and dR R^-1 = X - C; so <gQ, dQ> + <gR, dR> = <(gQ + Q N) R^-H, dA>
    for M = gR R^H - Q^H gQ and N = triu(M, 1) + triu(M, 1)^H + Re(diag(M)) (torch's
    syminvadj(triu(M)))."""
    M = gR @ _mH(R) - _mH(Q) @ gQ
    upper = M.triu(1)
    N = upper + _mH(upper) + M.diagonal(0, -2, -1).real.diag_embed().to(M.dtype)
    return solve_triangular(_mH(R), gQ + Q @ N, upper=False, left=False)


class _Qr(Function):
    @staticmethod
    def forward(ctx, A, mode):
        m, n = A.shape[-2], A.shape[-1]
        k = min(m, n)
        packed, tau = _C._linalg_qr_factor(A)
        R = (packed if mode == "complete" or m <= n else packed[..., :n, :]).triu()
        if mode == "r":
            ctx.mode = mode
            return A.new_empty((0,)), R
        reflectors = packed[..., :, :k]
        if mode == "complete" and m > n:  # Q's other columns: the reflectors applied to e_j
            from . import cat, zeros
            reflectors = cat([packed, zeros(*A.shape[:-2], m, m - n, dtype=A.dtype, device=A.device)], -1)
        Q = _C._linalg_householder_product(reflectors, tau)
        ctx.mode = mode
        ctx.save_for_backward(Q, R)
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                               "through linalg.qr.")
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                               "nrows > ncols.")
        if m >= n:
            return _qr_backward_tall(gQ, gR, Q, R), None
        # A = [X | Y] with X = Q U square: R = [U | V], V = Q^H Y (torch's linalg_qr_backward):
        # gY = Q gV, and X's gradient is the square one with gQ + Y gV^H
        from . import cat
        U, V, gU, gV = R[..., :, :m], R[..., :, m:], gR[..., :, :m], gR[..., :, m:]
        gX = _qr_backward_tall(gQ + (Q @ V) @ _mH(gV), gU, Q, U)
        return cat([gX, Q @ gV], -1), None


def qr(A, mode="reduced", *, out=None):
    """(Q, R) with A = Q R: mode 'reduced' (Q [*, m, k]), 'complete' (Q [*, m, m]) or 'r'
    (R only; Q empty)."""
    _check_matrix("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    return _rt.linalg_qr(_Qr.apply(A, mode))


# ---- symmetric eigenproblems --------------------------------------------------------------

def _uplo(op, UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper() == "U"


class _Eigh(Function):
    """torch's linalg_eig_backward for Hermitian A = V diag(L) V^H:
    gA = V (diag(gL) + skew(V^H gV) / 2 / (L_j - L_i)) V^H."""

    @staticmethod
    def forward(ctx, A, upper):
        w, V, info = _C._linalg_eigh(A, upper, True)
        ctx.save_for_backward(w, V)
        ctx.mark_non_differentiable(info)
        return w, V, info

    @staticmethod
    def backward(ctx, gL, gV, ginfo):
        L, V = ctx.saved_tensors
        VhgV = _mH(V) @ gV
        _check_phase_invariant(VhgV.diagonal(0, -2, -1))
        VhgV = 0.5 * (VhgV - _mH(VhgV))
        E = L.unsqueeze(-2) - L.unsqueeze(-1)
        eye = _eye_like(V).bool()
        inner = (VhgV / E.masked_fill(eye, 1.0)).masked_fill(eye, 0.0) + gL.diag_embed().to(V.dtype)
        return V @ inner @ _mH(V), None


def _allclose(a, b, tol=1e-2):
    return bool(((a - b).abs() <= tol + tol * b.abs()).all())


def _check_phase_invariant(diag_VhgV):
    """torch's check that a loss does not depend on the complex eigenvectors' phases
    (V -> V e^{i phi} leaves A = V L V^-1 alone): Im(diag(V^H gV)) = 0, to torch's lax
    tolerance. A host read, as torch's."""
    if diag_VhgV.dtype.is_complex and diag_VhgV.numel():
        im = diag_VhgV.imag
        if not _allclose(im, im * 0):
            raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
                               "so it is ill-defined.")


def _eigh_info(info):
    _raise_info("linalg.eigh", info, lambda c: "The algorithm failed to converge because the input matrix is "
                "ill-conditioned or has too many repeated eigenvalues (error code: " + str(c) + ").")


def eigh(A, UPLO="L", *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of symmetric (complex: Hermitian) A,
    from its lower (UPLO='L') or upper triangle; the eigenvalues are real."""
    _check_matrix("linalg.eigh", A, square=True)
    w, V, info = _Eigh.apply(A, _uplo("linalg.eigh", UPLO))
    _eigh_info(info)
    return _rt.linalg_eigh((w, V))


def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues (ascending) of symmetric A."""
    _check_matrix("linalg.eigvalsh", A, square=True)
    upper = _uplo("linalg.eigvalsh", UPLO)
    from .autograd.grad_mode import is_grad_enabled
    if A.requires_grad and is_grad_enabled():
        return eigh(A, UPLO).eigenvalues
    w, _, info = _C._linalg_eigh(A, upper, False)
    _eigh_info(info)
    return w


def matrix_sqrth(A):
    """The principal square root X (X X = A, X symmetric / Hermitian positive
    semidefinite) of symmetric (Hermitian) positive-definite A, from its lower triangle:
    V diag(sqrt(w)) V^H of eigh's w and V, negative eigenvalues (rounding's, or an
    indefinite A's) taken as zero, as torch's; differentiable through eigh."""
    _check_matrix("linalg.matrix_sqrth", A, square=True)
    w, V = eigh(A)
    root = w.clamp(min=0).sqrt().to(V.dtype)
    return (V * root.unsqueeze(-2)) @ V.mH


def polar(A, *, out=None):
    """(U, H) with A = U H, U [*, m, n] with orthonormal columns (the closest such matrix
    to A), H [*, n, n] symmetric (Hermitian) positive semidefinite, for m >= n: from the
    reduced SVD A = W S V^H, U = W V^H and H = V S V^H; differentiable through svd
    where A has full column rank."""
    _check_matrix("linalg.polar", A)
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"linalg.polar: input must have at least as many rows as columns, but got "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    W, S, Vh = svd(A, full_matrices=False)
    V = Vh.mH
    return _rt.linalg_polar((W @ Vh, (V * S.to(V.dtype).unsqueeze(-2)) @ Vh))


# ---- LDL^T of symmetric indefinite matrices ----------------------------------------------------

class _NotDifferentiable(Function):
    """An op torch has no derivative for: the values pass, backward raises as torch's."""

    @staticmethod
    def forward(ctx, name, compute, *inputs):
        ctx.name = name
        out = compute(*inputs)
        if isinstance(out, tuple):
            ctx.mark_non_differentiable(*out[1:])
        return out

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError(f"the derivative for {ctx.name} is not implemented")


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info) of symmetric A = P L D L^T P^T (Bunch-Kaufman; LAPACK's sytrf on
    the lower triangle), or with hermitian=True of a complex Hermitian A = P L D L^H P^T
    (hetrf): L's multipliers and D's 1 x 1 and 2 x 2 blocks packed in LD."""
    _check_matrix("linalg.ldl_factor", A, square=True)
    LD, pivots, info = _NotDifferentiable.apply("linalg.ldl_factor", _ldl_factor_lower, A, bool(hermitian))
    if check_errors:
        _raise_info("linalg.ldl_factor", info, _ldl_singular)
    return _rt.linalg_ldl_factor_ex((LD, pivots, info))


def _ldl_factor_lower(A, hermitian):
    """sytrf's result with the strict upper triangle (A's, untouched) zeroed, as torch's."""
    LD, pivots, info = _C._linalg_ldl_factor(A, hermitian)
    return LD.tril_(), pivots, info


def _ldl_singular(code):
    return (f"The factorization has been completed, but the block diagonal matrix D is exactly singular (D[{code - 1}, "
            f"{code - 1}] is zero): solving a system with it would divide by zero.")


def ldl_factor(A, *, hermitian=False, out=None):
    """(LD, pivots) of symmetric A (ldl_factor_ex, raising for an exactly singular D)."""
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian, check_errors=True)
    return _rt.linalg_ldl_factor((LD, pivots))


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B for A given by ldl_factor's (LD, pivots); batches broadcast."""
    _check_matrix("linalg.ldl_solve", LD, square=True, name="LD")
    _check_float("linalg.ldl_solve", B)
    if B.ndim < 2:
        raise RuntimeError("linalg.ldl_solve: B must have at least 2 dimensions.")
    LDb, Bb = _broadcast_batches(LD, B)
    pivots_b = pivots.expand(*LDb.shape[:-1])
    return _NotDifferentiable.apply("linalg.ldl_solve", _C._linalg_ldl_solve, LDb, pivots_b, Bb, bool(hermitian))


# ---- eig: general (non-symmetric) matrices ------------------------------------------------------

def _unpack_eig(w, V):
    """The complex eigenvalues and eigenvectors from the Eig primitive's results (ops/
    prims/decompose.h): a complex matrix's as they are; a real one's from LAPACK's real
    packing: eigenvalue j is w[0, j] + i w[1, j]; a conjugate pair's vectors
    are columns j +- i column j + 1 (positive imaginary part first), a real
    eigenvalue's vector its column. Gathered with index tensors, so nothing is read on
    the host."""
    if w.dtype.is_complex:
        return w, V
    from . import arange, complex as _complex
    wr, wi = w[..., 0, :], w[..., 1, :]
    L = _complex(wr, wi)
    if V is None:
        return L, None
    n = V.shape[-1]
    first, second = wi > 0, wi < 0
    idx = arange(n, device=V.device).expand(*wi.shape)
    real_col = idx - second.long()
    imag_col = idx + first.long()
    sign = first.to(V.dtype) - second.to(V.dtype)
    shape = (*V.shape[:-2], n, n)
    re = V.gather(-1, real_col.unsqueeze(-2).expand(*shape))
    im = V.gather(-1, imag_col.unsqueeze(-2).expand(*shape)) * sign.unsqueeze(-2)
    return L, _complex(re, im)


class _Eig(Function):
    """torch's linalg_eig_backward (A V = V diag(L), V's columns of norm 1):
    gA = V^-H (diag(gL) + (V^H gV - V^H V diag(re(diag(V^H gV)))) / conj(L_j - L_i)) V^H,
    its real part for a real A."""

    @staticmethod
    def forward(ctx, A):
        w, V, info = _C._linalg_eig(A, True)
        _eig_info(info)
        L, V = _unpack_eig(w, V)
        ctx.save_for_backward(L, V)
        ctx.real_input = not A.dtype.is_complex
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        from . import ones_like, zeros_like
        L, V = ctx.saved_tensors
        Vh = _mH(V)
        if gL is None:
            gL = zeros_like(L)
        if gV is None:
            inner = gL.diag_embed()
        else:
            VhgV = Vh @ gV
            _check_phase_invariant(VhgV.diagonal(0, -2, -1))
            VhgV = VhgV - Vh @ (V * VhgV.diagonal(0, -2, -1).real.unsqueeze(-2))
            Lc = L.conj()
            E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + ones_like(Lc).diag_embed()
            inner = VhgV / E
            inner = inner - inner.diagonal(0, -2, -1).diag_embed() + gL.diag_embed()
        gA = solve(Vh, inner @ Vh)
        return gA.real if ctx.real_input else gA


def _eig_info(info):
    _raise_info("linalg.eig", info, lambda c: "The algorithm failed to converge because the input matrix is "
                "ill-conditioned or has too many repeated eigenvalues (error code: " + str(c) + ").")


def _check_eig(op, A):
    _check_matrix(op, A, square=True)
    if A.numel() and not bool(A.isfinite().all()):
        raise RuntimeError(f"{op}: input tensor should not contain infs or NaNs.")


def eig(A, *, out=None):
    """(eigenvalues, eigenvectors) of a general square A, complex (complex64 for float32
    and complex64, complex128 for float64 and complex128); each eigenvector a column of
    norm 1 with its largest component real (LAPACK's geev). Differentiable when the loss
    does not depend on the eigenvectors' phases (torch's rule; else torch's error)."""
    _check_eig("linalg.eig", A)
    return _rt.linalg_eig(_Eig.apply(A))


def eigvals(A, *, out=None):
    """The eigenvalues of a general square A (complex)."""
    _check_eig("linalg.eigvals", A)
    from .autograd.grad_mode import is_grad_enabled
    if A.requires_grad and is_grad_enabled():
        return eig(A).eigenvalues
    w, _, info = _C._linalg_eig(A, False)
    _eig_info(info)
    return _unpack_eig(w, None)[0]


# ---- the SVD -----------------------------------------------------------------------------------

class _Svd(Function):
    """torch's svd_backward (reduced SVD, or full with a square A)."""

    @staticmethod
    def forward(ctx, A, full_matrices):
        U, S, Vh, info = _C._linalg_svd(A, full_matrices, True)
        ctx.save_for_backward(U, S, Vh)
        ctx.full = full_matrices and A.shape[-1] != A.shape[-2]
        ctx.mark_non_differentiable(info)
        return U, S, Vh, info

    @staticmethod
    def backward(ctx, gU, gS, gVh, ginfo):
        if ctx.full:
            raise NotImplementedError("torch.linalg.svd: The derivative of svd is not implemented when "
                                      "full_matrices=True and the input is not square; use "
                                      "full_matrices=False")
        U, S, Vh = ctx.saved_tensors
        from . import zeros_like
        gU = zeros_like(U) if gU is None else gU
        gVh = zeros_like(Vh) if gVh is None else gVh
        gS = zeros_like(S) if gS is None else gS
        m, n, k = U.shape[-2], Vh.shape[-1], S.shape[-1]
        V, gV = _mH(Vh), _mH(gVh)
        eye = _eye_like(U, k).bool()
        UhgU = _mH(U) @ gU
        VhgV = Vh @ gV
        UhgU, VhgV = UhgU - _mH(UhgU), VhgV - _mH(VhgV)
        if U.dtype.is_complex and S.numel() and not _allclose(UhgU.diagonal(0, -2, -1).imag,
                                                               -VhgV.diagonal(0, -2, -1).imag):
            # (U -> U e^{i phi}, V -> V e^{i phi} leaves A alone: the loss must not see it)
            raise RuntimeError("svd_backward: The singular vectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this phase "
                               "term, making it ill-defined.")
        S2 = S * S
        E = (S2.unsqueeze(-2) - S2.unsqueeze(-1)).masked_fill(eye, 1.0)
        # (the diagonal of the skew parts: zero for a real A, and for a complex one whose
        # loss does not depend on the vectors' phases; torch keeps it, as here)
        inner = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E + gS.diag_embed()
        if U.dtype.is_complex:  # the phase term: i Im(diag(U^H gU)) / S
            inner = inner + (UhgU.diagonal(0, -2, -1) / (2 * S)).diag_embed()
        gA = U @ inner
        if m > k:
            gA = gA + (gU - U @ (_mH(U) @ gU)) / S.unsqueeze(-2)
        gA = gA @ Vh
        if n > k:
            gA = gA + (U / S.unsqueeze(-2)) @ _mH(gV - V @ (Vh @ gV))
        return gA, None


def _svd_info(info, op="linalg.svd"):
    _raise_info(op, info, lambda c: "The algorithm failed to converge because the input matrix is "
                "ill-conditioned or has too many repeated singular values (error code: " + str(c) + ").")


def svd(A, full_matrices=True, *, driver=None, out=None):
    """(U, S, Vh) with A = U diag(S) Vh, S descending (real: float32 for complex64);
    full_matrices: U [*, m, m] and Vh
    [*, n, n], else [*, m, k] and [*, k, n]."""
    _check_matrix("linalg.svd", A)
    U, S, Vh, info = _Svd.apply(A, bool(full_matrices))
    _svd_info(info)
    return _rt.linalg_svd((U, S, Vh))


def svdvals(A, *, driver=None, out=None):
    """The singular values of A, descending."""
    _check_matrix("linalg.svdvals", A)
    from .autograd.grad_mode import is_grad_enabled
    if A.requires_grad and is_grad_enabled():
        return svd(A, full_matrices=False).S
    _, S, _, info = _C._linalg_svd(A, False, False)
    _svd_info(info, "linalg.svdvals")
    return S


# ---- built on the decompositions ------------------------------------------------------------------

def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The Moore-Penrose pseudo-inverse through the SVD, singular values at or below
    max(atol, rtol * the largest) treated as zero (rtol default: eps * max(m, n))."""
    _check_matrix("linalg.pinv", A)
    from . import where
    U, S, Vh = svd(A, full_matrices=False)
    tol = _tolerance(A, S, atol, rtol)
    S_inv = where(S > tol, 1.0 / S.masked_fill(S <= tol, 1.0), 0.0)
    return (_mH(Vh) * S_inv.unsqueeze(-2)) @ _mH(U)


def _tolerance(A, S, atol, rtol):
    """max(atol, rtol * S.max), torch's rule: rtol defaults to eps * max(m, n) when
    atol is not given (else 0)."""
    eps = D.finfo(A.dtype).eps
    if rtol is None:
        rtol = eps * max(A.shape[-2], A.shape[-1]) if atol is None or (not _is_tensor(atol) and atol <= 0) else 0.0
    smax = S.amax(-1, keepdim=True) if S.shape[-1] else S.sum(-1, keepdim=True)
    tol = smax * rtol
    if atol is not None:
        from . import maximum, as_tensor
        atol_t = atol.unsqueeze(-1) if _is_tensor(atol) else as_tensor(float(atol), dtype=S.dtype, device=S.device)
        tol = maximum(tol, atol_t)
    return tol


def _is_tensor(x):
    from ._tensor import Tensor
    return isinstance(x, Tensor)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    """The number of singular values above max(atol, rtol * the largest)."""
    _check_matrix("linalg.matrix_rank", A)
    if tol is not None:
        atol, rtol = tol, 0.0
    S = svdvals(A.detach())
    return (S > _tolerance(A, S, atol, rtol)).sum(-1)


def matrix_power(A, n, *, out=None):
    """A^n by repeated squaring (n < 0: the inverse's)."""
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim >= 2 else 1} by {A.shape[-1] if A.ndim else 1} matrices")
    if not isinstance(n, int):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:  # (torch's identity is a copy of A's shape, differentiable with zero gradient)
        return A * 0 + _eye_like(A)
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


def matrix_exp(A):
    """exp(A) by scaling and squaring with a [6/6] Padé approximant: A / 2^s of norm at
    most 1/2, then squared s times (differentiable through its products and solve)."""
    _check_matrix("linalg.matrix_exp", A, square=True)
    if A.numel() == 0:
        return A.clone()
    # (a matrix with an inf or NaN gives NaN everywhere, as torch's; the others' scaling
    # ignores it)
    finite = A.detach().isfinite().all(-1).all(-1)
    norm1 = float(A.detach().nan_to_num(0.0, 0.0, 0.0).abs().sum(-2).amax())
    s = max(0, int(math.ceil(math.log2(norm1 / 0.5)))) if norm1 > 0.5 else 0
    X = A / (2.0 ** s)
    c = [1.0, 1 / 2, 5 / 44, 1 / 66, 1 / 792, 1 / 15840, 1 / 665280]  # Padé [6/6] of exp
    eye = _eye_like(A)
    X2 = X @ X
    X4 = X2 @ X2
    X6 = X4 @ X2
    even = c[0] * eye + c[2] * X2 + c[4] * X4 + c[6] * X6
    odd = X @ (c[1] * eye + c[3] * X2 + c[5] * X4)
    E = solve_ex(even - odd, even + odd).result  # (a NaN matrix may look singular: no error, as torch)
    for _ in range(s):
        E = E @ E
    return E if bool(finite.all()) else E.masked_fill(~finite.unsqueeze(-1).unsqueeze(-1), float("nan"))


def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B|| through the SVD
    (LAPACK's gelsd): singular values at or below rcond * the largest (default eps *
    max(m, n)) are dropped; residuals (squared, per column) when m > n and A has full
    rank, else empty."""
    _check_matrix("linalg.lstsq", A)
    _check_float("linalg.lstsq", B)
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2), but got "
                           f"{A.shape[-2]} and {Bm.shape[-2]}")
    A, Bm = _broadcast_batches(A, Bm)
    U, S, Vh = svd(A, full_matrices=False)
    from . import where
    m, n = A.shape[-2], A.shape[-1]
    rtol = D.finfo(A.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    tol = (S.amax(-1, keepdim=True) if S.shape[-1] else S.sum(-1, keepdim=True)) * rtol
    keep = S > tol
    S_inv = where(keep, 1.0 / S.masked_fill(~keep, 1.0), 0.0)
    X = _mH(Vh) @ (S_inv.unsqueeze(-1) * (_mH(U) @ Bm))
    rank = keep.sum(-1)
    if m > n and bool((rank == n).all()):
        r = A @ X - Bm
        residuals = ((r.conj() * r).real if r.dtype.is_complex else r ** 2).sum(-2)
    else:
        residuals = A.new_empty((0,))
    if vector:
        X = X.squeeze(-1)
        if residuals.numel():
            residuals = residuals.squeeze(-1)
    return _rt.linalg_lstsq((X, residuals, rank, S))


def tensorinv(A, ind=2, *, out=None):
    """The inverse of A read as a matrix of its first `ind` dims by the rest."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    m, n = math.prod(rows), math.prod(cols)
    if m != n:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {n} != {m}")
    return inv(A.reshape(m, n)).reshape(*cols, *rows)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B."""
    if dims is not None:
        order = [d % A.ndim for d in dims]
        rest = [d for d in range(A.ndim) if d not in order]
        A = A.permute(*rest, *order)
    n = B.numel()
    result_shape = tuple(A.shape[B.ndim:])
    if math.prod(result_shape) != n:
        raise RuntimeError("Expected self to satisfy the requirement prod(result_shape) == other.numel(), but "
                           f"got {math.prod(result_shape)} != {n}")
    return solve(A.reshape(n, n), B.reshape(n)).reshape(*result_shape)


# ---- norms and the rest of torch.linalg ------------------------------------------------------------

def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """(sum |x|^ord)^(1/ord) over `dim` (all dims by default); ord inf / -inf: the
    largest / smallest |x|; 0: the number of nonzeros."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{D._torch_name(x.dtype)}")
    if dtype is not None:
        x = x.to(dtype)
    a = x.abs()
    if a.ndim == 0:
        a = a.reshape(1)
        dims, keepdim = (0,), False
    else:
        dims = tuple(range(a.ndim)) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if ord == float("inf"):
        return a.amax(dim=dims, keepdim=keepdim)
    if ord == float("-inf"):
        return a.amin(dim=dims, keepdim=keepdim)
    if ord == 0:
        return (a != 0).to(a.dtype).sum(dims, keepdim=keepdim)
    if ord == 1:
        return a.sum(dims, keepdim=keepdim)
    # (torch.norm's kernel: its gradient at a zero vector is zero, not NaN)
    return x.reshape(1).norm(ord, dims, keepdim) if x.ndim == 0 else x.norm(ord, dims, keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """'fro', 'nuc', 1, -1, 2, -2, inf or -inf norm of the matrices in dims `dim`."""
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    _check_float("linalg.matrix_norm", A if dtype is None else A.to(dtype))
    if dtype is not None:
        A = A.to(dtype)
    r, c = dim[0] % A.ndim, dim[1] % A.ndim
    if ord == "fro":
        return vector_norm(A, 2, (r, c), keepdim)
    if ord in ("nuc", 2, -2):
        B = A.movedim((r, c), (-2, -1))
        S = svdvals(B)
        v = S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
        if keepdim:
            v = v.unsqueeze(-1).unsqueeze(-1).movedim((-2, -1), (r, c))
        return v
    if ord in (1, -1, float("inf"), float("-inf")):
        sum_dim, max_dim = (r, c) if ord in (1, -1) else (c, r)
        s = A.abs().sum(sum_dim, keepdim=True)
        v = s.amax(max_dim, keepdim=True) if ord in (1, float("inf")) else s.amin(max_dim, keepdim=True)
        return v if keepdim else v.squeeze(max(r, c)).squeeze(min(r, c))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """vector_norm or matrix_norm by torch.linalg.norm's rule: a string ord or a 2-tuple
    dim means a matrix norm; no ord and no dim: the 2-norm of the flattened input."""
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(ord, str) or (dim is not None and len(dim) == 2) or (dim is None and ord is not None and
                                                                       A.ndim == 2):
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim,
                           dtype=dtype)
    if ord is not None and dim is None and A.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.ndim}D.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cond(A, p=None, *, out=None):
    """The condition number in norm p (None or 2: the ratio of the extreme singular values)."""
    _check_matrix("linalg.cond", A)
    if p in (None, 2, -2):
        S = svdvals(A)
        return S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
    _check_matrix("linalg.cond", A, square=True)
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def cross(input, other, *, dim=-1, out=None):
    """The cross product of 3-vectors along `dim` (broadcast)."""
    from . import broadcast_tensors, stack
    a, b = broadcast_tensors(input, other)
    if a.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[dim]} "
                           f"and {other.shape[dim]}")
    a0, a1, a2 = a.unbind(dim)
    b0, b1, b2 = b.unbind(dim)
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


def vecdot(x, y, *, dim=-1, out=None):
    """sum(conj(x) * y) along `dim` (real tensors: sum(x * y))."""
    return (x.conj() * y).sum(dim)


def multi_dot(tensors, *, out=None):
    """The product of the matrices in order (1-D first and last as row and column
    vectors), parenthesised to minimise the multiplications (the chain-order DP)."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    ts = list(tensors)
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    for i, t in enumerate(ts):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    dims = [ts[0].shape[0]] + [t.shape[1] for t in ts]
    n = len(ts)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def product(i, j):
        return ts[i] if i == j else product(i, split[i][j]) @ product(split[i][j] + 1, j)

    result = product(0, n - 1)
    if first_vec:
        result = result.squeeze(0)
    if last_vec:
        result = result.squeeze(-1)
    return result


def vander(x, *, N=None, increasing=True):
    """[..., n, N]: x's powers 0..N-1 (N default n) along the last dim (increasing=False,
    upstream Lucid's numpy-style option: N-1..0)."""
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n < 1:
        raise RuntimeError(f"N must be greater than 1.")
    from . import cat
    ones = x.new_ones((*x.shape, 1))
    if n == 1:
        return ones
    # the powers 1..n-1 as one cumulative product (torch's way): one op whatever n, the
    # same products in the same order as multiplying n-1 times
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1, dtype=x.dtype)
    out = cat([ones, powers], -1)
    return out if increasing else out.flip(-1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """A.diagonal(offset, dim1, dim2) (torch.linalg.diagonal's defaults)."""
    return A.diagonal(offset, dim1, dim2)


def matmul(input, other, *, out=None):
    from . import matmul as _matmul
    return _matmul(input, other)


def dot(x, y, *, out=None):
    """upstream Lucid's linalg.dot: the inner product of two 1-D tensors (lucid.dot)."""
    from . import dot as _dot
    return _dot(x, y)


def inner(x, y, *, out=None):
    """upstream Lucid's linalg.inner: lucid.inner."""
    from . import inner as _inner
    return _inner(x, y)


def outer(x, y, *, out=None):
    """upstream Lucid's linalg.outer: lucid.outer."""
    from . import outer as _outer
    return _outer(x, y)


# ---- torch's top-level forms (lucid.det, Tensor.inverse, torch.svd's (U, S, V), ...) --------

def logdet(input):
    """log det A: NaN for a negative determinant, -inf for a zero one (torch.logdet)."""
    _check_matrix("logdet", input, square=True)
    return _logdet(input)


def _svd_torch(input, some=True, compute_uv=True):
    """torch.svd: (U, S, V) (V = Vh^H, not Vh); some=False: full U and V; compute_uv=False: zero U and V."""
    U, S, Vh = svd(input, full_matrices=not some)
    if not compute_uv:
        return _rt.svd((U.detach() * 0, S, _mH(Vh).detach() * 0))
    return _rt.svd((U, S, _mH(Vh)))


def _qr_torch(input, some=True):
    """torch.qr: linalg.qr with mode 'reduced' (some) or 'complete'."""
    return _rt.qr(qr(input, "reduced" if some else "complete"))


def _cholesky_torch(input, upper=False):
    return cholesky(input, upper=upper)


def cholesky_solve(B, L, upper=False, *, out=None):
    """X with A X = B for A = L L^H (upper: A = U^H U), given the factor."""
    if upper:
        return solve_triangular(L, solve_triangular(_mH(L), B, upper=False), upper=True)
    return solve_triangular(_mH(L), solve_triangular(L, B, upper=False), upper=True)


def cholesky_inverse(L, upper=False, *, out=None):
    """A^-1 for A = L L^H (upper: A = U^H U), given the factor."""
    return cholesky_solve(_eye_like(L).expand(*L.shape), L, upper)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve: (X, A's copy) with op(A) X = b, op(A) = A^T when transpose
    (the plain transpose for a complex A too, as torch's)."""
    M = A.mT if transpose else A
    X = solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    return _rt.triangular_solve((X, A.clone()))


def _pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


def chain_matmul(*matrices, out=None):
    return multi_dot(matrices)


# (name in lucid, function, also a Tensor method)
_TOP_LEVEL = [
    ("det", det, True), ("logdet", logdet, True), ("slogdet", slogdet, True), ("inverse", inv, True),
    ("pinverse", _pinverse, True), ("matrix_exp", matrix_exp, True), ("matrix_power", matrix_power, True),
    ("svd", _svd_torch, True), ("qr", _qr_torch, True), ("cholesky", _cholesky_torch, True),
    ("cholesky_solve", cholesky_solve, True), ("cholesky_inverse", cholesky_inverse, True),
    ("triangular_solve", triangular_solve, True), ("chain_matmul", chain_matmul, False),
]


def _install_out():
    """out= for every function here that takes it, as torch's: the result is computed,
    then written into `out` (a tuple for tuple results) by the engine's write_out (out
    must have the result's dtype; it is resized as torch resizes)."""
    import functools
    import inspect
    from ._tensor import Tensor

    def wrap(fn, name):
        @functools.wraps(fn)
        def wrapper(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            result = fn(*args, **kwargs)
            results, outs = (result, out) if isinstance(result, tuple) else ((result,), (out,))
            if not isinstance(outs, (tuple, list)) or len(outs) != len(results) or \
                    not all(isinstance(o, Tensor) for o in outs):
                raise TypeError(f"linalg.{name}(): argument 'out' must be "
                                + (f"a tuple of {len(results)} Tensors" if isinstance(result, tuple) else "Tensor"))
            for o, r in zip(outs, results):
                _C._write_out(f"linalg.{name}", o, r, True)
            return type(result)(outs) if isinstance(result, tuple) else out
        return wrapper

    namespace = globals()
    for name in __all__ + ["cholesky_solve", "cholesky_inverse", "chain_matmul"]:
        fn = namespace.get(name)
        if inspect.isfunction(fn) and "out" in inspect.signature(fn).parameters:
            namespace[name] = wrap(fn, name)
    global _TOP_LEVEL
    _TOP_LEVEL = [(n, namespace.get(f.__name__, f), m) for n, f, m in _TOP_LEVEL]  # (inverse: inv's wrapper)


_install_out()
