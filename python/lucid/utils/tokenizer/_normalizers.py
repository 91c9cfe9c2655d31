"""Normalizers: str -> str rewrites applied to the text before it is split and encoded.

Exposed as `lucid.utils.tokenizer.normalizers`. The usual chains:

    Sequence([NFD(), Lowercase(), StripAccents()])   # BERT uncased (or BERTNormalizer())
    NFC()                                             # GPT-2 style BPE
    NFKC()                                            # SentencePiece / Unigram
"""

import unicodedata
from abc import ABC, abstractmethod

__all__ = [
    "Normalizer", "Sequence", "NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents",
    "Strip", "Replace", "BERTNormalizer",
]


class Normalizer(ABC):
    """Base class: subclasses implement `normalize(text) -> str`; instances are callable."""

    @abstractmethod
    def normalize(self, text: str) -> str:
        """Return the normalized form of `text`."""

    def __call__(self, text: str) -> str:
        if not isinstance(text, str):
            raise TypeError(f"{type(self).__name__} normalizes str, got {type(text).__name__}")
        return self.normalize(text)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Sequence(Normalizer):
    """Apply normalizers left to right; `Sequence([])` is the identity."""

    def __init__(self, normalizers: list[Normalizer]) -> None:
        normalizers = list(normalizers)
        for n in normalizers:
            if not callable(n):
                raise TypeError(f"Sequence takes normalizers (callables str -> str), got {type(n).__name__}")
        self._normalizers = normalizers

    def normalize(self, text: str) -> str:
        for n in self._normalizers:
            text = n(text)
        return text

    def __repr__(self) -> str:
        return f"Sequence({self._normalizers!r})"


class _UnicodeForm(Normalizer):
    form = ""

    def normalize(self, text: str) -> str:
        return unicodedata.normalize(self.form, text)


class NFC(_UnicodeForm):
    """Unicode canonical composition ("e" + U+0301 -> "é")."""
    form = "NFC"


class NFD(_UnicodeForm):
    """Unicode canonical decomposition ("é" -> "e" + U+0301); precedes StripAccents."""
    form = "NFD"


class NFKC(_UnicodeForm):
    """Compatibility composition: also folds fullwidth forms and ligatures ("ﬁ" -> "fi")."""
    form = "NFKC"


class NFKD(_UnicodeForm):
    """Compatibility decomposition: NFD plus the compatibility folds of NFKC."""
    form = "NFKD"


class Lowercase(Normalizer):
    """str.lower (locale-independent Unicode lowercasing)."""

    def normalize(self, text: str) -> str:
        return text.lower()


def _drop_nonspacing_marks(text: str) -> str:
    # Category Mn, as BERT's _run_strip_accents and Hugging Face's StripAccents test.
    return "".join(c for c in text if unicodedata.category(c) != "Mn")


class StripAccents(Normalizer):
    """Drop nonspacing marks (category Mn); only removes accents already split off by NFD/NFKD."""

    def normalize(self, text: str) -> str:
        return _drop_nonspacing_marks(text)


class Strip(Normalizer):
    """Strip whitespace from the left and/or right end."""

    def __init__(self, left: bool = True, right: bool = True) -> None:
        self._left, self._right = bool(left), bool(right)

    def normalize(self, text: str) -> str:
        if self._left:
            text = text.lstrip()
        if self._right:
            text = text.rstrip()
        return text

    def __repr__(self) -> str:
        return f"Strip(left={self._left}, right={self._right})"


class Replace(Normalizer):
    """Replace every occurrence of a literal substring."""

    def __init__(self, pattern: str, replacement: str) -> None:
        if not isinstance(pattern, str) or not isinstance(replacement, str):
            raise TypeError("Replace(pattern, replacement) takes two str")
        if not pattern:
            raise ValueError("Replace: pattern is empty; an empty pattern would insert between every character")
        self._pattern, self._replacement = pattern, replacement

    def normalize(self, text: str) -> str:
        return text.replace(self._pattern, self._replacement)

    def __repr__(self) -> str:
        return f"Replace({self._pattern!r}, {self._replacement!r})"


def is_bert_whitespace(ch: str) -> bool:
    """BERT's whitespace: space, tab, newline, carriage return and category Zs."""
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_bert_control(ch: str) -> bool:
    """BERT's control characters: categories C*, except the whitespace controls."""
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


# CJK Unified Ideograph blocks, as BERT lists them (Hangul and kana are not among them).
_CJK_RANGES = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


class BERTNormalizer(Normalizer):
    """BERT's BasicTokenizer cleanup: drop controls, whitespace -> " ", pad CJK ideographs
    with spaces (so each becomes its own word), then NFD + strip accents + lowercase.

    lowercase=False and strip_accents=False give the cased pipeline.
    """

    def __init__(self, *, lowercase: bool = True, strip_accents: bool = True,
                 clean_text: bool = True, handle_chinese_chars: bool = True) -> None:
        self._lowercase = bool(lowercase)
        self._strip_accents = bool(strip_accents)
        self._clean_text = bool(clean_text)
        self._handle_chinese_chars = bool(handle_chinese_chars)

    def normalize(self, text: str) -> str:
        out: list[str] = []
        for ch in text:
            if self._clean_text:
                if ch in "\x00\ufffd" or is_bert_control(ch):
                    continue
                if is_bert_whitespace(ch):
                    ch = " "
            if self._handle_chinese_chars and is_cjk(ch):
                ch = f" {ch} "
            out.append(ch)
        text = "".join(out)
        # Lowercase first, as BERT does, so accents that lowercasing exposes are stripped too.
        if self._lowercase:
            text = text.lower()
        if self._strip_accents:
            text = _drop_nonspacing_marks(unicodedata.normalize("NFD", text))
        return text

    def __repr__(self) -> str:
        return (f"BERTNormalizer(lowercase={self._lowercase}, strip_accents={self._strip_accents}, "
                f"clean_text={self._clean_text}, handle_chinese_chars={self._handle_chinese_chars})")
