"""ByteLevelBPETokenizer: BPE over GPT-2's byte alphabet (GPT-2, RoBERTa, BART)."""

from typing import Iterable

from . import _files
from ._bpe import BPETokenizer, FastBPEMixin
from ._normalizers import Normalizer
from ._pre_tokenizers import ByteLevel
from ._special import SpecialTokens

__all__ = ["ByteLevelBPETokenizer", "ByteLevelBPETokenizerFast"]


class ByteLevelBPETokenizer(BPETokenizer):
    """Byte-level BPE: text is split with GPT-2's regex, each chunk's UTF-8 bytes are
    spelled with GPT-2's 256 printable characters (space -> "Ġ"), and BPE runs over
    those. Every string is encodable without an unk token, and decode restores the bytes
    exactly: decode(encode(s)) == normalizer(s).

        tok = ByteLevelBPETokenizer(vocab={}, merges=[])
        tok.train(["the quick brown fox", "the lazy dog"], vocab_size=300)
        tok.decode(tok.encode("the quick dog"))        # "the quick dog"

    Parameters: vocab and merges in the byte-spelled alphabet (GPT-2's vocab.json and
    merges.txt load as they are); add_prefix_space (RoBERTa: True, GPT-2: False);
    normalizer (default NFC; normalizers.Sequence([]) for none); special_tokens.
    Training seeds the vocab with all 256 byte characters.
    """

    def __init__(self, vocab: dict[str, int], merges: list[tuple[str, str]], *, add_prefix_space: bool = False,
                 normalizer: Normalizer | None = None, special_tokens: SpecialTokens | None = None) -> None:
        self._add_prefix_space = bool(add_prefix_space)
        super().__init__(vocab, merges, normalizer=normalizer,
                         pre_tokenizer=ByteLevel(add_prefix_space=self._add_prefix_space),
                         special_tokens=special_tokens)

    @property
    def algo(self) -> str:
        return "byte_bpe"

    @property
    def add_prefix_space(self) -> bool:
        return self._add_prefix_space

    def _initial_alphabet(self) -> list[str]:
        return ByteLevel.alphabet()

    def _decode_one(self, ids: list[int]) -> str:
        raw = bytearray()
        for i in ids:
            token = self._id_to_token.get(i)
            if token is None:
                continue
            for ch in token:
                try:
                    raw += ByteLevel.decode_bytes(ch)
                except KeyError:
                    # A vocab entry outside the byte alphabet (an added token) stands for itself.
                    raw += ch.encode("utf-8")
        return raw.decode("utf-8", errors="replace")

    def train(self, corpus: Iterable[str], *, vocab_size: int = 50_000) -> None:
        """As BPETokenizer.train, over byte-spelled chunks, starting from the full byte alphabet."""
        super().train(corpus, vocab_size=vocab_size)

    def _model_block(self) -> dict[str, object]:
        block = super()._model_block()
        block.update(type="ByteLevelBPE", add_prefix_space=self._add_prefix_space)
        return block

    @classmethod
    def from_file(cls, directory: str, *, add_prefix_space: bool | None = None,
                  normalizer: Normalizer | None = None, special_tokens: SpecialTokens | None = None):
        """Load from tokenizer.json or GPT-2's vocab.json + merges.txt. add_prefix_space
        defaults to the saved setting (False when none was saved)."""
        vocab, merges, model = cls._read_vocab_and_merges(directory)
        if add_prefix_space is None:
            add_prefix_space = bool(model.get("add_prefix_space", False))
        return cls(vocab, merges, add_prefix_space=add_prefix_space, normalizer=normalizer,
                   special_tokens=_files.load_special_tokens(directory, special_tokens))


class ByteLevelBPETokenizerFast(FastBPEMixin, ByteLevelBPETokenizer):
    """ByteLevelBPETokenizer with heap-based merging and a chunk cache; identical ids
    (upstream's is C++-backed)."""
