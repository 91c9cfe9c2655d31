"""SumTree: priorities at the leaves of a binary tree whose inner nodes hold subtree sums,
so a leaf can be updated and drawn in proportion to its priority in O(log n)."""

__all__ = ["SumTree"]


class SumTree:
    """Segment tree of non-negative priorities (Schaul et al. 2016, "Prioritized
    Experience Replay", Appendix B.2.1).

        tree = SumTree(4)
        tree.set(0, 1.0); tree.set(3, 3.0)
        tree.total                     # 4.0
        tree.find(0.5), tree.find(2.0) # (0, 3)

    Leaf i covers the half-open interval [p_0 + ... + p_{i-1}, p_0 + ... + p_i) of
    [0, total), so `find(u * total)` with u uniform in [0, 1) returns i with probability
    p_i / total, and a zero-priority leaf is never returned.
    """

    def __init__(self, capacity: int) -> None:
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
            raise ValueError(f"SumTree: capacity must be a positive int, got {capacity!r}")
        self.capacity = capacity
        # Leaves padded to a power of two, so the tree's in-order leaves are 0, 1, 2, ...
        # and the prefix descent visits them left to right. Node k's children are 2k, 2k+1.
        self._leaf_base = 1 << (capacity - 1).bit_length()
        self._nodes = [0.0] * (2 * self._leaf_base)

    def __len__(self) -> int:
        return self.capacity

    @property
    def total(self) -> float:
        """Sum of all priorities."""
        return self._nodes[1]

    def _check_index(self, index: int) -> int:
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"SumTree: index must be an int, got {type(index).__name__}")
        if not 0 <= index < self.capacity:
            raise IndexError(f"SumTree: index {index} outside [0, {self.capacity})")
        return index

    def set(self, index: int, priority: float) -> None:
        """Set leaf `index` to `priority` (>= 0, finite) and update the sums above it."""
        self._check_index(index)
        priority = float(priority)
        if not 0.0 <= priority < float("inf"):
            raise ValueError(f"SumTree: priority must be finite and >= 0, got {priority}")
        node = self._leaf_base + index
        self._nodes[node] = priority
        node //= 2
        while node:
            # Recomputed from the children rather than adjusted by a delta, so rounding
            # errors do not accumulate over millions of updates.
            self._nodes[node] = self._nodes[2 * node] + self._nodes[2 * node + 1]
            node //= 2

    def get(self, index: int) -> float:
        """Priority of leaf `index`."""
        return self._nodes[self._leaf_base + self._check_index(index)]

    def find(self, prefix: float) -> int:
        """The leaf whose interval contains `prefix`, for 0 <= prefix < total."""
        prefix = float(prefix)
        total = self.total
        if total <= 0.0:
            raise ValueError("SumTree.find: every priority is zero, so there is nothing to draw")
        if not 0.0 <= prefix <= total:
            raise ValueError(f"SumTree.find: prefix {prefix} outside [0, total={total})")
        node = 1
        while node < self._leaf_base:
            left = 2 * node
            if prefix < self._nodes[left] or self._nodes[left + 1] <= 0.0:
                # The second test only matters at prefix == total or after rounding: it
                # keeps the descent out of an all-zero subtree.
                prefix = min(prefix, self._nodes[left])
                node = left
            else:
                prefix -= self._nodes[left]
                node = left + 1
        return node - self._leaf_base
