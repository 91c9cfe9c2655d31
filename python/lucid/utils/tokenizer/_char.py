"""CharTokenizer: one Unicode codepoint per token, vocabulary learned from a corpus."""

from ._lookup import FastLookupMixin, LookupTokenizer

__all__ = ["CharTokenizer", "CharTokenizerFast"]


class CharTokenizer(LookupTokenizer):
    """Character-level tokenizer.

        tok = CharTokenizer()
        tok.train(["the quick brown fox"], vocab_size=64)
        tok.encode("the fox")       # ids of t, h, e, " ", f, o, x
        tok.decode(tok.encode("the fox")) == "the fox"

    Parameters: vocab (dict codepoint -> id, or None/empty to train first); special_tokens
    (a vocabulary-held unk makes unknown characters encode to it, otherwise they are dropped).
    train(corpus, vocab_size=1000) collects characters in order of first appearance.
    """

    _model_type = "Char"
    _default_train_size = 1000

    def _units(self, text: str) -> list[str]:
        return list(text)


class CharTokenizerFast(FastLookupMixin, CharTokenizer):
    """CharTokenizer with a single-pass lookup; identical ids (upstream's is C++-backed)."""
