#!/usr/bin/env python3
"""Fuzz target: the safetensors reader (python/lucid/_safetensors.py, serialization.py).

Each input is a would-be safetensors file. It is read three ways, which must agree:
lucid.load_safetensors_from_bytes (in memory), lucid.load_safetensors (the same bytes as
a file on tmpfs) and lucid.load_safetensors_metadata. ValueError is the expected
rejection. A file that is accepted is checked against the format itself: every tensor
has the dtype, shape and bytes its header entry names, and is read in full.

    python fuzz/fuzz_safetensors.py fuzz/corpus/safetensors -dict=fuzz/safetensors.dict
"""

import json
import os
import random
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as H  # noqa: E402

if __name__ == "__main__":
    import atheris

    with atheris.instrument_imports(include=["lucid", "json"]):
        import lucid
        import lucid.serialization
else:
    import lucid
    import lucid.serialization

TARGET = "safetensors"
CODES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "I32": "int32", "I64": "int64",
         "F16": "float16", "BF16": "bfloat16", "F32": "float32", "F64": "float64", "C64": "complex64"}


def _summary(tensors):
    return {k: (v.dtype._name, tuple(v.shape), H.touch_tensor(v)) for k, v in tensors.items()}


def _check_against_header(data, tensors):
    """An accepted file's tensors are exactly what its header says (an independent
    reading of the header: json.loads plus the format's rules)."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    header.pop("__metadata__", None)
    if set(header) != set(tensors):
        raise H.Finding(f"accepted file has entries {sorted(header)} but loaded {sorted(tensors)}")
    start = 8 + n
    for name, entry in header.items():
        t = tensors[name]
        begin, end = entry["data_offsets"]
        if t.dtype._name != CODES[entry["dtype"]] or list(t.shape) != entry["shape"]:
            raise H.Finding(f"{name!r}: header says {entry['dtype']} {entry['shape']}, loaded "
                            f"{t.dtype._name} {list(t.shape)}")
        got = H.touch_tensor(t)
        if got is not None and got != data[start + begin:start + end]:
            raise H.Finding(f"{name!r}: loaded bytes differ from the file's")


try:  # the reference implementation (Hugging Face's safetensors), when installed
    import safetensors as reference
except ImportError:
    reference = None


def _compare_with_reference(data, ok, tensors, why):
    """lucid's docstring promises the reference's checks: note where the two disagree
    (not a crash: a divergence for a human to judge)."""
    try:
        ref = {name: (spec["dtype"], list(spec["shape"]), bytes(spec["data"]))
               for name, spec in reference.deserialize(data)}
        ref_ok, ref_why = True, None
    except Exception as e:  # noqa: BLE001 - SafetensorError, and whatever else it raises
        ref_ok, ref_why = False, f"{type(e).__name__}: {e}"
    if ok and not ref_ok:
        H.note(TARGET, "accepts-what-reference-refuses", f"lucid accepts a file the reference refuses "
               f"({ref_why})", data, key=("accepts", re.sub(r"\d+", "N", ref_why)[:60]))
    elif ref_ok and not ok:
        if any(code in _LUCID_LACKS for code, _, _ in ref.values()) or "bool tensor" in why or \
                "appears twice" in why:
            return  # by design: dtypes lucid lacks; bool bytes other than 0/1 and names given twice
                    # (lucid refuses them, the reference does not check)
        H.note(TARGET, "refuses-what-reference-accepts", f"lucid refuses a file the reference accepts "
               f"({why})", data, key=("refuses", re.sub(r"\d+", "N", why)[:60]))
    elif ok and ref_ok:
        mine = {k: (next(c for c, n in CODES.items() if n == v.dtype._name), list(v.shape), v.to_bytes())
                for k, v in tensors.items()}
        if mine != ref:
            raise H.Finding("lucid and the reference read different tensors from the same file")


_LUCID_LACKS = {"U16", "U32", "U64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2"}


def _load_from_bytes(data, why):
    try:
        return lucid.serialization.load_safetensors_from_bytes(data)
    except ValueError as e:
        why.append(str(e))
        raise


def TestOneInput(data):
    data = bytes(data)
    why = []
    ok_mem, mem = H.attempt(TARGET, data, lambda: _load_from_bytes(data, why))
    if reference is not None:
        _compare_with_reference(data, ok_mem, mem if ok_mem else None, why[0] if why else "")
    if ok_mem:
        _check_against_header(data, mem)
        mem = _summary(mem)
    path = H.write_scratch("input.safetensors", data)
    ok_file, from_file = H.attempt(TARGET, data, lambda: _summary(lucid.load_safetensors(path)))
    ok_meta, meta = H.attempt(TARGET, data, lambda: lucid.serialization.load_safetensors_metadata(path))
    if ok_mem != ok_file:
        raise H.Finding(f"load_safetensors_from_bytes {'accepted' if ok_mem else 'refused'} the bytes but "
                        f"load_safetensors {'accepted' if ok_file else 'refused'} the same file")
    if ok_mem and mem != from_file:
        raise H.Finding("load_safetensors_from_bytes and load_safetensors read different tensors")
    if ok_mem and not ok_meta:
        raise H.Finding("the tensors load but load_safetensors_metadata refuses the header")
    if ok_meta and not (isinstance(meta, dict) and all(isinstance(k, str) and isinstance(v, str)
                                                       for k, v in meta.items())):
        raise H.Finding(f"metadata is not a dict of str -> str: {meta!r:.200}")


# ---- structure-aware mutation ----------------------------------------------------------------
# Random byte flips rarely keep the length prefix and the JSON consistent. Half the
# time the mutator edits the header as JSON (a field set to an edge value, an entry
# dropped or duplicated) or mutates the header text or the data on their own, then
# rebuilds the length prefix.

_EDGE_INTS = [0, 1, 2, 7, 8, -1, 2 ** 31, 2 ** 32, 2 ** 53 + 1, 2 ** 63 - 1, 2 ** 63, 2 ** 64, 2 ** 64 + 8,
              10 ** 30, -(2 ** 63)]
_EDGE_VALUES = _EDGE_INTS + [None, True, 1.5, "", "F32", "U16", "BOOL", "C64", [], [0], [1, 2], {}, "x" * 9]


def _rebuild(header_text, body):
    header_text += b" " * (-len(header_text) % 8)
    return struct.pack("<Q", len(header_text)) + header_text + body


def _mutate_json(header, rng):
    names = [k for k in header if k != "__metadata__"]
    choice = rng.randrange(7)
    if not names or choice == 0:
        header[rng.choice(["__metadata__", "t", "", "\u00e9"])] = rng.choice(
            _EDGE_VALUES + [{"k": "v"}, {"dtype": "F32", "shape": [], "data_offsets": [0, 4]}])
        return
    name = rng.choice(names)
    entry = header[name]
    if choice == 1 or not isinstance(entry, dict):
        del header[name]
    elif choice == 2:
        entry["dtype"] = rng.choice(list(CODES) + ["U16", "F8_E4M3", "f32", "", 3])
    elif choice == 3:
        shape = entry.get("shape")
        if isinstance(shape, list) and shape and rng.random() < 0.7:
            shape[rng.randrange(len(shape))] = rng.choice(_EDGE_INTS)
        else:
            entry["shape"] = [rng.choice(_EDGE_INTS) for _ in range(rng.randrange(4))]
    elif choice == 4:
        off = entry.get("data_offsets")
        if isinstance(off, list) and len(off) == 2:
            off[rng.randrange(2)] += rng.choice([-8, -4, -1, 1, 4, 8] + _EDGE_INTS)
        else:
            entry["data_offsets"] = [rng.choice(_EDGE_INTS), rng.choice(_EDGE_INTS)]
    elif choice == 5:
        entry[rng.choice(["dtype", "shape", "data_offsets", "extra"])] = rng.choice(_EDGE_VALUES)
    else:
        header[name + rng.choice(["", "_", "2"])] = json.loads(json.dumps(entry))


def CustomMutator(data, max_size, seed):
    import atheris

    rng = random.Random(seed)
    if len(data) >= 8 and rng.random() < 0.6:
        (n,) = struct.unpack("<Q", data[:8])
        if 8 + n <= len(data):
            text, body = data[8:8 + n].rstrip(b" "), data[8 + n:]
            mode = rng.randrange(4)
            try:
                if mode == 0:
                    header = json.loads(text)
                    if isinstance(header, dict):
                        for _ in range(rng.randrange(1, 3)):
                            _mutate_json(header, rng)
                        text = json.dumps(header, separators=(",", ":")).encode()
                elif mode == 1:
                    text = atheris.Mutate(text, len(text) + 32)
                elif mode == 2:
                    body = atheris.Mutate(body, max(len(body) * 2, 16))
                else:
                    body = body[:rng.randrange(len(body) + 1)] if rng.random() < 0.5 else body + bytes(
                        rng.choice([1, 2, 4, 8]))
            except (ValueError, RecursionError):
                pass
            out = _rebuild(text, body)
            if len(out) <= max_size:
                return out
    return atheris.Mutate(data, max_size)


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput, custom_mutator=CustomMutator)
    atheris.Fuzz()
