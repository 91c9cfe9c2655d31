"""Training a Unigram model (Kudo 2018, as SentencePiece does it, at small scale).

1. Seed: every character, plus the most promising substrings (up to max_piece_len
   characters) ranked by frequency x length.
2. EM: the expected number of uses of each piece over all segmentations of the corpus
   (forward-backward) re-estimates its probability; pieces used less than half a time
   drop out.
3. Prune: a piece's loss is how much the corpus likelihood falls when the piece is
   removed and its Viterbi uses are re-spelled by the piece's own best alternative
   segmentation; keep the highest-loss fraction (shrink) and repeat 2-3 until the
   vocabulary fits. Single characters are never pruned, so every text stays encodable.
"""

import math

from ._unigram_lattice import build_trie, expected_counts, viterbi_trie


def _normalized_logp(counts: dict[str, float]) -> dict[str, float]:
    total = sum(counts.values())
    return {piece: math.log(c / total) for piece, c in counts.items()}


def _em_step(words: dict[str, int], logp: dict[str, float], chars: set[str]) -> dict[str, float]:
    pieces = list(logp)
    index = {p: k for k, p in enumerate(pieces)}
    trie = build_trie(index)
    scores = [logp[p] for p in pieces]
    counts = [0.0] * len(pieces)
    for word, freq in words.items():
        expected_counts(word, freq, trie, scores, counts)
    # A character nobody uses any more keeps a tiny count: it must stay encodable.
    kept = {p: c for p, c in zip(pieces, counts) if c >= 0.5 or p in chars}
    return _normalized_logp({p: max(c, 1e-3) for p, c in kept.items()})


def _prune(words: dict[str, int], logp: dict[str, float], chars: set[str], keep: int) -> dict[str, float]:
    pieces = list(logp)
    index = {p: k for k, p in enumerate(pieces)}
    trie = build_trie(index)
    scores = [logp[p] for p in pieces]
    used = [0.0] * len(pieces)
    for word, freq in words.items():
        for tid in viterbi_trie(word, trie, scores, None, -1e9):
            used[tid] += freq
    loss: dict[str, float] = {}
    for piece in pieces:
        if piece in chars:
            continue
        k = index[piece]
        if used[k] == 0:
            loss[piece] = 0.0
            continue
        # Best spelling of the piece without itself: remove it from the trie for a moment.
        node = trie
        for ch in piece:
            node = node[ch]
        del node[None]
        alternative = sum(scores[t] for t in viterbi_trie(piece, trie, scores, None, -1e9))
        node[None] = k
        loss[piece] = used[k] * (scores[k] - alternative)
    ranked = sorted(loss, key=lambda p: (-loss[p], p))
    survivors = set(ranked[:max(keep - len(chars), 0)]) | (chars & set(logp))
    return _normalized_logp({p: math.exp(logp[p]) for p in survivors})


def train_unigram(words: dict[str, int], piece_budget: int, *, max_piece_len: int = 16,
                  shrink: float = 0.75, em_iterations: int = 2) -> list[tuple[str, float]]:
    """(piece, log-probability) pairs, best first, for `words` (chunk -> count), at most
    piece_budget of them unless the characters alone are more."""
    chars: set[str] = {ch for word in words for ch in word}
    substrings: dict[str, int] = {}
    for word, freq in words.items():
        for j in range(len(word)):
            for i in range(j + 2, min(len(word), j + max_piece_len) + 1):
                substrings[word[j:i]] = substrings.get(word[j:i], 0) + freq
    char_counts: dict[str, int] = {}
    for word, freq in words.items():
        for ch in word:
            char_counts[ch] = char_counts.get(ch, 0) + freq
    seed_size = max(10 * piece_budget, 1000)
    seeded = sorted(substrings, key=lambda s: (-substrings[s] * len(s), s))[:seed_size]
    logp = _normalized_logp({**char_counts, **{s: substrings[s] for s in seeded}})

    while True:
        for _ in range(em_iterations):
            logp = _em_step(words, logp, chars)
        if len(logp) <= piece_budget:
            break
        keep = max(piece_budget, int(len(logp) * shrink))
        pruned = _prune(words, logp, chars, keep)
        if len(pruned) == len(logp):
            break  # only characters are left to cut
        logp = pruned
    logp = _em_step(words, logp, chars)
    return sorted(logp.items(), key=lambda kv: (-kv[1], kv[0]))
