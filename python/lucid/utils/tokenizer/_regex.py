"""RegexTokenizer: every match of a regular expression is a token; text between matches is dropped."""

import os
import re

from . import _files
from ._lookup import FastLookupMixin, LookupTokenizer
from ._special import SpecialTokens

__all__ = ["RegexTokenizer", "RegexTokenizerFast"]


class RegexTokenizer(LookupTokenizer):
    r"""Tokenizer whose units are the non-empty matches of `pattern` (Python `re` syntax).

        tok = RegexTokenizer(r"\w+|[^\w\s]")
        tok.train(["hello, world"])            # hello=0 ,=1 world=2
        tok.encode("world, hello")             # [2, 1, 0]
        tok.decode([2, 1, 0])                  # "world , hello"

    Unknown matches become the unk id when the vocabulary holds the unk token, else they
    are dropped. Decoding joins tokens with single spaces: the text between matches is
    not recorded, so it cannot be restored.
    """

    _model_type = "Regex"
    _decode_separator = " "

    def __init__(self, pattern: str, vocab: dict[str, int] | None = None, *,
                 special_tokens: SpecialTokens | None = None) -> None:
        if not isinstance(pattern, str):
            raise TypeError(f"{type(self).__name__}: pattern must be a str, got {type(pattern).__name__}")
        try:
            self._pattern = re.compile(pattern)
        except re.error as e:
            raise ValueError(f"{type(self).__name__}: pattern {pattern!r} is not a valid regular expression "
                             f"({e})") from None
        self._pattern_str = pattern
        super().__init__(vocab, special_tokens=special_tokens)

    @property
    def pattern(self) -> str:
        """The regular expression's source."""
        return self._pattern_str

    def _units(self, text: str) -> list[str]:
        # Empty matches (a pattern like r"\w*" between words) carry no token.
        return [m.group() for m in self._pattern.finditer(text) if m.end() > m.start()]

    def _write_legacy_files(self, directory: str) -> None:
        super()._write_legacy_files(directory)
        with open(os.path.join(directory, "regex_pattern.txt"), "w", encoding="utf-8", newline="") as f:
            f.write(self._pattern_str)

    def _save_extras(self) -> dict[str, object]:
        extras = super()._save_extras()
        extras["model"]["pattern"] = self._pattern_str
        return extras

    def __repr__(self) -> str:
        return f"{type(self).__name__}(pattern={self._pattern_str!r}, vocab_size={self.vocab_size})"

    @classmethod
    def from_file(cls, directory: str, *, special_tokens: SpecialTokens | None = None):
        """Load a tokenizer saved by `save`: the pattern from tokenizer.json or regex_pattern.txt."""
        _files.require_file(directory, ["tokenizer.json", "regex_pattern.txt"], cls.__name__)
        model = _files.read_model_block(directory, cls.__name__)
        if model is not None and isinstance(model.get("pattern"), str):
            pattern = model["pattern"]
        else:
            path = _files.require_file(directory, ["regex_pattern.txt"], cls.__name__)
            with open(path, encoding="utf-8", newline="") as f:
                pattern = f.read()
        has_vocab = (model is not None and "vocab" in model) or os.path.isfile(os.path.join(directory, "vocab.txt"))
        vocab = cls._read_vocab(directory) if has_vocab else {}
        return cls(pattern, vocab, special_tokens=_files.load_special_tokens(directory, special_tokens))


class RegexTokenizerFast(FastLookupMixin, RegexTokenizer):
    """RegexTokenizer with a single-pass lookup; identical ids (upstream's is C++-backed and
    uses ECMAScript regex syntax, this one Python's `re` in both classes)."""
