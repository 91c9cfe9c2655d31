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


import train_fashion_mnist  # noqa: E402

needs_fashion = pytest.mark.skipif(not os.path.isdir(train_fashion_mnist.lucid.utils.datasets.FashionMNIST.default_root),
                                   reason="Debian's dataset-fashion-mnist is not installed")


@needs_fashion
def test_cnn_program_learns_and_writes_its_checkpoint(tmp_path):
    acc = train_fashion_mnist.main(["--epochs", "1", "--limit", "3000", "--batch-size", "64", "--no-progress",
                                    "--checkpoint-dir", str(tmp_path)])
    assert acc > 0.6  # chance is 0.1; the default run reaches ~0.91
    assert sorted(os.listdir(tmp_path)) == ["curves.png", "model.safetensors", "training_state.pt"]
    from safetensors.numpy import load_file  # the weights load outside lucid
    assert "0.weight" in load_file(str(tmp_path / "model.safetensors"))


@needs_fashion
def test_cnn_program_learns_in_bfloat16_autocast(tmp_path, capsys):
    acc = train_fashion_mnist.main(["--epochs", "1", "--limit", "3000", "--batch-size", "64", "--no-progress", "--amp",
                                    "--checkpoint-dir", str(tmp_path)])
    assert acc > 0.6
    assert "bfloat16 autocast" in capsys.readouterr().out


@needs_fashion
def test_cnn_program_resumes_exactly(tmp_path):
    common = ["--epochs", "2", "--limit", "1024", "--batch-size", "64", "--no-progress"]
    train_fashion_mnist.main(common + ["--checkpoint-dir", str(tmp_path / "whole")])
    train_fashion_mnist.main(common + ["--checkpoint-dir", str(tmp_path / "parts"), "--stop-after", "1"])
    train_fashion_mnist.main(common + ["--checkpoint-dir", str(tmp_path / "parts"), "--resume"])
    whole = (tmp_path / "whole" / "model.safetensors").read_bytes()
    assert whole == (tmp_path / "parts" / "model.safetensors").read_bytes()


def test_cnn_program_names_missing_data_and_checkpoints(tmp_path):
    with pytest.raises(FileNotFoundError, match="dataset-fashion-mnist"):
        train_fashion_mnist.main(["--data", str(tmp_path), "--no-progress"])
    if os.path.isdir(train_fashion_mnist.lucid.utils.datasets.FashionMNIST.default_root):
        with pytest.raises(FileNotFoundError, match="--resume"):
            train_fashion_mnist.main(["--resume", "--checkpoint-dir", str(tmp_path / "none"), "--no-progress"])
