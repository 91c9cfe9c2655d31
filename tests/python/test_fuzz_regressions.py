"""What fuzzing the parsers of untrusted bytes found (fuzz/, scripts/fuzz.sh), kept as
regression tests, and a smoke test that every fuzz target still runs over its seed
corpus with the current code.

Three kinds of test:
  - the smoke test: each target's TestOneInput over fuzz/corpus/<target>/ must finish
    without a finding (a crash, a non-Exception, an oracle violation). atheris is not
    needed: the targets import it only when run as programs.
  - fuzz/regressions/<target>-<what>.bin: inputs the fuzzer found. Each is replayed
    through its target with the harness's guards for known bugs off; it must neither
    crash, raise a finding, nor raise an exception of an unclear kind.
  - readable repros of each bug, calling lucid directly.

Anything that could kill the interpreter (a segfault, a stack overflow) runs in a
subprocess, so that it fails one test instead of ending the session. Bugs not fixed yet
are marked known_bug: an expected failure, strict, so that the fix makes the test pass
and pytest then asks for the marker to go.
"""

import gzip
import json
import os
import struct
import subprocess
import sys
import textwrap

import pytest

import lucid
from lucid import serialization

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUZZ = os.path.join(ROOT, "fuzz")
# The lucid this test imported (installed, or the source tree): subprocesses use it too.
LUCID_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(lucid.__file__)))
TARGETS = ["safetensors", "load", "idx", "dlpack", "buffer"]


def known_bug(reason):
    return pytest.mark.xfail(reason=reason, strict=True)


def run_python(code, timeout=300, env=None):
    """Runs `code` in a fresh interpreter that imports this lucid and the fuzz targets."""
    env = dict(os.environ, **(env or {}))
    env["PYTHONPATH"] = os.pathsep.join([LUCID_PARENT, FUZZ])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                          text=True, timeout=timeout)


def assert_ran(out):
    assert out.returncode == 0, (f"exit status {out.returncode} (a negative one is the signal that killed "
                                 f"it)\n--- stdout\n{out.stdout[-3000:]}\n--- stderr\n{out.stderr[-3000:]}")


# ---- smoke test ----------------------------------------------------------------------------------

@pytest.mark.parametrize("target", TARGETS)
def test_target_runs_over_its_seed_corpus(target, tmp_path):
    out = run_python(f"""
        import os, sys
        import fuzz_{target} as target
        corpus = os.path.join({FUZZ!r}, "corpus", {target!r})
        names = sorted(os.listdir(corpus))
        assert names, "empty seed corpus"
        failed = []
        for name in names:
            with open(os.path.join(corpus, name), "rb") as f:
                data = f.read()
            try:
                target.TestOneInput(data)
            except BaseException as e:  # a finding, or a bug in the harness
                failed.append(f"{{name}}: {{type(e).__name__}}: {{e}}")
        assert "atheris" not in sys.modules
        print(f"{{len(names)}} seeds")
        if failed:
            sys.exit("\\n".join(failed))
        """, env={"LUCID_FUZZ_UNCLEAR_DIR": str(tmp_path)})
    assert_ran(out)


# ---- inputs the fuzzer found ---------------------------------------------------------------------

# fuzz/regressions/ files whose bug is not fixed yet: name -> what goes wrong today.
OPEN = {}  # regression inputs of bugs not fixed yet: name -> what goes wrong
REGRESSIONS = sorted(os.listdir(os.path.join(FUZZ, "regressions")))


@pytest.mark.parametrize("name", [pytest.param(n, marks=known_bug(OPEN[n])) if n in OPEN else n
                                  for n in REGRESSIONS])
def test_fuzzer_finding_stays_fixed(name, tmp_path):
    target = name.split("-")[0]
    out = run_python(f"""
        import os
        import _harness
        import fuzz_{target} as target
        _harness.GUARDS = False  # replay as found: no steering around known bugs
        with open(os.path.join({FUZZ!r}, "regressions", {name!r}), "rb") as f:
            target.TestOneInput(f.read())
        unclear = os.path.join({str(tmp_path)!r}, "unclear.tsv")
        if os.path.exists(unclear):
            raise SystemExit("an exception of an unclear kind:\\n" + open(unclear).read())
        """, env={"LUCID_FUZZ_UNCLEAR_DIR": str(tmp_path)})
    assert_ran(out)


# ---- buffer-protocol import ------------------------------------------------------------------------

def test_bool_import_of_bytes_other_than_0_and_1_raises():
    # the kernels load a bool as C++ bool: a byte like 67 is undefined behaviour there,
    # so each import of foreign memory as bool checks its bytes
    with pytest.raises(ValueError, match="bytes must be 0 or 1, but the byte at offset 2 is 67"):
        lucid.frombuffer(bytearray([0, 1, 67]), dtype=lucid.bool)
    assert lucid.frombuffer(bytearray([0, 1, 1]), dtype=lucid.bool).tolist() == [False, True, True]
    # NumPy bool arrays over foreign bytes, shared or copied
    np = pytest.importorskip("numpy")
    bad = np.frombuffer(bytearray([1, 0, 2, 1]), dtype=np.bool_)
    for make in (lucid.tensor, lucid.as_tensor, lucid.from_numpy):
        with pytest.raises(ValueError, match="bytes must be 0 or 1, but the byte at offset 2 is 2"):
            make(bad)
    good = np.frombuffer(bytearray([1, 0, 0, 1]), dtype=np.bool_)
    assert lucid.as_tensor(good).tolist() == [True, False, False, True]
    # strided: only the viewed bytes count
    strided = np.frombuffer(bytearray([1, 9, 0, 9]), dtype=np.bool_)[::2]
    assert lucid.tensor(strided).tolist() == [True, False]
    # a Python sequence of bools (a memoryview) goes item by item: any nonzero is True
    assert lucid.tensor(memoryview(bytearray([1, 0, 2])).cast("?")).tolist() == [True, False, True]


def test_dlpack_bool_and_null_data():
    out = run_python("""
        import lucid
        import fuzz_dlpack as F
        keep = []
        capsule, _ = F.make_capsule(F.producer([3], None, 6, 8, size=4, fill=bytes([1, 0, 1])), keep)
        print(lucid.from_dlpack(capsule).tolist())
        p = F.producer([4], None, 2, 32)
        p.data_null = True
        capsule, _ = F.make_capsule(p, keep)
        try:
            lucid.from_dlpack(capsule)
        except RuntimeError as e:
            print("refused:", e)
        """)
    assert_ran(out)
    lines = out.stdout.splitlines()
    assert lines[0] == "[True, False, True]", out.stdout
    assert lines[1] == "refused: from_dlpack: malformed tensor (no data pointer for 4 elements)", out.stdout


def test_tensor_of_a_sequence_whose_items_raise_raises():
    out = run_python("""
        import lucid
        class Items:
            def __len__(self):
                return 2
            def __getitem__(self, i):
                raise RuntimeError("item boom")
        try:
            lucid.tensor(Items())
        except RuntimeError as e:
            assert "item boom" in str(e), e
            print("refused")
        """)
    assert_ran(out)
    assert "refused" in out.stdout


@pytest.mark.parametrize("shape", [(), (2, 3), (1, 2, 2)])
def test_tensor_of_a_memoryview_of_any_ndim(shape):
    out = run_python(f"""
        import lucid
        n = 1
        for s in {shape!r}:
            n *= s
        view = memoryview(bytearray(range(n * 4))).cast("i", {shape!r})
        try:
            t = lucid.tensor(view)
        except Exception as e:  # refusing is fine; crashing is not
            print("refused", type(e).__name__)
        else:
            assert t.tolist() == view.tolist(), (t.tolist(), view.tolist())
            print("read")
        """)
    assert_ran(out)


@pytest.mark.parametrize("count,dtype,offset", [(2 ** 62, lucid.float32, 0), (2 ** 61, lucid.float64, 0),
                                                (2 ** 62 + 1, lucid.int32, 0), (3 * 2 ** 61, lucid.float64, 0),
                                                (2 ** 63 - 1, lucid.uint8, 14)])
def test_frombuffer_count_too_large_for_the_buffer(count, dtype, offset):
    with pytest.raises(ValueError):
        lucid.frombuffer(bytearray(64), dtype=dtype, count=count, offset=offset)


def test_frombuffer_count_and_offset_within_the_buffer():
    data = bytearray(range(16))
    t = lucid.frombuffer(data, dtype=lucid.uint8, count=4, offset=12)
    assert t.tolist() == [12, 13, 14, 15]
    with pytest.raises(ValueError):
        lucid.frombuffer(data, dtype=lucid.uint8, count=5, offset=12)


# ---- DLPack import -------------------------------------------------------------------------------

def exercise_dlpack(**fields):
    """Code for a subprocess: a ctypes DLPack producer with these fields handed to
    lucid under fuzz_dlpack's oracle (dtype, shape, strides, values, the deleter run
    exactly once), the guards off. Prints "accepted" or "refused"."""
    return f"""
        import _harness
        import fuzz_dlpack as F
        _harness.GUARDS = False
        ok = F.exercise(F.producer(**{fields!r}))
        print("accepted" if ok else "refused")
        """


def test_from_dlpack_refuses_strides_whose_bytes_overflow():
    out = run_python(exercise_dlpack(shape=[2], strides=[2 ** 62 + 1], code=2, bits=32))
    assert_ran(out)
    assert "refused" in out.stdout


def test_from_dlpack_read_only_with_overflowing_strides():
    # 3 * 2**61 elements of 2 bytes wrap to a byte stride of -2**62
    out = run_python(exercise_dlpack(shape=[2], strides=[3 * 2 ** 61], code=2, bits=16, versioned=True, flags=1))
    assert_ran(out)
    assert "refused" in out.stdout


@pytest.mark.parametrize("versioned", [False, True])
def test_from_dlpack_runs_the_deleter_once_when_it_refuses(versioned):
    # 2 * 2**62 bytes: the extent overflows int64 only in view_extent_bytes
    out = run_python(exercise_dlpack(shape=[3], strides=[2 ** 62], code=0, bits=8, versioned=versioned))
    assert_ran(out)
    assert "refused" in out.stdout


def test_from_dlpack_well_formed_producers():
    out = run_python("""
        import _harness
        import fuzz_dlpack as F
        _harness.GUARDS = False
        fill = bytes(range(64))
        for p in [F.producer([2, 3], None, 2, 32, fill=fill), F.producer([2, 3], [1, 2], 0, 16, fill=fill),
                  F.producer([4], [0], 6, 8, fill=bytes(8)), F.producer([], None, 5, 64, fill=fill),
                  F.producer([0, 5], [7, 1], 1, 8), F.producer([2, 2], [2, 1], 4, 16, fill=fill,
                                                               versioned=True, flags=1, how=2),
                  F.producer([3], None, 0, 64, fill=fill, byte_offset=8, how=4)]:
            assert F.exercise(p), vars(p)
        print("ok")
        """)
    assert_ran(out)


def test_from_dlpack_cuda_host_memory_without_a_gpu():
    # Pinned host memory is host memory: where there is no GPU it imports as CPU
    # storage and reads as such (it used to import as shared storage, whose every read
    # asked the absent GPU to synchronise and failed).
    if lucid.gpu.is_available():
        pytest.skip("needs a machine without a GPU")
    out = run_python("""
        import struct
        import lucid
        import fuzz_dlpack as F
        keep = []
        values = struct.pack("4f", 1.5, -2.0, 3.25, 0.0)
        capsule, _ = F.make_capsule(F.producer([4], None, 2, 32, fill=values, device_type=3), keep)
        t = lucid.from_dlpack(capsule)
        print(t.device, t.tolist())
        """)
    assert_ran(out)
    assert out.stdout.split("\n")[-2] == "cpu [1.5, -2.0, 3.25, 0.0]", out.stdout


@pytest.mark.parametrize("how", ["zeros", "dlpack"])
def test_tensor_with_very_many_dimensions(how):
    out = run_python(f"""
        import lucid
        import fuzz_dlpack as F
        ndim = 70000
        try:
            if {how!r} == "zeros":
                t = lucid.zeros([1] * ndim)
            else:
                keep = []
                capsule, _ = F.make_capsule(F.producer([1] * ndim, None, 2, 32), keep)
                t = lucid.from_dlpack(capsule)
        except Exception as e:  # refusing so many dimensions is fine
            print("refused", type(e).__name__)
        else:
            repr(t)
            t.tolist()
            print("read")
        """)
    assert_ran(out)


# ---- safetensors ---------------------------------------------------------------------------------

def safetensors_bytes(header, body=b""):
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + body


@pytest.mark.parametrize("dtype", [["F32"], {"a": 1}])
def test_safetensors_dtype_that_is_not_a_string(dtype):
    data = safetensors_bytes({"t": {"dtype": dtype, "shape": [1], "data_offsets": [0, 4]}}, bytes(4))
    with pytest.raises(ValueError):
        serialization.load_safetensors_from_bytes(data)


@pytest.mark.parametrize("shape", [[0, 2 ** 64], [2 ** 63, 0]])
def test_safetensors_size_beyond_int64(shape):
    data = safetensors_bytes({"t": {"dtype": "F32", "shape": shape, "data_offsets": [0, 0]}})
    with pytest.raises(ValueError):
        serialization.load_safetensors_from_bytes(data)


# ---- lucid.load -------------------------------------------------------------------------------------

def checkpoint_with_pickle(payload):
    """A checkpoint of {"x": 1} whose data.pkl is replaced by `payload`."""
    import io
    import zipfile

    buffer = io.BytesIO()
    lucid.save({"x": 1}, buffer)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as z, zipfile.ZipFile(out, "w") as w:
        for info in z.infolist():
            w.writestr(info.filename, payload if info.filename.endswith("data.pkl") else z.read(info))
    return out.getvalue()


@pytest.mark.parametrize("index", [2 ** 22, 2 ** 31, 2 ** 32 - 1])
def test_load_refuses_a_memo_index_the_pickle_cannot_have(index):
    import io
    import pickle

    # {"x": 1}, with the key's memo slot at `index`
    payload = b"\x80\x02}q\x00X\x01\x00\x00\x00xr" + struct.pack("<I", index) + b"K\x01s."
    with pytest.raises((pickle.UnpicklingError, RuntimeError)):
        lucid.load(io.BytesIO(checkpoint_with_pickle(payload)))


def test_load_accepts_ordinary_memo_use():
    import io

    payload = b"\x80\x02}q\x00X\x01\x00\x00\x00xq\x01K\x01s."
    assert lucid.load(io.BytesIO(checkpoint_with_pickle(payload))) == {"x": 1}


# ---- IDX -----------------------------------------------------------------------------------------

def test_read_idx_of_a_damaged_gzip_stream(tmp_path):
    from lucid.utils.datasets import read_idx

    path = tmp_path / "x-idx1-ubyte.gz"
    good = gzip.compress(struct.pack(">HBBI", 0, 8, 1, 3) + b"abc", mtime=0)
    path.write_bytes(good[:10] + b"\xff" * 8 + good[18:])  # the deflate stream's first block: invalid
    with pytest.raises(ValueError):
        read_idx(str(path))


def test_read_idx_with_a_size_zero_dimension(tmp_path):
    from lucid.utils.datasets import read_idx

    path = tmp_path / "empty-idx3-ubyte"
    path.write_bytes(struct.pack(">HBBIII", 0, 8, 3, 0, 28, 28))
    t = read_idx(str(path))
    assert t.dtype == lucid.uint8 and list(t.shape) == [0, 28, 28]
