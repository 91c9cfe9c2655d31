"""lucid.save / lucid.load checkpoints and the safetensors format: round trips of every
dtype, sharing, state dicts, map_location, weights_only refusing code, atomic writes,
damaged and hostile files refused cleanly (and before any large allocation), lucid's
earlier format (version 1) still read, and safetensors files exchanged with the
reference implementation both ways. Exchange with torch.save / torch.load:
test_serialization_torch.py."""

import collections
import io
import json
import math
import os
import pickle
import stat
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest
import safetensors
import safetensors.numpy
import safetensors.torch
import torch

import lucid
from lucid import _checkpoint_io as checkpoint_io
from lucid import serialization as ser
from lucid import _checkpoint_v1 as v1
from conftest import DEVICES, default_device_as
from lucid import _torch_format
from lucid.serialization import (load, load_safetensors, load_safetensors_from_bytes,
                                 load_safetensors_metadata, save, save_safetensors,
                                 save_safetensors_to_bytes)

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
               "float64", "complex64"]
FLOATS = {"float16", "bfloat16", "float32", "float64", "complex64"}
PICKLE = "archive/data.pkl"  # the records lucid.save writes (PyTorch's layout)
STORAGE = "archive/data/{}"
# The errors a damaged or hostile checkpoint may raise; anything else is a bug.
CLEAN_ERRORS = (RuntimeError, pickle.UnpicklingError, ValueError)
HAS_GPU = lucid.gpu.is_available()


def sample(name, shape=(3, 4)):
    """A tensor of dtype `name` whose values differ from element to element."""
    n = math.prod(shape)
    if name == "bool":
        return (lucid.arange(n) % 3 == 1).reshape(shape)
    if name == "complex64":
        return lucid.tensor([complex(i * 0.5, -i) for i in range(n)], dtype=lucid.complex64).reshape(shape)
    values = lucid.arange(n).to(lucid.float64) * (0.75 if name in FLOATS else 7) - 3
    return values.to(getattr(lucid, name)).reshape(shape)


def same_tensor(a, b):
    return (isinstance(a, lucid.Tensor) and a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
            and a.tolist() == b.tolist())


def round_trip(obj, sink, tmp_path, **load_kwargs):
    if sink == "path":
        path = tmp_path / "ckpt.lucid"
        save(obj, path)
        return load(path, **load_kwargs)
    buffer = io.BytesIO()
    save(obj, buffer)
    buffer.seek(0)
    return load(buffer, **load_kwargs)


def saved_bytes(obj):
    buffer = io.BytesIO()
    save(obj, buffer)
    return buffer.getvalue()


def load_bytes(data, **kwargs):
    return load(io.BytesIO(data), **kwargs)


def with_record(data, name, new_content):
    """The checkpoint `data` with one record replaced (the zip rebuilt, CRCs right): how a
    deliberately hostile file looks, as opposed to an accidentally damaged one."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            target.writestr(info.filename, new_content if info.filename == name else source.read(info))
    return out.getvalue()


def with_index(data, edit):
    """The version-1 checkpoint `data` with tensors.json changed by edit(index)."""
    index = json.loads(zipfile.ZipFile(io.BytesIO(data)).read(v1.INDEX))
    edit(index)
    return with_record(data, v1.INDEX, json.dumps(index).encode())


class _V1Pickler(pickle.Pickler):
    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.tensors, self._index = [], {}

    def persistent_id(self, obj):
        if not isinstance(obj, lucid.Tensor):
            return None
        if id(obj) not in self._index:
            self._index[id(obj)] = len(self.tensors)
            self.tensors.append(obj)  # keeps it alive, so its id is not reused
        return ("tensor", self._index[id(obj)])


def saved_v1_bytes(obj, protocol=2):
    """`obj` in lucid's format version 1, as lucid.save wrote it before it wrote PyTorch's
    layout (python/lucid/_checkpoint_v1.py describes it): the files users have."""
    buffer = io.BytesIO()
    pickler = _V1Pickler(buffer, protocol)
    pickler.dump(obj)
    ends, entries = {}, []  # storage: memory from its start to the furthest element reached
    for original in pickler.tensors:
        t = original.detach()
        entry = {"dtype": t.dtype._name, "device": "cpu" if t.device.type == "cpu" else "gpu:0",
                 "shape": list(t.shape), "strides": list(t.stride()), "storage": None, "offset": 0,
                 "requires_grad": bool(original.requires_grad), "parameter": isinstance(original, lucid.nn.Parameter)}
        if t.numel():
            key = (t._storage_data_ptr, t.dtype._name)
            end = t.storage_offset() + sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1
            if key not in ends or ends[key][1] < end:
                ends[key] = (t, end)
            entry["storage"], entry["offset"] = list(ends).index(key), t.storage_offset()
        entries.append(entry)
    storages = [t.as_strided((end,), (1,), 0).to_bytes() for t, end in ends.values()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr(v1.HEADER, json.dumps({"format": "lucid.checkpoint", "version": 1, "byteorder": "little"}))
        z.writestr(v1.PICKLE, buffer.getvalue())
        for j, data in enumerate(storages):
            z.writestr(v1.STORAGE.format(j), data)
        z.writestr(v1.INDEX, json.dumps({"storages": [{"nbytes": len(b)} for b in storages], "tensors": entries}))
    return out.getvalue()


# ---- round trips -----------------------------------------------------------------------------

@pytest.mark.parametrize("sink", ["path", "bytesio"])
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_every_dtype_round_trips(name, sink, tmp_path):
    plain = sample(name)
    strided = sample(name, (4, 3)).t()[1:]  # a non-contiguous view with an offset
    scalar = sample(name, (1,)).reshape(())
    obj = {"plain": plain, "strided": strided, "scalar": scalar, "empty": lucid.empty(0, 5, dtype=plain.dtype)}
    if name in FLOATS:
        obj["grad"] = sample(name).requires_grad_(True)
        obj["param"] = lucid.nn.Parameter(sample(name))
        obj["frozen"] = lucid.nn.Parameter(sample(name), requires_grad=False)
    out = round_trip(obj, sink, tmp_path)
    assert set(out) == set(obj)
    for key, t in obj.items():
        assert same_tensor(out[key], t), key
        assert out[key].requires_grad == t.requires_grad, key
        assert isinstance(out[key], lucid.nn.Parameter) == isinstance(t, lucid.nn.Parameter), key
        assert out[key].is_leaf and out[key].device == t.device  # where it was saved
    assert out["strided"].stride() == strided.stride()  # the view's layout is kept too


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_nested_containers_and_plain_values(protocol, tmp_path):
    t = sample("float32")
    obj = collections.OrderedDict([
        ("list", [t, 1, 2.5, "text", None, True, b"\x00raw\xff", bytearray(b"ba"), ("tuple", t)]),
        ("dict", {1: {"deep": [t[0], {"x": (None,)}]}, (2, "k"): -3}),
        ("values", {"big": 2 ** 100, "nan": float("nan"), "complex": 1 - 2j, "set": {1, 2}, "empty_bytes": b"",
                    "frozen": frozenset({"a"}), "unicode": "é∑", "dtype": lucid.bfloat16,
                    "device": lucid.device("gpu:1"), "shape": t.shape, "slice": slice(1, None, 2)}),
    ])
    save(obj, tmp_path / "c.lucid", pickle_protocol=protocol)
    out = load(tmp_path / "c.lucid")
    assert type(out) is collections.OrderedDict and list(out) == ["list", "dict", "values"]
    assert same_tensor(out["list"][0], t) and out["list"][1:8] == obj["list"][1:8]
    assert type(out["list"][7]) is bytearray and type(out["list"][8]) is tuple
    assert out["list"][8][1] is out["list"][0]  # one tensor object, one loaded object
    assert same_tensor(out["dict"][1]["deep"][0], t[0]) and out["dict"][(2, "k")] == -3
    values = out["values"]
    assert math.isnan(values.pop("nan")) and values == {k: v for k, v in obj["values"].items() if k != "nan"}
    assert values["dtype"] is lucid.bfloat16 and type(values["shape"]) is lucid.Size


def test_optimizer_state_dict_round_trips(tmp_path):
    state = {"state": {0: {"step": 3, "exp_avg": sample("float32"), "exp_avg_sq": sample("float32") ** 2},
                       1: {"step": 3, "momentum_buffer": None}},
             "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0,
                               "amsgrad": False, "params": [0, 1]}]}
    out = round_trip(state, "bytesio", tmp_path)
    assert out["param_groups"] == state["param_groups"]
    assert out["state"][1] == state["state"][1] and out["state"][0]["step"] == 3
    assert same_tensor(out["state"][0]["exp_avg_sq"], state["state"][0]["exp_avg_sq"])


def test_a_lone_tensor_round_trips(tmp_path):
    t = lucid.nn.Parameter(sample("float64"))
    out = round_trip(t, "path", tmp_path)
    assert same_tensor(out, t) and isinstance(out, lucid.nn.Parameter) and out.requires_grad


def test_state_dict_loads_into_a_fresh_module(tmp_path):
    def make():
        return lucid.nn.Sequential(lucid.nn.Linear(4, 8), lucid.nn.BatchNorm1d(8), lucid.nn.ReLU(),
                                   lucid.nn.Linear(8, 3))

    lucid.manual_seed(0)
    model = make()
    model(lucid.randn(16, 4))  # training mode: BatchNorm's running statistics move
    model.eval()
    save(model.state_dict(), tmp_path / "model.lucid")
    lucid.manual_seed(1)
    fresh = make().eval()
    x = lucid.randn(5, 4)
    assert fresh(x).tolist() != model(x).tolist()
    fresh.load_state_dict(load(tmp_path / "model.lucid"))
    assert fresh(x).tolist() == model(x).tolist()


def test_same_tensor_twice_loads_as_one_object_and_views_share_memory(tmp_path):
    base = sample("float32", (4, 5))
    obj = {"base": base, "again": base, "row": base[1], "corner": base[2:, 3:], "column": base[:, 0]}
    out = round_trip(obj, "path", tmp_path)
    assert out["again"] is out["base"]
    for key, t in obj.items():
        assert same_tensor(out[key], t), key
    out["base"][2, 3] = 100.0
    assert out["corner"][0, 0].item() == 100.0  # views of one buffer again
    out["row"][0] = -1.0
    assert out["column"][1].item() == -1.0 and out["base"][1, 0].item() == -1.0


def test_a_view_saves_only_the_memory_it_reaches():
    big = lucid.zeros(100_000)
    assert len(saved_bytes(big[500:510])) < 2_000
    assert len(saved_bytes(big)) > 400_000


def test_loaded_tensors_own_their_memory():
    t = sample("int32")
    out = load_bytes(saved_bytes({"t": t}))["t"]
    out[0, 0] = 999
    assert t[0, 0].item() != 999


def test_saving_is_deterministic():
    obj = {"a": sample("float32"), "b": [sample("int8"), "x"]}
    assert saved_bytes(obj) == saved_bytes(obj)


def test_the_archive_is_a_plain_documented_zip(tmp_path):
    w = sample("float32")
    save({"w": w, "v": w[1:]}, tmp_path / "c.lucid")  # one storage for both
    archive = zipfile.ZipFile(tmp_path / "c.lucid")
    assert archive.testzip() is None
    assert archive.namelist() == ["archive/data.pkl", "archive/.format_version", "archive/.storage_alignment",
                                  "archive/byteorder", "archive/data/0", "archive/version",
                                  "archive/.data/serialization_id"]  # torch.save's records, in its order
    assert [archive.read(f"archive/{n}") for n in (".format_version", ".storage_alignment", "byteorder",
                                                   "version")] == [b"1", b"64", b"little", b"3\n"]
    assert archive.read("archive/.data/serialization_id").isdigit()
    assert all(info.compress_type == zipfile.ZIP_STORED for info in archive.infolist())


def test_files_the_version_1_writer_wrote_still_load():
    # fuzz/corpus/load/v1_*: written by lucid.save before it wrote PyTorch's layout
    corpus = os.path.join(os.path.dirname(__file__), "..", "..", "fuzz", "corpus", "load")
    base = lucid.arange(10.0)
    views = load(os.path.join(corpus, "v1_shared_views.lucid"))
    for out, want in zip(views, [base[2:5], base[::3], base, base.reshape(2, 5).t()]):
        assert same_tensor(out, want) and out.stride() == want.stride()
    assert len({t._storage_data_ptr for t in views}) == 1
    values = load(os.path.join(corpus, "v1_containers.lucid"))
    assert values["g"] == lucid.Size([2, 3]) and values["h"] is lucid.float16 and values["c"] == frozenset({"x"})
    params = load(os.path.join(corpus, "v1_param_grad.lucid"))
    assert isinstance(params["w"], lucid.nn.Parameter) and params["g"].requires_grad and params["e"].shape == (0, 2)


def test_version_1_checkpoints_still_load(tmp_path):
    base = sample("float32", (4, 5))
    obj = collections.OrderedDict(
        w=base, view=base[1:, ::2], p=lucid.nn.Parameter(sample("bfloat16")), flags=sample("bool"),
        empty=lucid.empty(0, 2), extra=[1, 2.5, "s", None, b"b", {1}, frozenset({2}), slice(1, 2), 1j,
                                        lucid.float16, lucid.device("cpu"), lucid.Size([2, 3])])
    path = tmp_path / "old.lucid"
    path.write_bytes(saved_v1_bytes(obj))
    for out in (load(path), load(path, mmap=True), load(path, weights_only=False)):
        assert type(out) is collections.OrderedDict and list(out) == list(obj)
        for key in ("w", "view", "p", "flags", "empty"):
            assert same_tensor(out[key], obj[key]), key
        assert out["view"].stride() == obj["view"].stride()
        assert out["view"]._storage_data_ptr == out["w"]._storage_data_ptr
        assert isinstance(out["p"], lucid.nn.Parameter) and out["p"].requires_grad
        assert out["extra"] == obj["extra"] and out["extra"][9] is lucid.float16


def test_mmap_loads_in_place_without_touching_the_file(tmp_path):
    path = tmp_path / "c.lucid"
    obj = {"w": sample("float64", (64, 8)), "b": sample("int16"), "flag": sample("bool")}
    save(obj, path)
    before = path.read_bytes()
    out = load(path, mmap=True)
    for key, t in obj.items():
        assert same_tensor(out[key], t), key
    out["w"][0, 0] = 12345.0  # copy-on-write: the process sees it, the file does not
    assert out["w"][0, 0].item() == 12345.0 and path.read_bytes() == before
    with pytest.raises(ValueError, match="mmap=True needs a path"):
        load(io.BytesIO(before), mmap=True)


def test_unseekable_file_objects_work():
    class Stream(io.RawIOBase):
        def __init__(self, data=b""):
            self.data, self.chunks = io.BytesIO(data), []

        def readable(self):
            return True

        def writable(self):
            return True

        def readinto(self, b):
            return self.data.readinto(b)

        def write(self, b):
            self.chunks.append(bytes(b))
            return len(b)

    t = sample("float32")
    sink = Stream()
    save({"t": t}, sink)
    assert same_tensor(load(Stream(b"".join(sink.chunks)))["t"], t)


# ---- map_location ----------------------------------------------------------------------------

def gpu_checkpoint():
    """A version-1 checkpoint whose tensors were saved on gpu:0, as one from a GPU machine
    is (PyTorch-layout ones: test_serialization_torch.py)."""
    t = sample("float32")
    data = saved_v1_bytes({"t": t, "view": t[1:], "empty": lucid.empty(0)})

    def to_gpu(index):
        for entry in index["tensors"]:
            entry["device"] = "gpu:0"
    return with_index(data, to_gpu), t


@pytest.mark.parametrize("map_location", [None, "cpu", lucid.device("cpu"), {"cpu": "cpu"},
                                          lambda t, location: t, lambda t, location: None])
@pytest.mark.usefixtures("cpu_default")  # a checkpoint saved on the CPU
def test_map_location_forms_for_a_cpu_checkpoint(map_location):
    t = sample("float32")
    out = load_bytes(saved_bytes({"t": t}), map_location=map_location)["t"]
    assert same_tensor(out, t) and out.device == lucid.device("cpu")


@pytest.mark.skipif(HAS_GPU, reason="checks the message of a machine without a GPU")
def test_a_gpu_checkpoint_without_a_gpu_asks_for_map_location():
    data, _ = gpu_checkpoint()
    with pytest.raises(RuntimeError, match=r"saved on gpu:0.*no usable GPU.*map_location='cpu'"):
        load_bytes(data)


@pytest.mark.parametrize("map_location", ["cpu", lucid.device("cpu"), {"gpu:0": "cpu"}, {"cuda:0": "cpu"},
                                          {"cuda": lucid.device("cpu")}])
def test_a_gpu_checkpoint_maps_to_the_cpu(map_location):
    data, t = gpu_checkpoint()
    out = load_bytes(data, map_location=map_location)
    assert same_tensor(out["t"], t) and out["t"].device == lucid.device("cpu")
    assert out["view"].tolist() == t[1:].tolist() and out["empty"].shape == (0,)


@pytest.mark.parametrize("default", DEVICES)
def test_map_location_callable_sees_each_storage_once_with_its_location(default):
    data, t = gpu_checkpoint()
    calls = []

    def move(storage, location):
        calls.append((tuple(storage.shape), storage.device, location))
        return storage

    with default_device_as(default):  # a storage is read onto the CPU, whatever the default
        out = load_bytes(data, map_location=move)
    assert same_tensor(out["t"], t) and out["view"]._storage_data_ptr == out["t"]._storage_data_ptr
    # one call for the shared storage, one for the tensor without elements
    assert sorted(calls) == [((0,), lucid.device("cpu"), "gpu:0"), ((12,), lucid.device("cpu"), "gpu:0")]


def test_bad_map_locations_are_refused():
    data = saved_bytes({"t": sample("float32")})
    with pytest.raises(TypeError, match="map_location must be"):
        load_bytes(data, map_location=3.5)
    with pytest.raises(RuntimeError, match="Invalid device string"):
        load_bytes(data, map_location="tpu")
    with pytest.raises(TypeError, match="map_location returned"):
        load_bytes(data, map_location=lambda t, location: "not a tensor")
    with pytest.raises(TypeError, match="map_location returned"):
        load_bytes(data, map_location=lambda t, location: t[:2])


@pytest.mark.skipif(not HAS_GPU, reason="needs a GPU")
def test_gpu_tensors_return_to_the_gpu(tmp_path):
    t = sample("float32").to("gpu")
    obj = {"t": t, "view": t[1:], "p": lucid.nn.Parameter(sample("bfloat16").to("gpu"))}
    out = round_trip(obj, "path", tmp_path)
    assert out["t"].device == lucid.device("gpu:0") and same_tensor(out["t"].cpu(), t.cpu())
    assert out["view"]._storage_data_ptr == out["t"]._storage_data_ptr
    assert isinstance(out["p"], lucid.nn.Parameter) and out["p"].device == lucid.device("gpu:0")
    cpu = load(tmp_path / "ckpt.lucid", map_location="cpu")
    assert cpu["t"].device == lucid.device("cpu") and same_tensor(cpu["t"], t.cpu())


# ---- weights_only ----------------------------------------------------------------------------

class Point:  # a plain class: loadable only with weights_only=False
    def __init__(self, x, y):
        self.x, self.y = x, y


class RunsCode:
    def __init__(self, call, args):
        self.call, self.args = call, args

    def __reduce__(self):
        return self.call, self.args


@pytest.mark.parametrize("make", [
    lambda marker: RunsCode(os.system, (f"touch {marker}",)),
    lambda marker: RunsCode(open, (str(marker), "w")),
    lambda marker: RunsCode(eval, (f"open({str(marker)!r}, 'w')",)),
    lambda marker: RunsCode(getattr, ("text", "upper")),
], ids=["os.system", "open", "eval", "getattr"])
def test_weights_only_refuses_code_without_running_it(make, tmp_path):
    marker = tmp_path / "pwned"
    data = saved_bytes({"weights": sample("float32"), "payload": make(marker)})
    with pytest.raises(pickle.UnpicklingError, match=r"refused the global '\w+\.\w+'.*weights_only=False"):
        load_bytes(data)
    assert not marker.exists()


def test_weights_only_refuses_a_hand_made_global(tmp_path):
    marker = tmp_path / "pwned"
    payload = f"cos\nsystem\n(Vtouch {marker}\ntR.".encode()  # protocol 0, no pickler involved
    data = with_record(saved_bytes(None), PICKLE, payload)
    with pytest.raises(pickle.UnpicklingError, match="refused the global 'os.system'"):
        load_bytes(data)
    assert not marker.exists()


@pytest.mark.parametrize("payload, message", [
    (b"\x80\x02c__builtin__\nbytearray\nJ\x00\x00\x00\x7f\x85R.", "only be rebuilt from bytes"),
    (b"\x80\x02c__builtin__\nbytes\nJ\x00\x00\x00\x7f\x85R.", "only be rebuilt from bytes"),
    (b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00xX\x04\x00\x00\x00zlib\x86R.", "only as pickle uses it"),
    (b"\x80\x02clucid._dtype\n_dtype_by_name\nX\x06\x00\x00\x00system\x85R.", "unknown lucid dtype"),
], ids=["bytearray(n)", "bytes(n)", "codecs", "dtype"])
def test_weights_only_allowed_globals_build_data_only(payload, message):
    data = with_record(saved_bytes(None), PICKLE, payload)
    with pytest.raises(pickle.UnpicklingError, match=message):
        load_bytes(data)


def test_weights_only_false_loads_a_plain_class_and_true_names_it():
    data = saved_bytes({"point": Point(1, sample("float32")), "w": sample("int64")})
    with pytest.raises(pickle.UnpicklingError, match="refused the global 'test_serialization.Point'"):
        load_bytes(data)
    out = load_bytes(data, weights_only=False)
    assert isinstance(out["point"], Point) and out["point"].x == 1
    assert same_tensor(out["point"].y, sample("float32"))


def test_a_whole_module_loads_with_weights_only_false():
    model = lucid.nn.Sequential(lucid.nn.Linear(3, 2), lucid.nn.Tanh())
    data = saved_bytes(model)
    with pytest.raises(pickle.UnpicklingError, match="refused the global 'lucid.nn.modules"):
        load_bytes(data)
    loaded = load_bytes(data, weights_only=False)
    x = lucid.randn(4, 3)
    assert loaded(x).tolist() == model(x).tolist() and isinstance(loaded[0].weight, lucid.nn.Parameter)


# ---- atomic writes ---------------------------------------------------------------------------

def test_a_failing_pickle_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "model.lucid"
    save({"w": sample("float32")}, path)
    before = path.read_bytes()
    with pytest.raises((TypeError, pickle.PicklingError, AttributeError)):
        save({"a": sample("float64"), "b": sample("int8"), "bad": lambda: 0, "c": sample("float32")}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["model.lucid"]


def test_a_failure_while_writing_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "model.lucid"
    save({"w": sample("float32")}, path)
    before = path.read_bytes()
    real_read, reads = _torch_format._StorageSpan.read, []

    def fail_on_second(span):
        reads.append(span)
        if len(reads) == 2:
            raise OSError("disk full (simulated)")
        return real_read(span)

    monkeypatch.setattr(_torch_format._StorageSpan, "read", fail_on_second)
    with pytest.raises(OSError, match="disk full"):
        save({"a": sample("float64"), "b": sample("int8"), "c": sample("float32")}, path)
    assert len(reads) == 2  # it failed midway through the archive, with a temporary file open
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["model.lucid"]


def test_replacing_a_file_keeps_its_permissions_and_symlinks(tmp_path):
    path = tmp_path / "model.lucid"
    save({"w": sample("float32")}, path)
    os.chmod(path, 0o600)
    link = tmp_path / "latest.lucid"
    link.symlink_to(path)
    save({"w": sample("int32")}, link)
    assert link.is_symlink() and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert same_tensor(load(path)["w"], sample("int32"))
    assert sorted(os.listdir(tmp_path)) == ["latest.lucid", "model.lucid"]


# ---- damaged, foreign and hostile checkpoints -----------------------------------------------

def checkpoint_for_damage():
    return {"w": sample("float32", (2, 3)), "b": sample("bool", (5,)), "n": 3, "s": "name"}


def test_truncated_files_are_refused():
    data = saved_bytes(checkpoint_for_damage())
    for length in sorted({0, 1, 4, 10, 30, 100, len(data) // 2, len(data) - 22, len(data) - 1}):
        with pytest.raises(RuntimeError, match="not a readable lucid checkpoint"):
            load_bytes(data[:length])


def record_data_positions(data):
    """The byte positions of the records' contents (not the zip's own headers)."""
    positions = set()
    for info in zipfile.ZipFile(io.BytesIO(data)).infolist():
        _, name_length, extra_length = checkpoint_io.LOCAL_HEADER.unpack_from(data, info.header_offset)
        start = info.header_offset + checkpoint_io.LOCAL_HEADER.size + name_length + extra_length
        positions.update(range(start, start + info.file_size))
    return positions


def test_every_flipped_byte_is_refused_or_harmless():
    """A flip anywhere gives a clean error, or (in a zip field nobody reads, such as a
    timestamp or the alignment padding) the original contents; never other contents and
    never a crash. In the records themselves every flip is caught (CRC-32)."""
    original = checkpoint_for_damage()
    data = saved_bytes(original)
    refused = set()
    for position in range(len(data)):
        damaged = bytearray(data)
        damaged[position] ^= 0x5A
        try:
            out = load_bytes(bytes(damaged))
        except CLEAN_ERRORS:
            refused.add(position)
            continue
        assert set(out) == set(original) and out["n"] == 3 and out["s"] == "name", position
        assert same_tensor(out["w"], original["w"]) and same_tensor(out["b"], original["b"]), position
    assert record_data_positions(data) <= refused


@pytest.mark.filterwarnings("ignore::FutureWarning")  # torch.jit's deprecation notice
def test_other_formats_are_named():
    with pytest.raises(RuntimeError, match="the file is empty"):
        load_bytes(b"")
    with pytest.raises(RuntimeError, match="plain pickle"):
        load_bytes(pickle.dumps({"a": 1}, protocol=2))
    with pytest.raises(RuntimeError, match="use lucid.load_safetensors"):
        load_bytes(save_safetensors_to_bytes({"a": sample("float32")}))
    scripted = io.BytesIO()
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), scripted)
    with pytest.raises(RuntimeError, match="TorchScript archive"):
        load_bytes(scripted.getvalue())
    with pytest.raises(RuntimeError, match="zip signature"):
        load_bytes(b"hello world, not a checkpoint")


def test_a_newer_format_version_is_named():
    data = with_record(saved_v1_bytes(None), v1.HEADER,
                       b'{"format": "lucid.checkpoint", "version": 2, "byteorder": "little"}')
    with pytest.raises(RuntimeError, match="format version 2; this lucid reads version 1"):
        load_bytes(data)


def index_edit(path, value):
    def edit(index):
        target = index
        for key in path[:-1]:
            target = target[key]
        if value is DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return edit


class _Delete:
    """Marks a key to remove (a fixed repr keeps the test ids equal across xdist workers)."""

    def __repr__(self):
        return "DELETE"


DELETE = _Delete()
HUGE = 2 ** 40


@pytest.mark.parametrize("path, value, message", [
    (("storages", 0, "nbytes"), HUGE, "more than the whole"),
    (("storages", 0, "nbytes"), 8, "reaches byte 24 of storage 0, which has 8"),
    (("storages", 0, "nbytes"), 48, "should have 48 bytes, but its record has 24"),
    (("tensors", 0, "shape"), [HUGE, 3], "reaches byte"),
    (("tensors", 0, "shape"), [2 ** 32, 2 ** 32], "more than lucid can address"),
    (("tensors", 0, "strides"), [-3, 1], "non-negative integers"),
    (("tensors", 0, "strides"), [3], "of one length"),
    (("tensors", 0, "offset"), 5, "reaches byte"),
    (("tensors", 0, "offset"), -1, "invalid offset"),
    (("tensors", 0, "storage"), 7, "not in the file"),
    (("tensors", 0, "storage"), None, "not in the file"),
    (("tensors", 0, "dtype"), "object", "unknown dtype"),
    (("tensors", 0, "device"), "tpu:0", "invalid device"),
    (("tensors", 0, "requires_grad"), 1, "true or false"),
    (("tensors", 1, "requires_grad"), True, "only floating and complex"),
    (("tensors", 0, "parameter"), DELETE, "must be an object with the keys"),
    (("tensors",), "everything", "lists 'storages' and 'tensors'"),
], ids=lambda v: str(v)[:30])
def test_hostile_tensor_index_is_refused_before_allocating(path, value, message):
    data = with_index(saved_v1_bytes({"w": sample("float32", (2, 3)), "i": sample("int64", (2,))}),
                      index_edit(path, value))
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError, match=message):
            load_bytes(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 << 20


def test_hostile_pickle_is_refused_before_allocating():
    data = saved_bytes({"w": sample("float32")})
    # BINBYTES8 claiming 2**40 bytes: the unpickler would allocate them before reading.
    lying = b"\x80\x04\x8e" + struct.pack("<Q", HUGE) + b"abc."
    tracemalloc.start()
    try:
        with pytest.raises(pickle.UnpicklingError, match="data.pkl .* is damaged"):
            load_bytes(with_record(data, PICKLE, lying))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 << 20
    with pytest.raises(pickle.UnpicklingError, match=r"refers to \('tensor', 5\)"):
        load_bytes(with_record(data, PICKLE, pickle.dumps(("tensor", 5), protocol=2)[:2]
                               + b"(X\x06\x00\x00\x00tensorK\x05tQ."))
    with pytest.raises(pickle.UnpicklingError, match="cannot be unpickled"):
        load_bytes(with_record(data, PICKLE, b"\x80\x02}q\x00(K\x01e."))  # APPENDS onto a dict


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pickle's warning for a bad escape in a string
@pytest.mark.parametrize("write, record", [(saved_bytes, PICKLE), (saved_v1_bytes, v1.PICKLE),
                                          (saved_v1_bytes, v1.INDEX)], ids=["data.pkl", "v1-data.pkl", "v1-tensors.json"])
def test_randomly_rewritten_records_fail_cleanly(write, record):
    """Records edited at random and re-zipped with a valid CRC, as an attacker would:
    each load raises one of the clean errors or loads; nothing else escapes."""
    import random

    data = write({"w": sample("float32"), "b": [sample("bool", (5,)), b"xy", {1, 2}, 1 + 2j, lucid.float16],
                        "od": collections.OrderedDict(a=(1, None))})
    original = zipfile.ZipFile(io.BytesIO(data)).read(record)
    rng = random.Random(0)
    for _ in range(300):
        edited = bytearray(original)
        for _ in range(rng.randint(1, 4)):
            position = rng.randrange(len(edited))
            if rng.random() < 0.6:
                edited[position] = rng.randrange(256)
            elif rng.random() < 0.5:
                del edited[position]
            else:
                edited.insert(position, rng.randrange(256))
        try:
            load_bytes(with_record(data, record, bytes(edited)))
        except CLEAN_ERRORS:
            pass


def test_a_bool_storage_with_other_bytes_is_refused():
    data = saved_bytes({"b": sample("bool", (4,))})
    with pytest.raises(RuntimeError, match="bytes other than 0 and 1"):
        load_bytes(with_record(data, STORAGE.format(0), b"\x00\x01\x02\x01"))


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(ValueError, match="pickle_protocol must be an int from 2"):
        save({}, tmp_path / "x", pickle_protocol=1)
    with pytest.raises(TypeError, match="f must be a path"):
        save({}, 42)
    with pytest.raises(TypeError, match="f must be a path"):
        load(42)
    with pytest.raises(TypeError, match="weights_only must be True or False"):
        load_bytes(saved_bytes({}), weights_only="yes")
    assert not os.listdir(tmp_path)


# ---- safetensors -----------------------------------------------------------------------------

def torch_of(t):
    return torch.tensor(t.tolist(), dtype=getattr(torch, t.dtype._name)).reshape(tuple(t.shape))


def lucid_of(t):
    return lucid.tensor(t.tolist(), dtype=getattr(lucid, str(t.dtype).split(".")[-1])).reshape(tuple(t.shape))


def all_dtypes_dict():
    tensors = {name: sample(name) for name in DTYPE_NAMES}
    tensors["strided"] = sample("float32", (4, 3)).t()[1:]
    tensors["scalar"] = sample("float64", (1,)).reshape(())
    tensors["empty"] = lucid.empty(0, 3, dtype=lucid.int16)
    return tensors


def test_lucid_files_load_in_the_reference_readers(tmp_path):
    tensors = all_dtypes_dict()
    path = tmp_path / "m.safetensors"
    save_safetensors(tensors, path, metadata={"format": "pt", "note": "é"})
    by_torch = safetensors.torch.load_file(path)
    assert set(by_torch) == set(tensors)
    for name, t in tensors.items():
        assert by_torch[name].dtype == getattr(torch, t.dtype._name), name
        assert torch.equal(by_torch[name], torch_of(t)), name
    by_numpy = safetensors.numpy.load(path.read_bytes().replace(b'"BF16"', b'"F16" '))  # numpy has no bf16
    for name, t in tensors.items():
        if name != "bfloat16":
            assert by_numpy[name].shape == tuple(t.shape) and by_numpy[name].tolist() == t.tolist(), name
    with safetensors.safe_open(path, "np") as f:
        assert f.metadata() == {"format": "pt", "note": "é"}


def test_lucid_writes_the_reference_bytes():
    tensors = all_dtypes_dict()
    expected = safetensors.torch.save({k: torch_of(t) for k, t in tensors.items()}, metadata={"format": "pt"})
    assert save_safetensors_to_bytes(tensors, metadata={"format": "pt"}) == expected
    assert save_safetensors_to_bytes({}) == safetensors.torch.save({})


def test_reference_files_load_in_lucid(tmp_path):
    torch_tensors = {name: torch_of(sample(name)) for name in DTYPE_NAMES}
    torch_tensors["big"] = torch.arange(10_000, dtype=torch.float32).reshape(100, 100)
    safetensors.torch.save_file(torch_tensors, tmp_path / "t.safetensors", metadata={"k": "v"})
    loaded = load_safetensors(tmp_path / "t.safetensors")
    assert set(loaded) == set(torch_tensors)
    for name, t in torch_tensors.items():
        assert same_tensor(loaded[name], lucid_of(t)), name
    assert load_safetensors_metadata(tmp_path / "t.safetensors") == {"k": "v"}
    numpy_arrays = {"f": np.linspace(-1, 1, 7, dtype=np.float32), "i": np.arange(6, dtype=np.int64).reshape(2, 3),
                    "b": np.array([True, False]), "h": np.array([[0.5, -2]], dtype=np.float16)}
    safetensors.numpy.save_file(numpy_arrays, tmp_path / "n.safetensors")
    loaded = load_safetensors(tmp_path / "n.safetensors")
    for name, a in numpy_arrays.items():
        assert loaded[name].tolist() == a.tolist() and tuple(loaded[name].shape) == a.shape, name
    assert load_safetensors_metadata(tmp_path / "n.safetensors") == {}


def test_safetensors_bytes_round_trip_and_shared_memory():
    base = sample("float32", (3, 4))
    data = save_safetensors_to_bytes({"base": base, "row": base[1], "t": base.t()}, {"a": "b"})
    out = load_safetensors_from_bytes(data)
    assert same_tensor(out["base"], base) and same_tensor(out["row"], base[1]) and same_tensor(out["t"], base.t())
    out["base"][1, 0] = 100.0  # each tensor was written out in full: no sharing on load
    assert out["row"][0].item() == base[1, 0].item()
    assert load_safetensors_from_bytes(bytearray(data))["t"].tolist() == base.t().tolist()


def test_safetensors_refuses_bad_input_to_save(tmp_path):
    t = sample("float32")
    for tensors, metadata, error, message in [
        ([t], None, TypeError, "expects a dict"),
        ({1: t}, None, TypeError, "names must be str"),
        ({"a": [1.0]}, None, TypeError, "must be a lucid.Tensor"),
        ({"__metadata__": t}, None, ValueError, "reserved"),
        ({"a": t}, {"k": 1}, TypeError, "map str to str"),
        ({"a": t}, ["k"], TypeError, "metadata must be a dict"),
    ]:
        with pytest.raises(error, match=message):
            save_safetensors(tensors, tmp_path / "x.safetensors", metadata)
    assert not os.listdir(tmp_path)


def test_safetensors_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "m.safetensors"
    save_safetensors({"a": sample("float32")}, path)
    before = path.read_bytes()
    real, calls = ser.S.tensor_bytes, []

    def fail_on_second(t):
        calls.append(t)
        if len(calls) == 2:
            raise OSError("disk full (simulated)")
        return real(t)

    monkeypatch.setattr(ser.S, "tensor_bytes", fail_on_second)
    with pytest.raises(OSError, match="disk full"):
        save_safetensors({"x": sample("float32"), "y": sample("int8"), "z": sample("int16")}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["m.safetensors"]


def safetensors_file(header, data=b"", length=None):
    """A safetensors file with a header written by hand (dict, str or raw bytes)."""
    if isinstance(header, dict):
        header = json.dumps(header)
    if isinstance(header, str):
        header = header.encode()
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header) if length is None else length) + header + data


def entry(dtype="F32", shape=(2,), offsets=(0, 8)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


TB = 2 ** 40
HOSTILE_SAFETENSORS = {
    "empty file": (b"", "fewer than the 8"),
    "header length past the end": (safetensors_file({"a": entry()}, bytes(8), length=4096), "truncated"),
    "header length of terabytes": (safetensors_file({}, length=TB), "more than the 100000000"),
    "invalid JSON": (safetensors_file('{"a": {"dtype": "F32",'), "not valid JSON"),
    "not UTF-8": (safetensors_file(b'{"\xff": 1}'), "not valid UTF-8"),
    "not an object": (safetensors_file("[1, 2]"), "must be a JSON object"),
    "unknown dtype": (safetensors_file({"a": entry(dtype="F33")}, bytes(8)), "unknown dtype 'F33'"),
    "dtype lucid lacks": (safetensors_file({"a": entry(dtype="U16", shape=(4,))}, bytes(8)),
                          "U16, which lucid does not support"),
    "negative shape": (safetensors_file({"a": entry(shape=(-2,))}, bytes(8)), "non-negative integers"),
    "float shape": (safetensors_file({"a": entry(shape=(2.0,))}, bytes(8)), "non-negative integers"),
    "offsets not a pair": (safetensors_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0]}},
                                            bytes(8)), "two non-negative integers"),
    "missing field": (safetensors_file({"a": {"dtype": "F32", "shape": [2]}}, bytes(8)), "lacks data_offsets"),
    "wrong byte count": (safetensors_file({"a": entry(shape=(3,))}, bytes(8)), "needs 12 bytes"),
    "terabyte shape": (safetensors_file({"a": entry(shape=(TB, TB), offsets=(0, 8))}, bytes(8)), "needs"),
    "terabyte shape, matching offsets": (safetensors_file({"a": entry(shape=(TB,), offsets=(0, 4 * TB))},
                                                          bytes(8)), "cover 4398046511104 bytes"),
    "offsets past the end": (safetensors_file({"a": entry(offsets=(8, 16))}, bytes(8)), "leaves a gap"),
    "overlapping offsets": (safetensors_file({"a": entry(), "b": entry(offsets=(4, 12))}, bytes(12)),
                            "overlaps"),
    "hole between tensors": (safetensors_file({"a": entry(), "b": entry(offsets=(12, 20))}, bytes(20)),
                             "leaves a gap"),
    "extra bytes at the end": (safetensors_file({"a": entry()}, bytes(16)), "extra bytes"),
    "duplicate name": (safetensors_file('{"a": %s, "a": %s}' % (json.dumps(entry()),
                                                                json.dumps(entry(offsets=(8, 16)))),
                                        bytes(16)), "'a' appears twice"),
    "metadata not strings": (safetensors_file({"__metadata__": {"k": 1}}), "string values"),
    "deeply nested JSON": (safetensors_file("[" * 100_000 + "]" * 100_000), "not valid JSON"),
    "bool bytes": (safetensors_file({"a": entry(dtype="BOOL", shape=(2,), offsets=(0, 2))}, b"\x01\x07"),
                   "bytes other than 0 and 1"),
}


@pytest.mark.parametrize("case", list(HOSTILE_SAFETENSORS))
def test_hostile_safetensors_are_refused_before_allocating(case, tmp_path):
    data, message = HOSTILE_SAFETENSORS[case]
    path = tmp_path / "hostile.safetensors"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=message):
            load_safetensors(path)
        with pytest.raises(ValueError, match=message):
            load_safetensors_from_bytes(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 << 20
    if case not in ("dtype lucid lacks", "bool bytes", "duplicate name"):  # the reference accepts these
        with pytest.raises(Exception):
            safetensors.numpy.load(data)


def test_load_safetensors_onto_a_missing_gpu_says_so(tmp_path):
    path = tmp_path / "m.safetensors"
    save_safetensors({"a": sample("float32")}, path)
    if HAS_GPU:
        assert load_safetensors(path, device="gpu")["a"].device == lucid.device("gpu:0")
    else:
        with pytest.raises(RuntimeError, match="no usable GPU.*device='cpu'"):
            load_safetensors(path, device="gpu")
