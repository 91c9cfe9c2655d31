"""Shared machinery of the lookup tokenizers (Char, Whitespace, Word, Regex): split the
text into units, look each unit up in a dict vocabulary, and train by collecting units.
"""

import os
from abc import abstractmethod
from typing import Iterable

from . import _files
from ._base import Tokenizer
from ._special import SpecialTokens


class DictVocabMixin:
    """A token -> id dict with its inverse, for tokenizers whose vocabulary is a plain dict."""

    _vocab: dict[str, int]
    _id_to_token: dict[int, str]

    def _install_vocab(self, vocab: dict[str, int]) -> None:
        self._vocab = vocab
        self._id_to_token = {tid: token for token, tid in vocab.items()}

    @property
    def vocab_size(self) -> int:
        return len(self._vocab)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def _token_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self._id_to_token.get(token_id)


class LookupTokenizer(DictVocabMixin, Tokenizer):
    """Units -> ids by dict lookup. An unknown unit becomes the unk id when the vocabulary
    holds the unk token, else it is dropped (WordTokenizer raises instead)."""

    _model_type = ""          # "model.type" in tokenizer.json; its lowercase is `algo`
    _default_train_size = 30_000

    @property
    def algo(self) -> str:
        return self._model_type.lower()

    def __init__(self, vocab: dict[str, int] | None = None, *, special_tokens: SpecialTokens | None = None) -> None:
        self._install_vocab(_files.check_vocab(vocab, type(self).__name__))
        super().__init__(special_tokens)

    @abstractmethod
    def _units(self, text: str) -> list[str]:
        """Split text into the units the vocabulary holds."""

    def _unknown(self, unit: str) -> int | None:
        """Id for a unit missing from the vocab: unk's, or None to drop it."""
        return self.unk_token_id

    def _encode_one(self, text: str) -> list[int]:
        out: list[int] = []
        for unit in self._units(text):
            tid = self._vocab.get(unit)
            if tid is None:
                tid = self._unknown(unit)
            if tid is not None:
                out.append(tid)
        return out

    def _decode_one(self, ids: list[int]) -> str:
        return self._decode_separator.join(self._id_to_token[i] for i in ids if i in self._id_to_token)

    def train(self, corpus: Iterable[str], *, vocab_size: int | None = None) -> None:
        """Rebuild the vocabulary from `corpus`: units get ids in order of first appearance,
        until vocab_size tokens. Special tokens the corpus did not supply are appended last
        (and counted in vocab_size), so unk/pad/... always get ids."""
        owner = type(self).__name__
        vocab_size = _files.check_vocab_size(self._default_train_size if vocab_size is None else vocab_size, owner)
        specials = self._special.all_tokens()
        vocab: dict[str, int] = {}

        def room() -> bool:
            return len(vocab) + sum(s not in vocab for s in specials) < vocab_size

        for doc in _files.check_corpus(corpus, owner):
            if not room():
                break
            for unit in self._units(doc):
                if unit not in vocab:
                    if not room():
                        break
                    vocab[unit] = len(vocab)
        for token in specials:
            vocab.setdefault(token, len(vocab))
        self._install_vocab(vocab)
        self._refresh_special_ids()

    def _write_legacy_files(self, directory: str) -> None:
        _files.write_vocab_txt(self._vocab, os.path.join(directory, "vocab.txt"))

    def _save_extras(self) -> dict[str, object]:
        return {"model": {"type": self._model_type, "vocab": dict(self._vocab)}}

    @classmethod
    def _read_vocab(cls, directory: str) -> dict[str, int]:
        """The vocab from tokenizer.json's model block, else from vocab.txt."""
        _files.require_file(directory, ["tokenizer.json", "vocab.txt"], cls.__name__)
        model = _files.read_model_block(directory, cls.__name__)
        if model is not None and isinstance(model.get("vocab"), dict):
            return model["vocab"]
        return _files.read_vocab_txt(_files.require_file(directory, ["vocab.txt"], cls.__name__))

    @classmethod
    def from_file(cls, directory: str, *, special_tokens: SpecialTokens | None = None):
        """Load a tokenizer saved by `save` (tokenizer.json, or a bare vocab.txt)."""
        vocab = cls._read_vocab(directory)
        return cls(vocab, special_tokens=_files.load_special_tokens(directory, special_tokens))

    @classmethod
    def from_pretrained(cls, directory: str, **kwargs):
        """Alias of from_file (Hugging Face's name)."""
        return cls.from_file(directory, **kwargs)


class FastLookupMixin:
    """The Fast lookup tokenizers: the same mapping, done by one dict.get pass per text
    instead of the reference implementation's explicit loop; results are identical."""

    def _encode_one(self, text: str) -> list[int]:
        units = self._units(text)
        found = list(map(self._vocab.get, units))
        if None not in found:
            return found
        out = []
        for unit, tid in zip(units, found):
            if tid is None:
                tid = self._unknown(unit)
            if tid is not None:
                out.append(tid)
        return out
