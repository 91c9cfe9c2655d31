"""lucid.utils.tokenizer: the base class, special tokens, __call__, normalizers,
pre-tokenizers, the lookup tokenizers (Byte, Char, Whitespace, Word, Regex) and saving.
The subword tokenizers (BPE, byte-level BPE, WordPiece, Unigram) are in
test_utils_tokenizer_subword.py."""

import json
import os
import random
import re
import subprocess
import sys

import pytest

import lucid
from lucid.utils import tokenizer as T
from lucid.utils.tokenizer import (
    ByteTokenizer, ByteTokenizerFast, CharTokenizer, CharTokenizerFast, RegexTokenizer, RegexTokenizerFast,
    SpecialTokens, Tokenizer, WhitespaceTokenizer, WhitespaceTokenizerFast, WordTokenizer, WordTokenizerFast,
)
from lucid.utils.tokenizer import normalizers as N
from lucid.utils.tokenizer import pre_tokenizers as P

CORPUS = ["the quick brown fox", "the lazy dog sleeps"]

UPSTREAM_NAMES = [
    "BPETokenizer", "BPETokenizerFast", "ByteLevelBPETokenizer", "ByteLevelBPETokenizerFast", "ByteTokenizer",
    "ByteTokenizerFast", "CharTokenizer", "CharTokenizerFast", "RegexTokenizer", "RegexTokenizerFast",
    "SpecialTokens", "Tokenizer", "UnigramTokenizer", "UnigramTokenizerFast", "WhitespaceTokenizer",
    "WhitespaceTokenizerFast", "WordPieceTokenizer", "WordPieceTokenizerFast", "WordTokenizer",
    "WordTokenizerFast", "normalizers", "pre_tokenizers",
]


def test_upstream_names_are_exported():
    assert sorted(T.__all__) == sorted(UPSTREAM_NAMES)
    for name in UPSTREAM_NAMES:
        assert getattr(lucid.utils.tokenizer, name) is getattr(T, name)
    assert T.normalizers.NFC is N.NFC and T.pre_tokenizers.ByteLevel is P.ByteLevel


def test_import_lucid_loads_neither_numpy_nor_torch():
    code = ("import sys, lucid, lucid.utils.tokenizer, lucid.utils.rollout; "
            "print('numpy' in sys.modules, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


# -- SpecialTokens ---------------------------------------------------------------------


def test_special_tokens_order_and_map_round_trip():
    sp = SpecialTokens(eos="</s>", pad="<pad>", cls="[CLS]", extra={"eot": "<|eot|>", "dup": "</s>"})
    assert sp.named() == [("pad", "<pad>"), ("eos", "</s>"), ("cls", "[CLS]"), ("eot", "<|eot|>"), ("dup", "</s>")]
    assert sp.all_tokens() == ["<pad>", "</s>", "[CLS]", "<|eot|>"]
    assert SpecialTokens.from_map(sp.to_map()) == sp
    # Hugging Face's {"content": ...} form and unnamed additional tokens.
    hf = {"unk_token": {"content": "<unk>", "lstrip": False}, "additional_special_tokens": ["<a>", {"content": "<b>"}]}
    expected = SpecialTokens(unk="<unk>", extra={"additional_0": "<a>", "additional_1": "<b>"})
    assert SpecialTokens.from_map(hf) == expected


@pytest.mark.parametrize("kwargs, error, message", [
    ({"pad": 3}, TypeError, "SpecialTokens.pad must be a str"),
    ({"eos": ""}, ValueError, "empty string"),
    ({"extra": ["<x>"]}, TypeError, "extra must be a dict"),
    ({"extra": {"pad": "<x>"}}, ValueError, "shadows the canonical slot"),
])
def test_special_tokens_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        SpecialTokens(**kwargs)


# -- normalizers -----------------------------------------------------------------------


def test_unicode_normalizers():
    assert N.NFC()("e\u0301") == "\u00e9"
    assert N.NFD()("\u00e9") == "e\u0301"
    assert N.NFKC()("\ufb01\uff11") == "fi1"                       # ligature, fullwidth digit
    assert N.NFKD()("\u00e9\ufb01") == "e\u0301fi"
    assert N.Sequence([N.NFD(), N.StripAccents(), N.Lowercase()])("Café ÉCOLE") == "cafe ecole"
    assert N.StripAccents()("Café") == "Café"                      # composed: nothing to strip
    assert N.Strip()("  a b \n") == "a b" and N.Strip(left=False)("  a ") == "  a"
    assert N.Replace("``", '"')("``hi``") == '"hi"'
    assert N.Sequence([])("As Is ") == "As Is "


def test_bert_normalizer():
    assert N.BERTNormalizer()("Héllo\tWORLD\x00 中文") == "hello world  中  文 "
    cased = N.BERTNormalizer(lowercase=False, strip_accents=False, handle_chinese_chars=False)
    assert cased("Héllo\u200b\nWorld") == "Héllo World"            # U+200B (Cf) is a control: dropped


def test_normalizer_errors():
    with pytest.raises(ValueError, match="pattern is empty"):
        N.Replace("", "x")
    with pytest.raises(TypeError, match="NFC normalizes str, got bytes"):
        N.NFC()(b"abc")
    with pytest.raises(TypeError, match="Sequence takes normalizers"):
        N.Sequence([N.NFC(), "lower"])


# -- pre-tokenizers --------------------------------------------------------------------


def test_whitespace_splits_with_offsets():
    assert P.WhitespaceSplit()("  a bc\t d ") == [("a", (2, 3)), ("bc", (4, 6)), ("d", (8, 9))]
    assert P.WhitespacePunctuationSplit()("don't stop!") == [
        ("don", (0, 3)), ("'", (3, 4)), ("t", (4, 5)), ("stop", (6, 10)), ("!", (10, 11))]
    assert P.WhitespacePunctuationSplit()("a¿b") == [("a", (0, 1)), ("¿", (1, 2)), ("b", (2, 3))]


def test_byte_level_table():
    table = P.bytes_to_unicode()
    assert len(table) == 256 and len(set(table.values())) == 256
    assert table[ord(" ")] == "Ġ" and table[ord("\n")] == "Ċ" and table[0] == "Ā" and table[0xAD] == "Ń"
    for b in [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]:
        assert table[b] == chr(b)
    assert all(not ch.isspace() for ch in table.values())
    raw = bytes(range(256))
    assert P.ByteLevel.decode_bytes(P.ByteLevel.encode_bytes(raw)) == raw


# Independent reference for GPT-2's split on the test alphabet below: Python's `re` with
# letters as [^\W\d_] (no character of the alphabet is a non-ASCII digit).
GPT2_REFERENCE = re.compile(r"'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+")


def test_byte_level_split_matches_the_gpt2_pattern():
    rng = random.Random(0)
    alphabet = list("ab Z09 '''sdtmlrve") + [" ", " ", "\t", "\n", "!", "?", ".", "_", "é", "안", "…", "—", "'"]
    pre = P.ByteLevel()
    for _ in range(400):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25)))
        expected = [m.group() for m in GPT2_REFERENCE.finditer(text)]
        got = pre(text)
        assert [P.ByteLevel.decode_bytes(c).decode("utf-8") for c, _ in got] == expected, text
        assert [text[s:e] for _, (s, e) in got] == expected


def test_byte_level_examples():
    pre = P.ByteLevel()
    assert [c for c, _ in pre("Hello world")] == ["Hello", "Ġworld"]
    assert [c for c, _ in pre("I'm  here!!\n")] == ["I", "'m", "Ġ", "Ġhere", "!!", "Ċ"]
    assert [c for c, _ in pre("é")] == ["Ã©"]
    assert [c for c, _ in P.ByteLevel(add_prefix_space=True)("hi there")] == ["Ġhi", "Ġthere"]
    assert P.ByteLevel(add_prefix_space=True)("hi") == [("Ġhi", (0, 2))]


def test_sentencepiece_split():
    sp = P.SentencePiecePreTokenizer()
    assert [c for c, _ in sp("hello  world")] == ["▁hello", "▁", "▁world"]
    assert sp("") == []
    assert [c for c, _ in P.SentencePiecePreTokenizer(add_dummy_prefix=False)("a b")] == ["a", "▁b"]


def test_pre_tokenizer_type_error():
    with pytest.raises(TypeError, match="WhitespaceSplit splits str, got int"):
        P.WhitespaceSplit()(5)


# -- ByteTokenizer -----------------------------------------------------------------------


@pytest.mark.parametrize("cls", [ByteTokenizer, ByteTokenizerFast])
def test_byte_tokenizer(cls):
    tok = cls()
    text = "héllo — 안녕 🎉\x00"
    assert tok.encode(text) == list(text.encode("utf-8"))
    assert tok.decode(tok.encode(text)) == text
    assert tok.decode([0xC3]) == "\ufffd"                            # a lone lead byte
    assert tok.vocab_size == 256 and tok.id_to_token(65) == "A"


def test_byte_tokenizer_special_tokens_get_ids_after_the_bytes():
    tok = ByteTokenizer(SpecialTokens(bos="<s>", eos="</s>", pad="\x00"))
    assert (tok.bos_token_id, tok.eos_token_id, tok.pad_token_id, tok.vocab_size) == (256, 257, 0, 258)
    assert tok.encode("hi") == [256, 104, 105, 257]
    assert tok.encode("a</s>b", add_special_tokens=False) == [97, 257, 98]
    assert tok.decode([256, 104, 105, 257], skip_special_tokens=False) == "<s>hi</s>"
    assert tok.decode([256, 104, 105, 257]) == "hi"


# -- lookup tokenizers -----------------------------------------------------------------------


@pytest.mark.parametrize("cls", [CharTokenizer, CharTokenizerFast])
def test_char_tokenizer(cls):
    tok = cls()
    tok.train(["abca", "db"], vocab_size=64)
    assert tok.get_vocab() == {"a": 0, "b": 1, "c": 2, "d": 3}
    assert tok.encode("cab") == [2, 0, 1] and tok.decode([2, 0, 1]) == "cab"
    assert tok.encode("axb") == [0, 1]                                # unknown dropped: no unk token
    tok = cls(special_tokens=SpecialTokens(unk="?"))
    tok.train(["abca", "db"], vocab_size=4)                           # cap counts the appended unk
    assert tok.get_vocab() == {"a": 0, "b": 1, "c": 2, "?": 3}
    assert tok.encode("adb") == [0, 3, 1]


@pytest.mark.parametrize("cls", [WhitespaceTokenizer, WhitespaceTokenizerFast])
def test_whitespace_tokenizer(cls):
    tok = cls(special_tokens=SpecialTokens(unk="<unk>"))
    tok.train(CORPUS)
    assert tok.encode("the quick dog") == [0, 1, 5]
    assert tok.encode("the  slow\tdog") == [0, 5]                     # unknown words are dropped, even with unk
    assert tok.decode([0, 1, 5]) == "the quick dog"
    assert tok.get_vocab()["<unk>"] == 7


@pytest.mark.parametrize("cls", [WordTokenizer, WordTokenizerFast])
def test_word_tokenizer(cls):
    tok = cls(special_tokens=SpecialTokens(unk="<unk>"))
    tok.train(["the quick brown fox", "<unk>"])
    assert tok.encode("the slow fox") == [0, 4, 3]                    # upstream's example
    tok = cls(special_tokens=SpecialTokens(unk="<unk>"))
    tok.train(["the quick brown fox"])                                # unk appended when missing
    assert tok.encode("the slow fox") == [0, 4, 3]
    plain = cls({"a": 0})
    with pytest.raises(ValueError, match=r"word 'b' is not in the vocabulary and there is no unk token"):
        plain.encode("a b")


@pytest.mark.parametrize("cls", [RegexTokenizer, RegexTokenizerFast])
def test_regex_tokenizer(cls):
    tok = cls(r"\w+|[^\w\s]")
    tok.train(["hello, world"])
    assert tok.get_vocab() == {"hello": 0, ",": 1, "world": 2}
    assert tok.encode("world, hello") == [2, 1, 0]
    assert tok.decode([2, 1, 0]) == "world , hello"
    assert cls(r"\w*", {"a": 0}).encode("a  a") == [0, 0]              # empty matches skipped
    with pytest.raises(ValueError, match=r"pattern '\(' is not a valid regular expression"):
        cls("(")


def test_fast_lookup_tokenizers_match_reference():
    rng = random.Random(1)
    words = ["a", "b", "cc", "d!", "é", "<unk>"]
    docs = [" ".join(rng.choice(words) for _ in range(8)) for _ in range(20)]
    for slow_cls, fast_cls, args in [(CharTokenizer, CharTokenizerFast, ()), (WordTokenizer, WordTokenizerFast, ()),
                                     (WhitespaceTokenizer, WhitespaceTokenizerFast, ()),
                                     (RegexTokenizer, RegexTokenizerFast, (r"\w+|\S",))]:
        slow = slow_cls(*args, special_tokens=SpecialTokens(unk="<unk>"))
        slow.train(docs[:5], vocab_size=6)
        fast = fast_cls(*args, slow.get_vocab(), special_tokens=SpecialTokens(unk="<unk>"))
        for doc in docs:
            assert fast.encode(doc) == slow.encode(doc)


# -- the Tokenizer interface -----------------------------------------------------------------

BERTISH = SpecialTokens(pad="[PAD]", unk="[UNK]", cls="[CLS]", sep="[SEP]")


def word_tokenizer():
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "a": 4, "b": 5, "c": 6}
    return WordTokenizer(vocab, special_tokens=BERTISH)


def test_special_token_wrapping_and_splitting():
    tok = word_tokenizer()
    assert tok.encode("a b") == [2, 4, 5, 3]                          # no bos/eos: cls ... sep
    assert tok.encode("a b", add_special_tokens=False) == [4, 5]
    assert tok.encode("a [SEP] b", add_special_tokens=False) == [4, 3, 5]
    assert tok.all_special_ids == [0, 1, 2, 3]
    ids = (tok.pad_token_id, tok.unk_token_id, tok.cls_token_id, tok.sep_token_id, tok.bos_token_id)
    assert ids == (0, 1, 2, 3, None)
    assert tok.decode([2, 4, 1, 5, 3]) == "a b"
    assert tok.decode([2, 4, 1, 5, 3], skip_special_tokens=False) == "[CLS] a [UNK] b [SEP]"
    assert tok.decode(lucid.tensor([4, 99, 5])) == "a b"                # tensors accepted; unknown ids skipped
    assert tok.decode_batch(lucid.tensor([[4, 5], [6, 4]])) == ["a b", "c a"]
    assert tok.encode_batch(["a", "c b"], add_special_tokens=False) == [[4], [6, 5]]
    assert tok.convert_tokens_to_ids(["a", "[SEP]"]) == [4, 3] and tok.convert_ids_to_tokens(6) == "c"
    bos_eos = CharTokenizer({"x": 0, "<s>": 1, "</s>": 2, "[CLS]": 3},
                            special_tokens=SpecialTokens(bos="<s>", eos="</s>", cls="[CLS]"))
    assert bos_eos.encode("x") == [1, 0, 2]                          # bos/eos win over cls/sep


def test_interface_errors():
    tok = word_tokenizer()
    with pytest.raises(TypeError, match="WordTokenizer.encode takes a str, got list"):
        tok.encode(["a"])
    with pytest.raises(TypeError, match=r"ids must be ints, got 'a'"):
        tok.decode(["a"])
    with pytest.raises(KeyError, match="token 'zz' is not in the vocabulary"):
        tok.convert_tokens_to_ids("zz")
    with pytest.raises(KeyError, match="id 42 is not in the vocabulary"):
        tok.convert_ids_to_tokens([42])
    with pytest.raises(TypeError, match="takes a list of str, got a single str"):
        tok.encode_batch("a b")
    with pytest.raises(TypeError, match="special_tokens must be a SpecialTokens, got dict"):
        WordTokenizer({"a": 0}, special_tokens={"unk": "a"})
    with pytest.raises(ValueError, match=r"special tokens unk='<unk>' are not in the vocabulary"):
        CharTokenizer({"a": 0}, special_tokens=SpecialTokens(unk="<unk>"))
    with pytest.raises(TypeError, match="Can't instantiate abstract class"):
        Tokenizer()


@pytest.mark.parametrize("vocab, error, message", [
    ({"a": 0, "b": 0}, ValueError, "share id 0"),
    ({"a": -1}, ValueError, "ids must be ints >= 0"),
    ({"a": 1.0}, ValueError, "ids must be ints >= 0"),
    ({1: 0}, TypeError, "vocab keys must be non-empty str"),
    (["a"], TypeError, "vocab must be a dict of token -> id, got list"),
])
def test_vocab_errors(vocab, error, message):
    with pytest.raises(error, match=message):
        CharTokenizer(vocab)


def test_train_errors():
    tok = CharTokenizer()
    with pytest.raises(TypeError, match="got a single str; wrap it in a list"):
        tok.train("abc")
    with pytest.raises(TypeError, match=r"corpus\[1\] is int"):
        tok.train(["a", 3])
    with pytest.raises(ValueError, match="vocab_size must be a positive int, got 0"):
        tok.train(["a"], vocab_size=0)


def test_call_pads_truncates_and_masks():
    tok = word_tokenizer()
    out = tok(["a b c", "a"], padding=True)
    assert out == {"input_ids": [[2, 4, 5, 6, 3], [2, 4, 3, 0, 0]],
                   "special_tokens_mask": [[1, 0, 0, 0, 1], [1, 0, 1, 1, 1]],
                   "attention_mask": [[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]}
    out = tok(["a b c", "a"], padding="max_length", truncation=True, max_length=4, return_attention_mask=False)
    assert out["input_ids"] == [[2, 4, 5, 6], [2, 4, 3, 0]] and "attention_mask" not in out
    single = tok("b", return_tensors="lucid")
    assert single["input_ids"].dtype == lucid.int32 and single["input_ids"].tolist() == [2, 5, 3]
    batch = tok(["a", "b c"], padding="longest", return_tensors="lucid")
    assert tuple(batch["input_ids"].shape) == (2, 4)
    assert batch["attention_mask"].tolist() == [[1, 1, 1, 0], [1, 1, 1, 1]]
    assert tok(["a", "b"], return_tensors="lucid")["input_ids"].tolist() == [[2, 4, 3], [2, 5, 3]]


@pytest.mark.parametrize("kwargs, message", [
    ({"padding": "longest_first"}, "padding='longest_first'; expected one of"),
    ({"padding": "max_length"}, "padding='max_length' needs max_length"),
    ({"padding": "max_length", "max_length": 2}, "more than max_length=2; pass truncation=True"),
    ({"truncation": True}, "truncation=True needs max_length"),
    ({"return_tensors": "pt"}, "return_tensors='pt'; only 'lucid'"),
    ({"return_tensors": "lucid"}, "needs equal lengths, got \\[3, 4\\]; pass padding=True"),
    ({"max_length": -1}, "max_length must be a non-negative int"),
])
def test_call_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        word_tokenizer()(["a", "a b"], **kwargs)


def test_call_without_pad_token():
    tok = WordTokenizer({"a": 0, "b": 1})
    assert tok(["a", "a"], padding=True)["input_ids"] == [[0], [0]]  # nothing to pad: fine
    with pytest.raises(ValueError, match="padding needs a pad token"):
        tok(["a", "a b"], padding=True)
    with pytest.raises(TypeError, match="must be a str or a list of str"):
        tok(["a", 1])


# -- saving and loading -----------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: CharTokenizer({"a": 0, "\n": 1, "<unk>": 2}, special_tokens=SpecialTokens(unk="<unk>")),
    lambda: WhitespaceTokenizerFast({"x": 0, "y": 1}),
    lambda: WordTokenizer({"x": 0, "<unk>": 3, "<pad>": 1}, special_tokens=SpecialTokens(unk="<unk>", pad="<pad>")),
    lambda: RegexTokenizer(r"\d+|[a-z]+", {"12": 0, "ab": 1}, special_tokens=SpecialTokens(extra={"marker": "ab"})),
    lambda: ByteTokenizer(SpecialTokens(eos="</s>")),
])
def test_save_load_round_trip(tmp_path, make):
    tok = make()
    tok.save(str(tmp_path))
    again = type(tok).from_pretrained(str(tmp_path))
    assert type(again) is type(tok)
    assert again.get_vocab() == tok.get_vocab() and again.special_tokens == tok.special_tokens
    text = "ab 12\nx y</s>zz"
    assert again.encode(text) == tok.encode(text)
    unified = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
    assert unified["algo"] == tok.algo
    # A vocab holding "\n" cannot be written one token per line: tokenizer.json alone carries it.
    assert (tmp_path / "vocab.txt").exists() == (isinstance(tok, (CharTokenizer, WordTokenizer, RegexTokenizer,
                                                                   WhitespaceTokenizer)) and "\n" not in tok.get_vocab())


def test_loads_legacy_vocab_txt_and_pattern_file(tmp_path):
    (tmp_path / "vocab.txt").write_text("[PAD]\n\nhello\nworld\n", encoding="utf-8")
    tok = WordTokenizer.from_file(str(tmp_path))
    assert tok.get_vocab() == {"[PAD]": 0, "hello": 2, "world": 3}
    (tmp_path / "regex_pattern.txt").write_text(r"[a-z]+", encoding="utf-8")
    assert RegexTokenizer.from_file(str(tmp_path)).encode("hello, world!") == [2, 3]
    tok.save(str(tmp_path / "out"))
    assert (tmp_path / "out" / "vocab.txt").read_text(encoding="utf-8") == "[PAD]\n\nhello\nworld\n"


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        CharTokenizer.from_file(str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="none of tokenizer.json, vocab.txt found"):
        WordTokenizer.from_file(str(tmp_path))
    (tmp_path / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="is not valid JSON"):
        WordTokenizer.from_file(str(tmp_path))
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match='has no "model" object'):
        WordTokenizer.from_file(str(tmp_path))
    os.remove(tmp_path / "tokenizer.json")
    with pytest.raises(FileNotFoundError, match="none of tokenizer.json, regex_pattern.txt"):
        RegexTokenizer.from_file(str(tmp_path))
