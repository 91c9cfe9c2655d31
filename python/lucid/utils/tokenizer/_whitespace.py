"""WhitespaceTokenizer: one token per whitespace-separated word; unknown words are dropped."""

from ._lookup import FastLookupMixin, LookupTokenizer

__all__ = ["WhitespaceTokenizer", "WhitespaceTokenizerFast"]


class WhitespaceTokenizer(LookupTokenizer):
    """Word-level tokenizer splitting on runs of whitespace (str.split).

        tok = WhitespaceTokenizer()
        tok.train(["the quick brown fox", "the lazy dog sleeps"])
        tok.encode("the quick dog")            # [0, 1, 5]
        tok.decode([0, 1, 5])                  # "the quick dog"

    Words missing from the vocabulary are dropped, even when an unk token is defined (use
    WordTokenizer for unk substitution). Decoding joins words with single spaces.
    """

    _model_type = "Whitespace"
    _decode_separator = " "

    def _units(self, text: str) -> list[str]:
        return text.split()

    def _unknown(self, unit: str) -> int | None:
        return None


class WhitespaceTokenizerFast(FastLookupMixin, WhitespaceTokenizer):
    """WhitespaceTokenizer with a single-pass lookup; identical ids (upstream's is C++-backed)."""
