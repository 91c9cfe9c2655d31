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


# ---- --device: every example runs on the device asked for, and says so --------------------------------
import importlib  # noqa: E402
import re  # noqa: E402

import char_transformer  # noqa: E402
import lucid  # noqa: E402

needs_gpu = pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")
needs_gpl_text = pytest.mark.skipif(not os.path.isfile(char_transformer.DEFAULT_TEXT),
                                    reason=f"{char_transformer.DEFAULT_TEXT} is missing")

# (example, options for a run of a second or less, text it prints once its work is done)
SMALL_RUNS = [
    pytest.param("char_transformer", ["--steps", "3", "--batch-size", "4", "--block-size", "16", "--d-model", "16",
                                      "--heads", "2", "--layers", "1", "--eval-batches", "1", "--sample-chars", "20"],
                 "--- sample", marks=needs_gpl_text, id="char_transformer"),
    pytest.param("lstm_classifier", ["--train", "64", "--test", "32", "--epochs", "1", "--max-len", "12",
                                     "--embed-dim", "8", "--hidden", "8"], "test accuracy", id="lstm_classifier"),
    pytest.param("mlp_fashion_mnist", ["--epochs", "1", "--limit", "256", "--test-limit", "256"], "epoch 1:",
                 marks=needs_fashion, id="mlp_fashion_mnist"),
    pytest.param("softmax_regression", ["--epochs", "1", "--limit", "256"], "test accuracy:",
                 marks=needs_fashion, id="softmax_regression"),
    pytest.param("custom_function", ["--steps", "3", "--points", "16", "--hidden", "8"], "max gradient error",
                 id="custom_function"),
    pytest.param("hessian_vector_product", ["--dim", "8", "--hidden", "4", "--samples", "8", "--iters", "5"],
                 "max relative error", id="hessian_vector_product"),
    pytest.param("tensor_tour", [], "== GPU", id="tensor_tour"),
]


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=needs_gpu)])
@pytest.mark.parametrize("name,argv,expected", SMALL_RUNS)
def test_example_runs_on_the_device_asked_for(name, argv, expected, device, capsys):
    importlib.import_module(name).main(argv + ["--device", device])
    out = capsys.readouterr().out
    assert re.search(rf"^--device {device}: (training|running) on {device}\b", out, re.M), out[:500]
    assert expected in out


def test_examples_pick_the_gpu_when_there_is_one(capsys):
    for name in ("char_transformer", "lstm_classifier", "mlp_fashion_mnist", "softmax_regression",
                 "custom_function", "hessian_vector_product", "tensor_tour"):
        chosen = importlib.import_module(name).pick_device("auto")
        assert chosen == ("gpu" if lucid.gpu.is_available() else "cpu")
        out = capsys.readouterr().out
        assert out.startswith("--device auto: ") and out.count("\n") == 1  # one line that says why


def test_char_transformer_is_larger_on_the_gpu_unless_told():
    import argparse

    def sizes(device, **given):
        args = argparse.Namespace(**{k: given.get(k) for k in char_transformer.SIZES["cpu"]})
        return vars(char_transformer.size_defaults(args, device))

    assert sizes("cpu") == {"batch_size": 32, "block_size": 64, "d_model": 128, "heads": 4, "layers": 2}
    assert sizes("gpu") == {"batch_size": 64, "block_size": 256, "d_model": 384, "heads": 6, "layers": 6}
    assert sizes("cuda:0", layers=2)["layers"] == 2  # an option given on the command line holds
