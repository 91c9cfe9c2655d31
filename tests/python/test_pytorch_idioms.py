"""Idioms of real PyTorch programs that lucid once refused (found by running ordinary training and utility scripts
with `import lucid as torch`): torch's keyword names for sizes, the nuclear norm through torch.norm, the module and
state-dict hook APIs libraries use, torch.save / torch.load / DataLoader keywords, torch.version and
torch.distributed's checks. Each against torch on the same program."""

import io
import math
import pickle
import warnings

import pytest
import torch

import lucid
import lucid.nn as lnn
from lucid.utils.data import DataLoader, TensorDataset
from conftest import to_lucid, to_torch

pytestmark = pytest.mark.usefixtures("cpu_default")


def test_sizes_by_torchs_keywords():
    def run(m):
        t = m.arange(6.0).reshape(2, 3)
        return [t.flip(dims=[0]).tolist(), list(t.permute(dims=(1, 0)).shape), list(m.permute(t, dims=(1, 0)).shape),
                list(t.reshape(shape=(3, 2)).shape), list(m.reshape(t, shape=(6,)).shape),
                list(t.view(size=(3, 2)).shape), list(t[0:1].expand(size=(4, 3)).shape),
                list(t.repeat(repeats=(2, 1)).shape), [list(x.shape) for x in t.split(split_size=1)]]

    assert run(lucid) == run(torch)
    with pytest.raises(TypeError, match="multiple values for argument 'size'"):
        lucid.ones(2).view(2, size=(2,))
    with pytest.raises(TypeError, match="unexpected keyword argument 'shape'"):
        lucid.ones(2).view(shape=(2,))


def test_norm_with_p_nuc_is_the_matrix_nuclear_norm():
    x = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    lx = lucid.tensor(x.numpy())
    assert lucid.norm(lx[0], p="nuc").item() == pytest.approx(torch.norm(x[0], p="nuc").item(), rel=1e-12)
    got = lx.norm(p="nuc", dim=(1, 2), keepdim=True)
    want = x.norm(p="nuc", dim=(1, 2), keepdim=True)
    assert list(got.shape) == list(want.shape)
    assert got.flatten().tolist() == pytest.approx(want.flatten().tolist(), rel=1e-12)
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple"):
        lucid.norm(lx, p="nuc")


def test_module_and_state_dict_hooks_libraries_use():
    def run(m):
        calls = []
        seq = m.nn.Sequential(m.nn.Linear(1, 2), m.nn.ReLU(), m.nn.Linear(2, 3))
        popped = type(seq.pop(1)).__name__
        seq.set_submodule("0", m.nn.Linear(1, 2, bias=False))
        seq.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix, keep_vars)))
        seq._register_state_dict_hook(lambda mod, sd, prefix, meta: calls.append(("post", sorted(sd))))
        sd = seq.state_dict()
        seq[1]._register_load_state_dict_pre_hook(lambda sd, prefix, *rest: calls.append(("load", prefix)))
        seq.load_state_dict(sd)
        with pytest.raises(AttributeError):
            seq.set_submodule("5", m.nn.ReLU(), strict=True)
        return popped, [type(x).__name__ for x in seq], calls

    assert run(lucid) == run(torch)


def test_save_load_and_dataloader_take_torchs_keywords(tmp_path):
    buffer = io.BytesIO()
    lucid.save({"w": lucid.ones(2)}, buffer, pickle, _use_new_zipfile_serialization=False)
    buffer.seek(0)
    assert torch.load(buffer)["w"].tolist() == [1.0, 1.0]  # still a file torch reads
    buffer.seek(0)
    assert lucid.load(buffer, None, pickle, encoding="latin1")["w"].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="pickle_module must be None or the standard pickle module"):
        lucid.save({}, io.BytesIO(), pickle_module=io)
    with pytest.raises(TypeError, match="unexpected keyword argument 'fix_imports'"):
        lucid.load(io.BytesIO(), fix_imports=True)
    loader = DataLoader(TensorDataset(lucid.arange(4.0)), batch_size=2, pin_memory_device="cpu", in_order=False)
    assert [b[0].tolist() for b in loader] == [[0.0, 1.0], [2.0, 3.0]]
    lucid.set_default_device(device="cpu")
    assert lucid.get_default_device().type == "cpu"


def test_version_distributed_and_memory_counters_as_scripts_read_them():
    assert lucid.version.__version__ == lucid.__version__
    assert (lucid.version.cuda is None) == (not lucid._C._built_with_cuda)
    if lucid.version.cuda is not None:
        major, minor = lucid.version.cuda.split(".")
        assert int(major) >= 11 and minor.isdigit()
    assert lucid.distributed.is_available() is False and lucid.distributed.is_initialized() is False
    for counter in (lucid.gpu.memory_allocated, lucid.gpu.max_memory_allocated, lucid.gpu.memory_reserved):
        value = counter()
        assert isinstance(value, int) and (value == 0 or lucid.gpu.is_available())


def test_small_torch_behaviours_scripts_rely_on():
    def run(m):
        s = m.Size([1, 2])
        t = m.ones(2)
        out = [type(v).__name__ for v in (s + (3,), (3,) + s, s * 2, 2 * s)]
        out += [list(s + (3,)), [str(t.to(ty).dtype).split(".")[-1] for ty in (int, float, bool, complex)]]
        out += [m.device("cpu", 0).index, m.device("cpu").index, str(m.device("cpu", 0))]
        out += [f"{m.tensor(1.5):.2f}", m.typename(1), m.typename(m.ones(2)).split(".")[-1]]
        out += [m.nn.functional.cross_entropy(m.zeros(2, 3), m.tensor([0, 2], dtype=m.uint8)).item()]
        with pytest.raises(TypeError, match="unsupported format string"):
            f"{t:.2f}"
        with pytest.raises(AssertionError, match="Size mismatch between tensors"):
            m.utils.data.TensorDataset(m.ones(2), m.ones(3))
        return out

    assert run(lucid) == run(torch)


def test_set_default_tensor_type_sets_the_dtype():
    try:
        with pytest.warns(UserWarning, match="deprecated"):
            lucid.set_default_tensor_type("torch.DoubleTensor")
        assert lucid.ones(1).dtype == lucid.float64 and lucid.get_default_dtype() == lucid.float64
        with pytest.warns(UserWarning):
            lucid.set_default_tensor_type(lucid.FloatTensor)
        assert lucid.ones(1).dtype == lucid.float32 and lucid.get_default_device().type == "cpu"
        with pytest.raises(TypeError, match="only floating-point types"):
            lucid.set_default_tensor_type(lucid.LongTensor)
        with pytest.raises(TypeError, match="use set_default_dtype"):
            lucid.set_default_tensor_type(lucid.float64)
    finally:
        lucid.set_default_dtype(lucid.float32)


def test_numpy_spellings_of_dim_and_keepdim_in_reductions():
    def run(m):
        t = m.arange(12.0).reshape(3, 4)
        out = [t.sum(axis=0).tolist(), m.sum(t, axis=1, keepdims=True).tolist(), t.mean(axis=1).tolist(),
               t.max(axis=0).values.tolist(), m.argmax(t, axis=1).tolist(), t.std(axis=0).tolist(),
               m.amax(t, axis=1, keepdims=True).shape, t.any(axis=0).tolist(), t.cumsum(axis=1).tolist(),
               m.softmax(t, axis=1).sum(axis=1).round(decimals=5).tolist(), t.logsumexp(axis=0).shape, t.norm(dim=1).round(decimals=5).tolist()]
        return [list(v) if isinstance(v, m.Size) else v for v in out]

    assert run(lucid) == run(torch)
    with pytest.raises(TypeError):
        lucid.ones(2, 2).sum(axis="0")
    with pytest.raises(TypeError):
        lucid.ones(2, 2).sum(axes=0)


def test_module_list_repr_folds_runs_of_equal_children():
    def run(nn):
        blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)] + [nn.ReLU(), nn.Linear(4, 2), nn.Linear(4, 2)])
        model = nn.Sequential(nn.Linear(2, 4), nn.ModuleList([nn.Tanh()]))
        return [repr(blocks), repr(nn.ModuleList()), repr(model)]

    assert run(lnn) == run(torch.nn)
    assert "(0-2): 3 x Linear(in_features=4, out_features=4, bias=True)" in run(lnn)[0]


def test_parameter_list_and_dict_reprs_match_torchs():
    def run(m):
        pl = m.nn.ParameterList([m.nn.Parameter(m.ones(3)), m.nn.Parameter(m.ones(2, 2)), m.ones(2), "x"])
        pd = m.nn.ParameterDict({"a": m.nn.Parameter(m.ones(3)), "b": m.nn.Parameter(m.ones(2, 2, dtype=m.float64)),
                                 "c": 3})
        return (repr(pl) + repr(pd)).replace(m.__name__ + ".", "")

    assert run(lucid) == run(torch)


def test_typed_storage_reads_and_writes_the_tensors_memory():
    def run(m):
        t = m.arange(6.0).reshape(2, 3)
        v = t[1]
        s = v.storage()
        out = [len(s), s.size(), s.element_size(), s.nbytes(), s.data_ptr() == t.storage().data_ptr(),
               str(s.dtype).split(".")[-1], s.tolist(), s[4], s[-1]]
        s[0] = 10.0
        s[1:3] = 7.0
        out += [t.tolist(), m.is_storage(s), m.is_storage(t.untyped_storage()), m.is_storage(t)]
        out += [s.clone().data_ptr() != s.data_ptr(), s.untyped().nbytes()]
        with pytest.raises(IndexError, match="out of range"):
            s[6]
        with pytest.raises(RuntimeError, match="slices are only supported in UntypedStorage"):
            s[1:3]
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both warn once a process that TypedStorage is deprecated
        assert run(lucid) == run(torch)
    assert "TypedStorage(dtype=" in repr(lucid.ones(2).storage())


def test_set_points_a_tensor_at_other_memory():
    def run(m):
        a, b = m.zeros(4), m.arange(6.0)
        a.set_(b)
        b[0] = 5.0
        out = [a.tolist(), a.data_ptr() == b.data_ptr()]
        c = m.zeros(1)
        c.set_(b.untyped_storage(), 2, (2, 2), (1, 2))
        out += [c.tolist(), list(c.stride()), c.storage_offset()]
        c.set_(b.storage(), 1, (3,))
        out += [c.tolist()]
        d = m.ones(3)
        d.set_()
        out += [list(d.shape), str(d.dtype).split(".")[-1]]
        with pytest.raises(RuntimeError):
            m.zeros(2).set_(m.zeros(2, dtype=m.int64))
        with pytest.raises(RuntimeError, match="leaf"):
            m.zeros(2, requires_grad=True).set_(m.zeros(2))
        return out

    assert run(lucid) == run(torch)
    with pytest.raises(TypeError, match="expected a Tensor or a storage"):
        lucid.zeros(2).set_([1.0, 2.0])



def test_foreach_list_ops_as_emas_and_optimizers_write_them():
    def run(m):
        ps = [m.ones(2) * 2, m.ones(3) * 3]
        ema = [m.zeros(2), m.zeros(3)]
        out = [[t.tolist() for t in m._foreach_mul_(ema, 0.9)]]
        m._foreach_add_(ema, ps, alpha=0.1)
        m._foreach_addcmul_(ema, ps, ps, value=0.5)
        m._foreach_addcdiv_(ema, ps, ps, [0.5, 2.0])
        m._foreach_addcmul_(ema, ps, ps, m.tensor([1.0, -1.0]))
        m._foreach_lerp_(ema, ps, 0.25)
        m._foreach_clamp_min_(ema, 2.6)
        out.append([e.tolist() for e in ema])
        out.append([t.tolist() for t in m._foreach_add(ps, [1.0, 2.0])])
        out.append([t.tolist() for t in m._foreach_sub(ps, ema)])
        out.append([t.tolist() for t in m._foreach_pow(2.0, ps)] + [t.tolist() for t in m._foreach_pow(ps, 2)])
        out.append([t.tolist() for t in m._foreach_sqrt(ps)] + [t.tolist() for t in m._foreach_neg(ps)])
        out.append([t.item() for t in m._foreach_norm(ps)] + [t.item() for t in m._foreach_norm(ps, ord=1)])
        out.append([t.item() for t in m._foreach_max(ps)])
        m._foreach_zero_(ema)
        m._foreach_copy_(ema, ps)
        out.append([e.tolist() for e in ema])
        if hasattr(torch, "foreach"):  # (torch 2.11 has only the _foreach_ names)
            out += [m.foreach.mul_(ps, 2) is ps, type(m.foreach.exp(ps)).__name__, type(m.foreach.norm(ps)).__name__]
        for bad in ([1.0], [m.ones(2)]):
            with pytest.raises(RuntimeError) as err:
                m._foreach_add(ps, bad)
            out.append(str(err.value))
        return out

    assert run(lucid) == run(torch)


def test_softmax_without_dim_takes_torchs_implicit_choice():
    def run(m):
        F = m.nn.functional
        out = []
        for shape in [(4,), (2, 3), (2, 3, 4), (2, 3, 4, 5)]:
            x = m.arange(float(math.prod(shape))).reshape(shape) / 7
            with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
                out.append(F.softmax(x).sum(dim=0).round(decimals=5).tolist())
            with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
                out.append(m.nn.LogSoftmax()(x).exp().sum(dim=0).round(decimals=5).tolist())
            with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
                out.append(F.softmin(x).round(decimals=5).tolist())
        return out

    assert run(lucid) == run(torch)


def test_assert_and_autocast_mode():
    lucid._assert(lucid.tensor(True), "unused")
    with pytest.raises(AssertionError, match="shape mismatch"):
        lucid._assert(lucid.ones(2).shape[0] == 3, "shape mismatch")
    assert lucid.amp.autocast_mode.is_autocast_available("cpu") is torch.amp.autocast_mode.is_autocast_available("cpu")
    assert lucid.amp.autocast_mode.autocast is lucid.autocast or lucid.amp.autocast_mode.autocast is lucid.amp.autocast


def test_loss_grad_fn_names_are_torchs(device):
    # reprs print them: `tensor(0.31, grad_fn=<MseLossBackward0>)`
    def names(m):
        F = m.nn.functional
        g = torch.Generator().manual_seed(3)
        x0, t0 = torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g)
        x = (to_lucid(x0, device) if m is lucid else x0).requires_grad_()
        t = to_lucid(t0, device) if m is lucid else t0
        labels = m.tensor([0, 1, 3], device=device if m is lucid else "cpu")
        losses = [F.mse_loss(x, t), F.mse_loss(x, t, reduction="none"), F.mse_loss(x, t, reduction="sum"),
                  F.l1_loss(x, t), F.cross_entropy(x, labels), F.nll_loss(F.log_softmax(x, 1), labels),
                  F.binary_cross_entropy(x.sigmoid(), t.sigmoid()), F.binary_cross_entropy_with_logits(x, t),
                  F.smooth_l1_loss(x, t), F.huber_loss(x, t), F.kl_div(x, t, reduction="batchmean")]
        return [y.grad_fn.name() for y in losses]
    assert names(lucid) == names(torch)


def test_mse_loss_gradients_are_torchs_bits(device):
    g = torch.Generator().manual_seed(5)
    x0, t0 = torch.randn(64, 33, generator=g), torch.randn(64, 33, generator=g)
    for reduction in ("mean", "sum", "none"):
        x, t = to_lucid(x0, device).requires_grad_(), to_lucid(t0, device).requires_grad_()
        tx, tt = x0.clone().requires_grad_(), t0.clone().requires_grad_()
        y, ty = lucid.nn.functional.mse_loss(x, t, reduction=reduction), torch.nn.functional.mse_loss(tx, tt, reduction=reduction)
        y.sum().backward()
        ty.sum().backward()
        assert to_torch(y.detach().cpu()).equal(ty.detach())
        assert to_torch(x.grad.cpu()).equal(tx.grad) and to_torch(t.grad.cpu()).equal(tt.grad)
    # differentiable again (its backward is made of differentiable ops)
    x = to_lucid(x0[:3, :4].double(), device).requires_grad_()
    t = to_lucid(t0[:3, :4].double(), device)
    assert lucid.autograd.gradgradcheck(lambda a: lucid.nn.functional.mse_loss(a, t), (x,))
