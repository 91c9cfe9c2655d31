"""ByteTokenizer: the UTF-8 bytes of the text are the ids (0..255); nothing to train."""

from typing import Iterable

from . import _files
from ._base import Tokenizer
from ._special import SpecialTokens

__all__ = ["ByteTokenizer", "ByteTokenizerFast"]


class ByteTokenizer(Tokenizer):
    """Byte-level tokenizer: id == byte value, so any text round-trips exactly.

        tok = ByteTokenizer()
        tok.encode("hé")                       # [104, 195, 169]
        tok.decode([104, 195, 169])            # "hé"

    The vocabulary is chr(b) -> b for the 256 bytes. A special token that is not one of
    those characters is given the next id from 256 up (in slot order), so
    ByteTokenizer(SpecialTokens(eos="</s>")) encodes "</s>" as 256. Decoding replaces
    invalid UTF-8 with U+FFFD.
    """

    def __init__(self, special_tokens: SpecialTokens | None = None) -> None:
        if special_tokens is not None and not isinstance(special_tokens, SpecialTokens):
            raise TypeError(f"{type(self).__name__}: special_tokens must be a SpecialTokens, "
                            f"got {type(special_tokens).__name__}")
        self._added: dict[str, int] = {}
        for token in (special_tokens.all_tokens() if special_tokens else []):
            if not (len(token) == 1 and ord(token) < 256):
                self._added.setdefault(token, 256 + len(self._added))
        self._added_by_id = {tid: token for token, tid in self._added.items()}
        super().__init__(special_tokens)

    @property
    def vocab_size(self) -> int:
        return 256 + len(self._added)

    @property
    def algo(self) -> str:
        return "byte"

    def get_vocab(self) -> dict[str, int]:
        vocab = {chr(b): b for b in range(256)}
        vocab.update(self._added)
        return vocab

    def _token_id(self, token: str) -> int | None:
        if len(token) == 1 and ord(token) < 256:
            return ord(token)
        return self._added.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        if 0 <= token_id < 256:
            return chr(token_id)
        return self._added_by_id.get(token_id)

    def _encode_one(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def _decode_one(self, ids: list[int]) -> str:
        return bytes(i for i in ids if 0 <= i < 256).decode("utf-8", errors="replace")

    def train(self, corpus: Iterable[str], *, vocab_size: int = 256) -> None:
        """Nothing to learn: the byte vocabulary is fixed. Present for a uniform API."""
        _files.check_corpus(corpus, type(self).__name__)

    def _save_extras(self) -> dict[str, object]:
        return {"model": {"type": "Byte"}}

    @classmethod
    def from_file(cls, directory: str, *, special_tokens: SpecialTokens | None = None):
        """Load the special tokens saved by `save` (the byte vocabulary itself is fixed)."""
        _files.require_file(directory, ["tokenizer.json", "special_tokens_map.json"], cls.__name__)
        return cls(_files.load_special_tokens(directory, special_tokens))

    @classmethod
    def from_pretrained(cls, directory: str, **kwargs):
        """Alias of from_file."""
        return cls.from_file(directory, **kwargs)


class ByteTokenizerFast(ByteTokenizer):
    """Same as ByteTokenizer (encoding is str.encode, already native code); upstream's is C++-backed."""
