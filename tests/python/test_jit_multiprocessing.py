"""lucid.jit (torch.jit's names for scriptable model code, run as Python) and
lucid.multiprocessing (spawn / start_processes raising children's errors in the parent,
sharing strategies, and share_memory_'s refusal)."""

import importlib
import warnings

import pytest
import torch

import lucid
import lucid.multiprocessing as mp
from mp_workers import rank_exits, rank_fails, rank_writes


class Scriptable(lucid.nn.Module):
    """Written the way torchvision's models are, for TorchScript."""
    flag: lucid.jit.Final[bool]

    def __init__(self):
        super().__init__()
        self.fc = lucid.nn.Linear(4, 3)
        self.flag = True

    @lucid.jit.ignore
    def helper(self, x):
        return x * 2

    @lucid.jit.unused
    def unused_path(self, x):
        return x

    @lucid.jit.export
    def exported(self, x):
        return x + 1

    def forward(self, x):
        if not lucid.jit.is_scripting() and not lucid.jit.is_tracing():
            x = self.helper(x)
        scale = lucid.jit.annotate(float, 0.5)
        return self.fc(x) * scale


def test_scriptable_model_code_runs_as_python():
    m = Scriptable()
    x = lucid.randn(2, 4)
    assert lucid.jit.script(m) is m and lucid.jit.trace(m, (x,)) is m
    assert lucid.jit.trace_module(m, {"forward": (x,)}) is m
    assert lucid.equal(m(x), m.fc(x * 2) * 0.5)  # helper ran: the Python path
    assert m.exported(lucid.ones(1)).item() == 2.0
    assert not isinstance(m, lucid.jit.ScriptModule)
    f = lucid.jit.script(lambda a: a + 1)
    assert f(lucid.ones(1)).item() == 2.0
    assert lucid.jit.ignore(drop=True)(len) is len
    assert lucid.jit.Attribute(3, int) == 3
    assert lucid.jit.interface(Scriptable) is Scriptable


def test_the_names_torch_jit_has():
    for name in ("script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting", "is_tracing",
                 "annotate", "Final", "Attribute", "interface", "fork", "wait", "freeze", "optimize_for_inference",
                 "save", "load", "ScriptModule", "ScriptFunction", "RecursiveScriptModule"):
        assert hasattr(torch.jit, name) and hasattr(lucid.jit, name), name
    assert importlib.import_module("lucid.jit") is lucid.jit


def test_fork_and_wait():
    fut = lucid.jit.fork(lambda a, b: a * b, lucid.tensor(3.0), b=lucid.tensor(4.0))
    assert lucid.jit.wait(fut).item() == 12.0 and fut.done()
    bad = lucid.jit.fork(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        bad.wait()


def test_freeze_needs_eval_mode_as_torch():
    m = Scriptable()
    with pytest.raises(RuntimeError, match="eval mode"):
        lucid.jit.freeze(m)
    assert lucid.jit.freeze(m.eval()) is m
    assert lucid.jit.optimize_for_inference(Scriptable()).training is False


def test_save_and_load_a_scripted_module(tmp_path):
    m = lucid.jit.script(Scriptable().eval())
    x = lucid.randn(2, 4)
    path = tmp_path / "m.pt"
    lucid.jit.save(m, str(path))
    back = lucid.jit.load(str(path))
    assert lucid.equal(back(x), m(x))
    with pytest.raises(NotImplementedError, match="TorchScript archive"):
        lucid.jit.save(m, str(tmp_path / "n.pt"), _extra_files={"a": b"1"})


def test_script_module_cannot_be_made():
    with pytest.raises(RuntimeError, match="no TorchScript"):
        lucid.jit.ScriptModule()


# ---- multiprocessing ------------------------------------------------------------------

def test_spawn_runs_each_rank(tmp_path):
    assert mp.spawn(rank_writes, args=(str(tmp_path), 2.0), nprocs=2) is None
    for rank in range(2):
        t = lucid.load(str(tmp_path / f"rank{rank}.pt"))
        assert t.tolist() == [rank, 2.0 + rank, 4.0 + rank]


def test_spawn_raises_what_a_child_raised():
    with pytest.raises(mp.ProcessRaisedException, match="rank 1 is unhappy") as info:
        mp.spawn(rank_fails, nprocs=2)
    assert info.value.error_index == 1 and "ValueError" in str(info.value)


def test_spawn_reports_an_exit_code():
    with pytest.raises(mp.ProcessExitedException, match="exit code 3") as info:
        mp.start_processes(rank_exits, nprocs=2, start_method="spawn")
    assert info.value.exit_code == 3 and info.value.error_index == 0


def test_spawn_without_join_gives_the_context(tmp_path):
    ctx = mp.spawn(rank_writes, args=(str(tmp_path), 1.0), nprocs=1, join=False)
    assert len(ctx.pids()) == 1
    while not ctx.join():
        pass
    assert (tmp_path / "rank0.pt").exists()


def test_spawn_argument_checks():
    with pytest.raises(ValueError, match="nprocs"):
        mp.spawn(rank_fails, nprocs=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="cannot find context"):
            mp.spawn(rank_fails, nprocs=1, start_method="teleport")
    assert any(issubclass(w.category, FutureWarning) for w in caught)


def test_sharing_strategies_as_torch():
    import torch.multiprocessing as tmp
    assert mp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == "file_descriptor"
    mp.set_sharing_strategy("file_system")
    assert mp.get_sharing_strategy() == "file_system"
    mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(ValueError, match="not one of"):
        mp.set_sharing_strategy("carrier pigeon")
    assert mp.Queue is not None and mp.Process is not None and mp.get_context is not None


def test_share_memory_is_refused_not_silently_skipped():
    t = lucid.ones(2)
    assert t.is_shared() is False
    with pytest.raises(NotImplementedError, match="by value"):
        t.share_memory_()
    with pytest.raises(NotImplementedError, match="by value"):
        lucid.nn.Linear(2, 2).share_memory()
