"""lucid.nn.parallel against torch.nn.parallel: DataParallel runs the module on one device with
torch's attribute names, state_dict keys and repr; DistributedDataParallel imports and says
what it needs. On a machine without a GPU torch's DataParallel is the module itself, and so
is lucid's; the GPU half of the tests runs where lucid has a GPU."""

import sys

import pytest
import torch

import lucid
from lucid.nn.parallel import DataParallel, DistributedDataParallel, data_parallel

needs_no_gpu = pytest.mark.skipif(lucid.gpu.is_available() or torch.cuda.is_available(),
                                  reason="compares with torch's behaviour without an accelerator")
needs_gpu = pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")


def twin_linears(seed=0):
    ours = lucid.nn.Linear(3, 2)
    theirs = torch.nn.Linear(3, 2)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(ours.weight.tolist()))
        theirs.bias.copy_(torch.tensor(ours.bias.tolist()))
    return ours, theirs


def test_the_names_programs_import_are_the_same_objects():
    # as in torch, lucid.nn.parallel.data_parallel is the function; the file is in sys.modules
    assert lucid.nn.DataParallel is DataParallel is sys.modules["lucid.nn.parallel.data_parallel"].DataParallel
    assert lucid.nn.parallel.DistributedDataParallel is DistributedDataParallel
    assert lucid.nn.parallel.distributed.DistributedDataParallel is DistributedDataParallel
    assert callable(lucid.nn.parallel.data_parallel) and lucid.nn.parallel.data_parallel is data_parallel
    assert set(lucid.nn.parallel.__all__) <= set(torch.nn.parallel.__all__)
    assert issubclass(DataParallel, lucid.nn.Module) and issubclass(DistributedDataParallel, lucid.nn.Module)


@needs_no_gpu
def test_dataparallel_without_gpu_is_the_module_as_torchs():
    ours, theirs = twin_linears()
    dp, tdp = DataParallel(ours), torch.nn.DataParallel(theirs)
    assert dp.module is ours and tdp.module is theirs
    assert dp.device_ids == tdp.device_ids == []
    assert hasattr(dp, "output_device") == hasattr(tdp, "output_device")
    assert list(dp.state_dict()) == list(tdp.state_dict()) == ["module.weight", "module.bias"]
    assert [n for n, _ in dp.named_parameters()] == [n for n, _ in tdp.named_parameters()]
    assert repr(dp) == repr(tdp)
    x = [[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]]
    out, tout = dp(lucid.tensor(x)), tdp(torch.tensor(x))
    assert out.flatten().tolist() == pytest.approx(tout.flatten().tolist(), abs=1e-6)


@needs_no_gpu
def test_dataparallel_passes_keyword_arguments_and_gradients_through():
    class Scaled(lucid.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lucid.nn.Linear(3, 1)

        def forward(self, x, *, scale=1.0):
            return self.lin(x) * scale

    model = DataParallel(Scaled())
    x = lucid.randn(4, 3)
    model(x, scale=2.0).sum().backward()
    expected = (x.sum(0) * 2.0).tolist()
    assert model.module.lin.weight.grad.flatten().tolist() == pytest.approx(expected, rel=1e-5)


def test_dataparallel_state_dict_round_trips_with_torchs():
    ours, theirs = twin_linears()
    dp = DataParallel(lucid.nn.Linear(3, 2))
    dp.load_state_dict({k: lucid.tensor(v.tolist()) for k, v in torch.nn.DataParallel(theirs).state_dict().items()})
    assert dp.module.weight.flatten().tolist() == pytest.approx(theirs.weight.flatten().tolist())
    tdp = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    tdp.load_state_dict({k: torch.tensor(v.tolist()) for k, v in DataParallel(ours).state_dict().items()})
    assert tdp.module.bias.tolist() == pytest.approx(ours.bias.tolist())


@needs_no_gpu
def test_functional_data_parallel_needs_a_device_as_torchs():
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        torch.nn.parallel.data_parallel(torch.nn.Linear(2, 2), torch.zeros(1, 2))
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        data_parallel(lucid.nn.Linear(2, 2), lucid.zeros(1, 2))


def test_distributed_data_parallel_says_it_needs_lucid_distributed():
    model = lucid.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="needs lucid.distributed"):
        DistributedDataParallel(model)
    with pytest.raises(RuntimeError, match="needs lucid.distributed"):
        DistributedDataParallel(model, device_ids=[0], output_device=0, find_unused_parameters=True)
    assert not isinstance(model, DistributedDataParallel)


@needs_gpu
def test_dataparallel_on_a_gpu_moves_the_module_to_device_ids_0():
    model = lucid.nn.Linear(3, 2)
    dp = DataParallel(model, device_ids=[0])
    assert dp.device_ids == [0] and dp.output_device == 0 and dp.src_device_obj == lucid.device("gpu", 0)
    assert all(p.device == lucid.device("gpu", 0) for p in dp.parameters())
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    model.to("cpu")
    with pytest.raises(RuntimeError, match=r"module must have its parameters and buffers on device gpu:0"):
        dp(lucid.zeros(1, 3))


@needs_gpu
def test_dataparallel_checks_its_device_ids():
    with pytest.raises(RuntimeError, match="is not a GPU of this machine"):
        DataParallel(lucid.nn.Linear(3, 2), device_ids=[lucid.gpu.device_count()])
    with pytest.raises(ValueError, match="Expected a non cpu device"):
        DataParallel(lucid.nn.Linear(3, 2), device_ids=["cpu"])
    with pytest.raises(TypeError, match="a device id must be"):
        DataParallel(lucid.nn.Linear(3, 2), device_ids=[1.5])
