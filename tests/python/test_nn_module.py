"""nn.Module, Parameter and the containers, against torch.nn on the same programs:
names, state-dict keys and shapes, error messages, modes, conversions and hooks. Tests taking
`device` run on the GPU too: modules moved there (parameters, buffers, gradients), a GPU
module's state_dict loaded into a CPU one and back."""

import pytest
import torch

import lucid
import lucid.nn as lnn


def tdev(device):
    """torch's name for lucid's device."""
    return "cuda" if device == "gpu" else "cpu"


def on(module, device):
    """Every parameter, gradient and buffer of `module` is on `device`."""
    tensors = list(module.parameters()) + [p.grad for p in module.parameters() if p.grad is not None]
    return all(t.device.type == device for t in tensors + list(module.buffers()))


def build(nn, m):
    """The same model in either framework (m is lucid or torch)."""

    class Affine(nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.weight = nn.Parameter(m.ones(n_out, n_in) * 0.5)
            self.bias = nn.Parameter(m.zeros(n_out))
            self.register_buffer("calls", m.zeros(1))
            self.register_buffer("scratch", m.zeros(2), persistent=False)

        def forward(self, x):
            return x @ self.weight.t() + self.bias

        def extra_repr(self):
            return f"in={self.weight.shape[1]}, out={self.weight.shape[0]}"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(Affine(3, 4), Affine(4, 4))
            self.heads = nn.ModuleDict({"a": Affine(4, 2), "b": Affine(4, 1)})
            self.extra = nn.ModuleList([Affine(2, 2)])
            self.scale = nn.Parameter(m.ones(1))
            self.shared = self.body[0]  # the same module twice: listed once

        def forward(self, x):
            h = self.body(x)
            return self.heads["a"](h) * self.scale, self.heads["b"](h)

    return Net()


def test_names_and_state_dict_match_torch():
    ln, tn = build(lnn, lucid), build(torch.nn, torch)
    assert [k for k, _ in ln.named_parameters()] == [k for k, _ in tn.named_parameters()]
    assert [k for k, _ in ln.named_buffers()] == [k for k, _ in tn.named_buffers()]
    assert [k for k, _ in ln.named_modules()] == [k for k, _ in tn.named_modules()]
    assert [k for k, _ in ln.named_children()] == [k for k, _ in tn.named_children()]
    lsd, tsd = ln.state_dict(), tn.state_dict()
    assert list(lsd) == list(tsd)
    assert all(tuple(lsd[k].shape) == tuple(tsd[k].shape) for k in lsd)
    assert not any(v.requires_grad for v in lsd.values())
    assert len(list(ln.parameters())) == len(list(tn.parameters()))


def test_repr_matches_torch():
    assert repr(build(lnn, lucid)) == repr(build(torch.nn, torch))


def test_weights_transfer_both_ways_and_outputs_agree(device):
    ln, tn = build(lnn, lucid), build(torch.nn, torch)
    with torch.no_grad():
        for p in tn.parameters():
            p.copy_(torch.randn(p.shape))
    ln.load_state_dict({k: lucid.tensor(v.tolist()).reshape(tuple(v.shape)) for k, v in tn.state_dict().items()})
    ln, tn = ln.to(device), tn.to(tdev(device))
    assert on(ln, device)
    x = [[0.1, -0.2, 0.3], [1.0, 2.0, -1.0]]
    la, lb = ln(lucid.tensor(x, device=device))
    ta, tb = tn(torch.tensor(x, device=tdev(device)))
    assert la.device.type == lb.device.type == device
    assert torch.allclose(torch.tensor(la.tolist()), ta.cpu(), atol=1e-5)
    assert torch.allclose(torch.tensor(lb.tolist()), tb.cpu(), atol=1e-5)
    tn2 = build(torch.nn, torch)
    tn2.load_state_dict({k: torch.tensor(v.tolist()).reshape(tuple(v.shape)) for k, v in ln.state_dict().items()})
    assert all(torch.equal(a, b.cpu()) for a, b in zip(tn2.state_dict().values(), tn.state_dict().values()))
    # the device's state_dict into a CPU module, and the CPU one's back into a module on the device
    cpu, back = build(lnn, lucid).to("cpu"), build(lnn, lucid).to(device)  # built on the default device
    cpu.load_state_dict(ln.state_dict())
    back.load_state_dict(cpu.state_dict())
    assert on(cpu, "cpu") and on(back, device)
    for k, v in ln.state_dict().items():
        assert cpu.state_dict()[k].tolist() == back.state_dict()[k].tolist() == v.tolist(), k


def _message(fn):
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value), str(e.value).replace("torch.Size", "Size").replace("lucid.Size", "Size")


def test_load_state_dict_errors_match_torch():
    ln, tn = build(lnn, lucid), build(torch.nn, torch)
    lsd, tsd = ln.state_dict(), tn.state_dict()
    for sd in (lsd, tsd):
        del sd["scale"]
        sd["bogus.weight"] = sd["body.0.bias"]
    assert _message(lambda: ln.load_state_dict(lsd)) == _message(lambda: tn.load_state_dict(tsd))
    lsd, tsd = ln.state_dict(), tn.state_dict()
    lsd["body.0.bias"], tsd["body.0.bias"] = lucid.zeros(7), torch.zeros(7)
    assert _message(lambda: ln.load_state_dict(lsd)) == _message(lambda: tn.load_state_dict(tsd))
    # strict=False loads what matches and reports the rest, as torch
    lk, tk = ln.load_state_dict({}, strict=False), tn.load_state_dict({}, strict=False)
    assert lk.missing_keys == tk.missing_keys == list(ln.state_dict()) and lk.unexpected_keys == []
    lsd, tsd = ln.state_dict(), tn.state_dict()
    for sd in (lsd, tsd):
        del sd["scale"]
        sd["bogus.weight"] = sd["body.0.bias"]
    lk, tk = ln.load_state_dict(lsd, strict=False), tn.load_state_dict(tsd, strict=False)
    assert (lk.missing_keys, lk.unexpected_keys) == (tk.missing_keys, tk.unexpected_keys) == (["scale"], ["bogus.weight"])


def test_strict_load_reports_keys_like_torch():
    ln, tn = build(lnn, lucid), build(torch.nn, torch)
    lk = ln.load_state_dict(ln.state_dict())
    tk = tn.load_state_dict(tn.state_dict())
    assert (lk.missing_keys, lk.unexpected_keys) == (tk.missing_keys, tk.unexpected_keys) == ([], [])


def test_modes_zero_grad_requires_grad_and_apply(device):
    ln = build(lnn, lucid).to(device)
    ln.eval()
    assert not any(m.training for m in ln.modules())
    ln.train()
    assert all(m.training for m in ln.modules())
    a, b = ln(lucid.ones(2, 3, device=device))
    (a.sum() + b.sum()).backward()
    used = [p for k, p in ln.named_parameters() if not k.startswith("extra.")]
    assert all(p.grad is not None for p in used) and on(ln, device)
    ln.zero_grad()
    assert all(p.grad is None for p in ln.parameters())
    ln.requires_grad_(False)
    assert not any(p.requires_grad for p in ln.parameters())
    seen, tseen = [], []
    ln.apply(lambda m: seen.append(type(m).__name__))
    build(torch.nn, torch).apply(lambda m: tseen.append(type(m).__name__))
    assert seen == tseen  # children first; a shared module once per parent, as torch


def test_to_dtype_keeps_parameters(device):
    ln = build(lnn, lucid)
    a, b = ln(lucid.ones(2, 3))
    (a.sum() + b.sum()).backward()
    ln = ln.to(device, lucid.float64)  # gradients move and convert with their parameters
    assert on(ln, device)
    assert all(isinstance(p, lnn.Parameter) and p.dtype == lucid.float64 for p in ln.parameters())
    assert all(p.grad.dtype == lucid.float64 for p in ln.parameters() if p.grad is not None)
    assert all(b.dtype == lucid.float64 for b in ln.buffers())
    ln.float()
    assert all(p.dtype == lucid.float32 and p.is_leaf for p in ln.parameters()) and on(ln, device)
    ln.cpu()
    assert on(ln, "cpu")
    with pytest.raises(TypeError):
        ln.to(lucid.int64)


def test_attribute_rules_match_torch():
    for nn, m in ((lnn, lucid), (torch.nn, torch)):
        mod = nn.Module()
        mod.w = nn.Parameter(m.ones(2))
        with pytest.raises(TypeError):
            mod.w = m.ones(2)  # a plain tensor over a parameter
        mod.w = None
        assert "w" in mod._parameters and mod.w is None
        with pytest.raises(KeyError):
            mod.register_buffer("a.b", m.ones(1))
        with pytest.raises(KeyError):
            mod.register_parameter("", None)
        with pytest.raises(AttributeError):
            mod.missing
        p = nn.Parameter(m.ones(2, requires_grad=True) * 2)  # made a leaf, as in torch
        assert p.is_leaf
        del mod.w
        assert "w" not in mod._parameters


def test_forward_hooks_match_torch():
    out = []
    for nn, m in ((lnn, lucid), (torch.nn, torch)):
        model = build(nn, m)
        calls = []
        h1 = model.body.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        h2 = model.body.register_forward_hook(lambda mod, args, output: output + 1)
        model.body.register_forward_hook(lambda mod, args, kw, output: calls.append(sorted(kw)), with_kwargs=True)
        a, _ = model(m.ones(1, 3))
        h1.remove()
        h2.remove()
        a2, _ = model(m.ones(1, 3))
        out.append((a.tolist(), a2.tolist(), calls))
    assert out[0][2] == out[1][2]
    for l, t in zip(out[0][:2], out[1][:2]):
        assert torch.allclose(torch.tensor(l), torch.tensor(t))


def test_full_backward_hooks_match_torch(device):
    results = []
    for nn, m, dev in ((lnn, lucid, device), (torch.nn, torch, tdev(device))):
        model = build(nn, m).to(dev)
        record = []

        def hook(mod, grad_input, grad_output):
            assert all(str(g.device).startswith(dev) for g in grad_input + grad_output if g is not None)
            record.append(([g.tolist() for g in grad_input if g is not None],
                           [g.tolist() for g in grad_output]))
            return tuple(g * 2 if g is not None else None for g in grad_input)

        model.body[1].register_full_backward_hook(hook)
        x = m.tensor([[0.5, -1.0, 2.0]], device=dev, requires_grad=True)
        a, b = model(x)
        (a.sum() + b.sum()).backward()
        assert str(x.grad.device).startswith(dev)
        results.append((record, x.grad.tolist()))
    def same(a, b):
        assert torch.allclose(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64))

    same(results[0][1], results[1][1])
    (lgi, lgo), = results[0][0]
    (tgi, tgo), = results[1][0]
    assert len(lgi) == len(tgi) and len(lgo) == len(tgo)
    for a, b in zip(lgi + lgo, tgi + tgo):
        same(a, b)


def test_containers_behave_like_torch():
    for nn, m in ((lnn, lucid), (torch.nn, torch)):
        seq = nn.Sequential(nn.Module(), nn.Module(), nn.Module())
        assert len(seq) == 3 and len(seq[1:]) == 2 and seq[-1] is seq[2]
        del seq[0]
        assert list(seq._modules) == ["0", "1"]
        seq.append(nn.Module())
        assert len(seq) == 3
        with pytest.raises(IndexError):
            seq[5]
        ml = nn.ModuleList([nn.Module()])
        ml += [nn.Module()]
        assert len(ml) == 2 and len(list(ml.modules())) == 3
        md = nn.ModuleDict({"x": nn.Module()})
        assert "x" in md and list(md.keys()) == ["x"]
        pl = nn.ParameterList([nn.Parameter(m.ones(2)), m.zeros(3)])
        assert len(pl) == 2 and all(isinstance(p, nn.Parameter) for p in pl)
        pd = nn.ParameterDict({"a": m.ones(1)})
        assert isinstance(pd["a"], nn.Parameter) and [k for k, _ in pd.named_parameters()] == ["a"]


def test_parameter_is_a_leaf_tensor_sharing_memory(device):
    data = lucid.zeros(3, device=device)
    p = lnn.Parameter(data)
    assert p.device.type == device
    assert isinstance(p, lnn.Parameter) and isinstance(p, lucid.Tensor) and p.requires_grad and p.is_leaf
    data.add_(1)
    assert p.tolist() == [1.0, 1.0, 1.0]
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert not lnn.Parameter(data, requires_grad=False).requires_grad
    assert not isinstance(data, lnn.Parameter)


def test_deepcopy_of_a_module_copies_parameters_buffers_and_grads(device):
    import copy
    m = lnn.Sequential(lnn.Linear(3, 4), lnn.BatchNorm1d(4)).to(device)
    m(lucid.randn(5, 3, device=device)).sum().backward()
    c = copy.deepcopy(m)
    assert on(c, device)
    for (name, p), (_, q) in zip(m.named_parameters(), c.named_parameters()):
        assert isinstance(q, lnn.Parameter) and q.requires_grad and q.is_leaf, name
        assert q.tolist() == p.tolist() and q.grad.tolist() == p.grad.tolist()
        assert q.data_ptr() != p.data_ptr() and q.grad.data_ptr() != p.grad.data_ptr()
    assert c[1].running_mean.tolist() == m[1].running_mean.tolist()
    assert not isinstance(c[1].running_mean, lnn.Parameter)
    with lucid.no_grad():
        c[0].weight.add_(1.0)
    assert c[0].weight.tolist() != m[0].weight.tolist()
    shared = lnn.Linear(2, 2)
    twice = copy.deepcopy(lnn.Sequential(shared, shared))  # shared modules stay shared
    assert twice[0].weight is twice[1].weight


def test_deepcopy_of_a_non_leaf_raises_as_torch():
    import copy
    x = lucid.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(x)


def test_load_state_dict_result_prints_as_torch():
    lm, tm = lucid.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    assert repr(lm.load_state_dict(lm.state_dict())) == repr(tm.load_state_dict(tm.state_dict()))
    assert repr(lm.load_state_dict({"weight": lm.weight}, strict=False)) == \
        repr(tm.load_state_dict({"weight": tm.weight}, strict=False))
    missing, unexpected = lm.load_state_dict(lm.state_dict())
    assert missing == [] and unexpected == []


@pytest.mark.parametrize("convert", ["double", "half", "float"])
def test_conversions_keep_the_parameter_objects_an_optimizer_holds(convert):
    # torch's _apply sets param.data: an optimizer made before .double() / .half() / .to() still trains the model
    m = lnn.Linear(2, 1)
    weight, bias = m.weight, m.bias
    opt = lucid.optim.SGD(m.parameters(), lr=0.5)
    m(lucid.ones(3, 2)).sum().backward()
    getattr(m, convert)()
    assert m.weight is weight and m.bias is bias and m.weight.requires_grad
    assert m.weight.dtype == m.weight.grad.dtype == getattr(lucid, {"double": "float64", "half": "float16",
                                                                    "float": "float32"}[convert])
    before = m.weight.detach().clone()
    opt.step()
    assert (m.weight.detach() != before).all()
    assert [id(p) for p in m.parameters()] == [id(weight), id(bias)]


def test_data_of_another_dtype_converts_the_gradient_and_of_another_shape_drops_it():
    # the gradient is read with the tensor's metadata: it must never meet a dtype or shape it was not written with
    p = lnn.Parameter(lucid.zeros(2))
    p.grad = lucid.tensor([3.0, 3.0])
    p.data = p.data.double()
    assert p.grad.dtype == lucid.float64 and p.grad.tolist() == [3.0, 3.0]
    p.data = lucid.zeros(3)
    assert p.grad is None


def test_full_backward_hooks_get_a_slot_per_positional_argument_as_torch():
    # grad_input has one entry per positional argument: None for numbers and for inputs without a gradient (a
    # first layer's data), every tensor's gradient once one of them needs it
    def run(m):
        nn = m.nn
        seen = []

        def record(tag):
            return lambda mod, gi, go: seen.append((tag, [None if g is None else tuple(g.shape) for g in gi]))

        net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        net[0].register_full_backward_hook(record("first"))
        net(m.ones(5, 3)).sum().backward()

        class Product(nn.Module):
            def forward(self, a, b, k):
                return a * b * k

        product = Product()
        product.register_full_backward_hook(record("product"))
        b = m.ones(2, requires_grad=True)
        product(m.ones(2), b, 3.0).sum().backward()
        doubled = Product()
        doubled.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[1] * 2, None))
        b2 = m.ones(2, requires_grad=True)
        doubled(m.ones(2), b2, 3.0).sum().backward()
        return seen, b2.grad.tolist()

    assert run(lucid) == run(torch)
