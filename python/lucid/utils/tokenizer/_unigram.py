"""UnigramTokenizer: SentencePiece's unigram language-model tokenizer (T5, ALBERT, XLNet)."""

import math
from typing import Iterable

from . import _files
from ._base import Tokenizer
from ._bpe import check_callable
from ._normalizers import NFKC, Normalizer
from ._pre_tokenizers import PreTokenizer, SentencePiecePreTokenizer
from ._special import SpecialTokens
from ._unigram_lattice import build_trie, viterbi_scan, viterbi_trie
from ._unigram_train import train_unigram

__all__ = ["UnigramTokenizer", "UnigramTokenizerFast", "SentencePiecePreTokenizer"]


def check_pieces(pieces, owner: str) -> list[tuple[str, float]]:
    if pieces is None:
        return []
    if isinstance(pieces, (str, dict)):
        raise TypeError(f"{owner}: pieces must be a list of (piece, log_prob) pairs, got {type(pieces).__name__}")
    out: list[tuple[str, float]] = []
    seen: set[str] = set()
    for k, entry in enumerate(pieces):
        if not (isinstance(entry, (list, tuple)) and len(entry) == 2):
            raise ValueError(f"{owner}: pieces[{k}] = {entry!r}; expected a (piece, log_prob) pair")
        piece, score = entry
        if not isinstance(piece, str) or not piece:
            raise TypeError(f"{owner}: pieces[{k}] has piece {piece!r}; pieces must be non-empty str")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score) or score == math.inf:
            raise ValueError(f"{owner}: pieces[{k}] ({piece!r}) has log_prob {score!r}; expected a float <= 0 or -inf")
        if piece in seen:
            raise ValueError(f"{owner}: piece {piece!r} appears twice in pieces")
        seen.add(piece)
        out.append((piece, float(score)))
    return out


class UnigramTokenizer(Tokenizer):
    """Unigram language-model tokenizer (reference implementation).

    Piece k of `pieces` has id k and log-probability pieces[k][1]. Each chunk (after NFKC
    and SentencePiece's split, which marks word starts with "▁") is cut into the pieces
    whose log-probabilities sum highest (Viterbi). A codepoint no piece covers costs
    unk_log_prob and encodes to unk_token's id, or is dropped when pieces lack unk_token.

        pieces = [("<unk>", 0.0), ("▁ab", -1.0), ("▁a", -1.5), ("b", -1.5), ("▁", -3.0), ("a", -3.0)]
        UnigramTokenizer(pieces).encode("ab")         # [1]: "▁ab" (-1.0) beats "▁a"+"b" (-3.0)

    Decoding joins the pieces and turns "▁" back into spaces, so the text comes back
    with a leading space (" ab"), as upstream Lucid returns it. `train(corpus, vocab_size)`
    learns pieces by EM with pruning (see _unigram_train).
    """

    def __init__(self, pieces: list[tuple[str, float]], *, unk_token: str = "<unk>", unk_log_prob: float = -100.0,
                 normalizer: Normalizer | None = None, pre_tokenizer: PreTokenizer | None = None,
                 special_tokens: SpecialTokens | None = None) -> None:
        owner = type(self).__name__
        if not isinstance(unk_token, str) or not unk_token:
            raise ValueError(f"{owner}: unk_token must be a non-empty str, got {unk_token!r}")
        if isinstance(unk_log_prob, bool) or not isinstance(unk_log_prob, (int, float)) or math.isnan(unk_log_prob):
            raise ValueError(f"{owner}: unk_log_prob must be a float, got {unk_log_prob!r}")
        self._unk_token = unk_token
        self._unk_log_prob = float(unk_log_prob)
        self._normalizer = check_callable(normalizer, "normalizer", owner) or NFKC()
        self._pre_tokenizer = check_callable(pre_tokenizer, "pre_tokenizer", owner) or SentencePiecePreTokenizer()
        self._install_pieces(check_pieces(pieces, owner))
        self._set_special_tokens(special_tokens or SpecialTokens(unk=unk_token), strict=special_tokens is not None)

    def _install_pieces(self, pieces: list[tuple[str, float]]) -> None:
        self._pieces = pieces
        self._piece_to_id = {p: k for k, (p, _) in enumerate(pieces)}
        self._scores = [s for _, s in pieces]
        self._max_piece_len = max((len(p) for p, _ in pieces), default=0)
        self._on_vocab_change()

    def _on_vocab_change(self) -> None:
        """Hook for tables derived from the pieces."""

    @property
    def vocab_size(self) -> int:
        return len(self._pieces)

    @property
    def algo(self) -> str:
        return "unigram"

    @property
    def pieces(self) -> list[tuple[str, float]]:
        """(piece, log_prob) pairs in id order."""
        return list(self._pieces)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._piece_to_id)

    def _token_id(self, token: str) -> int | None:
        return self._piece_to_id.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self._pieces[token_id][0] if 0 <= token_id < len(self._pieces) else None

    def _prepare_chunks(self, text: str) -> list[str]:
        return [chunk for chunk, _ in self._pre_tokenizer(self._normalizer(text))]

    def _encode_chunk(self, chunk: str) -> list[int]:
        return viterbi_scan(chunk, self._piece_to_id, self._scores, self._max_piece_len,
                            self._piece_to_id.get(self._unk_token), self._unk_log_prob)

    def _encode_one(self, text: str) -> list[int]:
        out: list[int] = []
        for chunk in self._prepare_chunks(text):
            out.extend(self._encode_chunk(chunk))
        return out

    def _decode_one(self, ids: list[int]) -> str:
        n = len(self._pieces)
        text = "".join(self._pieces[i][0] for i in ids if 0 <= i < n)
        return text.replace(SentencePiecePreTokenizer.SP_SPACE, " ")

    def train(self, corpus: Iterable[str], *, vocab_size: int = 30_000) -> None:
        """Learn pieces from `corpus`, replacing the current ones. The special tokens
        (unk_token first) take the first ids with log_prob 0.0; the learned pieces follow,
        most probable first. vocab_size counts both; it is exceeded only when the corpus
        has more distinct characters than fit, since every character is kept."""
        owner = type(self).__name__
        vocab_size = _files.check_vocab_size(vocab_size, owner)
        counts: dict[str, int] = {}
        for doc in _files.check_corpus(corpus, owner):
            for chunk in self._prepare_chunks(doc):
                counts[chunk] = counts.get(chunk, 0) + 1
        reserved: list[str] = []
        for token in [self._unk_token, *self._special.all_tokens()]:
            if token not in reserved:
                reserved.append(token)
        learned = [(p, s) for p, s in train_unigram(counts, max(vocab_size - len(reserved), 0))
                   if p not in reserved]
        self._install_pieces([(t, 0.0) for t in reserved] + learned)
        self._refresh_special_ids()

    def _save_extras(self) -> dict[str, object]:
        unk_id = self._piece_to_id.get(self._unk_token)
        return {"model": {"type": "Unigram", "vocab": [[p, s] for p, s in self._pieces], "unk_id": unk_id,
                          "unk_token": self._unk_token, "unk_log_prob": self._unk_log_prob}}

    @classmethod
    def from_file(cls, directory: str, *, normalizer: Normalizer | None = None,
                  pre_tokenizer: PreTokenizer | None = None, special_tokens: SpecialTokens | None = None):
        """Load from tokenizer.json (lucid's, or Hugging Face's Unigram model block with
        "vocab": [[piece, score], ...] and "unk_id")."""
        _files.require_file(directory, ["tokenizer.json"], cls.__name__)
        model = _files.read_model_block(directory, cls.__name__)
        raw = model.get("vocab")
        if not isinstance(raw, list):
            raise ValueError(f"{cls.__name__}.from_file: tokenizer.json's model.vocab must be a list of [piece, score]")
        pieces = [(e["piece"], e["score"]) if isinstance(e, dict) else tuple(e) for e in raw]
        unk_token = model.get("unk_token")
        if unk_token is None:
            unk_id = model.get("unk_id")
            unk_token = pieces[unk_id][0] if isinstance(unk_id, int) and 0 <= unk_id < len(pieces) else "<unk>"
        return cls(pieces, unk_token=unk_token, unk_log_prob=model.get("unk_log_prob", -100.0),
                   normalizer=normalizer, pre_tokenizer=pre_tokenizer,
                   special_tokens=_files.load_special_tokens(directory, special_tokens))

    @classmethod
    def from_pretrained(cls, directory: str, **kwargs):
        """Alias of from_file (Hugging Face's name)."""
        return cls.from_file(directory, **kwargs)


class UnigramTokenizerFast(UnigramTokenizer):
    """UnigramTokenizer whose Viterbi walks a piece trie forward (only pieces present in
    the text are tried) and caches each chunk's ids; identical ids (upstream's is C++-backed)."""

    _CACHE_LIMIT = 50_000

    def _on_vocab_change(self) -> None:
        self._trie = build_trie(self._piece_to_id)
        self._chunk_cache: dict[str, tuple[int, ...]] = {}

    def _encode_chunk(self, chunk: str) -> list[int]:
        hit = self._chunk_cache.get(chunk)
        if hit is None:
            if len(self._chunk_cache) >= self._CACHE_LIMIT:
                self._chunk_cache.clear()
            hit = self._chunk_cache[chunk] = tuple(viterbi_trie(
                chunk, self._trie, self._scores, self._piece_to_id.get(self._unk_token), self._unk_log_prob))
        return list(hit)
