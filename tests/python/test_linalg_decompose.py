"""lucid.linalg against torch.linalg: results (or, where a decomposition is not
unique, what defines it), gradients against torch's and float64 numerical ones, the
errors torch raises for singular and indefinite inputs, on batched, non-contiguous,
empty and ill-conditioned matrices. CPU legs need LAPACK (OpenBLAS)."""

import functools

import pytest
import torch

import lucid
import lucid.linalg as LA
from conftest import to_lucid, to_torch

needs_lapack = pytest.mark.skipif(not lucid._C._has_lapack(), reason="lucid built without LAPACK")


@pytest.fixture
def dev(device):
    if device == "cpu" and not lucid._C._has_lapack():
        pytest.skip("lucid built without LAPACK")
    return device


def _rand(*shape, seed=0, dtype=torch.float64):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def _spd(*shape, seed=0, dtype=torch.float64):
    """A symmetric (complex: Hermitian) positive-definite matrix (batch)."""
    a = _rand(*shape, seed=seed, dtype=dtype)
    return a @ a.mH + shape[-1] * torch.eye(shape[-1], dtype=dtype)


def _close(l, t, tol=1e-10):
    assert tuple(l.shape) == tuple(t.shape), (l.shape, t.shape)
    torch.testing.assert_close(to_torch(l.detach().cpu()).to(t.dtype), t.detach(), rtol=tol, atol=tol)


def _grads(lfn, tfn, args, dev, tol=1e-8):
    """lfn(*lucid args) and tfn(*torch args) with the same upstream gradient: outputs
    and every input's gradient agree."""
    targs = [a.clone().requires_grad_() for a in args]
    largs = [to_lucid(a, dev).requires_grad_() for a in args]
    tout, lout = tfn(*targs), lfn(*largs)
    g = _rand(*tout.shape, seed=9, dtype=tout.dtype)
    tout.backward(g)
    lout.backward(to_lucid(g, dev))
    _close(lout, tout, tol)
    for l, t in zip(largs, targs):
        _close(l.grad, t.grad, tol)


BATCHES = [(), (3,), (2, 2)]


@pytest.mark.parametrize("batch", BATCHES)
def test_solve_inv_det_match_torch(dev, batch):
    A, B = _rand(*batch, 5, 5), _rand(*batch, 5, 3, seed=1)
    _grads(LA.solve, torch.linalg.solve, [A, B], dev)
    _grads(LA.inv, torch.linalg.inv, [A], dev)
    _grads(LA.det, torch.linalg.det, [A], dev)
    _grads(lambda a: LA.slogdet(a).logabsdet, lambda a: torch.linalg.slogdet(a).logabsdet, [A], dev)
    sign = LA.slogdet(to_lucid(A, dev)).sign
    _close(sign, torch.linalg.slogdet(A).sign)
    # right-hand form, a vector right-hand side and a broadcast batch
    _grads(lambda a, b: LA.solve(a, b, left=False), lambda a, b: torch.linalg.solve(a, b, left=False),
           [A, _rand(*batch, 3, 5, seed=2)], dev)
    _grads(LA.solve, torch.linalg.solve, [A, _rand(*batch, 5, seed=3)], dev)
    _grads(LA.solve, torch.linalg.solve, [A, _rand(5, 2, seed=3)], dev)


def test_det_of_singular_matrices_and_its_gradient(dev):
    """det of a rank-deficient matrix is 0 and its gradient the cofactor matrix (finite),
    as torch's."""
    A = _rand(4, 4)
    A[:, 3] = A[:, 0] + A[:, 1]
    _grads(LA.det, torch.linalg.det, [A], dev, tol=1e-9)
    assert abs(float(LA.det(to_lucid(A, dev)))) < 1e-12
    Z = torch.zeros(3, 3, dtype=torch.float64)
    _grads(LA.det, torch.linalg.det, [Z], dev)


def test_singular_and_indefinite_inputs_raise_torchs_errors(dev):
    A = torch.zeros(2, 3, 3, dtype=torch.float64)
    A[0] = torch.eye(3)
    with pytest.raises(LA.LinAlgError, match=r"linalg.inv: \(Batch element 1\): The diagonal element 1 is zero"):
        LA.inv(to_lucid(A, dev))
    with pytest.raises(LA.LinAlgError, match="linalg.solve: .*singular"):
        LA.solve(to_lucid(A[1], dev), to_lucid(torch.ones(3, 1, dtype=torch.float64), dev))
    assert isinstance(LA.LinAlgError("x"), RuntimeError)
    X, info = LA.inv_ex(to_lucid(A, dev))
    assert info.tolist() == [0, 1]
    N = torch.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=torch.float64)
    with pytest.raises(LA.LinAlgError, match="leading minor of order 2 is not positive-definite"):
        LA.cholesky(to_lucid(N, dev))
    assert LA.cholesky_ex(to_lucid(N, dev)).info.item() == 2


@pytest.mark.parametrize("shape", [(6, 5, 5), (3, 40, 40), (1, 5, 5)])
def test_cholesky_info_names_each_failing_matrix(dev, shape):
    """Per batch element, info is LAPACK's (torch's): the order of the first pivot that
    is not positive, a NaN pivot included (OpenBLAS and cuSOLVER do not stop there; the
    kernels check); L's upper triangle is zero; the other matrices' factors are torch's.
    Batches of small matrices and single large ones take different kernels on the GPU."""
    S = _spd(*shape)
    if shape[0] > 1:
        S[1, 2, 2] = float("nan")
        S[-1, 3, 3] = -50.0
    L, info = LA.cholesky_ex(to_lucid(S, dev))
    tL, tinfo = torch.linalg.cholesky_ex(S)
    assert info.tolist() == tinfo.tolist()
    assert not bool(L.triu(1).cpu().isnan().any()) and float(L.triu(1).abs().sum()) == 0
    ok = tinfo == 0
    _close(L[to_lucid(ok, dev)], tL[ok])
    if shape[0] > 1:
        with pytest.raises(LA.LinAlgError, match=r"\(Batch element 1\): The factorization could not be completed"):
            LA.cholesky(to_lucid(S, dev))


def test_bad_operands_raise(dev):
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"):
        LA.inv(lucid.ones(3, 3, dtype=lucid.int64, device=dev))
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        LA.det(lucid.ones(2, 3, dtype=lucid.float64, device=dev))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        LA.inv(lucid.ones(3, dtype=lucid.float64, device=dev))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        LA.solve(lucid.eye(3, dtype=lucid.float64, device=dev), lucid.ones(4, 2, dtype=lucid.float64, device=dev))
    with pytest.raises(RuntimeError, match="Low precision dtypes not supported"):
        LA.cholesky(lucid.eye(3, dtype=lucid.float16, device=dev))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_and_triangular_solves(dev, upper):
    S = _spd(3, 4, 4)
    _grads(lambda a: LA.cholesky(a, upper=upper), lambda a: torch.linalg.cholesky(a, upper=upper), [S], dev)
    T, B = _rand(3, 4, 4, seed=4) + 4 * torch.eye(4, dtype=torch.float64), _rand(3, 4, 2, seed=5)
    for left in (True, False):
        for unit in (False, True):
            b = B if left else B.mT
            _grads(lambda a, x: LA.solve_triangular(a, x, upper=upper, left=left, unitriangular=unit),
                   lambda a, x: torch.linalg.solve_triangular(a, x, upper=upper, left=left, unitriangular=unit),
                   [T, b], dev)


@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (3, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(dev, shape, mode):
    """Q R = A with Q orthonormal and R upper triangular, R's diagonal signs as LAPACK's
    (= torch's, so Q and R equal torch's); gradients where torch has them (all but
    mode='r' and a complete Q of a tall matrix)."""
    A = _rand(2, *shape)
    Q, R = LA.qr(to_lucid(A, dev), mode=mode)
    tQ, tR = torch.linalg.qr(A, mode=mode)
    _close(R, tR)
    if mode == "r":
        assert Q.numel() == 0
        return
    _close(Q, tQ)
    if mode == "reduced" or (mode == "complete" and shape[0] <= shape[1]):
        _grads(lambda a: sum(t.sum() * (i + 1) for i, t in enumerate(LA.qr(a, mode))).reshape(1),
               lambda a: sum(t.sum() * (i + 1) for i, t in enumerate(torch.linalg.qr(a, mode))).reshape(1), [A], dev)


def test_householder_product_matches_torch(dev):
    A, tau = _rand(2, 5, 3), _rand(2, 2, seed=1)
    _close(LA.householder_product(to_lucid(A, dev), to_lucid(tau, dev)), torch.linalg.householder_product(A, tau))


@pytest.mark.parametrize("shape", [(64, 32, 32), (9, 32, 5), (9, 4, 32), (5, 1, 1), (3, 1, 6), (7, 6, 1)])
def test_qr_of_batches_of_small_matrices(dev, shape):
    """The GPU factors batches of matrices up to 32 on a side with its own kernels
    (LAPACK's geqr2 and org2r): R, Q and the packed reflectors as torch's, a zero column
    (tau = 0) and float32 included."""
    A = _rand(*shape)
    A[0, :, 0] = 0.0  # a zero column: no reflection
    for dtype, tol in ((torch.float64, 1e-10), (torch.float32, 5e-4)):
        a = A.to(dtype)
        Q, R = LA.qr(to_lucid(a, dev))
        tQ, tR = torch.linalg.qr(a)
        _close(R, tR, tol)
        _close(Q, tQ, tol)
        packed, tau = torch.geqrf(a)
        k = min(shape[1:])
        Hl = LA.householder_product(to_lucid(packed[..., :k], dev), to_lucid(tau, dev))
        _close(Hl, torch.linalg.householder_product(packed[..., :k], tau), tol)


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-10), (torch.float32, 1e-4)])
def test_ldl_factor_and_solve_match_torch(dev, dtype, tol):
    """LD and pivots as torch's (LAPACK's sytrf on the lower triangle; the GPU's own sytf2
    for a batch: 2 x 2 blocks included, for an indefinite matrix with a zero diagonal);
    ldl_solve as torch's, its batches broadcast; no derivative (torch has none)."""
    S = _rand(3, 5, 5).to(dtype)
    S = S + S.mT
    S[0].fill_diagonal_(0.0)  # forces 2 x 2 pivots
    LD, piv = LA.ldl_factor(to_lucid(S, dev))
    tLD, tpiv = torch.linalg.ldl_factor(S)
    _close(LD, tLD, tol)
    assert piv.tolist() == tpiv.tolist()
    assert piv.dtype == lucid.int32 and (piv < 0).any()
    B = _rand(3, 5, 2, seed=4).to(dtype)
    X = LA.ldl_solve(LD, piv, to_lucid(B, dev))
    _close(X, torch.linalg.solve(S, B), tol * 10)
    Xb = LA.ldl_solve(LD[:1], piv[:1], to_lucid(B, dev))  # one factorization, three right-hand sides
    _close(Xb, torch.linalg.solve(S[:1], B), tol * 10)
    # torch's (LAPACK's) factors solved on this device: the GPU's own sytrs reads them as LAPACK does
    _close(LA.ldl_solve(to_lucid(tLD, dev), to_lucid(tpiv, dev), to_lucid(B, dev)), torch.linalg.solve(S, B),
           tol * 10)
    out = LA.ldl_factor_ex(to_lucid(torch.zeros(2, 3, 3, dtype=dtype), dev))
    assert out.info.tolist() == [1, 1]
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 0\): .*exactly singular"):
        LA.ldl_factor(to_lucid(torch.zeros(2, 3, 3, dtype=dtype), dev))
    a = to_lucid(S, dev).requires_grad_()
    with pytest.raises(NotImplementedError, match="derivative for linalg.ldl_factor"):
        LA.ldl_factor(a).LD.sum().backward()
    with pytest.raises(RuntimeError, match="square"):
        LA.ldl_factor(to_lucid(_rand(3, 4), dev))


def test_ldl_solve_of_larger_systems(dev):
    """Orders past one block of threads, many right-hand sides, 2 x 2 blocks at both ends;
    factored on the device too (on the GPU two such matrices go to cuSOLVER's sytrf, and
    its zero pivot is reported at LAPACK's index)."""
    S = _rand(2, 300, 300)
    S = S + S.mT
    S[:, :2, :2] = 0.0  # (a zero leading block: a 2 x 2 pivot first)
    S[:, -1, -1] = 0.0
    tLD, tpiv = torch.linalg.ldl_factor(S)
    assert (tpiv < 0).any()
    B = _rand(2, 300, 5, seed=3)
    X = to_torch(LA.ldl_solve(to_lucid(tLD, dev), to_lucid(tpiv, dev), to_lucid(B, dev)).cpu())
    # (checked by its residual: torch's own batched solve of these, its MKL getrf nested in
    # its OpenMP parallel_for, livelocked on both the 2-core machine and the H200's host)
    torch.testing.assert_close(S @ X, B, rtol=0, atol=1e-9)
    LD, piv = LA.ldl_factor(to_lucid(S, dev))
    X = to_torch(LA.ldl_solve(LD, piv, to_lucid(B, dev)).cpu())
    torch.testing.assert_close(S @ X, B, rtol=0, atol=1e-9)
    Z = S[0].clone()
    Z[:, 5] = Z[5, :] = 0.0
    Z[:5, :5] += 40 * torch.eye(5, dtype=Z.dtype)  # (1 x 1 pivots first, then a zero column)
    assert LA.ldl_factor_ex(to_lucid(Z, dev)).info.item() == torch.linalg.ldl_factor_ex(Z).info.item() > 0


def test_ldl_solve_refuses_bad_pivots(dev):
    """Pivots that are not sytrf's form raise (never read through) on every device."""
    S = _rand(4, 4)
    tLD, _ = torch.linalg.ldl_factor(S + S.mT + 8 * torch.eye(4, dtype=torch.float64))
    LD, piv = to_lucid(tLD, dev), to_lucid(torch.tensor([1, 2, 3, 4], dtype=torch.int32), dev)
    b = lucid.ones(4, 1, dtype=lucid.float64, device=dev)
    for bad in ([1, 5, 3, 4], [0, 2, 3, 4], [1, 2, 3, -4], [-2, -3, 3, 4], [1, -2, 3, 4]):
        with pytest.raises(RuntimeError, match="is not a pivot of ldl_factor"):
            LA.ldl_solve(LD, to_lucid(torch.tensor(bad, dtype=torch.int32), dev), b).tolist()
    assert LA.ldl_solve(LD, piv, b).shape == (4, 1)  # (the device still works)


def _sorted_eigs(L):
    """Eigenvalues ordered by (real, imaginary) part, for comparing two solvers' sets."""
    key = L.real * 1e6 + L.imag
    return L.gather(-1, key.argsort(-1))


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-10), (torch.float32, 2e-4)])
def test_eig_matches_torch(dev, dtype, tol):
    """eig of general real matrices (real eigenvalues, complex-conjugate pairs, a
    batch): the eigenvalues as torch's, A V = V diag(L), unit eigenvectors; on the CPU
    (both LAPACK's geev) the eigenvectors equal torch's up to the sign of a real
    eigenvector (OpenBLAS's and MKL's sgeev differ there)."""
    A = _rand(3, 6, 6).to(dtype)
    A[0] = torch.diag(torch.arange(6, dtype=dtype)) + torch.triu(A[0], 1)  # real eigenvalues only
    L, V = LA.eig(to_lucid(A, dev))
    tL, tV = torch.linalg.eig(A)
    assert L.dtype == (lucid.complex128 if dtype == torch.float64 else lucid.complex64) and V.dtype == L.dtype
    Lt, Vt = to_torch(L.cpu()), to_torch(V.cpu())
    torch.testing.assert_close(_sorted_eigs(Lt), _sorted_eigs(tL), rtol=tol, atol=tol)
    torch.testing.assert_close(A.to(Lt.dtype) @ Vt, Vt * Lt.unsqueeze(-2), rtol=tol * 10, atol=tol * 10)
    torch.testing.assert_close(torch.linalg.vector_norm(Vt, dim=-2), torch.ones(3, 6, dtype=dtype), rtol=tol, atol=tol)
    if dev == "cpu":
        torch.testing.assert_close(Lt, tL, rtol=tol, atol=tol)
        torch.testing.assert_close(Vt.abs(), tV.abs(), rtol=tol, atol=tol)
    Lv = to_torch(LA.eigvals(to_lucid(A, dev)).cpu())
    torch.testing.assert_close(_sorted_eigs(Lv), _sorted_eigs(tL), rtol=tol, atol=tol)


def test_eig_gradients_match_torch(dev):
    """Gradients through the eigenvalues and through phase-invariant functions of the
    eigenvectors, as torch's; eigvals differentiable."""
    _same_eig_grads(_rand(2, 5, 5), _rand(2, 5, seed=3), dev,
                    lambda m, a, w: (m.linalg.eigvals(a).real * w).sum(),
                    lambda m, a, w: (m.linalg.eig(a).eigenvalues.imag ** 2).sum(),
                    lambda m, a, w: m.linalg.eig(a).eigenvectors.abs().sum() + m.linalg.eig(a).eigenvalues.abs().sum())


def _same_eig_grads(A, W, dev, *fns):
    """A's gradient of each fn(module, a, w) (w: W in that module) equals torch's."""
    for fn in fns:
        a = to_lucid(A, dev).requires_grad_()
        b = A.clone().requires_grad_()
        fn(lucid, a, to_lucid(W, dev)).backward()
        fn(torch, b, W).backward()
        _close(a.grad, b.grad, 1e-8)


def test_eig_errors(dev):
    with pytest.raises(RuntimeError, match="square"):
        LA.eig(to_lucid(_rand(3, 4), dev))
    bad = _rand(3, 3)
    bad[1, 1] = float("nan")
    with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
        LA.eig(to_lucid(bad, dev))
    assert tuple(LA.eig(to_lucid(_rand(0, 4, 4), dev)).eigenvectors.shape) == (0, 4, 4)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(dev, uplo):
    """Eigenvalues ascending as torch's; A V = V diag(w); the eigenvalues' and a
    sign-invariant function of the eigenvectors' gradients as torch's."""
    S = _rand(3, 5, 5)
    S = S + S.mT
    w, V = LA.eigh(to_lucid(S, dev), UPLO=uplo)
    tw, _ = torch.linalg.eigh(S, UPLO=uplo)
    _close(w, tw)
    Vt, wt = to_torch(V.cpu()), to_torch(w.cpu())
    torch.testing.assert_close(S @ Vt, Vt * wt.unsqueeze(-2), rtol=1e-10, atol=1e-10)
    _grads(lambda a: LA.eigvalsh(a, UPLO=uplo), lambda a: torch.linalg.eigvalsh(a, UPLO=uplo), [S], dev)
    # (V V^T-weighted sums do not depend on each eigenvector's sign)
    _grads(lambda a: (LA.eigh(a, UPLO=uplo).eigenvectors ** 2 * torch_free_weights(dev)).sum().reshape(1),
           lambda a: (torch.linalg.eigh(a, UPLO=uplo).eigenvectors ** 2 * torch_weights()).sum().reshape(1),
           [S], dev)


def torch_weights():
    return torch.arange(25, dtype=torch.float64).reshape(5, 5)


def torch_free_weights(dev):
    return to_lucid(torch_weights(), dev)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (3, 5)])
def test_svd(dev, shape, dtype):
    """Singular values (real) as torch's; U S Vh = A, U and V with orthonormal columns
    (unique up to a sign / phase per singular pair), U and Vh's shapes; gradients of
    svdvals and of sign- or phase-invariant functions (U S Vh, |U|, |Vh|) as torch's."""
    A = _rand(2, *shape, dtype=dtype)
    k = min(shape)
    m, n = shape
    for full in (False, True):
        U, S, Vh = LA.svd(to_lucid(A, dev), full_matrices=full)
        assert S.dtype == lucid.float64 and str(U.dtype).split(".")[-1] == str(dtype).split(".")[-1]
        assert tuple(U.shape) == (2, m, m if full else k) and tuple(Vh.shape) == (2, n if full else k, n)
        _close(S, torch.linalg.svdvals(A))
        Ut, St, Vht = to_torch(U.cpu()), to_torch(S.cpu()), to_torch(Vh.cpu())
        torch.testing.assert_close(Ut[..., :k] * St.unsqueeze(-2) @ Vht[..., :k, :], A, rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(Ut.mH @ Ut, torch.eye(Ut.shape[-1], dtype=A.dtype).expand(2, -1, -1), rtol=1e-10,
                                   atol=1e-10)
        torch.testing.assert_close(Vht @ Vht.mH, torch.eye(Vht.shape[-2], dtype=A.dtype).expand(2, -1, -1),
                                   rtol=1e-10, atol=1e-10)
    _grads(LA.svdvals, torch.linalg.svdvals, [A], dev)
    _grads(lambda a: (lambda r: (r.U * r.S.unsqueeze(-2)) @ r.Vh)(LA.svd(a, full_matrices=False)),
           lambda a: (lambda r: (r.U * r.S.unsqueeze(-2)) @ r.Vh)(torch.linalg.svd(a, full_matrices=False)), [A], dev)
    _grads(lambda a: LA.svd(a, full_matrices=False).U.abs().sum().reshape(1) + LA.svd(a, full_matrices=False)
           .Vh.abs().sum(), lambda a: torch.linalg.svd(a, full_matrices=False).U.abs().sum().reshape(1) +
           torch.linalg.svd(a, full_matrices=False).Vh.abs().sum(), [A], dev)


def test_lu_and_lu_solve(dev):
    A, B = _rand(2, 4, 4), _rand(2, 4, 3, seed=1)
    P, L, U = LA.lu(to_lucid(A, dev))
    tP, tL, tU = torch.linalg.lu(A)
    _close(P, tP), _close(L, tL), _close(U, tU)
    LU, piv = LA.lu_factor(to_lucid(A, dev))
    tLU, tpiv = torch.linalg.lu_factor(A)
    _close(LU, tLU)
    assert piv.tolist() == tpiv.tolist()
    for adjoint in (False, True):
        _close(LA.lu_solve(LU, piv, to_lucid(B, dev), adjoint=adjoint),
               torch.linalg.lu_solve(tLU, tpiv, B, adjoint=adjoint))
    _close(LA.lu_solve(LU, piv, to_lucid(B.mT, dev), left=False), torch.linalg.lu_solve(tLU, tpiv, B.mT, left=False))
    _grads(lambda a: sum(t.sum() * (i + 1) for i, t in enumerate(LA.lu(a)[1:])).reshape(1),
           lambda a: sum(t.sum() * (i + 1) for i, t in enumerate(torch.linalg.lu(a)[1:])).reshape(1), [A], dev)
    rect = _rand(5, 3)
    tLU, tpiv = torch.linalg.lu_factor(rect)
    LU, piv = LA.lu_factor(to_lucid(rect, dev))
    _close(LU, tLU)


@pytest.mark.parametrize("left,adjoint", [(True, False), (True, True), (False, False), (False, True)])
def test_lu_solve_gradients_match_torch(dev, left, adjoint):
    """lu_solve differentiates with respect to LU (torch's linalg_lu_solve_LU) as well
    as B; both gradients as torch's."""
    A = _rand(2, 4, 4)
    tLU, tpiv = torch.linalg.lu_factor(A)
    B = _rand(2, 4, 3, seed=1) if left else _rand(2, 3, 4, seed=1)
    piv = to_lucid(tpiv, dev)
    _grads(lambda lu, b: LA.lu_solve(lu, piv, b, left=left, adjoint=adjoint),
           lambda lu, b: torch.linalg.lu_solve(lu, tpiv, b, left=left, adjoint=adjoint), [tLU, B], dev)


def test_householder_product_gradients_match_torch(dev):
    """householder_product's gradients (both operands) as torch's, and differentiable
    again (the gradient through create_graph, against torch's)."""
    A, tau = _rand(2, 5, 3), _rand(2, 2, seed=1)
    _grads(LA.householder_product, torch.linalg.householder_product, [A, tau], dev)
    outs = []
    for m, (a, t) in ((LA, (to_lucid(A, dev).requires_grad_(), to_lucid(tau, dev).requires_grad_())),
                      (torch.linalg, (A.clone().requires_grad_(), tau.clone().requires_grad_()))):
        Q = m.householder_product(a, t)
        grad = lucid.autograd.grad if m is LA else torch.autograd.grad
        ga, gt = grad((Q ** 2).sum() + Q.sum(), (a, t), create_graph=True)
        ((ga ** 2).sum() + (gt ** 2).sum()).backward()
        outs.append((a.grad, t.grad))
    _close(outs[0][0], outs[1][0], 1e-8)
    _close(outs[0][1], outs[1][1], 1e-8)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_composites_match_torch(dev, dtype):
    """The functions built on the decompositions, real and complex, with gradients as torch's."""
    A, S = _rand(3, 4, 4, dtype=dtype), _spd(4, 4, dtype=dtype)
    W = _rand(2, 5, 3, seed=2, dtype=dtype)
    _grads(LA.pinv, torch.linalg.pinv, [W], dev)
    _grads(LA.matrix_exp, torch.linalg.matrix_exp, [A], dev)
    _grads(lambda a: LA.matrix_exp(a * 30), lambda a: torch.linalg.matrix_exp(a * 30), [A], dev, tol=1e-7)
    for n in (-3, 0, 1, 5):
        _grads(lambda a: LA.matrix_power(a, n), lambda a: torch.linalg.matrix_power(a, n), [A], dev, tol=1e-7)
    for ord in ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")):
        _grads(lambda a: LA.matrix_norm(a, ord), lambda a: torch.linalg.matrix_norm(a, ord), [A], dev)
        _close(LA.matrix_norm(to_lucid(A, dev), ord, keepdim=True), torch.linalg.matrix_norm(A, ord, keepdim=True))
    for ord in (2, 1, 3, 0, float("inf"), float("-inf"), -1):
        _close(LA.vector_norm(to_lucid(W, dev), ord, dim=-1), torch.linalg.vector_norm(W, ord, dim=-1))
    _grads(LA.norm, torch.linalg.norm, [W], dev)
    _close(LA.norm(to_lucid(A[0], dev), "nuc"), torch.linalg.norm(A[0], "nuc"))
    for p in (None, 2, -2, "fro", "nuc", 1, float("inf")):
        _close(LA.cond(to_lucid(A, dev), p), torch.linalg.cond(A, p), 1e-8)
    _close(LA.matrix_rank(to_lucid(W @ W.mH, dev)), torch.linalg.matrix_rank(W @ W.mH))
    _close(LA.matrix_rank(to_lucid(S, dev), hermitian=True), torch.linalg.matrix_rank(S, hermitian=True))
    x, y = _rand(4, 3, dtype=dtype), _rand(4, 3, seed=1, dtype=dtype)
    _grads(LA.cross, torch.linalg.cross, [x, y], dev)
    _grads(LA.vecdot, torch.linalg.vecdot, [x, y], dev)
    _grads(lambda *m: LA.multi_dot(list(m)), lambda *m: torch.linalg.multi_dot(list(m)),
           [_rand(3, dtype=dtype), _rand(3, 7, seed=1, dtype=dtype), _rand(7, 2, seed=2, dtype=dtype),
            _rand(2, seed=3, dtype=dtype)], dev)
    _grads(lambda v: LA.vander(v, N=4), lambda v: torch.linalg.vander(v, N=4), [_rand(2, 3, dtype=dtype)], dev)
    T = _rand(4, 6, 8, 3, dtype=dtype)
    _close(LA.tensorinv(to_lucid(T, dev), ind=2), torch.linalg.tensorinv(T, ind=2))
    T, b = _rand(2, 3, 6, dtype=dtype), _rand(2, 3, seed=1, dtype=dtype)
    _close(LA.tensorsolve(to_lucid(T, dev), to_lucid(b, dev)), torch.linalg.tensorsolve(T, b))


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("shape", [(6, 3), (3, 3), (3, 6)])
def test_lstsq_matches_gelsd(dev, shape, dtype):
    A, B = _rand(2, *shape, dtype=dtype), _rand(2, shape[0], 2, seed=1, dtype=dtype)
    got = LA.lstsq(to_lucid(A, dev), to_lucid(B, dev))
    want = torch.linalg.lstsq(A, B, driver="gelsd")
    _close(got.solution, want.solution)
    _close(got.singular_values, want.singular_values)
    assert got.rank.tolist() == want.rank.tolist()
    if shape[0] > shape[1]:
        assert got.residuals.dtype == lucid.float64
        _close(got.residuals, want.residuals)


def test_numerical_gradients(dev):
    """float64 numerical gradients (lucid's gradcheck) of the decompositions' gradients."""
    A, S = _rand(2, 3, 3), _spd(2, 3, 3)
    # (cholesky and eigh read one triangle and return the symmetrised gradient, as
    # torch's: checked through a symmetric parametrisation)
    checks = [(lambda a: LA.det(a), A), (lambda a: LA.inv(a), A), (lambda a: LA.cholesky(a + a.mT), S / 2),
              (lambda a: LA.eigvalsh(a + a.mT), S), (lambda a: LA.svdvals(a), A), (lambda a: LA.qr(a).R, A),
              (lambda a: LA.qr(a).Q, A), (lambda a: LA.solve(a, a.sum(-1, keepdim=True)), A),
              (lambda a: LA.slogdet(a).logabsdet, A), (lambda a: LA.qr(a).R, _rand(2, 3, 5)),
              (lambda a: LA.qr(a).Q, _rand(2, 3, 5))]
    for fn, x in checks:
        assert lucid.autograd.gradcheck(fn, (to_lucid(x, dev).requires_grad_(),), eps=1e-6, atol=1e-6)


def test_empty_and_non_contiguous(dev):
    A = _rand(4, 4)
    At = to_lucid(A, dev).mT  # a transposed (column-major) view: read as A^T
    _close(LA.inv(At), torch.linalg.inv(A.mT))
    strided = to_lucid(_rand(4, 8), dev)[:, ::2]
    _close(LA.det(strided), torch.linalg.det(_rand(4, 8)[:, ::2]))
    E = lucid.zeros(0, 3, 3, dtype=lucid.float64, device=dev)
    assert tuple(LA.inv(E).shape) == (0, 3, 3) and tuple(LA.det(E).shape) == (0,)
    assert tuple(LA.svdvals(lucid.zeros(2, 0, 3, dtype=lucid.float64, device=dev)).shape) == (2, 0)
    assert float(LA.det(lucid.zeros(0, 0, dtype=lucid.float64, device=dev))) == 1.0


def test_float32(dev):
    A = _rand(3, 6, 6, dtype=torch.float32)
    _close(LA.inv(to_lucid(A, dev)), torch.linalg.inv(A), 1e-4)
    _close(LA.svdvals(to_lucid(A, dev)), torch.linalg.svdvals(A), 1e-4)
    S = _spd(6, 6, dtype=torch.float32)
    _close(LA.cholesky(to_lucid(S, dev)), torch.linalg.cholesky(S), 1e-4)
    _close(LA.eigvalsh(to_lucid(S, dev)), torch.linalg.eigvalsh(S), 1e-4)


def test_input_is_never_written(dev):
    """The decompositions factor copies: the caller's tensor (even a column-major one,
    the layout they work in) keeps its values."""
    A = to_lucid(_rand(3, 3), dev).mT.contiguous().mT
    before = A.tolist()
    for fn in (LA.inv, LA.det, LA.svdvals, lambda a: LA.qr(a), lambda a: LA.lu_factor(a)):
        fn(A)
    assert A.tolist() == before


def test_top_level_forms_match_torch(dev):
    """torch's top-level names and Tensor methods (det, logdet, inverse, torch.svd's
    (U, S, V), torch.qr, cholesky_solve, triangular_solve, ...)."""
    A, S, B = _rand(2, 4, 4), _spd(2, 4, 4), _rand(2, 4, 3, seed=1)
    lA, lS, lB = (to_lucid(t, dev) for t in (A, S, B))
    _close(lucid.det(lA), torch.det(A))
    _close(lA.det(), torch.det(A))
    _close(lucid.logdet(lS), torch.logdet(S))
    neg = torch.diag(torch.tensor([-1.0, 2.0], dtype=torch.float64))
    assert torch.isnan(torch.logdet(neg)) and bool(lucid.isnan(lucid.logdet(to_lucid(neg, dev))))
    _close(lucid.slogdet(lA).logabsdet, torch.slogdet(A).logabsdet)
    _close(lA.inverse(), torch.inverse(A))
    _close(lucid.pinverse(lA), torch.pinverse(A))
    _close(lucid.matrix_exp(lA), torch.matrix_exp(A))
    _close(lA.matrix_power(3), torch.matrix_power(A, 3))
    U, Sv, V = lucid.svd(lA)
    tU, tS, tV = torch.svd(A)
    _close(Sv, tS)
    torch.testing.assert_close(to_torch(U.cpu()) * to_torch(Sv.cpu()).unsqueeze(-2) @ to_torch(V.cpu()).mT, A)
    Q, R = lucid.qr(lA)
    _close(R, torch.linalg.qr(A).R)  # (torch.qr: removed from torch 2.15)
    L = lucid.cholesky(lS)
    _close(L, torch.linalg.cholesky(S))
    _close(lucid.cholesky_solve(lB, L), torch.cholesky_solve(B, torch.linalg.cholesky(S)))
    _close(lucid.cholesky_solve(lB, L.mT, upper=True), torch.cholesky_solve(B, torch.linalg.cholesky(S).mT, True))
    _close(lucid.cholesky_inverse(L), torch.cholesky_inverse(torch.linalg.cholesky(S)))
    T = A.triu() + 4 * torch.eye(4, dtype=torch.float64)
    for transpose in (False, True):
        got = lucid.triangular_solve(lB, to_lucid(T, dev), transpose=transpose)
        _close(got.solution, torch.triangular_solve(B, T, transpose=transpose).solution)
    _close(lucid.chain_matmul(lA[0], lA[1], lB[0]), torch.chain_matmul(A[0], A[1], B[0]))
    _close(LA.vander(to_lucid(A[0, 0], dev), increasing=False), torch.linalg.vander(A[0, 0]).flip(-1))
    _close(LA.dot(lA[0, 0], lA[0, 1]), torch.dot(A[0, 0], A[0, 1]))
    _close(LA.inner(lA[0], lA[1]), torch.inner(A[0], A[1]))
    _close(LA.outer(lA[0, 0], lA[0, 1]), torch.outer(A[0, 0], A[0, 1]))
    _close(LA.diagonal(lA), torch.linalg.diagonal(A))
    _close(LA.matmul(lA, lB), torch.linalg.matmul(A, B))
    _close(LA.solve_ex(lA, lB).result, torch.linalg.solve_ex(A, B).result)
    _close(LA.lu_factor_ex(lA).LU, torch.linalg.lu_factor_ex(A).LU)


def test_every_linalg_function_is_tested():
    """The op-coverage rule for the namespace: each of lucid.linalg's functions named in a test here."""
    source = open(__file__).read()
    missing = [n for n in LA.__all__ if n != "LinAlgError" and f"LA.{n}(" not in source and f"LA.{n}," not in source]
    assert not missing, missing


@pytest.mark.parametrize("shape", [(2, 40, 40), (40, 40), (64, 6, 6)])
def test_batched_and_per_matrix_paths(dev, shape):
    """The GPU's batched routines (batches of matrices up to 32 x 32) and its per-matrix
    calls give the same results as torch's (the CPU runs LAPACK per matrix for both)."""
    A, B = _rand(*shape), _rand(*shape[:-1], 3, seed=1)
    S = A @ A.mT + shape[-1] * torch.eye(shape[-1], dtype=torch.float64)
    H = A + A.mT
    lA, lB, lS, lH = (to_lucid(t, dev) for t in (A, B, S, H))
    _close(LA.solve(lA, lB), torch.linalg.solve(A, B), 1e-9)
    _close(LA.lu_factor(lA).LU, torch.linalg.lu_factor(A).LU, 1e-9)
    _close(LA.cholesky(lS), torch.linalg.cholesky(S), 1e-9)
    _close(LA.eigvalsh(lH), torch.linalg.eigvalsh(H), 1e-9)
    w, V = LA.eigh(lH)
    Vt = to_torch(V.cpu())
    torch.testing.assert_close(H @ Vt, Vt * to_torch(w.cpu()).unsqueeze(-2), rtol=1e-9, atol=1e-9)
    T = A.tril() + shape[-1] * torch.eye(shape[-1], dtype=torch.float64)
    _close(LA.solve_triangular(to_lucid(T, dev), lB, upper=False), torch.linalg.solve_triangular(T, B, upper=False),
           1e-9)
    _close(LA.svdvals(lA), torch.linalg.svdvals(A), 1e-9)
    for full in (False, True):
        U, Sv, Vh = LA.svd(lA[..., :, :-2], full_matrices=full)  # (a tall and a wide one)
        k = shape[-1] - 2
        recon = to_torch(U[..., :k].cpu()) * to_torch(Sv.cpu()).unsqueeze(-2) @ to_torch(Vh[..., :k, :].cpu())
        torch.testing.assert_close(recon, A[..., :, :-2], rtol=1e-9, atol=1e-9)
        U, Sv, Vh = LA.svd(lA[..., :-2, :], full_matrices=full)
        recon = to_torch(U[..., :k].cpu()) * to_torch(Sv.cpu()).unsqueeze(-2) @ to_torch(Vh[..., :k, :].cpu())
        torch.testing.assert_close(recon, A[..., :-2, :], rtol=1e-9, atol=1e-9)
    singular = A.clone()
    singular[..., 1, :] = 0
    with pytest.raises(LA.LinAlgError, match="singular"):
        LA.inv(to_lucid(singular, dev))


def test_non_finite_inputs_raise_or_propagate_as_torch(dev):
    """NaN and inf never hang or crash: matrix_exp gives NaN for such a matrix (and only
    it), the factorizations raise LinAlgError where LAPACK reports failure."""
    A = _rand(2, 4, 4)
    A[1, 1, 2] = float("inf")
    got = LA.matrix_exp(to_lucid(A, dev))
    want = torch.linalg.matrix_exp(A)
    _close(got[0], want[0])
    assert bool(lucid.isnan(got[1]).all()) and bool(torch.isnan(want[1]).all())
    B = _rand(4, 4)
    B[0, 0] = float("nan")
    with pytest.raises(LA.LinAlgError):
        LA.cholesky(to_lucid(B, dev))
    try:  # NaN eigenvalues or LAPACK's failure to converge, never a hang
        assert bool(lucid.isnan(LA.eigvalsh(to_lucid(B, dev))).any())
    except LA.LinAlgError as e:
        assert "failed to converge" in str(e)


def test_out_arguments(dev):
    """out= writes the result (resizing an empty out), returns it, checks its dtype and
    refuses autograd, as torch's linalg."""
    A = to_lucid(_rand(3, 3) + 3 * torch.eye(3, dtype=torch.float64), dev)
    o = lucid.empty(0, dtype=lucid.float64, device=dev)
    assert LA.inv(A, out=o) is o
    _close(o, torch.linalg.inv(to_torch(A.cpu())))
    LU, piv = lucid.empty(0, dtype=lucid.float64, device=dev), lucid.empty(0, dtype=lucid.int32, device=dev)
    res = LA.lu_factor(A, out=(LU, piv))
    assert res.LU is LU and res.pivots is piv and tuple(LU.shape) == (3, 3)
    with pytest.raises(RuntimeError, match="dtype"):
        LA.inv(A, out=lucid.empty(3, 3, device=dev))
    with pytest.raises(TypeError, match="tuple of 2 Tensors"):
        LA.lu_factor(A, out=o)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        LA.det(A.clone().requires_grad_(), out=lucid.empty(0, dtype=lucid.float64, device=dev))
    o2 = lucid.empty(0, dtype=lucid.float64, device=dev)
    assert lucid.inverse(A, out=o2) is o2 and A.inverse().shape == (3, 3)
    _close(o2, torch.linalg.inv(to_torch(A.cpu())))


def test_ill_conditioned_matrices(dev):
    """A Hilbert matrix (condition ~1e10 at n = 8): solve, inv and the SVD agree with torch's
    to the accuracy the conditioning allows; cond reports it."""
    n = 8
    i = torch.arange(n, dtype=torch.float64)
    H = 1.0 / (i.unsqueeze(0) + i.unsqueeze(1) + 1)
    b = torch.ones(n, 1, dtype=torch.float64)
    lH = to_lucid(H, dev)
    x = to_torch(LA.solve(lH, to_lucid(b, dev)).cpu())
    torch.testing.assert_close(H @ x, b, rtol=0, atol=1e-6)
    torch.testing.assert_close(x, torch.linalg.solve(H, b), rtol=1e-4, atol=1e-3)
    _close(LA.svdvals(lH), torch.linalg.svdvals(H), 1e-12)
    c = float(LA.cond(lH))
    assert abs(c - float(torch.linalg.cond(H))) / c < 1e-3 and c > 1e9


def test_double_backward(dev):
    """create_graph through the gradients that reuse the forward's factors when it is off
    (solve, slogdet): float64 numerical second derivatives."""
    A = to_lucid(_rand(2, 3, 3), dev).requires_grad_()
    for fn in (lambda a: LA.slogdet(a).logabsdet, lambda a: LA.solve(a, a.sum(-1, keepdim=True)), LA.inv):
        assert lucid.autograd.gradgradcheck(fn, (A,), eps=1e-6, atol=1e-5)


# ---- complex matrices (complex64 and complex128) ----------------------------------------------------

_crand = functools.partial(_rand, dtype=torch.complex128)
_hpd = functools.partial(_spd, dtype=torch.complex128)  # (Hermitian positive definite)


def _hermitian(*shape, seed=0):
    a = _crand(*shape, seed=seed)
    return a + a.mH


CDTYPES = [(torch.complex128, 1e-10), (torch.complex64, 2e-4)]


@pytest.mark.parametrize("batch", BATCHES)
def test_complex_solve_inv_det_slogdet_match_torch(dev, batch):
    """complex128 results and gradients as torch's (its conjugate-Wirtinger convention):
    solve (both sides, vector and broadcast right-hand sides), inv, det, slogdet with
    its complex, differentiable sign."""
    A, B = _crand(*batch, 5, 5), _crand(*batch, 5, 3, seed=1)
    _grads(LA.solve, torch.linalg.solve, [A, B], dev)
    _grads(LA.inv, torch.linalg.inv, [A], dev)
    _grads(LA.det, torch.linalg.det, [A], dev)
    _grads(lambda a: LA.slogdet(a).logabsdet, lambda a: torch.linalg.slogdet(a).logabsdet, [A], dev)
    _grads(lambda a: LA.slogdet(a).sign, lambda a: torch.linalg.slogdet(a).sign, [A], dev)
    _grads(lambda a: (lambda r: r.sign * r.logabsdet)(LA.slogdet(a)),
           lambda a: (lambda r: r.sign * r.logabsdet)(torch.linalg.slogdet(a)), [A], dev)
    assert LA.slogdet(to_lucid(A, dev)).logabsdet.dtype == lucid.float64
    _grads(lambda a, b: LA.solve(a, b, left=False), lambda a, b: torch.linalg.solve(a, b, left=False),
           [A, _crand(*batch, 3, 5, seed=2)], dev)
    _grads(LA.solve, torch.linalg.solve, [A, _crand(*batch, 5, seed=3)], dev)
    _grads(LA.solve, torch.linalg.solve, [A, _crand(5, 2, seed=3)], dev)
    _grads(lucid.logdet, torch.logdet, [A], dev)


@pytest.mark.parametrize("dtype,tol", CDTYPES)
def test_complex_forward_in_both_precisions(dev, dtype, tol):
    """complex64 and complex128 results as torch's; real-valued results (singular values,
    Hermitian eigenvalues, log|det|) in the real dtype of the precision."""
    A, B, H = _crand(2, 4, 4, dtype=dtype), _crand(2, 4, 2, seed=1, dtype=dtype), _hpd(2, 4, 4, dtype=dtype)
    real = torch.float64 if dtype == torch.complex128 else torch.float32
    la, lh = to_lucid(A, dev), to_lucid(H, dev)
    _close(LA.solve(la, to_lucid(B, dev)), torch.linalg.solve(A, B), tol)
    _close(LA.inv(la), torch.linalg.inv(A), tol)
    _close(LA.det(la), torch.linalg.det(A), tol)
    _close(LA.cholesky(lh), torch.linalg.cholesky(H), tol)
    S = LA.svdvals(la)
    assert S.dtype == lucid_dtype_of(real)
    _close(S, torch.linalg.svdvals(A), tol)
    w = LA.eigvalsh(lh)
    assert w.dtype == lucid_dtype_of(real)
    _close(w, torch.linalg.eigvalsh(H), tol * 10)
    assert LA.slogdet(la).sign.dtype == la.dtype
    L = LA.eigvals(la)
    assert L.dtype == la.dtype
    torch.testing.assert_close(_sorted_eigs(to_torch(L.cpu())), _sorted_eigs(torch.linalg.eigvals(A)), rtol=tol * 10,
                               atol=tol * 10)


def lucid_dtype_of(torch_dtype):
    return {torch.float32: lucid.float32, torch.float64: lucid.float64}[torch_dtype]


def test_complex_det_of_singular_matrices(dev):
    """A rank-deficient complex matrix: det 0 and torch's (finite) gradient."""
    A = _crand(4, 4)
    A[:, 3] = A[:, 0] + (1 + 2j) * A[:, 1]
    _grads(LA.det, torch.linalg.det, [A], dev, tol=1e-9)
    assert abs(complex(LA.det(to_lucid(A, dev)).item())) < 1e-12


def test_complex_errors(dev):
    """Singular and indefinite complex matrices raise torch's errors; dtypes must match."""
    A = _crand(2, 3, 3)
    A[1, :, 2] = 0
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 1\): The diagonal element 3 is zero"):
        LA.inv(to_lucid(A, dev))
    with pytest.raises(LA.LinAlgError, match="singular"):
        LA.solve(to_lucid(A, dev), to_lucid(_crand(2, 3, 1), dev))
    H = _hpd(2, 3, 3)
    H[1] = -H[1]
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 1\).*leading minor of order 1 is not positive"):
        LA.cholesky(to_lucid(H, dev))
    assert LA.cholesky_ex(to_lucid(H, dev)).info.tolist() == [0, 1]
    with pytest.raises(RuntimeError, match="same dtype"):
        LA.solve(to_lucid(_crand(3, 3), dev), to_lucid(_rand(3, 1), dev))
    with pytest.raises(RuntimeError, match="same dtype"):
        LA.solve_triangular(to_lucid(_crand(3, 3), dev), to_lucid(_rand(3, 1), dev), upper=True)
    S = _crand(3, 3)
    LD, piv = LA.ldl_factor(to_lucid(S + S.mT, dev))
    with pytest.raises(RuntimeError, match="Expected LD and B to have the same dtype"):
        LA.ldl_solve(LD, piv, to_lucid(_rand(3, 1), dev))


@pytest.mark.parametrize("upper", [False, True])
def test_complex_cholesky_and_triangular_solves(dev, upper):
    H = _hpd(3, 4, 4)
    _grads(lambda a: LA.cholesky(a, upper=upper), lambda a: torch.linalg.cholesky(a, upper=upper), [H], dev)
    T, B = _crand(3, 4, 4), _crand(3, 4, 2, seed=1)
    for left in (True, False):
        for unit in (False, True):
            b = B if left else B.mT
            _grads(lambda t, x: LA.solve_triangular(t, x, upper=upper, left=left, unitriangular=unit),
                   lambda t, x: torch.linalg.solve_triangular(t, x, upper=upper, left=left, unitriangular=unit),
                   [T + 4 * torch.eye(4), b], dev)
    L = to_lucid(torch.linalg.cholesky(H), dev)
    _close(lucid.cholesky_inverse(L), torch.cholesky_inverse(torch.linalg.cholesky(H)))
    _close(lucid.cholesky_solve(to_lucid(B, dev), L), torch.cholesky_solve(B, torch.linalg.cholesky(H)))


@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (3, 5)])
def test_complex_qr_and_householder_product(dev, shape):
    """Q and R as torch's (LAPACK's geqrf/ungqr: R's diagonal real), gradients as
    torch's; householder_product (ungqr) and its gradient."""
    A = _crand(2, *shape)
    for mode in ("reduced", "complete"):
        Q, R = LA.qr(to_lucid(A, dev), mode=mode)
        tQ, tR = torch.linalg.qr(A, mode=mode)
        _close(Q, tQ)
        _close(R, tR)
    W = _crand(2, *shape, seed=5)
    k = min(shape)
    Wq, Wr = W[..., :, :k], W[..., :k, :]
    _grads(lambda a: (lambda r: (r.Q * to_lucid(Wq, dev)).sum() + (r.R * to_lucid(Wr, dev)).sum())(LA.qr(a)).reshape(1),
           lambda a: (lambda r: (r.Q * Wq).sum() + (r.R * Wr).sum())(torch.linalg.qr(a)).reshape(1), [A], dev)
    if shape[0] >= shape[1]:
        tau = _crand(2, shape[1] - 1, seed=2)
        _grads(LA.householder_product, torch.linalg.householder_product, [A, tau], dev)


@pytest.mark.parametrize("shape", [(64, 6, 6), (3, 40, 40)])
def test_complex_batches_of_small_and_large_matrices(dev, shape):
    """The batched paths (the GPU's batched library calls for matrices up to 32) and the
    per-matrix ones: LU, Cholesky, QR, eigh, the SVD and triangular solves of complex
    matrices, as torch's."""
    A, H = _crand(*shape), _hpd(*shape)
    la, lh = to_lucid(A, dev), to_lucid(H, dev)
    _close(LA.inv(la), torch.linalg.inv(A), 1e-8)
    _close(LA.cholesky(lh), torch.linalg.cholesky(H), 1e-8)
    Q, R = LA.qr(la)
    _close(R, torch.linalg.qr(A).R, 1e-8)
    _close(Q, torch.linalg.qr(A).Q, 1e-8)
    _close(LA.eigvalsh(lh), torch.linalg.eigvalsh(H), 1e-8)
    U, S, Vh = LA.svd(la, full_matrices=False)
    _close(S, torch.linalg.svdvals(A), 1e-8)
    _close((U * S.unsqueeze(-2).to(U.dtype)) @ Vh, A, 1e-8)
    _close(LA.solve_triangular(la, lh, upper=True), torch.linalg.solve_triangular(A, H, upper=True), 1e-6)
    H[0, 0, 0] = -1.0
    assert LA.cholesky_ex(to_lucid(H, dev)).info.tolist()[:2] == [1, 0]


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_complex_eigh(dev, uplo):
    """Hermitian eigenproblems: real eigenvalues ascending as torch's, A V = V diag(w),
    V unitary; gradients of the eigenvalues and of a phase-invariant function of the
    eigenvectors (|V|^2) as torch's."""
    H = _hermitian(3, 5, 5)
    w, V = LA.eigh(to_lucid(H, dev), UPLO=uplo)
    assert w.dtype == lucid.float64 and V.dtype == lucid.complex128
    _close(w, torch.linalg.eigvalsh(H, UPLO=uplo))
    Vt, wt = to_torch(V.cpu()), to_torch(w.cpu())
    torch.testing.assert_close(H @ Vt, Vt * wt.unsqueeze(-2), rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(Vt.mH @ Vt, torch.eye(5, dtype=H.dtype).expand(3, 5, 5), rtol=1e-10, atol=1e-10)
    _grads(lambda a: LA.eigvalsh(a, UPLO=uplo), lambda a: torch.linalg.eigvalsh(a, UPLO=uplo), [H], dev)
    _grads(lambda a: (LA.eigh(a, UPLO=uplo).eigenvectors.abs() ** 2 * torch_free_weights(dev)).sum().reshape(1),
           lambda a: (torch.linalg.eigh(a, UPLO=uplo).eigenvectors.abs() ** 2 * torch_weights()).sum().reshape(1),
           [H], dev)


def test_complex_eig(dev):
    """eig of general complex matrices: eigenvalues as torch's, A V = V diag(L) with unit
    vectors; gradients of the eigenvalues and of |V| (phase-invariant) as torch's."""
    A = _crand(2, 5, 5)
    L, V = LA.eig(to_lucid(A, dev))
    assert L.dtype == lucid.complex128 and V.dtype == lucid.complex128
    Lt, Vt = to_torch(L.cpu()), to_torch(V.cpu())
    tL, _ = torch.linalg.eig(A)
    torch.testing.assert_close(_sorted_eigs(Lt), _sorted_eigs(tL), rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(A @ Vt, Vt * Lt.unsqueeze(-2), rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(torch.linalg.vector_norm(Vt, dim=-2), torch.ones(2, 5, dtype=torch.float64))
    _same_eig_grads(A, _crand(2, 5, seed=3), dev,
                    lambda m, a, w: (m.linalg.eigvals(a) * w).sum().real,
                    lambda m, a, w: m.linalg.eig(a).eigenvectors.abs().sum() + m.linalg.eig(a).eigenvalues.abs().sum())


def test_complex_lu_and_lu_solve(dev):
    """P L U = A with |L| bounded (partial pivoting), on the CPU torch's factors (both
    LAPACK's pivot choice, by |re| + |im|; cuBLAS's batched getrf is not held to it) and
    the gradient of lu; lu_solve (left/right, adjoint) and its gradients with respect to
    LU and B as torch's."""
    A = _crand(2, 4, 4)
    P, L, U = LA.lu(to_lucid(A, dev))
    Pt, Lt, Ut = (to_torch(t.cpu()) for t in (P, L, U))
    torch.testing.assert_close(Pt @ Lt @ Ut, A, rtol=1e-10, atol=1e-10)
    assert float(Lt.abs().max()) <= 2 ** 0.5 + 1e-12  # (pivots by |re| + |im|: |l| <= sqrt(2))
    tP, tL, tU = torch.linalg.lu(A)
    tLU, tpiv = torch.linalg.lu_factor(A)
    if dev == "cpu":
        _close(P, tP)
        _close(L, tL)
        _close(U, tU)
        _grads(lambda a: (lambda r: r.L + r.U)(LA.lu(a)), lambda a: (lambda r: r.L + r.U)(torch.linalg.lu(a)), [A],
               dev)
        LU, piv = LA.lu_factor(to_lucid(A, dev))
        _close(LU, tLU)
        assert piv.tolist() == tpiv.tolist()
    piv = to_lucid(tpiv, dev)
    for left in (True, False):
        for adjoint in (False, True):
            B = _crand(2, 4, 3, seed=1) if left else _crand(2, 3, 4, seed=1)
            _grads(lambda lu, b: LA.lu_solve(lu, piv, b, left=left, adjoint=adjoint),
                   lambda lu, b: torch.linalg.lu_solve(lu, tpiv, b, left=left, adjoint=adjoint), [tLU, B], dev)


@pytest.mark.parametrize("dtype,tol", CDTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
def test_complex_ldl_factor_and_solve(dev, hermitian, dtype, tol):
    """Complex symmetric (sytrf) and Hermitian (hetrf; on the GPU lucid's own hetf2) LDL:
    factors and pivots as torch's (LAPACK's), solves as torch.linalg.solve's, torch's own
    factors solved on this device, and a zero column reported through info."""
    S = _crand(2, 5, 5, dtype=dtype)
    S = S + S.mH if hermitian else S + S.mT
    S[0].fill_diagonal_(0.0)  # forces 2 x 2 pivots
    LD, piv = LA.ldl_factor(to_lucid(S, dev), hermitian=hermitian)
    tLD, tpiv = torch.linalg.ldl_factor(S, hermitian=hermitian)
    _close(LD, tLD, tol)
    assert piv.tolist() == tpiv.tolist()
    assert (piv < 0).any()
    B = _crand(2, 5, 2, seed=4, dtype=dtype)
    want = torch.linalg.solve(S, B)
    if lucid._C._has_lapack() or dev == "gpu":
        _close(LA.ldl_solve(LD, piv, to_lucid(B, dev), hermitian=hermitian), want, tol * 10)
        _close(LA.ldl_solve(to_lucid(tLD, dev), to_lucid(tpiv, dev), to_lucid(B, dev), hermitian=hermitian), want,
               tol * 10)
    Z = torch.zeros(3, 3, dtype=dtype)
    Z[1:, 1:] = S[1, :2, :2]  # (a zero first column, then a regular block)
    assert LA.ldl_factor_ex(to_lucid(Z, dev), hermitian=hermitian).info.item() >= 1


@pytest.mark.parametrize("n", [1, 2, 37, 150])
def test_hermitian_ldl_of_larger_and_batched_matrices(dev, n):
    """hetrf past one warp and one block of threads, a batch of eight, zero diagonals (2 x 2
    pivots throughout), a near-singular block and NaN: factors as torch's, solves by
    their residual, a NaN matrix NaN but its neighbours untouched."""
    S = _crand(8, n, n, seed=n)
    S = S + S.mH
    if n > 1:
        S[1].fill_diagonal_(0.0)
    S[2] *= 1e-12
    tLD, tpiv = torch.linalg.ldl_factor(S, hermitian=True)
    LD, piv = LA.ldl_factor(to_lucid(S, dev), hermitian=True)
    assert piv.tolist() == tpiv.tolist()
    _close(LD, tLD, 1e-8)
    B = _crand(8, n, 3, seed=1)
    X = to_torch(LA.ldl_solve(LD, piv, to_lucid(B, dev), hermitian=True).cpu())
    torch.testing.assert_close(S @ X, B, rtol=0, atol=1e-8)
    S[3, n // 2, 0] = S[3, 0, n // 2] = float("nan")
    LD, piv = LA.ldl_factor_ex(to_lucid(S, dev), hermitian=True)[:2]
    LD = to_torch(LD.cpu())
    assert LD[3].isnan().any() and not LD[4].isnan().any()
    assert all(1 <= abs(p) <= n for p in piv.view(-1).tolist())


def test_complex_non_contiguous_and_empty(dev):
    A = _crand(4, 4)
    _close(LA.inv(to_lucid(A, dev).mT), torch.linalg.inv(A.mT))
    _close(LA.det(to_lucid(_crand(4, 8), dev)[:, ::2]), torch.linalg.det(_crand(4, 8)[:, ::2]))
    _close(LA.svdvals(to_lucid(A, dev).mH), torch.linalg.svdvals(A.mH))
    H = _hpd(2, 4, 4)
    _close(LA.cholesky(to_lucid(H, dev).mT), torch.linalg.cholesky(H.mT))  # (conj(H), read transposed)
    _close(LA.eigvalsh(to_lucid(H, dev).mT), torch.linalg.eigvalsh(H.mT))
    _close(LA.qr(to_lucid(_crand(2, 8, 4), dev)[:, ::2]).R, torch.linalg.qr(_crand(2, 8, 4)[:, ::2]).R)
    E = lucid.zeros(0, 3, 3, dtype=lucid.complex128, device=dev)
    assert tuple(LA.inv(E).shape) == (0, 3, 3) and tuple(LA.det(E).shape) == (0,)
    assert LA.svdvals(E).dtype == lucid.float64
    assert LA.eigvalsh(E).dtype == lucid.float64 and LA.eigvals(E).dtype == lucid.complex128


def test_complex_top_level_forms(dev):
    """torch's top-level forms on complex input: torch.svd's V (= Vh^H), triangular_solve's
    plain transpose, qr, inverse, logdet (complex), pinverse, matrix_exp."""
    A, B = _crand(2, 4, 4), _crand(2, 4, 2, seed=1)
    la = to_lucid(A, dev)
    U, S, V = lucid.svd(la)
    Ut, St, Vt = to_torch(U.cpu()), to_torch(S.cpu()), to_torch(V.cpu())
    torch.testing.assert_close(Ut * St.unsqueeze(-2).to(A.dtype) @ Vt.mH, A, rtol=1e-10, atol=1e-10)
    T = A.triu() + 4 * torch.eye(4)
    for transpose in (False, True):
        X, _ = lucid.triangular_solve(to_lucid(B, dev), to_lucid(T, dev), upper=True, transpose=transpose)
        _close(X, torch.triangular_solve(B, T, upper=True, transpose=transpose).solution)
    _close(lucid.qr(la).R, torch.linalg.qr(A).R)
    _close(lucid.inverse(la), torch.inverse(A))
    _close(lucid.logdet(la), torch.logdet(A))
    _close(lucid.pinverse(la), torch.pinverse(A))
    _close(lucid.matrix_exp(la), torch.matrix_exp(A))


def test_complex_large_single_matrices(dev):
    """One large matrix: LAPACK's complex getrf (not the real recursive LU), and OpenBLAS's
    threads for orders from 256."""
    for n in (100, 300):
        A, H = _crand(n, n), _hpd(n, n)
        B = _crand(n, 3, seed=1)
        _close(LA.solve(to_lucid(A, dev), to_lucid(B, dev)), torch.linalg.solve(A, B), 1e-8)
        _close(LA.cholesky(to_lucid(H, dev)), torch.linalg.cholesky(H), 1e-8)
        _close(LA.eigvalsh(to_lucid(H, dev)), torch.linalg.eigvalsh(H), 1e-8)
        _close(LA.svdvals(to_lucid(A, dev)), torch.linalg.svdvals(A), 1e-8)


def test_complex_double_backward(dev):
    """Second derivatives (create_graph) of complex decompositions as torch's."""
    A = _crand(3, 3)
    H = A @ A.mH + 3 * torch.eye(3)
    for tf, lf, X in [(torch.linalg.det, LA.det, A), (torch.linalg.inv, LA.inv, A),
                      (lambda a: torch.linalg.slogdet(a).logabsdet, lambda a: LA.slogdet(a).logabsdet, A),
                      (torch.linalg.cholesky, LA.cholesky, H), (torch.linalg.svdvals, LA.svdvals, A),
                      (torch.linalg.eigvalsh, LA.eigvalsh, H),
                      (lambda a: torch.linalg.qr(a).R, lambda a: LA.qr(a).R, A),
                      (lambda a: torch.linalg.solve(a, a.sum(-1, keepdim=True)),
                       lambda a: LA.solve(a, a.sum(-1, keepdim=True)), A)]:
        t, l = X.clone().requires_grad_(), to_lucid(X, dev).requires_grad_()
        gt, = torch.autograd.grad(tf(t).abs().sum(), t, create_graph=True)
        gl, = lucid.autograd.grad(lf(l).abs().sum(), l, create_graph=True)
        (gt.abs() ** 2).sum().backward()
        (gl.abs() ** 2).sum().backward()
        _close(l.grad, t.grad, 1e-8)


def test_complex_phase_dependent_losses_raise(dev):
    """A loss that depends on the complex singular vectors' or eigenvectors' phases has
    no gradient: torch's errors (and none for a phase-invariant loss)."""
    A = to_lucid(_crand(4, 4), dev).requires_grad_()
    with pytest.raises(RuntimeError, match="svd_backward: The singular vectors in the complex case"):
        LA.svd(A).U.real.sum().backward()
    H = to_lucid(_hermitian(4, 4), dev).requires_grad_()
    with pytest.raises(RuntimeError, match="linalg_eig_backward: The eigenvectors in the complex case"):
        LA.eigh(H).eigenvectors.real.sum().backward()
    with pytest.raises(RuntimeError, match="linalg_eig_backward: The eigenvectors in the complex case"):
        LA.eig(A).eigenvectors.real.sum().backward()
    with pytest.raises(RuntimeError, match="linalg_eig_backward: The eigenvectors in the complex case"):
        LA.eig(to_lucid(_rand(4, 4), dev).requires_grad_()).eigenvectors.imag.sum().backward()
    for t, fn in ((torch.linalg.svd, LA.svd), (torch.linalg.eigh, LA.eigh)):  # torch raises for them too
        with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
            t(to_torch(H.detach().cpu()).requires_grad_())[-1 if t is torch.linalg.eigh else 0].real.sum().backward()
    (LA.svd(A).U.abs() ** 2).sum().backward()  # phase-invariant: fine
    assert A.grad is not None


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_matrix_sqrth_and_polar(dev, dtype):
    """matrix_sqrth: X X = A, X Hermitian, as torch's (torch 2.15 has it), negative
    eigenvalues taken as zero; polar: A = U H with U's columns orthonormal and H Hermitian
    positive semidefinite, as torch's; both differentiable (float64 numerical gradients)."""
    g = torch.Generator().manual_seed(7)
    a = torch.randn(3, 4, 4, generator=g, dtype=dtype)
    A = a @ a.mH + 4 * torch.eye(4, dtype=dtype)
    X = to_torch(LA.matrix_sqrth(to_lucid(A, dev)).cpu())
    torch.testing.assert_close(X @ X, A)
    torch.testing.assert_close(X, X.mH)
    if hasattr(torch.linalg, "matrix_sqrth"):
        torch.testing.assert_close(X, torch.linalg.matrix_sqrth(A))
    D = torch.diag(torch.tensor([4.0, -1.0], dtype=torch.float64)).to(dtype)
    assert to_torch(LA.matrix_sqrth(to_lucid(D, dev)).cpu()).abs().tolist() == [[2.0, 0.0], [0.0, 0.0]]
    M = torch.randn(2, 5, 3, generator=g, dtype=dtype)
    U, H = LA.polar(to_lucid(M, dev))
    U, H = to_torch(U.cpu()), to_torch(H.cpu())
    torch.testing.assert_close(U @ H, M)
    torch.testing.assert_close(U.mH @ U, torch.eye(3, dtype=dtype).expand(2, 3, 3))
    torch.testing.assert_close(H, H.mH)
    assert (torch.linalg.eigvalsh(H) > -1e-12).all()
    if hasattr(torch.linalg, "polar"):
        tU, tH = torch.linalg.polar(M)
        torch.testing.assert_close(U, tU)
        torch.testing.assert_close(H, tH)
    with pytest.raises(RuntimeError, match="at least as many rows as columns"):
        LA.polar(to_lucid(M.mT, dev))
    with pytest.raises(RuntimeError, match="square"):
        LA.matrix_sqrth(to_lucid(M, dev))
    if dtype == torch.float64:
        A0 = to_lucid(A[0], dev).requires_grad_()
        assert lucid.autograd.gradcheck(lambda x: LA.matrix_sqrth((x + x.mT) / 2), (A0,))
        M0 = to_lucid(M[0], dev).requires_grad_()
        assert lucid.autograd.gradcheck(lambda x: LA.polar(x).U, (M0,))
        assert lucid.autograd.gradcheck(lambda x: LA.polar(x).H, (M0,))
