"""torch's top-level decompositions outside torch.linalg (python/lucid/_decompositions.py):
lu / lu_unpack / lu_solve against torch's, and the randomized svd_lowrank / pca_lowrank,
whose sketches are random: they are held to what holds for any sketch (a matrix of rank
at most q is recovered, its singular values are torch.linalg's) and to torch's errors."""

import warnings

import pytest
import torch

import lucid
from conftest import assert_close, to_lucid, to_torch


@pytest.fixture(autouse=True)
def _quiet_deprecations():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.lu / lu_solve warn that they are deprecated, in both
        yield


def low_rank(m, n, rank, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(m, rank, generator=g, dtype=torch.float64) @ torch.randn(rank, n, generator=g,
                                                                                 dtype=torch.float64)


@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 2, 6)])
def test_lu_and_lu_unpack_match_torch(shape, device):
    A = torch.randn(*shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    LU, piv = torch.lu(A)
    lLU, lpiv = lucid.lu(to_lucid(A, device))
    assert_close(lLU, LU, rtol=1e-12, atol=1e-12)
    assert lpiv.cpu().tolist() == piv.tolist() and lpiv.dtype == lucid.int32
    for got, want in zip(lucid.lu_unpack(lLU, lpiv), torch.lu_unpack(LU, piv)):
        assert_close(got, want, rtol=1e-12, atol=1e-12)
    P, L, U = lucid.lu_unpack(lLU, lpiv)
    assert_close(P @ L @ U, A, rtol=1e-12, atol=1e-12)
    assert to_lucid(A, device).lu()[1].cpu().tolist() == piv.tolist()


def test_lu_infos_unpack_flags_and_lu_solve():
    singular = torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=torch.float64)
    got, want = lucid.lu(to_lucid(singular), get_infos=True), torch.lu(singular, get_infos=True)
    assert got.info.item() == want.info.item() == 2 and len(got) == 3
    LU, piv = lucid.lu(to_lucid(singular))  # a singular matrix is not an error here, as in torch
    P, L, U = lucid.lu_unpack(LU, piv, unpack_data=False)
    tP, tL, tU = torch.lu_unpack(*torch.lu(singular), unpack_data=False)
    assert L.numel() == U.numel() == tL.numel() == tU.numel() == 0 and P.tolist() == tP.tolist()
    assert lucid.lu_unpack(LU, piv, unpack_pivots=False).P.numel() == 0
    A = torch.randn(4, 4, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    b = torch.randn(4, 3, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    lA = to_lucid(A)
    assert_close(lucid.lu_solve(to_lucid(b), *lucid.lu(lA)), torch.lu_solve(b, *torch.lu(A)), rtol=1e-12,
                 atol=1e-12)
    assert_close(to_lucid(b).lu_solve(*lA.lu()), b.lu_solve(*A.lu()), rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="int32"):
        lucid.lu_unpack(LU, piv.long())
    with pytest.raises(RuntimeError, match="shape"):
        lucid.lu_unpack(LU, piv[:1])
    with pytest.warns(UserWarning, match="deprecated"):
        warnings.simplefilter("always")
        lucid.lu_solve(to_lucid(b), *lucid.lu(lA))


@pytest.mark.parametrize("m,n,rank,q", [(40, 25, 4, 6), (25, 40, 3, 5), (30, 30, 6, 6)])
def test_svd_lowrank_recovers_a_matrix_of_rank_at_most_q(m, n, rank, q, device):
    X = low_rank(m, n, rank)
    lucid.manual_seed(0)
    U, S, V = lucid.svd_lowrank(to_lucid(X, device), q=q)
    assert tuple(U.shape) == (m, q) and tuple(S.shape) == (q,) and tuple(V.shape) == (n, q)
    assert_close(U @ lucid.diag(S) @ V.mT, X, rtol=1e-9, atol=1e-9)
    assert_close(S[:rank], torch.linalg.svdvals(X)[:rank], rtol=1e-9, atol=1e-9)
    assert_close(U.mT @ U, torch.eye(q, dtype=torch.float64), rtol=1e-9, atol=1e-9)


def test_svd_lowrank_of_a_batch_and_with_m():
    X = torch.stack([low_rank(20, 12, 2, seed=s) for s in range(3)])
    M = torch.randn(12, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    U, S, V = lucid.svd_lowrank(to_lucid(X + M), q=4, M=to_lucid(M))  # the SVD of (X + M) - M = X
    assert tuple(U.shape) == (3, 20, 4) and tuple(S.shape) == (3, 4)
    assert_close(U @ lucid.diag_embed(S) @ V.mT, X, rtol=1e-9, atol=1e-9)


def test_pca_lowrank_matches_torchs_components():
    X = low_rank(60, 8, 3, seed=5) + 2.5  # off-centre: the mean is taken out first
    lucid.manual_seed(0)
    U, S, V = lucid.pca_lowrank(to_lucid(X), q=4)
    tU, tS, tV = torch.pca_lowrank(X, q=4)
    assert_close(S[:3], tS[:3], rtol=1e-9, atol=1e-9)
    # the directions agree up to sign
    dots = (to_torch(V[:, :3]) * tV[:, :3]).sum(dim=0).abs()
    torch.testing.assert_close(dots, torch.ones(3, dtype=torch.float64), rtol=1e-9, atol=1e-9)
    assert tuple(lucid.pca_lowrank(to_lucid(X))[1].shape) == (6,)  # q defaults to min(6, m, n)
    Y = low_rank(60, 8, 3, seed=7)
    U, S, V = lucid.pca_lowrank(to_lucid(Y), q=3, center=False)
    assert_close(S, torch.linalg.svdvals(Y)[:3], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("call", [
    lambda m, A: m.svd_lowrank(A, q=-1), lambda m, A: m.pca_lowrank(A, q=9), lambda m, A: m.pca_lowrank(A, q=-2),
    lambda m, A: m.pca_lowrank(A, niter=-1),
])
def test_rank_argument_errors_match_torch(call):
    A = torch.randn(10, 8, dtype=torch.float64)
    with pytest.raises(Exception) as want:
        call(torch, A)
    with pytest.raises(type(want.value)) as got:
        call(lucid, to_lucid(A))
    if isinstance(want.value, ValueError):
        assert str(got.value) == str(want.value)


def test_svd_lowrank_with_q_above_the_smaller_side():
    X = low_rank(10, 8, 8, seed=6)  # (torch does not refuse it: the sketch has min(m, n) columns)
    U, S, V = lucid.svd_lowrank(to_lucid(X), q=20)
    tU, tS, tV = torch.svd_lowrank(X, q=20)
    assert tuple(U.shape) == tuple(tU.shape) and tuple(V.shape) == tuple(tV.shape)
    assert_close(S, tS, rtol=1e-9, atol=1e-9)
