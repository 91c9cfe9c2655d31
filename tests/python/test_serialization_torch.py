"""Checkpoints between lucid and PyTorch, both ways: lucid.save -> torch.load (with
torch's default weights_only=True) and torch.save -> lucid.load, for tensors of every
dtype, views sharing storage, non-contiguous views, Parameters, requires_grad, module
and optimizer state dicts, nested containers and plain values; hostile pickles refused;
the safe-globals API checked against torch.serialization's, case by case."""

import collections
import io
import math
import os
import pickle
import subprocess
import sys
import zipfile

import pytest
import torch

import lucid
from lucid import serialization as ser
from conftest import DEVICES, default_device_as

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
               "float64", "complex64"]
FLOATS = {"float16", "bfloat16", "float32", "float64", "complex64"}
HAS_GPU = lucid.gpu.is_available()


def sample(lib, name, shape=(3, 4)):
    """The same tensor of dtype `name` in lucid or torch (`lib`), values differing."""
    n = math.prod(shape)
    dtype = getattr(lib, name)
    if name == "bool":
        return (lib.arange(n) % 3 == 1).reshape(shape)
    if name == "complex64":
        return lib.tensor([complex(i * 0.5, -i) for i in range(n)], dtype=dtype).reshape(shape)
    values = lib.arange(n).to(lib.float64) * (0.75 if name in FLOATS else 7) - 3
    return values.to(dtype).reshape(shape)


def dtype_name(t):
    return str(t.dtype).split(".")[-1]


def assert_same(a, b, where=""):
    """a and b (lucid and torch objects, either side) hold the same things: tensors of one
    dtype, shape, strides, values and autograd flags; equal containers and values."""
    if isinstance(a, (lucid.Tensor, torch.Tensor)):
        assert isinstance(b, (lucid.Tensor, torch.Tensor)) and type(a) is not type(b), where
        assert dtype_name(a) == dtype_name(b) and tuple(a.shape) == tuple(b.shape), where
        assert tuple(a.stride()) == tuple(b.stride()) and a.requires_grad == b.requires_grad, where
        assert isinstance(a, (lucid.nn.Parameter, torch.nn.Parameter)) == \
            isinstance(b, (lucid.nn.Parameter, torch.nn.Parameter)), where
        assert a.tolist() == b.tolist(), where
    elif isinstance(a, dict):
        assert type(a) is type(b) and list(a) == list(b), where
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)) and not isinstance(a, (lucid.Size, torch.Size)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, (lucid.dtype, torch.dtype, lucid.device, torch.device, lucid.Size, torch.Size)):
        assert str(a).split(".")[-1].replace("cuda", "gpu") == str(b).split(".")[-1].replace("cuda", "gpu"), where
        assert isinstance(a, (lucid.Size, torch.Size)) == isinstance(b, (lucid.Size, torch.Size)), where
    else:
        assert type(a) is type(b) and a == b, where


def lucid_bytes(obj, **kwargs):
    buffer = io.BytesIO()
    lucid.save(obj, buffer, **kwargs)
    return buffer.getvalue()


def torch_bytes(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def to_torch(data, **kwargs):
    return torch.load(io.BytesIO(data), **kwargs)


def to_lucid(data, **kwargs):
    return lucid.load(io.BytesIO(data), **kwargs)


def every_kind(lib, name):
    """One object with each kind of tensor of dtype `name`, made in `lib`."""
    base = sample(lib, name, (4, 5))
    obj = {"plain": sample(lib, name), "base": base, "row": base[1], "corner": base[2:, 3:],
           "transposed": base.t(), "strided": base[:, ::2], "scalar": sample(lib, name, (1,)).reshape(()),
           "empty": lib.empty(0, 5, dtype=base.dtype)}
    if name in FLOATS:
        obj["grad"] = sample(lib, name).requires_grad_(True)
        obj["param"] = lib.nn.Parameter(sample(lib, name))
        obj["frozen"] = lib.nn.Parameter(sample(lib, name), requires_grad=False)
    return obj


def assert_views_share(out, lib_storage):
    for key in ("row", "corner", "transposed", "strided"):
        assert lib_storage(out[key]) == lib_storage(out["base"]), key


# ---- tensors, both ways ------------------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_lucid_checkpoints_load_in_torch(name):
    obj = every_kind(lucid, name)
    out = to_torch(lucid_bytes(obj))  # torch's default: weights_only=True
    assert_same(obj, out)
    assert_views_share(out, lambda t: t.untyped_storage().data_ptr())
    out["base"][1, 0] = 1  # views of one storage again, in torch
    assert out["transposed"][0, 1].item() == 1 and out["row"][0].item() == 1
    assert_same(obj, to_torch(lucid_bytes(obj), weights_only=False))


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_torch_checkpoints_load_in_lucid(name):
    obj = every_kind(torch, name)
    out = to_lucid(torch_bytes(obj))
    assert_same(out, obj)
    assert_views_share(out, lambda t: t._storage_data_ptr)
    out["base"][1, 0] = 1
    assert out["transposed"][0, 1].item() == 1 and out["row"][0].item() == 1
    assert_same(to_lucid(torch_bytes(obj), weights_only=False), obj)


def test_the_same_tensor_twice_is_one_object_both_ways():
    t = sample(lucid, "float32")
    out = to_torch(lucid_bytes([t, t, (t,)]))
    assert out[0] is out[1] is out[2][0]
    back = to_lucid(torch_bytes(out))
    assert back[0] is back[1] is back[2][0] and back[0].tolist() == t.tolist()


def plain_values(lib):
    return collections.OrderedDict([
        ("list", [1, -2, 2 ** 40, 2.5, float("inf"), "text é", None, True, False, b"\x00raw\xff"]),
        ("tuple", (1, ("nested", [None, {"deep": sample(lib, "int64", (2,))}]))),
        ("dict", {1: "int key", (2, "k"): -3, "set": {1, 2}, "complex": 1 - 2j, "bytearray": bytearray(b"ba")}),
        ("dtypes", [lib.float16, lib.bfloat16, lib.bool, lib.complex64]),
        ("device", lib.device("cpu")), ("shape", lib.Size([2, 3])), ("empty", {})])


def test_nested_containers_and_values_both_ways():
    out = to_torch(lucid_bytes(plain_values(lucid)))
    assert_same(plain_values(lucid), out)
    assert out["dtypes"][0] is torch.float16 and type(out["shape"]) is torch.Size
    back = to_lucid(torch_bytes(plain_values(torch)))
    assert_same(back, plain_values(torch))
    assert back["dtypes"][1] is lucid.bfloat16 and type(back["shape"]) is lucid.Size
    assert back["device"] == lucid.device("cpu")


def test_gpu_devices_travel_as_cuda():
    out = to_torch(lucid_bytes({"d": lucid.device("gpu:1"), "g": lucid.device("gpu")}))
    assert out == {"d": torch.device("cuda", 1), "g": torch.device("cuda", 0)}
    back = to_lucid(torch_bytes({"d": torch.device("cuda", 1), "g": torch.device("cuda")}))
    assert back["d"] == lucid.device("gpu:1") and back["g"].type == "gpu"


# ---- state dicts -------------------------------------------------------------------------------

def models():
    def make(nn):
        return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
    lucid.manual_seed(0)
    ours = make(lucid.nn)
    ours(lucid.randn(16, 4))  # training mode: BatchNorm's running statistics move
    return ours.eval(), make(torch.nn).eval()


def test_a_lucid_state_dict_loads_into_a_torch_module():
    ours, theirs = models()
    state = to_torch(lucid_bytes(ours.state_dict()))
    assert type(state) is collections.OrderedDict
    assert_same(ours.state_dict(), state)
    theirs.load_state_dict(state)
    x = [[0.5 * i - j for j in range(4)] for i in range(5)]
    got, want = theirs(torch.tensor(x)).tolist(), ours(lucid.tensor(x)).tolist()
    assert all(math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6) for r, s in zip(got, want) for a, b in zip(r, s))


def test_a_torch_state_dict_loads_into_a_lucid_module():
    ours, theirs = models()
    torch.manual_seed(3)
    theirs.train()(torch.randn(16, 4))
    theirs.eval()
    state = to_lucid(torch_bytes(theirs.state_dict()))
    assert type(state) is collections.OrderedDict
    assert state._metadata == theirs.state_dict()._metadata  # kept, as torch.load keeps it
    assert_same(state, theirs.state_dict())
    ours.load_state_dict(state)
    x = [[0.5 * i - j for j in range(4)] for i in range(5)]
    got, want = ours(lucid.tensor(x)).tolist(), theirs(torch.tensor(x)).tolist()
    assert all(math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6) for r, s in zip(got, want) for a, b in zip(r, s))


def optimizer_state(lib):
    model = lib.nn.Linear(3, 2)
    with lib.no_grad():
        model.weight.copy_(lib.arange(6.0).reshape(2, 3) / 10)
        model.bias.zero_()
    opt = lib.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(2):
        opt.zero_grad()
        model(lib.ones(4, 3)).sum().backward()
        opt.step()
    return opt.state_dict()


def test_optimizer_state_dicts_both_ways():
    ours, theirs = optimizer_state(lucid), optimizer_state(torch)
    out = to_torch(lucid_bytes(ours))
    assert_same(ours, out)
    torch.optim.Adam(torch.nn.Linear(3, 2).parameters()).load_state_dict(out)
    back = to_lucid(torch_bytes(theirs))
    assert_same(back, theirs)
    lucid.optim.Adam(lucid.nn.Linear(3, 2).parameters()).load_state_dict(back)


# ---- locations, mmap, layout -------------------------------------------------------------------

def saved_on_cuda():
    """A lucid checkpoint whose storages are recorded on cuda:0, as a GPU machine's are."""
    t = sample(lucid, "float32")
    data = lucid_bytes({"t": t, "view": t[1:], "empty": lucid.empty(0)})
    records = {i.filename: z.read(i) for z in [zipfile.ZipFile(io.BytesIO(data))] for i in z.infolist()}
    records["archive/data.pkl"] = records["archive/data.pkl"].replace(b"X\x03\x00\x00\x00cpu",
                                                                      b"X\x06\x00\x00\x00cuda:0")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, body in records.items():
            z.writestr(name, body)
    return out.getvalue(), t


@pytest.mark.parametrize("map_location", ["cpu", lucid.device("cpu"), {"cuda:0": "cpu"}, {"gpu:0": "cpu"}])
def test_a_cuda_checkpoint_maps_to_the_cpu(map_location):
    data, t = saved_on_cuda()
    out = to_lucid(data, map_location=map_location)
    assert out["t"].device == lucid.device("cpu") and out["t"].tolist() == t.tolist()
    assert out["view"]._storage_data_ptr == out["t"]._storage_data_ptr and out["empty"].shape == (0,)
    assert to_torch(data, map_location="cpu")["view"].tolist() == t[1:].tolist()


@pytest.mark.parametrize("default", DEVICES)
def test_map_location_callables_see_the_saved_location(default):
    data, t = saved_on_cuda()
    calls = []

    def keep_on_cpu(storage, location):
        calls.append((storage.numel(), storage.device, location))
        return storage

    with default_device_as(default):  # storages are read onto the CPU, whatever the default
        out = to_lucid(data, map_location=keep_on_cpu)
    assert out["t"].tolist() == t.tolist() and out["t"].device == lucid.device("cpu")
    # once per storage (the tensor and its view share one), with the location as saved
    assert sorted(calls) == [(0, lucid.device("cpu"), "cuda:0"), (12, lucid.device("cpu"), "cuda:0")]


@pytest.mark.skipif(HAS_GPU, reason="checks the message of a machine without a GPU")
def test_a_cuda_checkpoint_without_a_gpu_asks_for_map_location():
    with pytest.raises(RuntimeError, match=r"saved on cuda:0.*no usable GPU.*map_location='cpu'"):
        to_lucid(saved_on_cuda()[0])


def test_mmap_both_ways(tmp_path):
    obj = {"w": sample(lucid, "float64", (64, 8)), "b": sample(lucid, "bool", (7,))}
    lucid.save(obj, tmp_path / "ours.pt")
    assert_same(obj, torch.load(tmp_path / "ours.pt", mmap=True))
    torch.save(to_torch(lucid_bytes(obj)), tmp_path / "theirs.pt")
    out = lucid.load(tmp_path / "theirs.pt", mmap=True)
    assert_same(out, torch.load(tmp_path / "theirs.pt"))


def test_torch_files_named_after_their_path_and_other_torch_layouts(tmp_path):
    torch.save({"x": torch.ones(2)}, tmp_path / "my.model.pt")  # records under my.model/
    assert zipfile.ZipFile(tmp_path / "my.model.pt").namelist()[0] == "my.model/data.pkl"
    assert lucid.load(tmp_path / "my.model.pt")["x"].tolist() == [1.0, 1.0]
    legacy = io.BytesIO()
    torch.save({"x": torch.ones(2)}, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="plain pickle"):
        to_lucid(legacy.getvalue())
    z = to_lucid(torch_bytes({"z": torch.tensor([1 + 2j, -1e-300j], dtype=torch.complex128)}))["z"]
    assert z.dtype == lucid.complex128 and z.tolist() == [1 + 2j, -1e-300j]
    with_attribute = torch.ones(2)
    with_attribute.note = "x"  # torch pickles it through torch._tensor._rebuild_from_type_v2
    with pytest.raises(pickle.UnpicklingError, match="carries the Python attribute 'note'"):
        to_lucid(torch_bytes(with_attribute))
    subclassed = to_lucid(torch_bytes(torch.ones(2).as_subclass(torch.nn.Parameter)))
    assert isinstance(subclassed, lucid.nn.Parameter) and subclassed.tolist() == [1.0, 1.0]


def test_saving_needs_no_torch(tmp_path):
    path = tmp_path / "c.pt"
    code = ("import sys; sys.modules['torch'] = None\n"  # any `import torch` now fails
            "import lucid\n"
            f"lucid.save({{'w': lucid.nn.Parameter(lucid.ones(2, 2)), 'd': lucid.int8}}, {str(path)!r})\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(lucid.__file__)))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    out = torch.load(path)
    assert out["d"] is torch.int8 and isinstance(out["w"], torch.nn.Parameter)


# ---- hostile files and weights_only --------------------------------------------------------------

class RunsCode:
    def __init__(self, call, args):
        self.call, self.args = call, args

    def __reduce__(self):
        return self.call, self.args


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


def both_load(data):
    """('ok' or the exception type) for torch.load and lucid.load of `data`, weights_only=True."""
    outcomes = []
    for loader in (to_torch, to_lucid):
        try:
            loader(data, weights_only=True)
            outcomes.append("ok")
        except pickle.UnpicklingError:
            outcomes.append("refused")
    return outcomes


@pytest.mark.parametrize("save_with", [torch_bytes, lucid_bytes], ids=["torch.save", "lucid.save"])
def test_malicious_pickles_are_refused_without_running(save_with, tmp_path):
    marker = tmp_path / "pwned"
    data = save_with({"w": torch.ones(2) if save_with is torch_bytes else lucid.ones(2),
                      "payload": RunsCode(os.system, (f"touch {marker}",))})
    with pytest.raises(pickle.UnpicklingError, match=r"refused the global '(posix|nt)\.system'"):
        to_lucid(data)
    with ser.safe_globals([os.system]):  # modules os/posix/nt stay blocked, as in torch
        assert both_load(data) == ["refused", "refused"]
    assert not marker.exists()


def test_safe_globals_allow_what_torch_allows():
    for save_with, make in ((torch_bytes, torch.ones), (lucid_bytes, lucid.ones)):
        data = save_with({"p": Point(1, make(2)), "w": make(3)})
        assert both_load(data) == ["refused", "refused"]
        with pytest.raises(pickle.UnpicklingError, match=r"refused the global 'test_serialization_torch\.Point'"
                                                         r".*add_safe_globals"):
            to_lucid(data)
        with torch.serialization.safe_globals([Point]), ser.safe_globals([Point]):
            assert both_load(data) == ["ok", "ok"]
            assert ser.get_safe_globals() == [Point]
            out = to_lucid(data)
            assert isinstance(out["p"], Point) and out["p"].x == 1 and out["p"].y.tolist() == [1.0, 1.0]
        assert ser.get_safe_globals() == [] and both_load(data) == ["refused", "refused"]
        # The (global, name) form allows the name given, not the one the file uses.
        with torch.serialization.safe_globals([(Point, "x.Point")]), ser.safe_globals([(Point, "x.Point")]):
            assert both_load(data) == ["refused", "refused"]
        named = (Point, "test_serialization_torch.Point")
        # torch's own list holds globals torch registered itself: it is left as it is.
        with torch.serialization.safe_globals([named]):
            ser.add_safe_globals([named])
            try:
                assert both_load(data) == ["ok", "ok"]
                assert ser.get_safe_globals() == [named] and named in torch.serialization.get_safe_globals()
            finally:
                ser.clear_safe_globals()
            assert ser.get_safe_globals() == [] and both_load(data) == ["ok", "refused"]  # torch, lucid
        assert to_lucid(data, weights_only=False)["p"].x == 1


def test_unsafe_globals_are_listed_as_torch_lists_them():
    data = torch_bytes({"p": Point(1, 2), "od": collections.OrderedDict(), "t": torch.ones(1)})
    assert ser.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == \
        torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == ["test_serialization_torch.Point"]


def test_bad_safe_globals_are_refused():
    with pytest.raises(ValueError, match="Expected tuple of length 2"):
        ser.add_safe_globals([(Point,)])
    with pytest.raises(TypeError, match="Expected second item in tuple to be str"):
        ser.add_safe_globals([(Point, 3)])
    with pytest.raises(TypeError, match="expects a list"):
        ser.add_safe_globals(Point)
    with pytest.raises(TypeError, match="must be functions or classes"):
        ser.safe_globals([3])
    assert ser.get_safe_globals() == []


class MyNet(lucid.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = lucid.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x).tanh()


def test_a_whole_model_loads_with_its_classes_allowed():
    model = MyNet()
    data = lucid_bytes(model)
    with pytest.raises(pickle.UnpicklingError, match="refused the global"):
        to_lucid(data)
    assert ser.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == ["test_serialization_torch.MyNet",
                                                                      "lucid.nn.modules.linear.Linear"]
    with ser.safe_globals([MyNet]):
        with pytest.raises(pickle.UnpicklingError, match="refused the global 'lucid.nn.modules.linear.Linear'"):
            to_lucid(data)
    with ser.safe_globals([MyNet, lucid.nn.Linear]):
        assert ser.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == []
        loaded = to_lucid(data)
    x = lucid.randn(4, 3)
    assert isinstance(loaded, MyNet) and loaded(x).tolist() == model(x).tolist()
    assert isinstance(loaded.fc.weight, lucid.nn.Parameter) and loaded.fc.weight.requires_grad
    loaded = to_lucid(data, weights_only=False)
    assert isinstance(loaded, MyNet) and isinstance(loaded.fc.weight, lucid.nn.Parameter)


def storage_record(data, key="0"):
    return zipfile.ZipFile(io.BytesIO(data)).read(f"archive/data/{key}")


def with_records(data, **changes):
    """The torch-layout checkpoint `data` with records replaced (name -> bytes, or None to drop)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            body = changes.get(info.filename.split("/", 1)[1], source.read(info))
            if body is not None:
                target.writestr(info.filename, body)
    return out.getvalue()


@pytest.mark.parametrize("change, message", [
    ({"version": b"11\n"}, "PyTorch file format version"),
    ({"version": None}, "archive/version is missing"),
    ({"byteorder": b"big"}, "written on a big-endian machine"),
    ({"data/0": b"\x00" * 8}, "should have 24 bytes"),
    ({"data/0": None}, "archive/data/0 is missing"),
    ({".storage_alignment": b"x"}, "is not a number"),
])
def test_damaged_torch_layouts_are_refused(change, message):
    data = torch_bytes({"w": torch.ones(2, 3)})
    with pytest.raises(RuntimeError, match=message):
        to_lucid(with_records(data, **change))


def hand_made(pid_or_args):
    """A torch-layout checkpoint of one float storage whose data.pkl is hand-written."""
    return with_records(torch_bytes(torch.ones(6)), **{"data.pkl": pid_or_args})


@pytest.mark.parametrize("payload, message", [
    (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00"
     b"\x000X\x03\x00\x00\x00cpuJ\x00\x00\x00\x01tQK\x00K\x01\x85K\x01\x85\x89}tR.", "claims 16777216 float32"),
    (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00"
     b"\x000X\x03\x00\x00\x00cpuK\x06tQK\x04K\x03\x85K\x01\x85\x89}tR.", "reaches element 6 of a storage of 6"),
    (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00"
     b"\x000X\x03\x00\x00\x00cpuK\x06tQK\x00K\x03\x85K\x01\x85\x88}tR.", None),
    (b"\x80\x02(X\x06\x00\x00\x00tensorK\x00tQ.", r"refers to \('tensor', 0\), which is not a storage"),
    (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(K\x01K\x00K\x01\x85K\x01\x85\x89}tR.", "not from a storage"),
    (b"\x80\x02cbuiltins\nlist\n)R.", "refused the global 'builtins.list'"),
    (b"\x80\x02ccollections\nOrderedDict\n)R}b.", None),
    (b"\x80\x02]K\x01ccollections\nOrderedDict\n)Rb.", "cannot be unpickled.*BUILD"),
], ids=["huge-numel", "past-storage", "ok", "v1-pid", "no-storage", "list", "od-build", "bad-build"])
def test_hostile_torch_pickles_are_refused(payload, message):
    if message is None:
        to_lucid(hand_made(payload))
        return
    with pytest.raises((pickle.UnpicklingError, RuntimeError), match=message):
        to_lucid(hand_made(payload))


class Calls:
    """An allowed class whose instances are callable: allowing the class must not allow
    calling what it makes."""

    called = False

    def __call__(self, *args):
        Calls.called = True


def test_allowing_a_class_does_not_allow_calling_its_instances():
    data = hand_made(b"\x80\x02ctest_serialization_torch\nCalls\n)\x81)R.")  # Calls.__new__(Calls)()
    with torch.serialization.safe_globals([Calls]), ser.safe_globals([Calls]):
        assert both_load(data) == ["refused", "refused"]
        with pytest.raises(pickle.UnpicklingError, match="REDUCE may call only allowed globals"):
            to_lucid(data)
    assert not Calls.called
    assert both_load(hand_made(b"\x80\x02ctest_serialization_torch\nCalls\n)\x81.")) == ["refused", "refused"]
