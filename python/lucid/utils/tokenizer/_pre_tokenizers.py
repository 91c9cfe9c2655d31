"""Pre-tokenizers: split normalized text into the chunks (usually words) a subword model
encodes one at a time. Exposed as `lucid.utils.tokenizer.pre_tokenizers`.

Every pre-tokenizer returns a list of `(chunk, (start, end))`: the chunk as the model sees
it and its codepoint span in the input string.
"""

import unicodedata
from abc import ABC, abstractmethod

__all__ = [
    "Chunk", "PreTokenizer", "WhitespaceSplit", "WhitespacePunctuationSplit", "ByteLevel",
    "SentencePiecePreTokenizer", "bytes_to_unicode",
]

Chunk = tuple[str, tuple[int, int]]


class PreTokenizer(ABC):
    """Base class: subclasses implement `pre_tokenize(text) -> list[Chunk]`; instances are callable."""

    @abstractmethod
    def pre_tokenize(self, text: str) -> list[Chunk]:
        """Split `text` into (chunk, (start, end)) pairs."""

    def __call__(self, text: str) -> list[Chunk]:
        if not isinstance(text, str):
            raise TypeError(f"{type(self).__name__} splits str, got {type(text).__name__}")
        return self.pre_tokenize(text)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _runs(text: str, keep) -> list[Chunk]:
    """Maximal runs of characters for which keep(ch) holds."""
    out: list[Chunk] = []
    start = None
    for i, ch in enumerate(text):
        if keep(ch):
            if start is None:
                start = i
        elif start is not None:
            out.append((text[start:i], (start, i)))
            start = None
    if start is not None:
        out.append((text[start:], (start, len(text))))
    return out


class WhitespaceSplit(PreTokenizer):
    """Split on runs of Unicode whitespace (str.isspace); no empty chunks."""

    def pre_tokenize(self, text: str) -> list[Chunk]:
        return _runs(text, lambda ch: not ch.isspace())


def is_bert_punctuation(ch: str) -> bool:
    """BERT's punctuation: every non-alphanumeric ASCII symbol plus Unicode categories P*."""
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


class WhitespacePunctuationSplit(PreTokenizer):
    """Split on whitespace and make every punctuation character its own chunk (BERT's
    BasicTokenizer), so "don't!" -> "don", "'", "t", "!"."""

    def pre_tokenize(self, text: str) -> list[Chunk]:
        out: list[Chunk] = []
        for word, (start, _) in _runs(text, lambda ch: not ch.isspace()):
            piece_start = 0
            for k, ch in enumerate(word):
                if is_bert_punctuation(ch):
                    if piece_start < k:
                        out.append((word[piece_start:k], (start + piece_start, start + k)))
                    out.append((ch, (start + k, start + k + 1)))
                    piece_start = k + 1
            if piece_start < len(word):
                out.append((word[piece_start:], (start + piece_start, start + len(word))))
        return out


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table.

    Bytes that are printable and not whitespace ("!".."~", "¡".."¬", "®".."ÿ") stand for
    themselves; the other 68 bytes take the characters U+0100, U+0101, ... in byte order,
    so the space 0x20 becomes "Ġ" (U+0120) and the newline 0x0A becomes "Ċ" (U+010A).
    """
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(0x100 + shifted)
            shifted += 1
    return table


_BYTE_TO_CHAR = bytes_to_unicode()
_CHAR_TO_BYTE = {c: b for b, c in _BYTE_TO_CHAR.items()}

# GPT-2's split pattern is
#   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
# which needs the third-party `regex` module for \p{..}; _gpt2_split below scans the same
# alternatives in the same order by hand.
_CONTRACTIONS = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d")


def _is_space(ch: str) -> bool:
    # Unicode White_Space, which \s means in `regex`; str.isspace also counts U+001C..U+001F.
    return ch.isspace() and ch not in "\x1c\x1d\x1e\x1f"


def _is_letter(ch: str) -> bool:
    return ch.isalpha()  # exactly the categories L*


def _is_number(ch: str) -> bool:
    return unicodedata.category(ch).startswith("N")


def _is_other(ch: str) -> bool:
    return not (_is_space(ch) or _is_letter(ch) or _is_number(ch))


def _gpt2_split(text: str) -> list[tuple[int, int]]:
    """Spans of GPT-2's pre-tokenization regex, alternative by alternative."""
    spans: list[tuple[int, int]] = []
    n, i = len(text), 0
    while i < n:
        ch = text[i]
        end = None
        if ch == "'":
            for c in _CONTRACTIONS:
                if text.startswith(c, i):
                    end = i + len(c)
                    break
        if end is None:
            # " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": an optional single space, then a run.
            body = i + 1 if ch == " " and i + 1 < n else i
            for cls in (_is_letter, _is_number, _is_other):
                if cls(text[body]):
                    end = body
                    while end < n and cls(text[end]):
                        end += 1
                    break
        if end is None:
            # "\s+(?!\S)" then "\s+": a whitespace run, minus its last character when that
            # character is followed by a non-space (which then takes it as its " ?").
            end = i
            while end < n and _is_space(text[end]):
                end += 1
            if end < n and end - i > 1:
                end -= 1
            end = max(end, i + 1)
        spans.append((i, end))
        i = end
    return spans


class ByteLevel(PreTokenizer):
    """GPT-2 / RoBERTa byte-level pre-tokenizer.

    Splits with GPT-2's regex (contractions, letter runs, digit runs, symbol runs, each
    taking one preceding space), then rewrites each chunk's UTF-8 bytes through
    `bytes_to_unicode`, so a BPE model over these chunks never meets a raw space, control
    byte or unknown character. `decode_bytes` inverts the byte mapping.

    add_prefix_space=True prepends a space when the text does not start with one, so the
    first word is spelled like every other ("Ġhello"); RoBERTa uses it, GPT-2 does not.
    """

    def __init__(self, *, add_prefix_space: bool = False) -> None:
        self.add_prefix_space = bool(add_prefix_space)

    @staticmethod
    def encode_bytes(raw: bytes) -> str:
        """Map bytes to their printable characters."""
        return "".join(_BYTE_TO_CHAR[b] for b in raw)

    @staticmethod
    def decode_bytes(encoded: str) -> bytes:
        """Inverse of encode_bytes; a character outside the 256-character alphabet raises KeyError."""
        return bytes(_CHAR_TO_BYTE[c] for c in encoded)

    @staticmethod
    def alphabet() -> list[str]:
        """The 256 characters, in byte order."""
        return [_BYTE_TO_CHAR[b] for b in range(256)]

    def pre_tokenize(self, text: str) -> list[Chunk]:
        shift = 0
        if self.add_prefix_space and not text.startswith(" "):
            text, shift = " " + text, 1
        return [(self.encode_bytes(text[s:e].encode("utf-8")), (max(s - shift, 0), e - shift))
                for s, e in _gpt2_split(text)]

    def __repr__(self) -> str:
        return f"ByteLevel(add_prefix_space={self.add_prefix_space})"


class SentencePiecePreTokenizer(PreTokenizer):
    """SentencePiece's Metaspace split: each whitespace character becomes "▁" (U+2581) and
    a chunk starts at every "▁", so "hello  world" -> "▁hello", "▁", "▁world".

    add_dummy_prefix=True (the SentencePiece default) prepends "▁" to non-empty text that
    does not already start with one, so the first word carries a word-start mark too.
    """

    SP_SPACE = "\u2581"

    def __init__(self, add_dummy_prefix: bool = True) -> None:
        self.add_dummy_prefix = bool(add_dummy_prefix)

    def pre_tokenize(self, text: str) -> list[Chunk]:
        text = "".join(self.SP_SPACE if ch.isspace() else ch for ch in text)
        shift = 0
        if self.add_dummy_prefix and text and not text.startswith(self.SP_SPACE):
            text, shift = self.SP_SPACE + text, 1
        out: list[Chunk] = []
        start = 0
        for i in range(1, len(text) + 1):
            if i == len(text) or text[i] == self.SP_SPACE:
                out.append((text[start:i], (max(start - shift, 0), i - shift)))
                start = i
        return out

    def __repr__(self) -> str:
        return f"SentencePiecePreTokenizer(add_dummy_prefix={self.add_dummy_prefix})"
