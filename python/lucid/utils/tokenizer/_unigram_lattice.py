"""The segmentation lattice of the Unigram model (Kudo 2018): best path and expected counts.

A segmentation of a chunk is a path through its codepoint positions whose edges are
vocabulary pieces; its score is the sum of the pieces' log-probabilities. A single
codepoint that is no piece is an "unknown" edge scored unk_score. Among equal best scores
the path whose last piece starts earliest (is longest) wins, in both Viterbi variants.
"""

import math

NEG_INF = float("-inf")

# Unknown-edge marker in back pointers: the caller's unk id, or UNKNOWN_DROPPED when the
# vocabulary has no unk piece and unknown codepoints are left out of the ids.
UNKNOWN_DROPPED = -1


def _backtrack(back: list, n: int) -> list[int]:
    ids: list[int] = []
    i = n
    while i > 0:
        j, emit = back[i]
        if emit != UNKNOWN_DROPPED:
            ids.append(emit)
        i = j
    ids.reverse()
    return ids


def viterbi_scan(chunk: str, piece_ids: dict[str, int], scores: list[float], max_len: int,
                 unk_id: int | None, unk_score: float) -> list[int]:
    """Reference Viterbi: for every end position, try every start within max_len."""
    n = len(chunk)
    best = [NEG_INF] * (n + 1)
    best[0] = 0.0
    back: list = [None] * (n + 1)
    unk_emit = UNKNOWN_DROPPED if unk_id is None else unk_id
    for i in range(1, n + 1):
        for j in range(max(0, i - max(max_len, 1)), i):
            if best[j] == NEG_INF:
                continue
            tid = piece_ids.get(chunk[j:i])
            if tid is not None:
                score, emit = best[j] + scores[tid], tid
            elif i - j == 1:
                score, emit = best[j] + unk_score, unk_emit
            else:
                continue
            if score > best[i]:
                best[i], back[i] = score, (j, emit)
    return _backtrack(back, n)


_END = None  # trie key under which a node stores the id of the piece ending there


def build_trie(piece_ids: dict[str, int]) -> dict:
    root: dict = {}
    for piece, tid in piece_ids.items():
        node = root
        for ch in piece:
            node = node.setdefault(ch, {})
        node[_END] = tid
    return root


def viterbi_trie(chunk: str, trie: dict, scores: list[float], unk_id: int | None, unk_score: float) -> list[int]:
    """Fast Viterbi: walk the piece trie forward from each reachable start, so only
    pieces that actually occur are tried. Same ids as viterbi_scan: best[i] receives its
    candidates in the same order (increasing start) with the same strict comparison."""
    n = len(chunk)
    best = [NEG_INF] * (n + 1)
    best[0] = 0.0
    back: list = [None] * (n + 1)
    unk_emit = UNKNOWN_DROPPED if unk_id is None else unk_id
    for j in range(n):
        base = best[j]
        if base == NEG_INF:
            continue
        node = trie
        single = False
        for i in range(j, n):
            node = node.get(chunk[i])
            if node is None:
                break
            tid = node.get(_END)
            if tid is not None:
                single = single or i == j
                score = base + scores[tid]
                if score > best[i + 1]:
                    best[i + 1], back[i + 1] = score, (j, tid)
        if not single:
            score = base + unk_score
            if score > best[j + 1]:
                best[j + 1], back[j + 1] = score, (j, unk_emit)
    return _backtrack(back, n)


def _logaddexp(a: float, b: float) -> float:
    if a == NEG_INF:
        return b
    if b == NEG_INF:
        return a
    hi, lo = (a, b) if a > b else (b, a)
    return hi + math.log1p(math.exp(lo - hi))


def expected_counts(word: str, weight: float, trie: dict, logp: list[float], out: list[float]) -> float:
    """Forward-backward over `word`'s lattice: add weight * E[uses of each piece] to out
    and return weight * log P(word). Every character must be a piece (training keeps
    all characters), so the lattice is never empty."""
    n = len(word)
    edges: list[tuple[int, int, int]] = []     # (start, end, piece)
    for j in range(n):
        node = trie
        for i in range(j, n):
            node = node.get(word[i])
            if node is None:
                break
            tid = node.get(_END)
            if tid is not None:
                edges.append((j, i + 1, tid))
    alpha = [NEG_INF] * (n + 1)
    alpha[0] = 0.0
    for j, i, tid in edges:            # sorted by start, so alpha[j] is final when used
        alpha[i] = _logaddexp(alpha[i], alpha[j] + logp[tid])
    beta = [NEG_INF] * (n + 1)
    beta[n] = 0.0
    for j, i, tid in sorted(edges, key=lambda e: -e[1]):   # by end, descending
        beta[j] = _logaddexp(beta[j], beta[i] + logp[tid])
    z = alpha[n]
    for j, i, tid in edges:
        out[tid] += weight * math.exp(alpha[j] + logp[tid] + beta[i] - z)
    return weight * z
