"""Writes the seed corpora under fuzz/corpus/<target>/ (deterministic: rerunning gives the
same files). Seeds are small valid inputs written by lucid itself plus hand-broken
variants; the DLPack and buffer targets read their inputs as recipes (fuzz/_harness.py's
Bytes), so their seeds are a few hand-made recipes and seeded random bytes.

    PYTHONPATH=python .venv/bin/python fuzz/make_corpus.py
"""

import collections
import gzip
import io
import json
import os
import pickle
import random
import shutil
import struct
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import lucid  # noqa: E402

CORPUS = os.path.join(HERE, "corpus")
LIMIT = 4096  # bytes per seed


def _write(target, name, data):
    assert len(data) <= LIMIT, (target, name, len(data))
    with open(os.path.join(CORPUS, target, name), "wb") as f:
        f.write(data)


def _tensors():
    """A few small tensors of every dtype and some shapes."""
    out = {}
    for i, name in enumerate(["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                              "float32", "float64", "complex64"]):
        dtype = getattr(lucid, name)
        base = lucid.arange(6) % 2 if name == "bool" else lucid.arange(6) - 2
        out[name] = base.to(dtype).reshape([(6,), (2, 3), (3, 1, 2)][i % 3])
    return out


# ---- safetensors -------------------------------------------------------------------------------

def safetensors_seeds():
    save = lucid.serialization.save_safetensors_to_bytes
    tensors = _tensors()
    seeds = {}
    for name, t in tensors.items():
        seeds[f"{name}.safetensors"] = save({"t": t})
    seeds["all_dtypes.safetensors"] = save({k: v[:1] for k, v in tensors.items()})
    seeds["empty.safetensors"] = save({})
    seeds["metadata.safetensors"] = save({"w": lucid.ones(2, 2)}, metadata={"format": "pt", "k": "v"})
    seeds["scalar_and_empty.safetensors"] = save({"s": lucid.tensor(3.5), "e": lucid.zeros(0, 3),
                                                  "z": lucid.zeros(2, 0, dtype=lucid.int64)})
    seeds["strided_view.safetensors"] = save({"v": lucid.arange(12.0).reshape(3, 4).t()})
    seeds["two.safetensors"] = save({"a": lucid.ones(3), "b": lucid.arange(4, dtype=lucid.int16)})
    good = seeds["two.safetensors"]
    (n,) = struct.unpack("<Q", good[:8])
    header = json.loads(good[8:8 + n])

    def rebuild(h, body=good[8 + n:]):
        text = json.dumps(h, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 8)
        return struct.pack("<Q", len(text)) + text + body

    seeds["broken_truncated.safetensors"] = good[:-3]
    seeds["broken_extra_byte.safetensors"] = good + b"\0"
    seeds["broken_short.safetensors"] = good[:5]
    seeds["broken_header_length.safetensors"] = struct.pack("<Q", n + 8) + good[8:]
    seeds["broken_huge_header_length.safetensors"] = struct.pack("<Q", 2 ** 63) + good[8:]
    h = json.loads(json.dumps(header))
    h["a"]["data_offsets"] = [0, 16]
    seeds["broken_overlap.safetensors"] = rebuild(h)
    h = json.loads(json.dumps(header))
    h["a"]["shape"] = [2 ** 62, 0]
    seeds["broken_huge_zero_shape.safetensors"] = rebuild(h)
    h = json.loads(json.dumps(header))
    h["b"]["dtype"] = "U16"
    seeds["broken_dtype.safetensors"] = rebuild(h)
    h = json.loads(json.dumps(header))
    h["b"]["shape"] = [-1]
    seeds["broken_negative.safetensors"] = rebuild(h)
    text = good[8:8 + n].rstrip()
    dup = text[:-1] + b"," + text[1:]
    dup += b" " * (-len(dup) % 8)
    seeds["broken_duplicate_key.safetensors"] = struct.pack("<Q", len(dup)) + dup + good[8 + n:]
    seeds["broken_not_utf8.safetensors"] = struct.pack("<Q", 8) + b"{\"\xff\":1}  " + b""
    seeds["broken_bool_byte.safetensors"] = save({"b": lucid.tensor([True, False])})[:-1] + b"\x02"
    seeds["broken_metadata.safetensors"] = rebuild({"__metadata__": {"k": 1}, **header})
    return seeds


# ---- lucid.load ------------------------------------------------------------------------------

def load_seeds():
    seeds = {}

    def save(obj):
        buffer = io.BytesIO()
        lucid.save(obj, buffer)
        return buffer.getvalue()

    tensors = _tensors()
    seeds["tensor_f32.lucid"] = save(lucid.arange(6.0).reshape(2, 3))
    seeds["dict_dtypes.lucid"] = save({k: v for k, v in list(tensors.items())[:4]})
    seeds["dict_dtypes2.lucid"] = save({k: v for k, v in list(tensors.items())[4:8]})
    seeds["dict_dtypes3.lucid"] = save({k: v for k, v in list(tensors.items())[8:]})
    base = lucid.arange(10.0)
    seeds["shared_views.lucid"] = save([base[2:5], base[::3], base, base.reshape(2, 5).t()])
    w = lucid.nn.Parameter(lucid.ones(2, 2))
    seeds["param_grad.lucid"] = save({"w": w, "g": lucid.zeros(3).requires_grad_(), "e": lucid.zeros(0, 2)})
    seeds["containers.lucid"] = save(collections.OrderedDict(
        a=(1, 2.5, -3, True, None), b={1, 2}, c=frozenset({"x"}), d=b"bytes\x00", e=bytearray(b"ba"),
        f=complex(1, -2), g=lucid.Size([2, 3]), h=lucid.float16, i=lucid.device("cpu"), j=slice(1, 2, None),
        k="str\u00e9", l=[float("nan"), float("inf")], m=2 ** 70))
    seeds["scalar.lucid"] = save(lucid.tensor(7, dtype=lucid.int64))
    seeds["protocol4.lucid"] = (lambda: (lambda b: (lucid.save({"x": lucid.ones(3)}, b, pickle_protocol=4),
                                                     b.getvalue())[1])(io.BytesIO()))()
    seeds["plain_object.lucid"] = save({"n": 1})
    good = seeds["tensor_f32.lucid"]
    seeds["broken_truncated.lucid"] = good[:-20]
    at = good.index(struct.pack("<f", 5.0))  # inside storage 0: its CRC no longer matches
    seeds["broken_crc.lucid"] = good[:at] + bytes([good[at] ^ 1]) + good[at + 1:]
    seeds["broken_plain_pickle.lucid"] = pickle.dumps({"a": 1}, protocol=2)
    seeds["broken_safetensors.lucid"] = lucid.serialization.save_safetensors_to_bytes({"a": lucid.ones(1)})
    seeds["broken_empty.lucid"] = b""

    # Valid archives with hand-made records: what the CRC would otherwise keep the
    # fuzzer away from.
    def archive(records):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
            for name, body in records:
                z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), body)
        return out.getvalue()

    with zipfile.ZipFile(io.BytesIO(good)) as z:
        records = [(i.filename, z.read(i)) for i in z.infolist()]

    def replaced(name, body):
        return archive([(n, body if n == name else b) for n, b in records])

    def rebuild(pid_numel=6, offset=0, size=(2, 3), stride=(3, 1)):
        """data.pkl of one float tensor, written by hand: torch._utils._rebuild_tensor_v2
        over ('storage', torch.FloatStorage, '0', 'cpu', pid_numel)."""
        ints = b"".join(b"J" + struct.pack("<i", v) for v in (offset,))
        dims = b"(" + b"".join(b"J" + struct.pack("<i", v) for v in size) + b"t"
        strides = b"(" + b"".join(b"J" + struct.pack("<i", v) for v in stride) + b"t"
        return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
                b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpuJ" + struct.pack("<i", pid_numel) + b"tQ" + ints + dims
                + strides + b"\x89ccollections\nOrderedDict\n)RtR.")

    seeds["handmade_tensor.lucid"] = replaced("archive/data.pkl", rebuild())
    seeds["broken_stride.lucid"] = replaced("archive/data.pkl", rebuild(stride=(2 ** 30, 1)))
    seeds["broken_numel.lucid"] = replaced("archive/data.pkl", rebuild(pid_numel=2 ** 31 - 1))
    seeds["broken_offset.lucid"] = replaced("archive/data.pkl", rebuild(offset=5))
    seeds["broken_pickle_global.lucid"] = replaced("archive/data.pkl", b"\x80\x02cos\nsystem\nq\x00.")
    seeds["broken_pickle_bytes_size.lucid"] = replaced("archive/data.pkl",
                                                       b"\x80\x02c__builtin__\nbytes\nJ\xff\xff\xff\x7f\x85R.")
    seeds["broken_pickle_pid.lucid"] = replaced("archive/data.pkl", b"\x80\x02X\x01\x00\x00\x00xK\x05\x86Q.")
    seeds["broken_version.lucid"] = replaced("archive/version", b"99\n")
    seeds["broken_storage_size.lucid"] = replaced("archive/data/0", b"\x00" * 8)
    return seeds


def frozen_seeds(target, prefix):
    """Seeds that lucid can no longer write, kept as committed: for the load target,
    checkpoints of lucid's format version 1 (v1_*), which lucid.load still reads."""
    directory = os.path.join(CORPUS, target)
    if not os.path.isdir(directory):
        return {}
    seeds = {}
    for name in sorted(os.listdir(directory)):
        if name.startswith(prefix):
            with open(os.path.join(directory, name), "rb") as f:
                seeds[name] = f.read()
    return seeds


# ---- IDX --------------------------------------------------------------------------------------

def idx_seeds():
    seeds = {}
    types = {0x08: "B", 0x09: "b", 0x0B: "h", 0x0C: "i", 0x0D: "f", 0x0E: "d"}
    for code, fmt in types.items():
        for dims in [(5,), (2, 3), (2, 1, 3)]:
            n = 1
            for d in dims:
                n *= d
            values = [(i * 37) % 100 - (50 if fmt not in "B" else 0) for i in range(n)]
            body = struct.pack(f">{n}{fmt}", *values)
            data = struct.pack(">HBB", 0, code, len(dims)) + struct.pack(f">{len(dims)}I", *dims) + body
            seeds[f"type{code:02x}_{'x'.join(map(str, dims))}.idx"] = data
    seeds["labels_like.idx"] = struct.pack(">HBBI", 0, 8, 1, 10) + bytes(range(10))
    seeds["images_like.idx"] = struct.pack(">HBBIII", 0, 8, 3, 2, 4, 4) + bytes(range(32))
    seeds["empty_dim.idx"] = struct.pack(">HBBII", 0, 8, 2, 0, 28)
    seeds["broken_magic.idx"] = struct.pack(">HBBI", 1, 8, 1, 3) + b"abc"
    seeds["broken_type.idx"] = struct.pack(">HBBI", 0, 7, 1, 3) + b"abc"
    seeds["broken_ndims0.idx"] = struct.pack(">HBB", 0, 8, 0)
    seeds["broken_short_body.idx"] = struct.pack(">HBBI", 0, 13, 1, 3) + b"\0" * 11
    seeds["broken_huge_dims.idx"] = struct.pack(">HBBII", 0, 8, 2, 2 ** 32 - 1, 2 ** 32 - 1)
    seeds["broken_short.idx"] = b"\0\0\x08"
    seeds["gzip_inside.idx"] = gzip.compress(seeds["labels_like.idx"], mtime=0)
    return seeds


# ---- recipes: DLPack and buffer ----------------------------------------------------------------

def recipe_seeds(prefix, count, rng):
    seeds = {}
    for i in range(count):
        n = rng.choice([16, 32, 48, 64, 96, 128, 256, 512])
        seeds[f"{prefix}_random_{i:03d}"] = bytes(rng.getrandbits(8) for _ in range(n))
    return seeds


def dlpack_seeds():
    seeds = recipe_seeds("dlpack", 48, random.Random(1))
    # versioned?, ndim mode, shape-null?, strides-null?, shape..., strides..., code, bits, lanes,
    # device, device id, size, offset mode, ... (see fuzz_dlpack.build): a plain 2x3 float32.
    plain = bytes([0, 2, 200, 50, 2, 3, 1, 12]) + bytes([2, 2, 0, 0, 0, 96, 0, 0, 0, 255, 0, 0, 0, 0, 0, 0])
    seeds["dlpack_plain_2x3_f32"] = plain + bytes(range(96))
    seeds["dlpack_versioned_2x3_f32"] = bytes([1]) + plain[1:] + bytes(range(96))
    seeds["dlpack_zeros"] = bytes(64)
    seeds["dlpack_ones"] = b"\xff" * 64
    return seeds


def buffer_seeds():
    seeds = recipe_seeds("buffer", 64, random.Random(2))
    for kind in range(9):
        seeds[f"buffer_kind{kind}"] = bytes([kind, 48]) + bytes(range(48)) + bytes([3, 1, 2, 0, 1, 0, 0, 0])
    return seeds


def main():
    frozen = frozen_seeds("load", "v1_")
    if os.path.isdir(CORPUS):
        shutil.rmtree(CORPUS)
    for target, seeds in [("safetensors", safetensors_seeds()), ("load", {**load_seeds(), **frozen}),
                          ("idx", idx_seeds()),
                          ("dlpack", dlpack_seeds()), ("buffer", buffer_seeds())]:
        os.makedirs(os.path.join(CORPUS, target))
        for name, data in sorted(seeds.items()):
            _write(target, name, data)
        print(f"{target}: {len(seeds)} seeds, {sum(map(len, seeds.values()))} bytes")


if __name__ == "__main__":
    main()
