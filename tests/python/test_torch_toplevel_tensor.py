"""Tensor methods of torch's that lucid composes (python/lucid/_tensor_extras.py):
output_nr, sgn_, const_data_ptr, dim_order, nonzero_static, record_stream, apply_ /
map_ / map2_, as_subclass, new and is_inference, against PyTorch."""

import pytest
import torch

import lucid
from conftest import assert_same, shares_storage, to_lucid


def test_output_nr():
    x = lucid.randn(3, requires_grad=True)
    tx = torch.randn(3, requires_grad=True)
    assert x.output_nr == tx.output_nr == 0
    assert [t.output_nr for t in x.unbind()] == [t.output_nr for t in tx.unbind()] == [0, 1, 2]
    assert [t.output_nr for t in x.split(1)] == [t.output_nr for t in tx.split(1)]
    with pytest.raises(AttributeError):
        x.output_nr = 1


@pytest.mark.parametrize("values,dtype", [([1, 0, -2], "int64"), ([1.5, -0.0, -2.0], "float32"),
                                          ([1 + 1j, 0j, -3j], "complex64")])
def test_sgn_(values, dtype, device):
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    lt = to_lucid(t, device)
    assert lt.sgn_() is lt
    if device == "gpu" and dtype == "complex64":  # z / |z|: the GPU's |z| may differ in the last bit
        torch.testing.assert_close(torch.tensor(lt.cpu().tolist(), dtype=t.dtype), t.clone().sgn_())
    else:
        assert_same(lt.cpu(), t.clone().sgn_())


def test_sgn_keeps_graph():
    x = lucid.tensor([1.0, -2.0], requires_grad=True)
    y = x * 1
    y.sgn_()
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_const_data_ptr():
    x = lucid.arange(6.0)
    assert x.const_data_ptr() == x.data_ptr()
    assert x[2:].const_data_ptr() == x.data_ptr() + 2 * x.element_size()


DIM_ORDER_CASES = [
    lambda m: m.empty(2, 3, 5, 7), lambda m: m.empty(2, 3, 5, 7).transpose(1, 2),
    lambda m: m.empty(2, 3, 5, 7).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
    lambda m: m.empty(1, 2, 3, 4), lambda m: m.empty(3), lambda m: m.empty(()), lambda m: m.empty(4, 5).t(),
    lambda m: m.empty(2, 1, 3), lambda m: m.empty(3, 4, 5).permute(2, 0, 1),
]


@pytest.mark.parametrize("make", DIM_ORDER_CASES)
def test_dim_order(make):
    assert make(lucid).dim_order() == make(torch).dim_order()


@pytest.mark.parametrize("make", DIM_ORDER_CASES)
@pytest.mark.parametrize("check", [True, ["contiguous_format"], ["contiguous_format", "channels_last"]])
def test_dim_order_ambiguity_check(make, check):
    def run(m):
        arg = check if check is True else [getattr(m, f) for f in check]
        try:
            return make(m).dim_order(ambiguity_check=arg)
        except RuntimeError as e:
            return ("RuntimeError", str(e))
    assert run(lucid) == run(torch)


def test_dim_order_bad_argument():
    with pytest.raises(TypeError, match="must be a bool or a list of memory formats"):
        lucid.empty(2, 3).dim_order(ambiguity_check="ILLEGAL")
    with pytest.raises(TypeError, match="must be a bool or a list of memory formats"):
        lucid.empty(2, 3).dim_order(ambiguity_check=[1])


@pytest.mark.parametrize("size,fill", [(2, -1), (5, -7), (0, -1), (4, 9)])
@pytest.mark.parametrize("data", [[[0, 1, 0], [2, 0, 3]], [0.5, float("nan"), 0.0], 5, 0])
def test_nonzero_static(data, size, fill, device):
    t = torch.tensor(data)
    lt = to_lucid(t, device)
    expected = torch.nonzero_static(t, size=size, fill_value=fill)
    assert_same(lt.nonzero_static(size=size, fill_value=fill).cpu(), expected)
    assert_same(lucid.nonzero_static(lt, size=size, fill_value=fill).cpu(), expected)


def test_nonzero_static_errors_and_out():
    x = lucid.tensor([1, 0, 2])
    with pytest.raises(RuntimeError, match="'size' must be an non-negative integer"):
        x.nonzero_static(size=-1)
    with pytest.raises(TypeError):
        x.nonzero_static(3)
    with pytest.raises(TypeError, match="'size' must be int, not float"):
        x.nonzero_static(size=1.5)
    out = lucid.empty(0, dtype=lucid.int64)
    assert lucid.nonzero_static(x, size=3, out=out) is out
    assert out.tolist() == [[0], [2], [-1]]


@pytest.mark.usefixtures("cpu_default")  # the CPU's behaviour, against torch's CPU tensors
def test_record_stream():
    with pytest.raises(RuntimeError, match="lucid.cuda.Stream"):
        lucid.randn(2).record_stream(3)
    stream = lucid.cuda.Stream.__new__(lucid.cuda.Stream)  # (made without a GPU to ask)
    stream.device_index, stream.priority = 0, 0
    with pytest.raises(NotImplementedError, match="GPU tensors"):
        lucid.randn(2).record_stream(stream)


@pytest.mark.skipif(not lucid.gpu.is_available(), reason="needs a GPU")
def test_record_stream_gpu_is_a_no_op():
    x = lucid.randn(4, device="gpu")
    assert x.record_stream(lucid.cuda.current_stream()) is None
    assert x.cpu().numel() == 4


# ---- apply_ / map_ / map2_ ----------------------------------------------------------------------
@pytest.mark.usefixtures("cpu_default")  # the CPU's behaviour, against torch's CPU tensors
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "bool", "complex64"])
def test_apply_(dtype):
    t = torch.tensor([1, 0, 2, 3]).to(getattr(torch, dtype))
    lt = to_lucid(t)
    fn = (lambda v: not v) if dtype == "bool" else (lambda v: v * 2)
    assert lt.apply_(fn) is lt
    assert_same(lt, t.clone().apply_(fn))


@pytest.mark.usefixtures("cpu_default")  # the CPU's behaviour, against torch's CPU tensors
@pytest.mark.parametrize("dtype", ["int32", "float32", "bool", "complex64", "uint8"])
@pytest.mark.parametrize("result", ["a", 2.9, True, 1 + 2j, None, 300, -1.5, float("nan")])
def test_apply_result_conversion(dtype, result):
    def run(m):
        t = m.tensor([1, 0, 2]).to(getattr(m, dtype))
        try:
            t.apply_(lambda v: result)
            return t.tolist()
        except (TypeError, RuntimeError) as e:
            return type(e).__name__
    assert str(run(lucid)) == str(run(torch))


@pytest.mark.usefixtures("cpu_default")  # the CPU's behaviour, against torch's CPU tensors
def test_apply_on_views_and_order():
    base = lucid.arange(6.0).view(2, 3)
    view = base.t()
    seen = []
    view.apply_(lambda v: seen.append(v) or v + 10)
    tview = torch.arange(6.0).view(2, 3).t()
    tseen = []
    tview.apply_(lambda v: tseen.append(v) or v + 10)
    assert seen == tseen
    assert base.tolist() == [[10.0, 11.0, 12.0], [13.0, 14.0, 15.0]]


@pytest.mark.usefixtures("cpu_default")  # the CPU's behaviour, against torch's CPU tensors
def test_map_and_map2():
    a, b = torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([10.0, 20.0])
    c = torch.tensor([[1.0], [2.0]])
    la = to_lucid(a)
    assert la.map_(to_lucid(b), lambda x, y: x + y) is la
    assert_same(la, a.clone().map_(b, lambda x, y: x + y))
    la = to_lucid(a)
    la.map2_(to_lucid(b), to_lucid(c), lambda x, y, z: x + y * z)
    assert_same(la, a.clone().map2_(b, c, lambda x, y, z: x + y * z))


@pytest.mark.usefixtures("cpu_default")  # the CPU's behaviour, against torch's CPU tensors
def test_callable_fill_errors():
    x = lucid.tensor([1.0, 2.0])
    g = lucid.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call apply_\(\) on Variable that requires grad"):
        g.apply_(lambda v: v)
    with pytest.raises(RuntimeError, match=r"Can't call map_\(\) on Variable that requires grad"):
        x.map_(g, lambda a, b: a)
    with pytest.raises(RuntimeError, match=r"Can't call map2_\(\) on Variable that requires grad"):
        g.map2_(x, x, lambda a, b, c: a)
    with pytest.raises(TypeError, match="map_: expected"):
        x.map_(lucid.tensor([1, 2]), lambda a, b: a)
    with pytest.raises(TypeError, match="map2_: expected"):
        x.map2_(x, lucid.tensor([1, 2]), lambda a, b, c: a)
    with pytest.raises(TypeError, match=r"map_\(\): argument 'other' \(position 1\) must be Tensor, not list"):
        x.map_([1.0, 2.0], lambda a, b: a)
    with pytest.raises(RuntimeError, match="expand"):
        x.map_(lucid.ones(3), lambda a, b: a)
    with pytest.raises(TypeError, match="not callable"):
        x.apply_(5)


@pytest.mark.skipif(not lucid.gpu.is_available(), reason="needs a GPU")
def test_apply_refuses_gpu_tensors():
    with pytest.raises(TypeError, match="only implemented on CPU tensors"):
        lucid.ones(2, device="gpu").apply_(lambda v: v)


# ---- as_subclass, new, is_inference ---------------------------------------------------------------
def test_as_subclass():
    class Mine(lucid.Tensor):
        def __init__(self, *args):
            raise AssertionError("as_subclass does not call __init__")

    x = lucid.randn(3, requires_grad=True)
    y = x.as_subclass(Mine)
    assert type(y) is Mine and isinstance(y, lucid.Tensor)
    assert shares_storage(y, x) and y.requires_grad
    (y * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert type(x.as_subclass(lucid.Tensor)) is lucid.Tensor
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        x.as_subclass(int)


NEW_FORMS = [((), {}), ((2, 3), {}), (((2, 3),), {}), (([1, 2],), {}), ((torch.Size([2]),), {}),
             (([1, 2],), {"device": "cpu"})]


@pytest.mark.usefixtures("cpu_default")  # the CPU's behaviour, against torch's CPU tensors
@pytest.mark.parametrize("args,kwargs", NEW_FORMS)
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_new(args, kwargs, dtype):
    t = torch.zeros(2, dtype=getattr(torch, dtype))
    expected = t.new(*args, **kwargs)
    largs = tuple(lucid.Size(a) if isinstance(a, torch.Size) else a for a in args)
    out = to_lucid(t).new(*largs, **kwargs)
    assert tuple(out.shape) == tuple(expected.shape)
    assert str(out.dtype).split(".")[-1] == dtype and out.device.type == "cpu"
    if args and isinstance(args[0], (list, tuple)) and not isinstance(args[0], torch.Size):
        assert out.tolist() == expected.tolist()


def test_new_from_tensor_and_errors():
    x = lucid.zeros(2, dtype=lucid.float64)
    y = lucid.tensor([1.0, 2.0], dtype=lucid.float64)
    alias = x.new(y)
    assert shares_storage(alias, y) and alias.tolist() == [1.0, 2.0]
    with pytest.raises(TypeError):
        x.new(lucid.tensor([1, 2]))
    with pytest.raises(TypeError, match="new"):
        x.new([1, 2], dtype=lucid.int32)
    with pytest.raises(TypeError, match="data must be a sequence"):
        x.new(3.5)


def test_is_inference_method():
    with lucid.inference_mode():
        x = lucid.ones(2)
    assert x.is_inference() is False
    assert torch.ones(2).is_inference() is False
