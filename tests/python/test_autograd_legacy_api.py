"""torch.autograd.Variable, torch.amp.custom_fwd / custom_bwd (and torch.cuda.amp's),
autograd.Function outputs kept in a script's globals leaving nothing behind at exit
(Note [Hook cycles]), and torch.func.stack_module_state (with nn.utils.stateless)."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import lucid
from lucid.autograd import Variable


def test_variable_is_a_tensor():
    t = lucid.ones(3)
    v = Variable(t, requires_grad=True)
    tv = torch.autograd.Variable(torch.ones(3), requires_grad=True)
    assert type(v) is lucid.Tensor and type(tv) is torch.Tensor
    assert v.requires_grad and not t.requires_grad  # a detached alias, as torch's
    assert isinstance(t, Variable) and isinstance(tv, torch.autograd.Variable)
    assert issubclass(lucid.Tensor, Variable)
    assert not isinstance(3.0, Variable)
    (v * 2).sum().backward()
    assert v.grad.tolist() == [2.0, 2.0, 2.0]
    assert Variable().numel() == 0
    with pytest.raises(TypeError, match="has to be a tensor"):
        Variable([1.0, 2.0])


def _double_function(m):
    """A Function doubling its input under custom_fwd / custom_bwd, for lucid or torch (m),
    that records the dtype and autocast state its forward and backward see."""
    class Double(m.autograd.Function):
        seen = []

        @staticmethod
        @m.amp.custom_fwd(device_type="cpu", cast_inputs=m.float32)
        def forward(ctx, x):
            Double.seen.append(("forward", x.dtype, m.is_autocast_enabled("cpu")))
            return x * 2

        @staticmethod
        @m.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            Double.seen.append(("backward", m.is_autocast_enabled("cpu")))
            return g * 2
    return Double


_Double, _TorchDouble = _double_function(lucid), _double_function(torch)


def _names(seen):
    return [tuple(str(v).split(".")[-1] if not isinstance(v, (bool, str)) else v for v in e) for e in seen]


@pytest.mark.parametrize("autocast_on", [True, False])
def test_custom_fwd_bwd_as_torch(autocast_on):
    _Double.seen.clear()
    _TorchDouble.seen.clear()
    x = lucid.ones(3, dtype=lucid.bfloat16, requires_grad=True)
    tx = torch.ones(3, dtype=torch.bfloat16, requires_grad=True)
    with lucid.autocast("cpu", enabled=autocast_on):
        y = _Double.apply(x)
    with torch.autocast("cpu", enabled=autocast_on):
        ty = _TorchDouble.apply(tx)
    assert str(y.dtype).split(".")[-1] == str(ty.dtype).split(".")[-1]
    y.sum().backward()
    ty.sum().backward()
    assert _names(_Double.seen) == _names(_TorchDouble.seen)
    assert x.grad.tolist() == tx.grad.tolist()


def test_custom_bwd_runs_in_the_forward_autocast_state():
    class F(lucid.autograd.Function):
        state = None

        @staticmethod
        @lucid.amp.custom_fwd(device_type="cpu")
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @lucid.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            F.state = (lucid.is_autocast_enabled("cpu"), lucid.get_autocast_dtype("cpu"))
            return g * 2

    x = lucid.ones(2, requires_grad=True)
    with lucid.autocast("cpu", dtype=lucid.float16):
        y = F.apply(x)
    y.sum().backward()  # outside the region: the backward still runs under it
    assert F.state == (True, lucid.float16)
    assert callable(lucid.cuda.amp.custom_fwd) and callable(lucid.cuda.amp.custom_bwd)
    with pytest.raises(ValueError, match="device_type"):
        lucid.amp.custom_fwd(device_type=None)


def test_function_outputs_in_globals_leave_nothing_at_exit():
    # The node of a Function's output holds its backward, whose globals hold the output:
    # a cycle through C++ that the collector now sees (Note [Hook cycles]).
    script = textwrap.dedent("""
        import lucid
        class F(lucid.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2
            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * x
        x = lucid.ones(3, requires_grad=True)
        y = F.apply(x)
        y.sum().backward(retain_graph=True)
        z = F.apply(x)
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "leaked" not in run.stderr, run.stderr


def test_stack_module_state_ensembles_as_torch():
    torch.manual_seed(0)
    tmodels = [torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3)) for _ in range(3)]
    lmodels = [lucid.nn.Sequential(lucid.nn.Linear(4, 3), lucid.nn.BatchNorm1d(3)) for _ in range(3)]
    for lm, tm in zip(lmodels, tmodels):
        lm.load_state_dict({k: lucid.tensor(v.tolist()) for k, v in tm.state_dict().items()})
    tparams, tbuffers = torch.func.stack_module_state(tmodels)
    lparams, lbuffers = lucid.func.stack_module_state(lmodels)
    assert sorted(lparams) == sorted(tparams) and sorted(lbuffers) == sorted(tbuffers)
    for name, t in list(tparams.items()) + list(tbuffers.items()):
        lt = lparams.get(name, lbuffers.get(name))
        assert tuple(lt.shape) == tuple(t.shape) and lt.requires_grad == t.requires_grad and lt.is_leaf
        torch.testing.assert_close(torch.tensor(lt.tolist(), dtype=t.dtype), t.detach())
    x = torch.randn(2, 4)
    for m in tmodels + lmodels:
        m.eval()
    tout = torch.func.vmap(lambda p, b, x: torch.func.functional_call(tmodels[0], (p, b), (x,)),
                           in_dims=(0, 0, None))(tparams, tbuffers, x)
    lout = lucid.func.vmap(lambda p, b, x: lucid.func.functional_call(lmodels[0], (p, b), (x,)),
                           in_dims=(0, 0, None))(lparams, lbuffers, lucid.tensor(x.tolist()))
    torch.testing.assert_close(torch.tensor(lout.tolist()), tout.detach())
    lout.sum().backward()
    assert lparams["0.weight"].grad is not None and lmodels[0][0].weight.grad is None
    with pytest.raises(RuntimeError, match="same class"):
        lucid.func.stack_module_state([lucid.nn.Linear(2, 2), lucid.nn.Conv1d(2, 2, 1)])
    with pytest.raises(RuntimeError, match="training/eval"):
        lucid.func.stack_module_state([lucid.nn.Linear(2, 2), lucid.nn.Linear(2, 2).eval()])
    with pytest.raises(RuntimeError, match="at least one"):
        lucid.func.stack_module_state([])
    assert lucid.nn.utils.stateless.functional_call is lucid.func.functional_call
