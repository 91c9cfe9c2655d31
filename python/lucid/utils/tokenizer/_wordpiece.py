"""WordPieceTokenizer: BERT's greedy longest-match-first subword tokenizer."""

import os
from typing import Iterable

from . import _files
from ._base import Tokenizer
from ._bpe import check_callable
from ._bpe_train import learn_merges
from ._lookup import DictVocabMixin
from ._normalizers import BERTNormalizer, Normalizer
from ._pre_tokenizers import PreTokenizer, WhitespacePunctuationSplit
from ._special import SpecialTokens

__all__ = ["WordPieceTokenizer", "WordPieceTokenizerFast"]


class WordPieceTokenizer(DictVocabMixin, Tokenizer):
    """WordPiece tokenizer (reference implementation).

    Each word (after BERTNormalizer and the whitespace/punctuation split) is cut greedily
    from the left: take the longest vocab entry that starts the rest of the word, the
    pieces after the first looked up with the continuing prefix ("##"). If some position
    has no match, or the word is longer than max_chars_per_word, the whole word becomes
    unk_token (or nothing, when the vocab lacks it).

        vocab = {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "want": 4}
        WordPieceTokenizer(vocab).encode("unaffable want")      # [1, 2, 3, 4]

    Decoding glues "##" pieces to the token before them and puts single spaces between
    words. special_tokens defaults to SpecialTokens(unk=unk_token); ids are wrapped in
    cls/sep when those are defined. `train(corpus, vocab_size)` learns a vocab with BPE-style
    merges over "##"-marked symbols, as Hugging Face's WordPieceTrainer does.
    """

    _decode_separator = " "

    def __init__(self, vocab: dict[str, int], *, unk_token: str = "[UNK]", continuing_prefix: str = "##",
                 max_chars_per_word: int = 100, normalizer: Normalizer | None = None,
                 pre_tokenizer: PreTokenizer | None = None, special_tokens: SpecialTokens | None = None) -> None:
        owner = type(self).__name__
        if not isinstance(unk_token, str) or not unk_token:
            raise ValueError(f"{owner}: unk_token must be a non-empty str, got {unk_token!r}")
        if not isinstance(continuing_prefix, str):
            raise TypeError(f"{owner}: continuing_prefix must be a str, got {type(continuing_prefix).__name__}")
        if not isinstance(max_chars_per_word, int) or isinstance(max_chars_per_word, bool) or max_chars_per_word < 1:
            raise ValueError(f"{owner}: max_chars_per_word must be a positive int, got {max_chars_per_word!r}")
        self._unk_token = unk_token
        self._continuing_prefix = continuing_prefix
        self._max_chars_per_word = max_chars_per_word
        self._normalizer = check_callable(normalizer, "normalizer", owner) or BERTNormalizer()
        self._pre_tokenizer = check_callable(pre_tokenizer, "pre_tokenizer", owner) or WhitespacePunctuationSplit()
        self._install_vocab(_files.check_vocab(vocab, owner))
        self._set_special_tokens(special_tokens or SpecialTokens(unk=unk_token), strict=special_tokens is not None)
        self._on_vocab_change()

    @property
    def algo(self) -> str:
        return "wordpiece"

    def _on_vocab_change(self) -> None:
        """Hook for tables derived from the vocab."""

    def _prepare_words(self, text: str) -> list[str]:
        return [word for word, _ in self._pre_tokenizer(self._normalizer(text))]

    def _unk_ids(self) -> list[int]:
        tid = self._vocab.get(self._unk_token)
        return [] if tid is None else [tid]

    def _longest_match(self, word: str, start: int) -> tuple[int, int] | None:
        """(id, end) of the longest vocab entry spelling word[start:end], or None."""
        prefix = self._continuing_prefix if start > 0 else ""
        for end in range(len(word), start, -1):
            tid = self._vocab.get(prefix + word[start:end])
            if tid is not None:
                return tid, end
        return None

    def _encode_word(self, word: str) -> list[int]:
        if len(word) > self._max_chars_per_word:
            return self._unk_ids()
        ids: list[int] = []
        start = 0
        while start < len(word):
            match = self._longest_match(word, start)
            if match is None:
                return self._unk_ids()
            ids.append(match[0])
            start = match[1]
        return ids

    def _encode_one(self, text: str) -> list[int]:
        out: list[int] = []
        for word in self._prepare_words(text):
            out.extend(self._encode_word(word))
        return out

    def _decode_one(self, ids: list[int]) -> str:
        out: list[str] = []
        prefix = self._continuing_prefix
        for i in ids:
            token = self._id_to_token.get(i)
            if token is None:
                continue
            if prefix and token.startswith(prefix) and out:
                out.append(token[len(prefix):])
            else:
                out.append((" " if out else "") + token)
        return "".join(out)

    def train(self, corpus: Iterable[str], *, vocab_size: int = 30_000) -> None:
        """Learn a vocab from `corpus`, replacing the current one: the special tokens
        (unk_token first), then every word-initial character and "##"-marked
        continuation character, then merged pieces (most frequent adjacent pair first)
        until vocab_size tokens or until no pair occurs twice."""
        owner = type(self).__name__
        vocab_size = _files.check_vocab_size(vocab_size, owner)
        prefix = self._continuing_prefix
        counts: dict[tuple[str, ...], int] = {}
        for doc in _files.check_corpus(corpus, owner):
            for word in self._prepare_words(doc):
                key = tuple(ch if k == 0 else prefix + ch for k, ch in enumerate(word))
                counts[key] = counts.get(key, 0) + 1
        vocab: dict[str, int] = {}
        for token in [self._unk_token, *self._special.all_tokens()]:
            vocab.setdefault(token, len(vocab))
        for word in counts:
            for symbol in word:
                vocab.setdefault(symbol, len(vocab))

        def join(left: str, right: str) -> str:
            return left + (right[len(prefix):] if prefix and right.startswith(prefix) else right)

        learn_merges(counts, vocab, vocab_size, join=join)
        self._install_vocab(vocab)
        self._refresh_special_ids()
        self._on_vocab_change()

    def _write_legacy_files(self, directory: str) -> None:
        _files.write_vocab_txt(self._vocab, os.path.join(directory, "vocab.txt"))

    def _save_extras(self) -> dict[str, object]:
        return {"model": {"type": "WordPiece", "vocab": dict(self._vocab), "unk_token": self._unk_token,
                          "continuing_subword_prefix": self._continuing_prefix,
                          "max_input_chars_per_word": self._max_chars_per_word}}

    @classmethod
    def from_file(cls, directory: str, *, unk_token: str | None = None, continuing_prefix: str | None = None,
                  max_chars_per_word: int | None = None, normalizer: Normalizer | None = None,
                  pre_tokenizer: PreTokenizer | None = None, special_tokens: SpecialTokens | None = None):
        """Load from tokenizer.json (lucid's or Hugging Face's WordPiece model block) or
        BERT's vocab.txt. Settings left None take the saved values, else BERT's defaults."""
        _files.require_file(directory, ["tokenizer.json", "vocab.txt"], cls.__name__)
        model = _files.read_model_block(directory, cls.__name__) or {}
        if isinstance(model.get("vocab"), dict):
            vocab = model["vocab"]
        else:
            vocab = _files.read_vocab_txt(_files.require_file(directory, ["vocab.txt"], cls.__name__))
        return cls(vocab,
                   unk_token=unk_token if unk_token is not None else model.get("unk_token", "[UNK]"),
                   continuing_prefix=(continuing_prefix if continuing_prefix is not None
                                      else model.get("continuing_subword_prefix", "##")),
                   max_chars_per_word=(max_chars_per_word if max_chars_per_word is not None
                                       else model.get("max_input_chars_per_word", 100)),
                   normalizer=normalizer, pre_tokenizer=pre_tokenizer,
                   special_tokens=_files.load_special_tokens(directory, special_tokens))

    @classmethod
    def from_pretrained(cls, directory: str, **kwargs):
        """Alias of from_file (Hugging Face's name)."""
        return cls.from_file(directory, **kwargs)


class WordPieceTokenizerFast(WordPieceTokenizer):
    """WordPieceTokenizer whose longest-match tries only lengths up to the longest vocab
    entry (not the whole rest of the word) and caches each word's pieces; identical ids
    (upstream's is C++-backed)."""

    _CACHE_LIMIT = 50_000

    def _on_vocab_change(self) -> None:
        prefix_len = len(self._continuing_prefix)
        self._longest_head = max((len(t) for t in self._vocab), default=0)
        self._longest_tail = max((len(t) - prefix_len for t in self._vocab
                                  if t.startswith(self._continuing_prefix)), default=0)
        self._word_cache: dict[str, tuple[int, ...]] = {}

    def _longest_match(self, word: str, start: int) -> tuple[int, int] | None:
        prefix = self._continuing_prefix if start > 0 else ""
        longest = self._longest_tail if start > 0 else self._longest_head
        for end in range(min(len(word), start + longest), start, -1):
            tid = self._vocab.get(prefix + word[start:end])
            if tid is not None:
                return tid, end
        return None

    def _encode_word(self, word: str) -> list[int]:
        hit = self._word_cache.get(word)
        if hit is None:
            if len(self._word_cache) >= self._CACHE_LIMIT:
                self._word_cache.clear()
            hit = self._word_cache[word] = tuple(super()._encode_word(word))
        return list(hit)
