"""out= on reductions, scans, index, shape and product functions, against torch, on
every device (on the GPU the out tensor is on the GPU and holds lucid's CPU result)."""

import pytest
import torch

import lucid
from conftest import to_lucid


def rnd(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


CASES = [
    ("sum", lambda m, x: (x, 1), {}),
    ("mean", lambda m, x: (x, 0), {}),
    ("prod", lambda m, x: (x, 1), {}),
    ("amax", lambda m, x: (x, 1), {}),
    ("amin", lambda m, x: (x, (0, 1)), {}),
    ("argmax", lambda m, x: (x, 1), {}),
    ("argmin", lambda m, x: (x,), {}),
    ("var", lambda m, x: (x, 1), {}),
    ("std", lambda m, x: (x, 0), {}),
    ("logsumexp", lambda m, x: (x, 1), {}),
    ("norm", lambda m, x: (x,), {}),
    ("all", lambda m, x: (x > 0, 1), {}),
    ("any", lambda m, x: (x > 0,), {}),
    ("cumsum", lambda m, x: (x, 1), {}),
    ("cumprod", lambda m, x: (x, 0), {}),
    ("tril", lambda m, x: (x,), {}),
    ("triu", lambda m, x: (x, 1), {}),
    ("diag", lambda m, x: (x,), {}),
    ("masked_select", lambda m, x: (x, x > 0), {}),
    ("nonzero", lambda m, x: (x > 0,), {}),
    ("mv", lambda m, x: (x, x[0]), {}),
    ("dot", lambda m, x: (x[0], x[1]), {}),
    ("addmm", lambda m, x: (x, x, x), {}),
    ("tensordot", lambda m, x: (x, x), {"dims": 1}),
]


@pytest.mark.parametrize("name,args,kw", CASES, ids=[c[0] for c in CASES])
def test_out_matches_torch(name, args, kw, device):
    t = rnd(3, 3)
    expected = getattr(torch, name)(*args(torch, t), **kw)
    out = lucid.empty(0, dtype=getattr(lucid, str(expected.dtype).split(".")[-1]), device=device)
    got = getattr(lucid, name)(*args(lucid, to_lucid(t, device)), out=out, **kw)
    assert got is out and out.device.type == device
    assert tuple(out.shape) == tuple(expected.shape)
    ref = expected.to(torch.float64).reshape(-1).tolist()
    assert all(abs(a - b) <= 1e-9 * max(1, abs(b)) for a, b in zip(out.double().reshape(-1).tolist(), ref))
    if device != "cpu":  # the GPU writes what the CPU writes
        cpu = getattr(lucid, name)(*args(lucid, to_lucid(t)), **kw)
        assert all(abs(a - b) <= 1e-12 * max(1, abs(b))
                   for a, b in zip(out.double().reshape(-1).tolist(), cpu.double().reshape(-1).tolist()))


def test_max_with_dim_writes_both_outputs(device):
    t = rnd(3, 4)
    values = lucid.empty(0, dtype=lucid.float64, device=device)
    indices = lucid.empty(0, dtype=lucid.int64, device=device)
    r = lucid.max(to_lucid(t, device), 1, out=(values, indices))
    e = torch.max(t, 1)
    assert r.values is values and r.indices is indices
    assert values.device.type == indices.device.type == device
    assert values.tolist() == e.values.tolist() and indices.tolist() == e.indices.tolist()


def test_out_errors(device):
    x = lucid.ones(3, device=device)
    with pytest.raises(TypeError):
        lucid.sum(x, out=[1.0])
    with pytest.raises(RuntimeError, match="can't be cast"):
        lucid.sum(x, out=lucid.empty(0, dtype=lucid.int64, device=device))
    with pytest.raises(RuntimeError, match="dtype"):
        lucid.argmax(x, out=lucid.empty(0, dtype=lucid.int32, device=device))
    with pytest.raises(RuntimeError, match="automatic differentiation"):
        lucid.sum(lucid.ones(3, requires_grad=True, device=device), out=lucid.empty(0, device=device))
