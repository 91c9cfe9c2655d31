"""The examples run end to end (at a small size, so CI stays fast)."""

import os
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
sys.path.insert(0, EXAMPLES)

import softmax_regression  # noqa: E402


@pytest.mark.skipif(not os.path.isdir(softmax_regression.DEFAULT_ROOT),
                    reason="Debian's dataset-fashion-mnist is not installed (scripts/setup.sh installs it)")
def test_softmax_regression_learns_fashion_mnist():
    acc = softmax_regression.main(["--epochs", "1", "--limit", "6000"])
    assert acc > 0.70  # chance is 0.10; a full run reaches ~0.83


def test_softmax_regression_names_missing_data(tmp_path):
    with pytest.raises(FileNotFoundError, match="dataset-fashion-mnist"):
        softmax_regression.main(["--data", str(tmp_path)])


def test_softmax_regression_rejects_malformed_files(tmp_path):
    import gzip
    for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                 "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        with gzip.open(tmp_path / name, "wb") as f:
            f.write(b"\x00\x00\x08\x03" + b"\x00" * 3)  # header cut short
    with pytest.raises(ValueError, match="IDX"):
        softmax_regression.main(["--data", str(tmp_path)])
