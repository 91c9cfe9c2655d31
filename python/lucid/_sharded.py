"""Upstream Lucid's lucid.save_sharded / lucid.load_sharded: one checkpoint written as a
folder of lucid.save files of bounded size, for state dicts larger than one file should
be (a file system's or a transfer's limit) and for reading back one part at a time.

The folder holds `shard-00001-of-0000N.pt` ... (each a lucid.save of {key: tensor}) and
`index.pt`, a lucid.save of {"format": "lucid-sharded", "version": 1, "shards": [file
names], "skeleton": the object}. In the skeleton every tensor reachable through dicts,
lists and tuples is replaced by ("__lucid_sharded_tensor__", key); tensors inside other
objects stay in it (pickled whole). Tensors that view one storage go to one shard, so
lucid.save keeps them views of one buffer (tied weights stay tied), and a storage larger
than a shard gets a shard of its own. Every file is a plain lucid / torch checkpoint.

Saving never loses what was there: the new folder is written complete beside the path
and then moved into place, the old one removed only after."""

from __future__ import annotations

import copy
import os
import shutil

from . import serialization
from ._tensor import Tensor

__all__ = ["save_sharded", "load_sharded"]

_MARK = "__lucid_sharded_tensor__"
_INDEX = "index.pt"
_FORMAT = "lucid-sharded"


def _map_leaves(obj, leaf):
    """obj rebuilt through its dicts (the same kind of dict: an OrderedDict, a state
    dict's metadata), lists and tuples, with leaf(x) for each x that leaf takes (it
    returns the replacement, or obj itself to keep x as it is)."""
    done = leaf(obj)
    if done is not obj:
        return done
    if isinstance(obj, dict):
        out = copy.copy(obj)
        for k, v in obj.items():
            out[k] = _map_leaves(v, leaf)
        return out
    if type(obj) in (list, tuple):
        return type(obj)(_map_leaves(v, leaf) for v in obj)
    return obj


def _strip(obj, tensors):
    """obj with each tensor in dicts, lists and tuples replaced by its marker; the
    tensors collected in `tensors` (id -> (key, tensor)), a tensor seen twice keyed once."""
    def marker(x):
        if not isinstance(x, Tensor):
            return x
        return (_MARK, tensors.setdefault(id(x), (str(len(tensors)), x))[0])
    return _map_leaves(obj, marker)


def _fill(obj, values):
    """The skeleton `obj` with each marker replaced by its tensor from `values`."""
    def tensor(x):
        if not (type(x) is tuple and len(x) == 2 and x[0] == _MARK and isinstance(x[1], str)):
            return x
        if x[1] not in values:
            raise RuntimeError(f"lucid.load_sharded: tensor {x[1]!r} of the index is in none of its shards")
        return values[x[1]]
    return _map_leaves(obj, tensor)


def _shards(tensors, limit):
    """The tensors' keys in shards of at most `limit` bytes of storage, the tensors of one
    storage together."""
    groups = {}  # storage -> ([keys], bytes)
    for key, t in tensors:
        storage = t.untyped_storage()
        where = (t.device.type, t.device.index, storage.data_ptr()) if storage.nbytes() else ("empty", key)
        keys, _ = groups.setdefault(where, ([], storage.nbytes()))
        keys.append(key)
    shards, current, size = [], [], 0
    for keys, nbytes in groups.values():
        if current and size + nbytes > limit:
            shards.append(current)
            current, size = [], 0
        current += keys
        size += nbytes
    if current or not shards:
        shards.append(current)
    return shards


def save_sharded(obj, path, *, shard_size_mb=1024, pickle_protocol=2):
    """Saves `obj` (a state dict, or any object lucid.save takes) as the folder `path`:
    shards of at most `shard_size_mb` MiB of tensor storage (one storage larger than that
    gets a shard alone) and an index (the module docstring). An existing folder at
    `path` is replaced only once the new one is complete."""
    if isinstance(shard_size_mb, bool) or not isinstance(shard_size_mb, (int, float)) or not shard_size_mb > 0:
        raise ValueError(f"lucid.save_sharded: shard_size_mb must be a positive number, got {shard_size_mb!r}")
    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise FileExistsError(f"lucid.save_sharded: {path!r} exists and is not a folder (the checkpoint is a folder)")
    found = {}
    skeleton = _strip(obj, found)
    tensors = list(found.values())
    shards = _shards(tensors, int(shard_size_mb * 2 ** 20))
    by_key = dict(tensors)
    names = [f"shard-{i + 1:05d}-of-{len(shards):05d}.pt" for i in range(len(shards))]
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    staging = os.path.join(parent, f".{os.path.basename(path)}.saving-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    try:
        for name, keys in zip(names, shards):
            serialization.save({k: by_key[k] for k in keys}, os.path.join(staging, name), pickle_protocol=pickle_protocol)
        index = {"format": _FORMAT, "version": 1, "shards": names, "skeleton": skeleton}
        serialization.save(index, os.path.join(staging, _INDEX), pickle_protocol=pickle_protocol)
        old = None
        if os.path.isdir(path):
            old = os.path.join(parent, f".{os.path.basename(path)}.replaced-{os.getpid()}")
            shutil.rmtree(old, ignore_errors=True)
            os.rename(path, old)
        os.rename(staging, path)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if old:
        shutil.rmtree(old, ignore_errors=True)


def load_sharded(path, *, map_location=None, weights_only=True):
    """Loads a folder written by save_sharded: its index, then every shard
    (lucid.load's map_location and weights_only apply to each file)."""
    path = os.fspath(path)
    index_file = os.path.join(path, _INDEX)
    if not os.path.isfile(index_file):
        raise FileNotFoundError(f"lucid.load_sharded: {path!r} is not a sharded checkpoint (no {_INDEX} in it)")
    index = serialization.load(index_file, map_location=map_location, weights_only=weights_only)
    if not (isinstance(index, dict) and index.get("format") == _FORMAT and index.get("version") == 1
            and isinstance(index.get("shards"), list) and "skeleton" in index):
        raise RuntimeError(f"lucid.load_sharded: {index_file!r} is not the index of a lucid sharded checkpoint "
                           f"(format {_FORMAT!r}, version 1)")
    values = {}
    for name in index["shards"]:
        if not isinstance(name, str) or os.path.basename(name) != name:
            raise RuntimeError(f"lucid.load_sharded: the index names a shard {name!r} outside its folder")
        shard = os.path.join(path, name)
        if not os.path.isfile(shard):
            raise FileNotFoundError(f"lucid.load_sharded: shard {name!r} named by the index is missing from "
                                    f"{path!r}")
        part = serialization.load(shard, map_location=map_location, weights_only=weights_only)
        if not isinstance(part, dict):
            raise RuntimeError(f"lucid.load_sharded: shard {name!r} does not hold a dict of tensors")
        values.update(part)
    return _fill(index["skeleton"], values)
