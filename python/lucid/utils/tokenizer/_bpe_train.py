"""Learning BPE merges from word counts (Sennrich et al. 2016), shared by BPE and WordPiece.

Each word is a sequence of symbols; each step merges the most frequent adjacent pair
everywhere it occurs. Ties go to the smallest pair in string order, so training is
deterministic. Pair counts are updated incrementally: a step only revisits the words that
contain the merged pair.
"""

import heapq
from collections import defaultdict
from typing import Callable


def learn_merges(words: dict[tuple[str, ...], int], vocab: dict[str, int], vocab_size: int, *,
                 join: Callable[[str, str], str] = lambda a, b: a + b,
                 min_count: int = 2) -> list[tuple[str, str]]:
    """Merge pairs until `vocab` (extended in place with each new symbol) holds vocab_size
    tokens or no pair occurs min_count times. Returns the merges in learning order."""
    seqs = [list(w) for w in words]
    freq = list(words.values())
    pair_count: dict[tuple[str, str], int] = defaultdict(int)
    where: dict[tuple[str, str], set[int]] = defaultdict(set)
    for w, syms in enumerate(seqs):
        for pair in zip(syms, syms[1:]):
            pair_count[pair] += freq[w]
            where[pair].add(w)
    heap = [(-c, pair) for pair, c in pair_count.items()]
    heapq.heapify(heap)

    merges: list[tuple[str, str]] = []
    while len(vocab) < vocab_size and heap:
        neg, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -neg:
            continue  # stale: the count changed after this entry was pushed
        if -neg < min_count:
            break
        left, right = pair
        merged = join(left, right)
        merges.append(pair)
        vocab.setdefault(merged, len(vocab))
        touched: set[tuple[str, str]] = set()
        for w in sorted(where.pop(pair, ())):
            old = seqs[w]
            for p in zip(old, old[1:]):
                pair_count[p] -= freq[w]
                touched.add(p)
            new: list[str] = []
            k = 0
            while k < len(old):
                if k + 1 < len(old) and old[k] == left and old[k + 1] == right:
                    new.append(merged)
                    k += 2
                else:
                    new.append(old[k])
                    k += 1
            seqs[w] = new
            for p in zip(new, new[1:]):
                pair_count[p] += freq[w]
                where[p].add(w)
                touched.add(p)
        for p in touched:
            count = pair_count.get(p, 0)
            if count > 0:
                heapq.heappush(heap, (-count, p))
            else:
                pair_count.pop(p, None)
                where.pop(p, None)
    return merges
