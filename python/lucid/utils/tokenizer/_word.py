"""WordTokenizer: whitespace-separated words, with the unk token for unknown words."""

from ._lookup import FastLookupMixin, LookupTokenizer

__all__ = ["WordTokenizer", "WordTokenizerFast"]


class WordTokenizer(LookupTokenizer):
    """Word-level tokenizer whose unknown words encode to the unk token.

        tok = WordTokenizer(special_tokens=SpecialTokens(unk="<unk>"))
        tok.train(["the quick brown fox"])     # the=0 quick=1 brown=2 fox=3 <unk>=4
        tok.encode("the slow fox")             # [0, 4, 3]

    Without an unk token in the vocabulary an unknown word raises ValueError rather than
    vanishing from the ids. `train` appends the registry's special tokens the corpus did
    not contain, so a configured unk always gets an id.
    """

    _model_type = "Word"
    _decode_separator = " "

    def _units(self, text: str) -> list[str]:
        return text.split()

    def _unknown(self, unit: str) -> int | None:
        if self.unk_token_id is None:
            raise ValueError(
                f"{type(self).__name__}.encode: word {unit!r} is not in the vocabulary and there is no unk token "
                "to stand for it; pass special_tokens=SpecialTokens(unk='<unk>') with '<unk>' in the vocab "
                "(train adds it), or encode only known words")
        return self.unk_token_id


class WordTokenizerFast(FastLookupMixin, WordTokenizer):
    """WordTokenizer with a single-pass lookup; identical ids and errors (upstream's is C++-backed)."""
