"""lucid.utils.tokenizer: text tokenizers (upstream Lucid's package).

Every algorithm comes as `XxxTokenizer` (the reference implementation, written to be read)
and `XxxTokenizerFast` (the same results from a faster implementation: heap-based BPE
merging, trie-based Viterbi, bounded WordPiece matching, per-chunk caches; upstream's Fast
classes call C++, lucid's are Python). All share the `Tokenizer` interface:

    tok = ByteLevelBPETokenizer(vocab={}, merges=[], special_tokens=SpecialTokens(eos="<|endoftext|>"))
    tok.train(corpus, vocab_size=1000)
    ids = tok.encode("hello world")                 # list of int, eos appended
    tok.decode(ids)                                 # "hello world"
    batch = tok(["a b", "c"], padding=True, return_tensors="lucid")   # needs a pad token
    tok.save("dir"); ByteLevelBPETokenizer.from_file("dir")

Algorithms: Byte (UTF-8 bytes), Char, Whitespace, Word (unk for unknown words), Regex
(regex matches), BPE, ByteLevelBPE (GPT-2 / RoBERTa), WordPiece (BERT), Unigram
(SentencePiece / T5). `normalizers` and `pre_tokenizers` hold the text-preparation steps.

Modules: _special (SpecialTokens), _base (Tokenizer), _batch (__call__), _files (file
formats and argument checks), _lookup (the dict-lookup tokenizers' base), one module per
algorithm, _bpe_merge / _bpe_train (BPE's merge application and training) and
_unigram_lattice / _unigram_train (Unigram's Viterbi, forward-backward and EM training).
"""

from . import _normalizers as normalizers
from . import _pre_tokenizers as pre_tokenizers
from ._base import Tokenizer
from ._bpe import BPETokenizer, BPETokenizerFast
from ._byte import ByteTokenizer, ByteTokenizerFast
from ._byte_bpe import ByteLevelBPETokenizer, ByteLevelBPETokenizerFast
from ._char import CharTokenizer, CharTokenizerFast
from ._regex import RegexTokenizer, RegexTokenizerFast
from ._special import SpecialTokens
from ._unigram import UnigramTokenizer, UnigramTokenizerFast
from ._whitespace import WhitespaceTokenizer, WhitespaceTokenizerFast
from ._word import WordTokenizer, WordTokenizerFast
from ._wordpiece import WordPieceTokenizer, WordPieceTokenizerFast

__all__ = [
    "Tokenizer", "SpecialTokens",
    "ByteTokenizer", "ByteTokenizerFast", "CharTokenizer", "CharTokenizerFast",
    "WhitespaceTokenizer", "WhitespaceTokenizerFast", "WordTokenizer", "WordTokenizerFast",
    "RegexTokenizer", "RegexTokenizerFast",
    "BPETokenizer", "BPETokenizerFast", "ByteLevelBPETokenizer", "ByteLevelBPETokenizerFast",
    "WordPieceTokenizer", "WordPieceTokenizerFast", "UnigramTokenizer", "UnigramTokenizerFast",
    "normalizers", "pre_tokenizers",
]
