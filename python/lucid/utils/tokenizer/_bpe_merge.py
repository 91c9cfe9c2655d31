"""Applying BPE merges to one chunk's symbol ids.

`ranks` maps an adjacent pair (left_id, right_id) to (rank, merged_id); lower rank merges
first, and among occurrences of the best pair the leftmost merges first. Both functions
give the same result; merge_by_scan is the reference, merge_by_heap the fast one.
"""

import heapq

PairRanks = dict[tuple[int, int], tuple[int, int]]


def merge_by_scan(ids: list[int], ranks: PairRanks) -> list[int]:
    """Rescan all adjacent pairs after every merge: O(n) per merge, O(n^2) per chunk."""
    ids = list(ids)
    while len(ids) > 1:
        best = None  # (rank, position, merged_id)
        for k in range(len(ids) - 1):
            entry = ranks.get((ids[k], ids[k + 1]))
            if entry is not None and (best is None or entry[0] < best[0]):
                best = (entry[0], k, entry[1])
        if best is None:
            break
        _, k, merged = best
        ids[k:k + 2] = [merged]
    return ids


def merge_by_heap(ids: list[int], ranks: PairRanks) -> list[int]:
    """Symbols in a linked list, candidate pairs in a heap keyed (rank, left position):
    O(n log n) per chunk. A heap entry is stale once either symbol has changed; it is
    recognised by comparing the symbols it recorded with the current ones."""
    n = len(ids)
    if n < 2:
        return list(ids)
    value = list(ids)
    nxt = list(range(1, n + 1))          # n marks the end
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap = []
    for k in range(n - 1):
        entry = ranks.get((value[k], value[k + 1]))
        if entry is not None:
            heap.append((entry[0], k, value[k], value[k + 1]))
    heapq.heapify(heap)
    while heap:
        rank, k, left, right = heapq.heappop(heap)
        j = nxt[k] if alive[k] else n
        if j >= n or value[k] != left or value[j] != right:
            continue
        value[k] = ranks[(left, right)][1]
        alive[j] = False
        nxt[k] = nxt[j]
        if nxt[j] < n:
            prv[nxt[j]] = k
        for a in (prv[k], k):
            if a >= 0 and nxt[a] < n:
                entry = ranks.get((value[a], value[nxt[a]]))
                if entry is not None:
                    heapq.heappush(heap, (entry[0], a, value[a], value[nxt[a]]))
    return [value[k] for k in range(n) if alive[k]]
