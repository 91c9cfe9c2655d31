"""Smoke tests of the examples beyond softmax regression: each runs end to end at a small size."""

import math
import re
import os
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
sys.path.insert(0, EXAMPLES)

import char_transformer  # noqa: E402
import custom_function  # noqa: E402
import hessian_vector_product  # noqa: E402
import lstm_classifier  # noqa: E402
import mlp_fashion_mnist  # noqa: E402

needs_fashion_mnist = pytest.mark.skipif(
    not os.path.isdir(mlp_fashion_mnist.DEFAULT_ROOT),
    reason="Debian's dataset-fashion-mnist is not installed (scripts/setup.sh installs it)")
needs_gpl = pytest.mark.skipif(not os.path.isfile(char_transformer.DEFAULT_TEXT),
                               reason=f"{char_transformer.DEFAULT_TEXT} is missing")


@needs_fashion_mnist
def test_mlp_learns_fashion_mnist():
    acc = mlp_fashion_mnist.main(["--epochs", "1", "--limit", "10000", "--test-limit", "2000"])
    assert acc > 0.6  # chance is 0.1; this run gets ~0.78, a full run ~0.87


def test_mlp_names_missing_data(tmp_path):
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path))):
        mlp_fashion_mnist.main(["--data", str(tmp_path)])


def test_lstm_classifier_beats_chance():
    acc = lstm_classifier.main(["--train", "2000", "--test", "400", "--epochs", "3", "--max-len", "20"])
    assert acc > 0.8  # about half the sequences are positive; this run gets ~0.99


def test_custom_function_gradients_match():
    err = custom_function.main(["--steps", "20"])
    assert err < 1e-6


def test_custom_softplus_is_stable_and_straight_through_passes_gradient():
    import lucid
    x = lucid.tensor([-800.0, 0.0, 800.0], requires_grad=True)
    y = custom_function.softplus(x)
    assert math.isfinite(y.sum().item()) and abs(y[2].item() - 800.0) < 1e-3
    y.sum().backward()
    assert x.grad.tolist() == pytest.approx([0.0, 0.5, 1.0])
    v = lucid.tensor([-2.0, 0.5, 2.0], requires_grad=True)
    custom_function.ClampSTE.apply(v, -1.0, 1.0).sum().backward()
    assert v.grad.tolist() == [1.0, 1.0, 1.0]


def test_hessian_vector_products_match():
    err = hessian_vector_product.main(["--dim", "12", "--hidden", "8", "--samples", "32", "--iters", "40"])
    assert err < 1e-6


@needs_gpl
def test_char_transformer_loss_decreases():
    small = ["--steps", "0", "--batch-size", "16", "--block-size", "32", "--d-model", "32", "--heads", "2",
             "--layers", "1", "--warmup", "5", "--eval-batches", "2", "--sample-chars", "20", "--lr", "1e-2"]
    initial = char_transformer.main(small)  # --steps 0: the validation loss of the initial model
    vocab = char_transformer.CharVocab(char_transformer.read_text(char_transformer.DEFAULT_TEXT))
    assert initial == pytest.approx(math.log2(len(vocab)), abs=0.5)  # about uniform over the characters
    trained = char_transformer.main(small[2:] + ["--steps", "40", "--eval-every", "40"])
    assert trained < initial - 1.0


def test_char_transformer_samples_requested_length():
    import lucid
    lucid.manual_seed(0)
    text = "the quick brown fox jumps over the lazy dog. " * 4
    vocab = char_transformer.CharVocab(text)
    model = char_transformer.CharTransformer(len(vocab), block_size=16, d_model=16, nhead=2, num_layers=1)
    out = char_transformer.generate(model, vocab, "the quick brown fox jumps", 30, temperature=1.0, top_k=5)
    assert isinstance(out, str) and len(out) == 30 and set(out) <= set(text)
    # top-k 1 is greedy: deterministic
    a = char_transformer.generate(model, vocab, "the", 10, top_k=1)
    assert a == char_transformer.generate(model, vocab, "the", 10, top_k=1)
    with pytest.raises(ValueError, match="do not occur"):
        char_transformer.generate(model, vocab, "THE", 5)


def test_char_transformer_names_missing_text(tmp_path):
    missing = str(tmp_path / "nothing.txt")
    with pytest.raises(FileNotFoundError, match="nothing.txt"):
        char_transformer.main(["--text", missing])
