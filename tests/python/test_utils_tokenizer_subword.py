"""lucid.utils.tokenizer's subword tokenizers: BPE, byte-level BPE, WordPiece and Unigram,
checked against hand-worked examples and independent reference computations (a rank-order
BPE sweep, brute-force enumeration of Unigram segmentations), and each Fast class against
its reference class."""

import itertools
import json
import math
import random

import pytest

from lucid.utils.tokenizer import (
    BPETokenizer, BPETokenizerFast, ByteLevelBPETokenizer, ByteLevelBPETokenizerFast, SpecialTokens,
    UnigramTokenizer, UnigramTokenizerFast, WordPieceTokenizer, WordPieceTokenizerFast,
)
from lucid.utils.tokenizer import normalizers as N
from lucid.utils.tokenizer import pre_tokenizers as P
from lucid.utils.tokenizer._unigram_lattice import build_trie, expected_counts

IDENTITY = N.Sequence([])


class WholeText(P.PreTokenizer):
    """The text as one chunk: lets a test feed the algorithm exactly what it wrote."""

    def pre_tokenize(self, text):
        return [(text, (0, len(text)))] if text else []


def random_text(rng, alphabet, n):
    return "".join(rng.choice(alphabet) for _ in range(n))


# -- BPE ----------------------------------------------------------------------------------------


def vocab_of(tokens):
    return {t: i for i, t in enumerate(tokens)}


@pytest.mark.parametrize("cls", [BPETokenizer, BPETokenizerFast])
def test_bpe_merges_by_rank_not_by_position(cls):
    # "abcd": ranks are (b,c)=0, (a,b)=1, (c,d)=2, (a,bc)=3. Lowest rank first gives
    # a|bc|d -> abc|d; merging left to right would give ab|cd instead.
    vocab = vocab_of(["a", "b", "c", "d", "bc", "ab", "cd", "abc"])
    tok = cls(vocab, [("b", "c"), ("a", "b"), ("c", "d"), ("a", "bc")], pre_tokenizer=WholeText())
    assert tok.convert_ids_to_tokens(tok.encode("abcd")) == ["abc", "d"]
    assert tok.convert_ids_to_tokens(tok.encode("abd")) == ["ab", "d"]
    assert tok.convert_ids_to_tokens(tok.encode("cd")) == ["cd"]


@pytest.mark.parametrize("cls", [BPETokenizer, BPETokenizerFast])
def test_bpe_equal_ranks_merge_leftmost_first(cls):
    tok = cls(vocab_of(["a", "aa", "aaaa"]), ["a a", "aa aa"], pre_tokenizer=WholeText())
    assert tok.convert_ids_to_tokens(tok.encode("aaa")) == ["aa", "a"]
    assert tok.convert_ids_to_tokens(tok.encode("aaaaa")) == ["aaaa", "a"]
    assert tok.convert_ids_to_tokens(tok.encode("aaaaaa")) == ["aaaa", "aa"]


def bpe_reference(word, merges):
    """Apply each merge in rank order to every occurrence, left to right: equal to
    lowest-rank-first whenever every merge's parts exist before it (true of trained merges)."""
    symbols = list(word)
    for left, right in merges:
        out, k = [], 0
        while k < len(symbols):
            if k + 1 < len(symbols) and symbols[k] == left and symbols[k + 1] == right:
                out.append(left + right)
                k += 2
            else:
                out.append(symbols[k])
                k += 1
        symbols = out
    return symbols


def test_bpe_training_hand_worked():
    tok = BPETokenizer({}, [])
    tok.train(["ab ab ab", "abc"])
    assert tok.merges == [("a", "b")] and tok.get_vocab() == {"a": 0, "b": 1, "c": 2, "ab": 3}
    # Sennrich et al.'s toy corpus, without end-of-word marks: (e,s) and (s,t) tie at 9,
    # the smaller pair wins; then (es,t) 9, (l,o) 7 ties (o,w) 7, (lo,w) 7, then the
    # three pairs at 6, (e,w) smallest.
    tok.train(["low"] * 5 + ["lower"] * 2 + ["newest"] * 6 + ["widest"] * 3)
    assert tok.merges[:5] == [("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w"), ("e", "w")]
    expected = bpe_reference("newest", tok.merges) + bpe_reference("lowest", tok.merges)
    assert tok.convert_ids_to_tokens(tok.encode("newest lowest")) == expected


def test_bpe_training_reserves_special_tokens_and_respects_vocab_size():
    tok = BPETokenizerFast({}, [], special_tokens=SpecialTokens(pad="<pad>", unk="<unk>"))
    tok.train(["hello hello world"] * 3, vocab_size=10)
    vocab = tok.get_vocab()
    assert vocab["<pad>"] == 0 and vocab["<unk>"] == 1 and len(vocab) == 10
    assert tok.encode("hex") == tok.encode("he") + [tok.unk_token_id]


def test_bpe_encodes_like_the_reference_and_fast_matches():
    rng = random.Random(0)
    corpus = [random_text(rng, "abcab c", 40) for _ in range(30)]
    slow = BPETokenizer({}, [])
    slow.train(corpus, vocab_size=60)
    fast = BPETokenizerFast(slow.get_vocab(), slow.merges)
    assert len(slow.merges) > 20
    for _ in range(200):
        text = random_text(rng, "abc  ", rng.randint(0, 30))
        expected = [t for word in text.split() for t in bpe_reference(word, slow.merges)]
        assert slow.convert_ids_to_tokens(slow.encode(text)) == expected
        assert fast.encode(text) == slow.encode(text)


def test_fast_bpe_cache_is_dropped_when_retrained():
    fast = BPETokenizerFast({}, [])
    fast.train(["ab ab ab"])
    first = fast.encode("ab abc")
    fast.train(["ba ba ba", "abc"])
    slow = BPETokenizer({}, [])
    slow.train(["ba ba ba", "abc"])
    assert fast.encode("ab abc") == slow.encode("ab abc") != first


def test_bpe_unknown_characters():
    vocab = vocab_of(["a", "b", "ab", "<unk>"])
    assert BPETokenizer(vocab, ["a b"]).encode("axb") == [2]                 # dropped, then a+b merge
    tok = BPETokenizer(vocab, ["a b"], special_tokens=SpecialTokens(unk="<unk>"))
    assert tok.encode("axb") == [0, 3, 1] and tok.decode([0, 3, 1], skip_special_tokens=False) == "a<unk>b"
    assert tok.decode(tok.encode("ab ab")) == "abab"                          # plain BPE loses spaces


def test_bpe_save_load(tmp_path):
    tok = BPETokenizer({}, [], special_tokens=SpecialTokens(eos="</s>"))
    tok.train(["the quick brown fox", "the lazy dog sleeps", "the end"], vocab_size=40)
    tok.save(str(tmp_path))
    assert (tmp_path / "merges.txt").read_text(encoding="utf-8").splitlines()[:2] == ["#version: 0.2", "h e"]
    for cls in (BPETokenizer, BPETokenizerFast):
        again = cls.from_file(str(tmp_path))
        assert again.merges == tok.merges and again.encode("the dog") == tok.encode("the dog")
    (tmp_path / "tokenizer.json").unlink()                                    # the vocab.json + merges.txt pair
    assert BPETokenizer.from_pretrained(str(tmp_path)).encode("the fox") == tok.encode("the fox")
    # Hugging Face's tokenizer.json spells merges "left right".
    hf = {"model": {"type": "BPE", "vocab": vocab_of(["a", "b", "ab"]), "merges": ["a b"]}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(hf), encoding="utf-8")
    assert BPETokenizer.from_file(str(tmp_path), special_tokens=SpecialTokens()).encode("ab") == [2]


@pytest.mark.parametrize("vocab, merges, error, message", [
    ({"a": 0}, [("a", "b")], ValueError, r"merges\[0\] = \('a', 'b'\) needs 'b', which is not in the vocab"),
    ({"a": 0, "aa": 1}, ["aa"], ValueError, r"malformed merge 'aa'; expected 'left right'"),
    ({"a": 0}, "a a", TypeError, "merges must be a list of \\(left, right\\) pairs, got str"),
    ({"a": 0, "b": 0}, [], ValueError, "share id 0"),
])
def test_bpe_argument_errors(vocab, merges, error, message):
    with pytest.raises(error, match=message):
        BPETokenizer(vocab, merges)


def test_bpe_normalizer_must_be_callable():
    with pytest.raises(TypeError, match="normalizer must be callable"):
        BPETokenizer({}, [], normalizer="NFC")


# -- byte-level BPE -------------------------------------------------------------------------------


def gpt2_style_tokenizer(cls, **kwargs):
    alphabet = P.ByteLevel.alphabet()
    merges = [("Ġ", "w"), ("o", "r"), ("Ġw", "or"), ("l", "d"), ("Ġwor", "ld"), ("l", "l")]
    vocab = vocab_of(alphabet + ["Ġw", "or", "Ġwor", "ld", "Ġworld", "ll", "<|endoftext|>"])
    return cls(vocab, merges, special_tokens=SpecialTokens(eos="<|endoftext|>"), **kwargs)


@pytest.mark.parametrize("cls", [ByteLevelBPETokenizer, ByteLevelBPETokenizerFast])
def test_byte_level_bpe_known_tokens(cls):
    tok = gpt2_style_tokenizer(cls)
    ids = tok.encode("Hello world")
    assert tok.convert_ids_to_tokens(ids) == ["H", "e", "ll", "o", "Ġworld", "<|endoftext|>"]
    assert tok.decode(ids) == "Hello world"
    assert tok.convert_ids_to_tokens(tok.encode("world", add_special_tokens=False)) == ["w", "or", "ld"]
    prefixed = gpt2_style_tokenizer(cls, add_prefix_space=True)
    assert prefixed.convert_ids_to_tokens(prefixed.encode("world", add_special_tokens=False)) == ["Ġworld"]
    assert tok.decode(tok.encode("é", add_special_tokens=False)[:1]) == "\ufffd"   # half a character


@pytest.mark.parametrize("cls", [ByteLevelBPETokenizer, ByteLevelBPETokenizerFast])
def test_byte_level_bpe_round_trips_unicode(cls):
    tok = cls({}, [], normalizer=IDENTITY)
    corpus = ["the quick brown fox jumps", "über naïve café 東京 🎉", "tabs\tand\nnewlines"]
    tok.train(corpus * 3, vocab_size=280)
    assert tok.vocab_size == 280 and set(P.ByteLevel.alphabet()) <= set(tok.get_vocab())
    rng = random.Random(2)
    alphabet = list("the quick brown fox") + ["é", "e\u0301", "東", "🎉", "\x00", "\t", "\n", "  ", "'s",
                                              "\u2028", "ÿ"]
    for _ in range(200):
        text = random_text(rng, alphabet, rng.randint(0, 30))
        assert tok.decode(tok.encode(text)) == text
    # The default normalizer (NFC) composes "e" + U+0301 before encoding.
    nfc = cls(tok.get_vocab(), tok.merges)
    assert nfc.decode(nfc.encode("cafe\u0301")) == "café"


def test_byte_level_bpe_fast_matches_reference_and_saves(tmp_path):
    rng = random.Random(3)
    corpus = [random_text(rng, list("abc d,!") + ["é", "  "], 60) for _ in range(40)]
    slow = ByteLevelBPETokenizer({}, [], add_prefix_space=True, special_tokens=SpecialTokens(bos="<s>", eos="</s>"))
    slow.train(corpus, vocab_size=330)
    fast = ByteLevelBPETokenizerFast(slow.get_vocab(), slow.merges, add_prefix_space=True,
                                     special_tokens=SpecialTokens(bos="<s>", eos="</s>"))
    for text in corpus + [random_text(rng, "abcé d</s>", 40) for _ in range(50)]:
        assert fast.encode(text) == slow.encode(text)
    slow.save(str(tmp_path))
    again = ByteLevelBPETokenizerFast.from_file(str(tmp_path))
    assert again.add_prefix_space and again.encode(corpus[0]) == slow.encode(corpus[0])
    assert json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))["model"]["type"] == "ByteLevelBPE"


# -- WordPiece ------------------------------------------------------------------------------------

BERT_VOCAB = vocab_of(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "want", "##ed",
                       ",", "runn", "##ing", "!", "hello", "world", "a", "ab", "##b", "##bc", "##c"])
BERT_SPECIALS = SpecialTokens(pad="[PAD]", unk="[UNK]", cls="[CLS]", sep="[SEP]", mask="[MASK]")


@pytest.mark.parametrize("cls", [WordPieceTokenizer, WordPieceTokenizerFast])
def test_wordpiece_bert_examples(cls):
    tok = cls(BERT_VOCAB, special_tokens=BERT_SPECIALS)
    tokens = lambda text: tok.convert_ids_to_tokens(tok.encode(text, add_special_tokens=False))  # noqa: E731
    # The BERT README's example: "unaffable" -> un ##aff ##able; "UNwant\u00e9d,running"
    # (lowercased, accent stripped, split at the comma) -> un ##want... here: want ##ed.
    assert tokens("unaffable") == ["un", "##aff", "##able"]
    assert tokens("UNaffable, Wanted runnING!") == ["un", "##aff", "##able", ",", "want", "##ed", "runn", "##ing", "!"]
    assert tokens("wantéd") == ["want", "##ed"]
    assert tokens("abc") == ["ab", "##c"]                               # longest match first, not a + ##bc
    assert tokens("unaffablex hello") == ["[UNK]", "hello"]             # one unmatched position: whole word unk
    assert tok.encode("hello world") == [2, 14, 15, 3]                  # [CLS] ... [SEP]
    assert tok.decode(tok.encode("unaffable, hello")) == "unaffable , hello"
    short = cls(BERT_VOCAB, max_chars_per_word=5, special_tokens=BERT_SPECIALS)
    assert short.encode("hello unaffable", add_special_tokens=False) == [14, 1]


def test_wordpiece_without_unk_in_vocab_drops_unmatched_words():
    tok = WordPieceTokenizer({"a": 0, "##b": 1})
    assert tok.encode("ab c ab") == [0, 1, 0, 1]


def test_wordpiece_training_hand_worked():
    tok = WordPieceTokenizer({})
    tok.train(["ab ab", "ac"], vocab_size=10)
    # [UNK], then a, ##b, ##c in order of appearance; (a, ##b) occurs twice and merges to
    # "ab"; (a, ##c) occurs once, below the minimum of 2.
    assert tok.get_vocab() == {"[UNK]": 0, "a": 1, "##b": 2, "##c": 3, "ab": 4}
    assert tok.encode("ab ac") == [4, 1, 3]
    assert tok.decode([4, 1, 3]) == "ab ac"


def test_wordpiece_fast_matches_reference():
    rng = random.Random(4)
    corpus = [random_text(rng, "abcde  ,", 50) for _ in range(40)]
    slow = WordPieceTokenizer({})
    slow.train(corpus, vocab_size=80)
    fast = WordPieceTokenizerFast(slow.get_vocab())
    for _ in range(300):
        text = random_text(rng, "abcdefx ,", rng.randint(0, 40))
        assert fast.encode(text) == slow.encode(text)


def test_wordpiece_save_load(tmp_path):
    tok = WordPieceTokenizer(BERT_VOCAB, continuing_prefix="##", special_tokens=BERT_SPECIALS)
    tok.save(str(tmp_path))
    lines = (tmp_path / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert lines[:3] == ["[PAD]", "[UNK]", "[CLS]"] and len(lines) == len(BERT_VOCAB)
    again = WordPieceTokenizerFast.from_file(str(tmp_path))
    assert again.encode("unaffable!") == tok.encode("unaffable!") and again.special_tokens == BERT_SPECIALS
    (tmp_path / "tokenizer.json").unlink()
    (tmp_path / "special_tokens_map.json").unlink()
    bare = WordPieceTokenizer.from_pretrained(str(tmp_path))             # BERT's vocab.txt alone
    assert bare.encode("unaffable") == [5, 6, 7] and bare.unk_token_id == 1


def test_wordpiece_argument_errors():
    with pytest.raises(ValueError, match="max_chars_per_word must be a positive int, got 0"):
        WordPieceTokenizer({}, max_chars_per_word=0)
    with pytest.raises(ValueError, match="unk_token must be a non-empty str"):
        WordPieceTokenizer({}, unk_token="")
    with pytest.raises(ValueError, match=r"special tokens cls='\[CLS\]' are not in the vocabulary"):
        WordPieceTokenizer({"a": 0}, special_tokens=SpecialTokens(cls="[CLS]"))


# -- Unigram --------------------------------------------------------------------------------------


def brute_force_segmentation(text, pieces, unk_id, unk_score):
    """Best-scoring segmentation by enumerating every one (a codepoint that is no piece
    is an unknown edge). Returns (score, ids)."""
    index = {p: k for k, (p, _) in enumerate(pieces)}
    best = (-math.inf, None)
    for cuts in itertools.product([False, True], repeat=max(len(text) - 1, 0)):
        bounds = [0] + [k + 1 for k, cut in enumerate(cuts) if cut] + [len(text)]
        score, ids = 0.0, []
        for s, e in zip(bounds, bounds[1:]):
            piece = text[s:e]
            if piece in index:
                score += pieces[index[piece]][1]
                ids.append(index[piece])
            elif e - s == 1:
                score += unk_score
                if unk_id is not None:
                    ids.append(unk_id)
            else:
                break
        else:
            if score > best[0]:
                best = (score, ids)
    return best


@pytest.mark.parametrize("cls", [UnigramTokenizer, UnigramTokenizerFast])
def test_unigram_viterbi_against_brute_force(cls):
    rng = random.Random(5)
    for trial in range(40):
        candidates = sorted({random_text(rng, "abc", rng.randint(1, 3)) for _ in range(10)})
        pieces = [("<unk>", 0.0)] + [(p, -rng.uniform(0.5, 6.0)) for p in candidates if rng.random() < 0.8]
        with_unk = trial % 2 == 0
        if not with_unk:
            pieces = pieces[1:]
        tok = cls(pieces, unk_log_prob=-8.0, normalizer=IDENTITY, pre_tokenizer=WholeText())
        for _ in range(10):
            text = random_text(rng, "abcd", rng.randint(1, 9))
            _, expected = brute_force_segmentation(text, pieces, 0 if with_unk else None, -8.0)
            assert tok.encode(text) == expected, (pieces, text)


@pytest.mark.parametrize("cls", [UnigramTokenizer, UnigramTokenizerFast])
def test_unigram_ties_go_to_the_longest_last_piece(cls):
    # a+b and ab both score -2: the path whose last piece starts earliest wins.
    tok = cls([("a", -1.0), ("b", -1.0), ("ab", -2.0), ("c", -1.0), ("bc", -2.0)], normalizer=IDENTITY,
              pre_tokenizer=WholeText())
    assert tok.convert_ids_to_tokens(tok.encode("ab")) == ["ab"]
    assert tok.convert_ids_to_tokens(tok.encode("abc")) == ["a", "bc"]


def test_unigram_hand_example_and_decode():
    pieces = [("<unk>", 0.0), ("▁ab", -1.0), ("▁a", -1.5), ("b", -1.5), ("▁", -3.0), ("a", -3.0)]
    tok = UnigramTokenizer(pieces)
    assert tok.encode("ab") == [1]                    # -1.0 beats ▁a + b (-3.0) and ▁ + a + b (-7.5)
    assert tok.encode("ab abb") == [1, 1, 3]
    assert tok.encode("ac") == [2, 0]                 # "c" is no piece: unk
    assert tok.decode([1, 1, 3]) == " ab abb"         # the word-start mark decodes to a space
    assert tok.decode([2, 0], skip_special_tokens=False) == " a<unk>"
    no_unk = UnigramTokenizer(pieces[1:])
    assert no_unk.encode("acb") == [1, 2]             # "c" dropped, the rest still segmented


def test_unigram_expected_counts_against_enumeration():
    rng = random.Random(6)
    pieces = ["a", "b", "ab", "ba", "aba", "bb"]
    logp = [-rng.uniform(0.5, 3.0) for _ in pieces]
    word = "ababba"
    index = {p: k for k, p in enumerate(pieces)}
    counts = [0.0] * len(pieces)
    log_z = expected_counts(word, 2.0, build_trie(index), logp, counts)
    paths = []
    for cuts in itertools.product([False, True], repeat=len(word) - 1):
        bounds = [0] + [k + 1 for k, cut in enumerate(cuts) if cut] + [len(word)]
        parts = [word[s:e] for s, e in zip(bounds, bounds[1:])]
        if all(p in index for p in parts):
            paths.append((sum(logp[index[p]] for p in parts), parts))
    z = sum(math.exp(s) for s, _ in paths)
    assert log_z == pytest.approx(2.0 * math.log(z))
    for k, piece in enumerate(pieces):
        expected = 2.0 * sum(math.exp(s) / z * parts.count(piece) for s, parts in paths)
        assert counts[k] == pytest.approx(expected)


@pytest.mark.parametrize("cls", [UnigramTokenizer, UnigramTokenizerFast])
def test_unigram_training(cls):
    corpus = ["the quick brown fox", "the lazy dog sleeps", "the quick dog", "a lazy fox"] * 3
    tok = cls([], special_tokens=SpecialTokens(unk="<unk>", pad="<pad>"))
    tok.train(corpus, vocab_size=40)
    pieces = tok.pieces
    assert [p for p, _ in pieces[:2]] == ["<unk>", "<pad>"] and len(pieces) <= 40
    learned = pieces[2:]
    assert [s for _, s in learned] == sorted((s for _, s in learned), reverse=True)
    assert sum(math.exp(s) for _, s in learned) == pytest.approx(1.0)
    chars = {ch for doc in corpus for ch in "▁" + doc.replace(" ", "▁")}
    assert chars <= {p for p, _ in pieces}                             # every character stays encodable
    assert any(len(p) > 2 for p, _ in learned)                          # and real subwords were learned
    for doc in corpus + ["the brown dog sleeps", "quick quick"]:
        assert tok.decode(tok.encode(doc)) == " " + doc
    assert tok.encode("XYZ", add_special_tokens=False).count(tok.unk_token_id) == 3


def test_unigram_fast_matches_reference_and_saves(tmp_path):
    rng = random.Random(7)
    corpus = [random_text(rng, "abcab cd", 40) for _ in range(30)]
    slow = UnigramTokenizer([], special_tokens=SpecialTokens(unk="<unk>", eos="</s>"))
    slow.train(corpus, vocab_size=60)
    fast = UnigramTokenizerFast(slow.pieces, special_tokens=SpecialTokens(unk="<unk>", eos="</s>"))
    for _ in range(200):
        text = random_text(rng, "abcdxy  ", rng.randint(0, 40))
        assert fast.encode(text) == slow.encode(text)
    slow.save(str(tmp_path))
    again = UnigramTokenizerFast.from_file(str(tmp_path))
    assert again.pieces == slow.pieces and again.encode(corpus[0]) == slow.encode(corpus[0])
    # Hugging Face's Unigram block: [piece, score] pairs and unk_id.
    hf = {"model": {"type": "Unigram", "unk_id": 1, "vocab": [["▁a", -1.0], ["<unk>", 0.0], ["b", -2.0]]}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(hf), encoding="utf-8")
    (tmp_path / "special_tokens_map.json").unlink()
    hf_tok = UnigramTokenizer.from_file(str(tmp_path))
    assert hf_tok.unk_token_id == 1 and hf_tok.encode("abc") == [0, 2, 1]


@pytest.mark.parametrize("pieces, error, message", [
    ([("a", -1.0), ("a", -2.0)], ValueError, "piece 'a' appears twice"),
    ([("a", "x")], ValueError, r"has log_prob 'x'"),
    ([("a", float("nan"))], ValueError, "has log_prob nan"),
    ([("a",)], ValueError, r"pieces\[0\] = \('a',\); expected a \(piece, log_prob\) pair"),
    ([("", -1.0)], TypeError, "pieces must be non-empty str"),
    ({"a": -1.0}, TypeError, "pieces must be a list of \\(piece, log_prob\\) pairs, got dict"),
])
def test_unigram_argument_errors(pieces, error, message):
    with pytest.raises(error, match=message):
        UnigramTokenizer(pieces)
