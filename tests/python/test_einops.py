"""lucid.einops (upstream Lucid's module) against the einops library on torch tensors:
rearrange, reduce and repeat over many patterns (groups, unit axes, ellipsis, anonymous
lengths, keyword lengths), einsum in both argument orders, gradients, and the patterns
einops refuses."""

import pytest
import torch

import lucid
from conftest import assert_close, to_lucid

einops = pytest.importorskip("einops")
from lucid import einops as le  # noqa: E402


X = torch.arange(2 * 3 * 4 * 6, dtype=torch.float64).reshape(2, 3, 4, 6) / 7


@pytest.mark.parametrize("pattern,lengths", [
    ("b c h w -> b (h w) c", {}), ("b c h w -> (b c) h w", {}), ("b c (h1 h2) w -> b c h1 h2 w", {"h1": 2}),
    ("b c h (w1 w2) -> w2 b c h w1", {"w2": 3}), ("b c h w -> b c 1 h w 1", {}), ("b c h w -> b c () h w", {}),
    ("... h w -> ... (h w)", {}), ("b ... w -> w ... b", {}), ("b c h w -> b c h w", {}),
    ("b c (h 1) w -> (b w) c h", {})])
def test_rearrange(pattern, lengths, device):
    assert_close(le.rearrange(to_lucid(X, device), pattern, **lengths), einops.rearrange(X, pattern, **lengths),
                 rtol=0, atol=0)


@pytest.mark.parametrize("pattern,reduction,lengths", [
    ("b c h w -> b c", "mean", {}), ("b c h w -> c", "sum", {}), ("b c (h 2) (w 2) -> b c h w", "max", {}),
    ("b c (h h2) (w w2) -> b h w c", "min", {"h2": 2, "w2": 3}), ("b c h w -> b 1 h 1", "mean", {}),
    ("b c h w -> (b c) h", "prod", {}), ("b ... -> b", "sum", {})])
def test_reduce(pattern, reduction, lengths, device):
    assert_close(le.reduce(to_lucid(X, device), pattern, reduction, **lengths),
                 einops.reduce(X, pattern, reduction, **lengths), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("pattern,lengths", [
    ("b c h w -> b c h w r", {"r": 2}), ("b c h w -> b (c r) h w", {"r": 3}), ("b c h w -> 2 b c h w", {}),
    ("b c h w -> b c (h 2) (w 2)", {}), ("b c h w -> (r b) c w h", {"r": 2}), ("... w -> ... w k", {"k": 2})])
def test_repeat(pattern, lengths, device):
    assert_close(le.repeat(to_lucid(X, device), pattern, **lengths), einops.repeat(X, pattern, **lengths),
                 rtol=0, atol=0)


def test_einsum_both_orders_and_gradients(device):
    a, b = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(2, 4, 5, dtype=torch.float64)
    want = einops.einsum(a, b, "batch i k, batch k j -> batch i j")
    la, lb = to_lucid(a, device).requires_grad_(), to_lucid(b, device)
    assert_close(le.einsum("batch i k, batch k j -> batch i j", la, lb), want, rtol=1e-12, atol=1e-12)
    out = le.einsum(la, lb, "batch i k, batch k j -> batch i j")
    assert_close(out, want, rtol=1e-12, atol=1e-12)
    le.reduce(le.rearrange(la, "b i k -> b (i k)"), "b n -> b", "sum").sum().backward()
    assert_close(la.grad, torch.ones(2, 3, 4, dtype=torch.float64), rtol=0, atol=0)
    assert le.repeat(lucid.ones(3, device=device), "w -> h w", h=2).shape == (2, 3)


@pytest.mark.parametrize("call", [
    lambda m, x: m.rearrange(x, "b c h w -> b c h"), lambda m, x: m.rearrange(x, "b c h -> b c h"),
    lambda m, x: m.rearrange(x, "b c (h1 h2) w -> b c h1 h2 w"), lambda m, x: m.rearrange(x, "b c h w -> b c h w q"),
    lambda m, x: m.rearrange(x, "b c (h h2) w -> b c h h2 w", h2=5), lambda m, x: m.repeat(x, "b c h w -> b c h w q"),
    lambda m, x: m.rearrange(x, "b b h w -> b h w"), lambda m, x: m.reduce(x, "b c h w -> b c", "median")])
def test_patterns_einops_refuses(call, device):
    with pytest.raises(Exception) as theirs:
        call(einops, X)
    with pytest.raises(ValueError):
        call(le, to_lucid(X, device))
    assert theirs.type.__name__ in ("EinopsError", "ValueError", "TypeError", "NotImplementedError")
