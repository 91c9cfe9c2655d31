"""Hooks every module runs (torch.nn.modules.module.register_module_*_hook; upstream
Lucid's lucid.nn.register_module_*_hook): forward pre-hooks and hooks, full backward
pre-hooks and hooks, and the parameter, buffer and submodule registration hooks. Each
test does the same with torch and lucid and compares what the hooks saw."""

import pytest
import torch
import torch.nn.modules.module as torch_module

import lucid
import lucid.nn as nn


def both(fn):
    """fn(lib, register) for torch and lucid, `register` being the library's module of
    register_module_* functions; returns both results."""
    return fn(torch, torch_module), fn(lucid, nn)


def with_handles(handles, fn):
    try:
        return fn()
    finally:
        for h in handles:
            h.remove()


def test_forward_hooks_run_for_every_module_before_its_own():
    def run(lib, reg):
        seen = []
        net = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU())
        net[0].register_forward_pre_hook(lambda m, a: seen.append("own pre " + type(m).__name__))
        net[0].register_forward_hook(lambda m, a, o: seen.append("own " + type(m).__name__))
        handles = [reg.register_module_forward_pre_hook(lambda m, a: seen.append("pre " + type(m).__name__)),
                   reg.register_module_forward_hook(lambda m, a, o: seen.append("post " + type(m).__name__))]
        with_handles(handles, lambda: net(lib.ones(1, 2)))
        net(lib.ones(1, 2))  # (removed: only the module's own)
        return seen

    t, lu = both(run)
    assert lu == t
    assert lu[:3] == ["pre Sequential", "pre Linear", "own pre Linear"]


def test_a_global_hook_may_replace_the_input_and_the_output():
    def run(lib, reg):
        lin = lib.nn.Linear(2, 2, bias=False)
        with lib.no_grad():
            lin.weight.copy_(lib.eye(2))
        handles = [reg.register_module_forward_pre_hook(lambda m, a: (a[0] * 2,)),
                   reg.register_module_forward_hook(lambda m, a, o: o + 1)]
        return with_handles(handles, lambda: lin(lib.ones(1, 2))).tolist()

    t, lu = both(run)
    assert lu == t == [[3.0, 3.0]]


def test_with_kwargs_and_always_call():
    def run(lib, reg):
        seen = []

        class Failing(lib.nn.Module):
            def forward(self, x, scale=1.0):
                if scale < 0:
                    raise ValueError("negative scale")
                return x * scale

        m = Failing()
        handles = [reg.register_module_forward_hook(lambda mod, a, k, o: seen.append(dict(k)), with_kwargs=True),
                   reg.register_module_forward_hook(lambda mod, a, o: seen.append(o is None), always_call=True)]

        def call():
            m(lib.ones(1), scale=2.0)
            with pytest.raises(ValueError, match="negative scale"):
                m(lib.ones(1), scale=-1.0)

        with_handles(handles, call)
        return seen

    t, lu = both(run)
    assert lu == t == [{"scale": 2.0}, False, True]


def test_full_backward_hooks_run_for_every_module():
    def run(lib, reg):
        seen = []
        net = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh())
        with lib.no_grad():
            net[0].weight.copy_(lib.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
            net[0].bias.zero_()
        handles = [
            reg.register_module_full_backward_pre_hook(
                lambda m, go: seen.append(("pre", type(m).__name__, [round(float(g.sum()), 4) for g in go]))),
            reg.register_module_full_backward_hook(
                lambda m, gi, go: seen.append(("hook", type(m).__name__,
                                               [None if g is None else round(float(g.sum()), 4) for g in gi]))),
        ]
        x = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        with_handles(handles, lambda: net(x).sum().backward())
        return seen

    t, lu = both(run)
    assert lu == t and len(lu) == 6


def test_registration_hooks_see_and_may_replace_what_is_registered():
    def run(lib, reg):
        seen = []

        def on_param(m, name, p):
            seen.append(("param", type(m).__name__, name))
            return lib.nn.Parameter(p.detach() * 0) if name == "scale" else None

        handles = [reg.register_module_parameter_registration_hook(on_param),
                   reg.register_module_buffer_registration_hook(lambda m, n, b: seen.append(("buffer", n))),
                   reg.register_module_module_registration_hook(lambda m, n, s: seen.append(("module", n)))]

        def build():
            net = lib.nn.Sequential()
            net.add_module("lin", lib.nn.Linear(2, 2))
            net.register_buffer("steps", lib.zeros(1))
            net.extra = lib.nn.ReLU()
            net.scale = lib.nn.Parameter(lib.ones(3))
            return net

        net = with_handles(handles, build)
        lib.nn.Linear(2, 2)  # (removed: not seen)
        return seen, net.scale.tolist()

    t, lu = both(run)
    assert lu == t
    assert lu[1] == [0.0, 0.0, 0.0]  # the hook's replacement was registered


def test_the_functions_are_at_both_paths():
    import lucid.nn.modules.module as lucid_module

    for name in ("register_module_forward_pre_hook", "register_module_forward_hook",
                 "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
                 "register_module_parameter_registration_hook", "register_module_buffer_registration_hook",
                 "register_module_module_registration_hook"):
        assert getattr(nn, name) is getattr(lucid_module, name)
        assert hasattr(torch_module, name)


def test_load_state_dict_post_hooks_see_and_may_clear_the_incompatible_keys():
    def run(lib, reg):
        seen = []
        net = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Linear(3, 1))

        def forgive(module, keys):
            seen.append((type(module).__name__, sorted(keys.missing_keys), sorted(keys.unexpected_keys)))
            keys.missing_keys[:] = [k for k in keys.missing_keys if not k.endswith("bias")]

        net.register_load_state_dict_post_hook(forgive)
        net[1].register_load_state_dict_post_hook(lambda m, keys: seen.append(("child", len(keys.missing_keys))))
        sd = {k: v for k, v in net.state_dict().items() if not k.endswith("bias")}
        result = net.load_state_dict(sd)  # (strict: passes, since the hook forgave the missing biases)
        return seen, sorted(result.missing_keys)

    t, lu = both(run)
    assert t == lu
    assert lu[0][0] == ("child", 2) and lu[0][1] == ("Sequential", ["0.bias", "1.bias"], [])


def test_a_post_hook_that_returns_something_is_refused():
    net = nn.Linear(2, 1)
    net.register_load_state_dict_post_hook(lambda m, keys: keys)
    with pytest.raises(RuntimeError, match="post hooks must return None"):
        net.load_state_dict(net.state_dict())


def test_the_global_load_state_dict_hooks_of_lucid_nn_hooks():
    from lucid.nn import hooks
    seen = []
    net = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    pre = hooks.register_module_load_state_dict_pre_hook(
        lambda m, sd, prefix, *rest: seen.append(("pre", type(m).__name__, prefix)))
    post = hooks.register_module_load_state_dict_post_hook(lambda m, keys: seen.append(("post", type(m).__name__)))
    try:
        net.load_state_dict(net.state_dict())
    finally:
        pre.remove()
        post.remove()
    net.load_state_dict(net.state_dict())  # (removed)
    assert seen == [("pre", "Sequential", ""), ("pre", "Linear", "0."), ("post", "Linear"), ("pre", "ReLU", "1."),
                    ("post", "ReLU"), ("post", "Sequential")]
    assert set(hooks.__all__) == {"RemovableHandle", "register_module_forward_hook", "register_module_forward_pre_hook",
                                  "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
                                  "register_module_load_state_dict_post_hook",
                                  "register_module_load_state_dict_pre_hook"}


def test_a_removable_handle_takes_its_key_out_of_every_set():
    from lucid.nn.hooks import RemovableHandle
    hooks, flags, marks = {"a": 1, "b": 2}, {"a": True}, {"a", "c"}
    with RemovableHandle(hooks, "a", (flags, marks)) as h:
        assert h.id == "a"
    assert hooks == {"b": 2} and flags == {} and marks == {"c"}
    fresh = RemovableHandle(hooks)
    assert isinstance(fresh.id, int)
