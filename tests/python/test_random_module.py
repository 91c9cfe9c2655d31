"""lucid.random (torch.random): its seeding and state functions are lucid's top-level
ones, fork_rng saves and restores the default generator's state (which a GPU tensor's
draws use too), thread_safe_generator."""

import warnings

import pytest
import torch

import lucid
import lucid.random


def test_module_and_names():
    assert lucid.random.__name__ == "lucid.random"
    assert set(getattr(torch.random, "__all__", ())) <= set(lucid.random.__all__)  # (torch 2.11 has no __all__ there)
    for name in ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"):
        assert getattr(lucid.random, name) is getattr(lucid, name)  # (as torch.random's are torch's)
    assert lucid.random.default_generator is lucid.default_generator


def test_manual_seed_and_state_roundtrip():
    g = lucid.random.manual_seed(123)
    assert g is lucid.random.default_generator
    assert lucid.random.initial_seed() == 123
    a = lucid.rand(4)
    lucid.random.manual_seed(123)
    assert lucid.rand(4).tolist() == a.tolist()
    state = lucid.random.get_rng_state()
    assert state.dtype == lucid.uint8 and state.device.type == "cpu"
    b = lucid.randn(3)
    lucid.random.set_rng_state(state)
    assert lucid.randn(3).tolist() == b.tolist()
    s = lucid.random.seed()
    assert isinstance(s, int) and lucid.random.initial_seed() == s
    with pytest.raises(TypeError, match="uint8"):
        lucid.random.set_rng_state(lucid.zeros(4))


@pytest.mark.parametrize("enabled", [True, False])
def test_fork_rng_restores_state(enabled, device):
    lucid.manual_seed(7)
    before = lucid.random.get_rng_state()
    with lucid.random.fork_rng(devices=[], enabled=enabled):
        inside = lucid.rand(5, device=device)
    after = lucid.rand(5, device=device)
    if enabled:
        assert after.cpu().tolist() == inside.cpu().tolist()  # the draws repeat: the state was restored
    else:
        assert after.cpu().tolist() != inside.cpu().tolist()
        lucid.random.set_rng_state(before)
        lucid.rand(5)
        assert lucid.rand(5).cpu().tolist() == after.cpu().tolist()


def test_fork_rng_restores_after_an_exception_and_default_devices():
    lucid.manual_seed(8)
    expected = lucid.rand(3).tolist()
    lucid.manual_seed(8)
    with pytest.raises(ValueError):
        with lucid.random.fork_rng():
            lucid.rand(100)
            raise ValueError("inside")
    assert lucid.rand(3).tolist() == expected


@pytest.mark.parametrize("device_type", ["cuda", "gpu", "cpu", "meta", None])
def test_fork_rng_device_types(device_type):
    lucid.manual_seed(9)
    with lucid.random.fork_rng(devices=[], device_type=device_type):
        first = lucid.rand(2).tolist()
    second = lucid.rand(2).tolist()
    assert (first == second) == (device_type != "meta")


def test_fork_rng_errors():
    with pytest.raises(RuntimeError, match="Invalid device string"):
        with lucid.random.fork_rng(device_type="xpu"):
            pass
    with pytest.raises(ValueError, match="gpu device"):
        with lucid.random.fork_rng(devices=["cpu"]):
            pass


def test_fork_rng_reads_a_generator_of_devices_once():
    devices = (d for d in [0])
    with lucid.random.fork_rng(devices=devices):
        lucid.rand(1)
    assert list(devices) == []


def test_fork_rng_warns_once_for_several_gpus(monkeypatch):
    monkeypatch.setattr(lucid.random, "_fork_rng_warned_already", False)
    monkeypatch.setattr(lucid.gpu, "device_count", lambda: 2)
    with pytest.warns(UserWarning, match="GPU reports that you have 2 available devices.*my_fn.*my_devices"):
        with lucid.random.fork_rng(_caller="my_fn", _devices_kw="my_devices") as _:
            pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with lucid.random.fork_rng():
            pass


def test_thread_safe_generator():
    assert lucid.random.thread_safe_generator() is None
    if hasattr(torch.random, "thread_safe_generator"):  # (not in torch 2.11)
        assert torch.random.thread_safe_generator() is None
