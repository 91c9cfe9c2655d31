"""Upstream Lucid's lucid.save_sharded / lucid.load_sharded (python/lucid/_sharded.py): a
checkpoint as a folder of lucid.save shards of bounded size and an index."""

import collections
import os
import pickle

import numpy as np
import pytest
import torch

import lucid
import lucid.nn as nn


class Custom:  # (not on the weights-only allow-list)
    def __init__(self, v):
        self.v = v


def files(path):
    return sorted(os.listdir(path))


def test_round_trip_keeps_values_containers_and_shared_storage(tmp_path):
    lucid.manual_seed(0)
    m = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64))
    sd = m.state_dict()
    base = lucid.arange(10, dtype=lucid.float64)
    obj = {"model": sd, "step": 7, "names": ("a", "b"), "views": [base, base[2:5]], "half": lucid.ones(3).half(),
           "ints": lucid.tensor([1, 2, 3]), "same": [sd["0.bias"], sd["0.bias"]]}
    lucid.save_sharded(obj, tmp_path / "ck", shard_size_mb=40_000 / 2 ** 20)
    names = files(tmp_path / "ck")
    assert names[0] == "index.pt" and len(names) > 2 and all(n.startswith("shard-") for n in names[1:])
    got = lucid.load_sharded(tmp_path / "ck")
    assert isinstance(got["model"], collections.OrderedDict) and list(got["model"]) == list(sd)
    for k, v in sd.items():
        np.testing.assert_array_equal(got["model"][k].numpy(), v.numpy())
    assert got["step"] == 7 and got["names"] == ("a", "b") and got["half"].dtype == lucid.float16
    assert got["ints"].tolist() == [1, 2, 3] and got["same"][0] is got["same"][1]
    whole, part = got["views"]
    whole[3] = 100.0  # still views of one buffer
    assert part.tolist() == [2.0, 100.0, 4.0]


def test_shards_respect_the_size_and_every_file_is_a_torch_checkpoint(tmp_path):
    tensors = {f"t{i}": lucid.full((1000,), float(i)) for i in range(10)}  # 4,000 bytes each
    tensors["big"] = lucid.zeros(5000)  # 20,000 bytes: a shard of its own
    lucid.save_sharded(tensors, tmp_path / "ck", shard_size_mb=10_000 / 2 ** 20)
    shards = files(tmp_path / "ck")[1:]
    sizes = []
    for name in shards:
        part = torch.load(tmp_path / "ck" / name)
        sizes.append(sum(t.numel() * 4 for t in part.values()))
        assert set(part) <= {str(i) for i in range(11)}
    assert sorted(sizes) == [8000] * 5 + [20000] and shards[0] == f"shard-00001-of-{len(shards):05d}.pt"
    got = lucid.load_sharded(tmp_path / "ck")
    assert got["t9"].tolist() == [9.0] * 1000 and got["big"].shape == (5000,)


def test_an_existing_checkpoint_is_replaced_only_by_a_complete_one(tmp_path):
    path = tmp_path / "ck"
    lucid.save_sharded({"w": lucid.ones(4)}, path)
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        lucid.save_sharded({"w": lucid.zeros(4), "bad": lambda: 0}, path)
    assert lucid.load_sharded(path)["w"].tolist() == [1.0] * 4
    assert files(tmp_path) == ["ck"]  # (no staging folder left behind)
    lucid.save_sharded({"w": lucid.zeros(2)}, path)
    assert lucid.load_sharded(path)["w"].tolist() == [0.0, 0.0] and files(path) == ["index.pt", "shard-00001-of-00001.pt"]


def test_map_location_and_weights_only(tmp_path):
    lucid.save_sharded({"w": lucid.ones(2), "obj": Custom(3)}, tmp_path / "ck")
    with pytest.raises(pickle.UnpicklingError, match="Custom"):
        lucid.load_sharded(tmp_path / "ck")
    got = lucid.load_sharded(tmp_path / "ck", weights_only=False, map_location="cpu")
    assert got["obj"].v == 3 and got["w"].device.type == "cpu"
    assert lucid.serialization.load_sharded is lucid.load_sharded


def test_bad_folders_and_arguments_raise(tmp_path):
    with pytest.raises(ValueError, match="shard_size_mb must be a positive number, got 0"):
        lucid.save_sharded({}, tmp_path / "a", shard_size_mb=0)
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError, match="is not a folder"):
        lucid.save_sharded({}, tmp_path / "file")
    with pytest.raises(FileNotFoundError, match="no index.pt"):
        lucid.load_sharded(tmp_path)
    lucid.save_sharded({"a": lucid.ones(300), "b": lucid.ones(300)}, tmp_path / "ck", shard_size_mb=1500 / 2 ** 20)
    os.remove(tmp_path / "ck" / "shard-00002-of-00002.pt")
    with pytest.raises(FileNotFoundError, match="shard 'shard-00002-of-00002.pt' named by the index is missing"):
        lucid.load_sharded(tmp_path / "ck")
    lucid.save({"format": "other"}, tmp_path / "ck" / "index.pt")
    with pytest.raises(RuntimeError, match="is not the index of a lucid sharded checkpoint"):
        lucid.load_sharded(tmp_path / "ck")
    lucid.save({"format": "lucid-sharded", "version": 1, "shards": ["../x.pt"], "skeleton": {}},
               tmp_path / "ck" / "index.pt")
    with pytest.raises(RuntimeError, match="outside its folder"):
        lucid.load_sharded(tmp_path / "ck")
