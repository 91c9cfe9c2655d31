"""BPETokenizer: byte-pair encoding over characters (Sennrich et al. 2016)."""

import os
from typing import Iterable

from . import _files
from ._base import Tokenizer
from ._bpe_merge import PairRanks, merge_by_heap, merge_by_scan
from ._bpe_train import learn_merges
from ._lookup import DictVocabMixin
from ._normalizers import NFC, Normalizer
from ._pre_tokenizers import PreTokenizer, WhitespaceSplit
from ._special import SpecialTokens

__all__ = ["BPETokenizer", "BPETokenizerFast"]


def check_callable(value, kind: str, owner: str):
    if value is not None and not callable(value):
        expected = kind.title().replace("_", "")
        raise TypeError(f"{owner}: {kind} must be callable (a {expected}), got {type(value).__name__}")
    return value


def check_merges(merges, vocab: dict[str, int], owner: str) -> list[tuple[str, str]]:
    """Merges as (left, right) pairs, each of left, right and left+right in the vocab."""
    if merges is None:
        return []
    if isinstance(merges, (str, dict)):
        raise TypeError(f"{owner}: merges must be a list of (left, right) pairs, got {type(merges).__name__}")
    out = []
    for rank, entry in enumerate(merges):
        left, right = _files.parse_merge(entry, f"{owner}: merges[{rank}]")
        for token in (left, right, left + right):
            if token not in vocab:
                raise ValueError(f"{owner}: merges[{rank}] = ({left!r}, {right!r}) needs {token!r}, "
                                 "which is not in the vocab")
        out.append((left, right))
    return out


class BPETokenizer(DictVocabMixin, Tokenizer):
    """Byte-pair encoding tokenizer (reference implementation).

    Each pre-tokenized chunk starts as one symbol per character; then, repeatedly, the
    adjacent pair with the lowest merge rank (earliest in `merges`) is merged, the
    leftmost occurrence first, until no adjacent pair has a merge.

        vocab = {"l": 0, "o": 1, "w": 2, "lo": 3, "low": 4}
        tok = BPETokenizer(vocab, [("l", "o"), ("lo", "w")])
        tok.encode("low lol")                  # [4, 3, 0]

    Parameters
    ----------
    vocab : dict[str, int]
        Token -> id; must hold every character to be encoded and every merge result.
    merges : list of (str, str)
        Merge rules in priority order (a "left right" string is also accepted).
    normalizer : Normalizer, optional
        Default NFC().
    pre_tokenizer : PreTokenizer, optional
        Default WhitespaceSplit(): chunks are whitespace-separated words, so decode (which
        concatenates tokens) does not restore spaces; ByteLevelBPETokenizer does.
    special_tokens : SpecialTokens, optional
        A character missing from the vocab encodes to unk when the vocab holds it, else it
        is dropped.

    `train(corpus, vocab_size=30000)` learns vocab and merges from scratch.
    """

    def __init__(self, vocab: dict[str, int], merges: list[tuple[str, str]], *,
                 normalizer: Normalizer | None = None, pre_tokenizer: PreTokenizer | None = None,
                 special_tokens: SpecialTokens | None = None) -> None:
        owner = type(self).__name__
        vocab = _files.check_vocab(vocab, owner)
        self._merges = check_merges(merges, vocab, owner)
        self._normalizer = check_callable(normalizer, "normalizer", owner) or NFC()
        self._pre_tokenizer = check_callable(pre_tokenizer, "pre_tokenizer", owner) or WhitespaceSplit()
        self._install_vocab(vocab)
        self._rebuild_tables()
        super().__init__(special_tokens)

    @property
    def algo(self) -> str:
        return "bpe"

    @property
    def merges(self) -> list[tuple[str, str]]:
        """The merge rules in rank order."""
        return list(self._merges)

    def _rebuild_tables(self) -> None:
        """The (left_id, right_id) -> (rank, merged_id) table; call after vocab or merges change."""
        ranks: PairRanks = {}
        for rank, (left, right) in enumerate(self._merges):
            ranks.setdefault((self._vocab[left], self._vocab[right]), (rank, self._vocab[left + right]))
        self._ranks = ranks

    def _prepare_chunks(self, text: str) -> list[str]:
        """Normalize, then pre-tokenize: the chunks BPE merges within."""
        return [chunk for chunk, _ in self._pre_tokenizer(self._normalizer(text))]

    def _seed_ids(self, chunk: str) -> list[int]:
        """One id per character; a character missing from the vocab becomes unk or is dropped."""
        unk = self.unk_token_id
        ids = []
        for ch in chunk:
            tid = self._vocab.get(ch, unk)
            if tid is not None:
                ids.append(tid)
        return ids

    def _merge_ids(self, ids: list[int]) -> list[int]:
        return merge_by_scan(ids, self._ranks)

    def _encode_chunk(self, chunk: str) -> list[int]:
        return self._merge_ids(self._seed_ids(chunk))

    def _encode_one(self, text: str) -> list[int]:
        out: list[int] = []
        for chunk in self._prepare_chunks(text):
            out.extend(self._encode_chunk(chunk))
        return out

    def _decode_one(self, ids: list[int]) -> str:
        return "".join(self._id_to_token[i] for i in ids if i in self._id_to_token)

    # -- training ------------------------------------------------------------------------

    def _initial_alphabet(self) -> list[str]:
        """Symbols given ids before the corpus's own characters (ByteLevel: all 256 bytes)."""
        return []

    def train(self, corpus: Iterable[str], *, vocab_size: int = 30_000) -> None:
        """Learn vocab and merges from `corpus`, replacing the current ones.

        The vocab starts with the special tokens (slot order), then the initial alphabet,
        then the corpus's characters in order of first appearance; merges are then added
        (most frequent pair first, ties to the smallest pair) until vocab_size tokens or
        until no pair occurs twice.
        """
        owner = type(self).__name__
        vocab_size = _files.check_vocab_size(vocab_size, owner)
        counts: dict[tuple[str, ...], int] = {}
        for doc in _files.check_corpus(corpus, owner):
            for chunk in self._prepare_chunks(doc):
                key = tuple(chunk)
                counts[key] = counts.get(key, 0) + 1
        vocab: dict[str, int] = {}
        for token in [*self._special.all_tokens(), *self._initial_alphabet()]:
            vocab.setdefault(token, len(vocab))
        for word in counts:
            for ch in word:
                vocab.setdefault(ch, len(vocab))
        self._merges = learn_merges(counts, vocab, vocab_size)
        self._install_vocab(vocab)
        self._rebuild_tables()
        self._refresh_special_ids()

    # -- persistence -----------------------------------------------------------------------

    def _write_legacy_files(self, directory: str) -> None:
        _files.write_json(self._vocab, os.path.join(directory, "vocab.json"))
        _files.write_merges_txt(self._merges, os.path.join(directory, "merges.txt"))

    def _model_block(self) -> dict[str, object]:
        return {"type": "BPE", "vocab": dict(self._vocab), "merges": [list(m) for m in self._merges]}

    def _save_extras(self) -> dict[str, object]:
        return {"model": self._model_block()}

    @classmethod
    def _read_vocab_and_merges(cls, directory: str) -> tuple[dict[str, int], list, dict]:
        """(vocab, merges, model block or {}) from tokenizer.json, else vocab.json + merges.txt."""
        _files.require_file(directory, ["tokenizer.json", "vocab.json"], cls.__name__)
        model = _files.read_model_block(directory, cls.__name__)
        if model is not None and isinstance(model.get("vocab"), dict):
            return model["vocab"], list(model.get("merges") or []), model
        vocab = _files.read_json(_files.require_file(directory, ["vocab.json"], cls.__name__), cls.__name__)
        merges = _files.read_merges_txt(_files.require_file(directory, ["merges.txt"], cls.__name__))
        return vocab, merges, {}

    @classmethod
    def from_file(cls, directory: str, *, normalizer: Normalizer | None = None,
                  pre_tokenizer: PreTokenizer | None = None, special_tokens: SpecialTokens | None = None):
        """Load from tokenizer.json, or from Hugging Face's vocab.json + merges.txt pair."""
        vocab, merges, _ = cls._read_vocab_and_merges(directory)
        return cls(vocab, merges, normalizer=normalizer, pre_tokenizer=pre_tokenizer,
                   special_tokens=_files.load_special_tokens(directory, special_tokens))

    @classmethod
    def from_pretrained(cls, directory: str, **kwargs):
        """Alias of from_file (Hugging Face's name)."""
        return cls.from_file(directory, **kwargs)


class FastBPEMixin:
    """The Fast BPE tokenizers: merges applied with a heap over a linked list (O(n log n)
    per chunk instead of O(n^2)) and a per-chunk cache, as Hugging Face's Rust BPE does.
    The ids are identical to the reference implementation's."""

    _CACHE_LIMIT = 50_000

    def _merge_ids(self, ids: list[int]) -> list[int]:
        return merge_by_heap(ids, self._ranks)

    def _rebuild_tables(self) -> None:
        super()._rebuild_tables()
        self._chunk_cache: dict[str, tuple[int, ...]] = {}   # stale once the vocab or merges change

    def _encode_chunk(self, chunk: str) -> list[int]:
        hit = self._chunk_cache.get(chunk)
        if hit is None:
            if len(self._chunk_cache) >= self._CACHE_LIMIT:
                self._chunk_cache.clear()
            hit = self._chunk_cache[chunk] = tuple(super()._encode_chunk(chunk))
        return list(hit)


class BPETokenizerFast(FastBPEMixin, BPETokenizer):
    """BPETokenizer with heap-based merging and a chunk cache; identical ids (upstream's is C++-backed)."""
