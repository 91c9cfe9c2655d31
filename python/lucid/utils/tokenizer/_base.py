"""Tokenizer: the base class every lucid.utils.tokenizer tokenizer derives from.

A subclass implements four things: `_encode_one(text) -> list[int]` (one stretch of text
free of special tokens), `_decode_one(ids) -> str` (ids free of special tokens),
`vocab_size` and `algo`. The base class adds special-token handling, encode/decode, their
batch forms, the Hugging Face-style __call__ (padding, truncation, masks, tensors) and
save().
"""

import os
import re
from abc import ABC, abstractmethod
from typing import Iterable

from . import _files
from ._special import CANONICAL_SLOTS, SpecialTokens

__all__ = ["SpecialTokens", "Tokenizer"]


class Tokenizer(ABC):
    """Abstract base of the tokenizers.

    Special tokens: a surface form from the `SpecialTokens` registry that the vocabulary
    holds gets an id (`pad_token_id`, ..., `all_special_ids`). Such a token written in the
    input text is matched before normalization and encoded as its id, as Hugging Face
    does; `encode(add_special_tokens=True)` wraps the ids in bos/eos (or cls/sep when no
    bos/eos is defined); `decode(skip_special_tokens=True)` drops special ids.
    """

    # String between the decoded stretches of ordinary ids and special tokens: " " for the
    # tokenizers that decode words joined by spaces, "" for the ones that decode text.
    _decode_separator = ""

    def __init__(self, special_tokens: SpecialTokens | None = None) -> None:
        self._set_special_tokens(special_tokens, strict=special_tokens is not None)

    # -- hooks for subclasses ---------------------------------------------------------

    @abstractmethod
    def _encode_one(self, text: str) -> list[int]:
        """Ids of one stretch of text that holds no special token (no bos/eos added)."""

    @abstractmethod
    def _decode_one(self, ids: list[int]) -> str:
        """Text of a run of ordinary (non-special) ids; unknown ids are skipped."""

    @property
    @abstractmethod
    def vocab_size(self) -> int:
        """Number of ids, special tokens included."""

    @property
    @abstractmethod
    def algo(self) -> str:
        """Short algorithm name saved in tokenizer.json ("bpe", "wordpiece", ...)."""

    def get_vocab(self) -> dict[str, int]:
        """A copy of the token -> id map."""
        return {}

    def _token_id(self, token: str) -> int | None:
        """Id of `token` or None; subclasses with a dict vocab answer without copying it."""
        return self.get_vocab().get(token)

    def _save_extras(self) -> dict[str, object]:
        """Entries added to tokenizer.json (a "model" block)."""
        return {}

    def _write_legacy_files(self, directory: str) -> None:
        """Write the algorithm's traditional files (vocab.txt, merges.txt, ...) next to tokenizer.json."""

    # -- vocabulary --------------------------------------------------------------------

    def id_to_token(self, token_id: int) -> str | None:
        """Surface form of `token_id`, or None when no token has that id."""
        for token, tid in self.get_vocab().items():
            if tid == token_id:
                return token
        return None

    def convert_tokens_to_ids(self, tokens: str | Iterable[str]) -> int | list[int]:
        """Id(s) of token(s); a token missing from the vocab raises KeyError."""
        if isinstance(tokens, str):
            return self._require_token(tokens)
        return [self._require_token(t) for t in tokens]

    def convert_ids_to_tokens(self, ids: int | Iterable[int]) -> str | list[str]:
        """Token(s) of id(s); an id missing from the vocab raises KeyError."""
        if isinstance(ids, int):
            return self._require_id(ids)
        return [self._require_id(i) for i in _id_list(ids, "convert_ids_to_tokens")]

    def _require_token(self, token: str) -> int:
        tid = self._token_id(token) if isinstance(token, str) else None
        if tid is None:
            raise KeyError(f"{type(self).__name__}: token {token!r} is not in the vocabulary")
        return tid

    def _require_id(self, token_id: int) -> str:
        token = self.id_to_token(token_id)
        if token is None:
            raise KeyError(f"{type(self).__name__}: id {token_id} is not in the vocabulary (size {self.vocab_size})")
        return token

    # -- special tokens ----------------------------------------------------------------

    def _set_special_tokens(self, special_tokens: SpecialTokens | None, *, strict: bool) -> None:
        """Install the registry; strict=True makes a token the (non-empty) vocab lacks an error."""
        if special_tokens is None:
            special_tokens = SpecialTokens()
        if not isinstance(special_tokens, SpecialTokens):
            raise TypeError(f"{type(self).__name__}: special_tokens must be a SpecialTokens, "
                            f"got {type(special_tokens).__name__}")
        self._special = special_tokens
        self._refresh_special_ids()
        if strict and self.vocab_size > 0:
            missing = [f"{name}={token!r}" for name, token in special_tokens.named() if name not in self._special_ids]
            if missing:
                raise ValueError(f"{type(self).__name__}: special tokens {', '.join(missing)} are not in the "
                                 "vocabulary; add them to the vocab (or train, which reserves them)")

    def _refresh_special_ids(self) -> None:
        """Resolve the registry's surface forms to ids; call after the vocab changes."""
        self._special_ids: dict[str, int] = {}
        for name, token in self._special.named():
            tid = self._token_id(token)
            if tid is not None:
                self._special_ids[name] = tid
        surfaces = {token for name, token in self._special.named() if name in self._special_ids}
        # Longest first, so that of two specials starting at one place the longer is matched.
        ordered = sorted(surfaces, key=lambda s: (-len(s), s))
        self._special_pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    @property
    def special_tokens(self) -> SpecialTokens:
        return self._special

    def _slot_id(self, name: str) -> int | None:
        return self._special_ids.get(name)

    pad_token_id = property(lambda self: self._slot_id("pad"), doc="Id of the pad token, or None.")
    unk_token_id = property(lambda self: self._slot_id("unk"), doc="Id of the unk token, or None.")
    bos_token_id = property(lambda self: self._slot_id("bos"), doc="Id of the bos token, or None.")
    eos_token_id = property(lambda self: self._slot_id("eos"), doc="Id of the eos token, or None.")
    mask_token_id = property(lambda self: self._slot_id("mask"), doc="Id of the mask token, or None.")
    sep_token_id = property(lambda self: self._slot_id("sep"), doc="Id of the sep token, or None.")
    cls_token_id = property(lambda self: self._slot_id("cls"), doc="Id of the cls token, or None.")

    @property
    def all_special_ids(self) -> list[int]:
        """Sorted ids of every special token the vocabulary holds."""
        return sorted(set(self._special_ids.values()))

    def _split_on_special_tokens(self, text: str) -> list[tuple[str, int | None]]:
        """(stretch, None) for ordinary text and (surface, id) for each special token."""
        if self._special_pattern is None:
            return [(text, None)] if text else []
        out: list[tuple[str, int | None]] = []
        at = 0
        for m in self._special_pattern.finditer(text):
            if m.start() > at:
                out.append((text[at:m.start()], None))
            out.append((m.group(), self._token_id(m.group())))
            at = m.end()
        if at < len(text):
            out.append((text[at:], None))
        return out

    def _build_inputs_with_special_tokens(self, ids: list[int]) -> list[int]:
        """Wrap ids: bos (else cls) in front and eos (else sep) behind, where defined."""
        first = self.bos_token_id if self.bos_token_id is not None else self.cls_token_id
        last = self.eos_token_id if self.eos_token_id is not None else self.sep_token_id
        return ([first] if first is not None else []) + list(ids) + ([last] if last is not None else [])

    # -- encode / decode ---------------------------------------------------------------

    def encode(self, text: str, *, add_special_tokens: bool = True) -> list[int]:
        """Ids of `text`, wrapped in the bos/eos (cls/sep) tokens when add_special_tokens."""
        if not isinstance(text, str):
            raise TypeError(f"{type(self).__name__}.encode takes a str, got {type(text).__name__}")
        ids: list[int] = []
        for stretch, special_id in self._split_on_special_tokens(text):
            if special_id is not None:
                ids.append(special_id)
            else:
                ids.extend(self._encode_one(stretch))
        return self._build_inputs_with_special_tokens(ids) if add_special_tokens else ids

    def decode(self, ids, *, skip_special_tokens: bool = True) -> str:
        """Text of `ids` (a list of ints or a 1-D integer tensor); ids outside the vocab are skipped."""
        ids = _id_list(ids, f"{type(self).__name__}.decode")
        special = {tid: token for name, token in self._special.named()
                   if (tid := self._special_ids.get(name)) is not None}
        parts: list[str] = []
        run: list[int] = []
        for i in ids:
            if i in special:
                if run:
                    parts.append(self._decode_one(run))
                    run = []
                if not skip_special_tokens:
                    parts.append(special[i])
            else:
                run.append(i)
        if run:
            parts.append(self._decode_one(run))
        return self._decode_separator.join(p for p in parts if p)

    def encode_batch(self, texts: Iterable[str], *, add_special_tokens: bool = True) -> list[list[int]]:
        """encode() of each text."""
        if isinstance(texts, str):
            raise TypeError(f"{type(self).__name__}.encode_batch takes a list of str, got a single str; use encode")
        return [self.encode(t, add_special_tokens=add_special_tokens) for t in texts]

    def decode_batch(self, batch_ids, *, skip_special_tokens: bool = True) -> list[str]:
        """decode() of each id sequence (a list of lists or a 2-D integer tensor)."""
        if hasattr(batch_ids, "tolist"):
            batch_ids = batch_ids.tolist()
        return [self.decode(ids, skip_special_tokens=skip_special_tokens) for ids in batch_ids]

    def __call__(self, text: str | list[str], *, add_special_tokens: bool = True, padding: bool | str = False,
                 truncation: bool = False, max_length: int | None = None, return_tensors: str | None = None,
                 return_attention_mask: bool = True) -> dict[str, object]:
        """Hugging Face-style encoding; see `_batch.encode_for_model`."""
        from ._batch import encode_for_model
        return encode_for_model(self, text, add_special_tokens=add_special_tokens, padding=padding,
                                truncation=truncation, max_length=max_length, return_tensors=return_tensors,
                                return_attention_mask=return_attention_mask)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size})"

    # -- persistence -------------------------------------------------------------------

    def save(self, directory: str) -> None:
        """Write tokenizer.json, special_tokens_map.json and the algorithm's traditional
        files into `directory` (created if missing); `from_file(directory)` reads them back."""
        os.makedirs(directory, exist_ok=True)
        self._write_legacy_files(directory)
        special = {name: getattr(self._special, name) for name in CANONICAL_SLOTS}
        special["extra"] = dict(self._special.extra)
        unified = {"algo": self.algo, "vocab": self.get_vocab(), "special_tokens": special}
        unified.update(self._save_extras())
        _files.write_json(unified, os.path.join(directory, "tokenizer.json"))
        _files.write_json(self._special.to_map(), os.path.join(directory, "special_tokens_map.json"))


def _id_list(ids, where: str) -> list[int]:
    """ids as a list of Python ints: from a list/tuple of ints or a 1-D integer tensor."""
    if hasattr(ids, "tolist") and not isinstance(ids, (list, tuple)):
        ids = ids.tolist()
        if isinstance(ids, int):
            ids = [ids]
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"{where}: expected a sequence of int ids, got {type(ids).__name__}")
    out = list(ids)
    for i in out:
        if not isinstance(i, int) or isinstance(i, bool):
            raise TypeError(f"{where}: ids must be ints, got {i!r} ({type(i).__name__})")
    return out
