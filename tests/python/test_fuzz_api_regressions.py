"""What the public-API fuzzer (scripts/fuzz_api/) found, kept as regression tests:
each call used to hang, crash, return a wrong result or raise a raw C++ message; now it
raises a Python exception saying what was wrong (or, for the slice, returns what a
Python list gives). The size checks fail fast, before any loop over the size; the
pooling window that walked 2^62 taps runs in a subprocess with a timeout."""

import subprocess
import sys
import textwrap

import pytest
import torch

import lucid
from conftest import default_device

F = lucid.nn.functional

# linspace's result is allocated on the default device: under a GPU default, the GPU's
# allocator refuses it in its own words.
DEFAULT_OOM = "out of host memory" if default_device() == "cpu" else "out of host memory|GPU out of memory"

RAISES = [
    # (what, exception type, words in the message, call)
    ("max_pool1d kernel 2^63-1", RuntimeError, "too small", lambda: F.max_pool1d(lucid.zeros(1, 1, 3), 2**63 - 1)),
    ("avg_pool1d kernel 2^63-1", RuntimeError, "too small", lambda: F.avg_pool1d(lucid.zeros(1, 1, 5), 2**63 - 1)),
    ("pad replicate 2^40", RuntimeError, "out of host memory",
     lambda: F.pad(lucid.zeros(1, 1, 2), (2**40, 0), mode="replicate")),
    ("interpolate x 2^31", RuntimeError, "out of host memory",
     lambda: F.interpolate(lucid.zeros(1, 1, 8), scale_factor=2**31 - 1)),
    ("tensor(range(2^62))", RuntimeError, "out of host memory", lambda: lucid.tensor(range(2**62))),
    ("LayerNorm(range(2^62))", RuntimeError, "at most 64 dimensions", lambda: lucid.nn.LayerNorm(range(2**62))),
    # (2^40 copies of 24 bytes: more than any host has; 2^31 fits a 128 GiB host, which
    # then deep-copied for hours)
    ("TransformerEncoder 2^40 layers", RuntimeError, "out of host memory",
     lambda: lucid.nn.TransformerEncoder(lucid.nn.Linear(2, 2), 2**40)),
    ("TransformerEncoder of a dtype", TypeError, "nn.Module", lambda: lucid.nn.TransformerEncoder(lucid.float32, 2)),
    ("var(unbiased=1.0)", TypeError, "wrong type", lambda: lucid.zeros(3).var(unbiased=1.0)),
    ("conv2d with a string bias", TypeError, "wrong type",
     lambda: F.conv2d(lucid.zeros(1, 1, 3, 3), lucid.zeros(1, 1, 1, 1), "fan_in")),
    ("adaptive_max_pool1d 2^62", RuntimeError, "out of host memory",
     lambda: F.adaptive_max_pool1d(lucid.zeros(1, 1, 2), 2**62)),
    ("linspace 2^40", RuntimeError, DEFAULT_OOM, lambda: lucid.linspace(0, 1, 2**40)),
    ("65 dimensions", RuntimeError, "at most 64", lambda: lucid.zeros([1] * 65)),
]


@pytest.mark.parametrize("what,kind,words,call", RAISES, ids=[r[0] for r in RAISES])
def test_bad_call_raises_a_clear_exception(what, kind, words, call):
    with pytest.raises(kind, match=words):
        call()


def test_huge_pool_window_with_padding_does_not_walk_its_taps():
    code = textwrap.dedent("""
        import lucid
        y = lucid.nn.functional.max_pool1d(lucid.tensor([[[1.0, 5.0, 2.0]]]), 2**62, padding=2**61)
        print(y.tolist())
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[[[5.0]]]"


@pytest.mark.parametrize("step", [2**63 - 1, 2**61, 3])
def test_slice_with_a_huge_step_as_python(step):
    # as a Python list slices (torch 2.15 gives [] for a step of 2^63 - 1: its length overflows)
    assert lucid.arange(10.0)[1::step].tolist() == [float(v) for v in range(10)][1::step]


@pytest.mark.parametrize("op", ["abs", "neg", "add", "sub", "mul"])
def test_int64_overflow_wraps_as_torch(op):
    # computed without signed-overflow undefined behaviour (checked under UBSan)
    vals = [-2**63, 2**63 - 1, -1]
    fns = {"abs": lambda m, x: x.abs(), "neg": lambda m, x: -x, "add": lambda m, x: x + x,
           "sub": lambda m, x: x - m.tensor([1, -1, 2**63 - 1]), "mul": lambda m, x: x * 3}
    assert fns[op](lucid, lucid.tensor(vals)).tolist() == fns[op](torch, torch.tensor(vals)).tolist()
