"""PrioritizedSequenceReplay: episodes drawn in proportion to a priority (Schaul, Quan,
Antonoglou and Silver, "Prioritized Experience Replay", ICLR 2016)."""

import math
from typing import NamedTuple

import lucid

from ._env import Episode
from ._replay import SequenceReplay, check_positive_int
from ._sum_tree import SumTree

__all__ = ["PrioritizedBatch", "PrioritizedSequenceReplay"]


class PrioritizedBatch(NamedTuple):
    """A prioritized draw: the chunks (as SequenceReplay.sample returns them), the
    position in `episodes` each came from (for update_priorities), and the
    importance-sampling weights, a float32 tensor (batch_size,) whose largest entry is 1."""

    episode: Episode
    indices: list[int]
    weights: lucid.Tensor


def _check_real(value, name: str, *, low: float, strict: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if value < low or (strict and value == low):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {low}, got {value}")
    return float(value)


class PrioritizedSequenceReplay(SequenceReplay):
    r"""Sequence replay whose episodes are drawn in proportion to priority.

    With stored priority p_i = |error_i| + epsilon (errors from update_priorities; a new
    episode gets the largest priority seen so far, so it is replayed at least once):

        P(i) = p_i^alpha / sum_k p_k^alpha           (over the episodes long enough)
        w_i  = (N * P(i))^(-beta) / max_j w_j        (N such episodes, max over the batch)

    alpha=0 is uniform sampling; beta is annealed toward 1 with anneal_beta. Priorities
    belong to episodes, the unit stored and trained on; a chunk takes its episode's.
    The p^alpha values live in a SumTree, so a draw and an update cost O(log n).

        buffer = PrioritizedSequenceReplay(capacity=100_000)
        buffer.add(episode)
        batch = buffer.sample_prioritized(16, 50)
        loss = (per_chunk_loss * batch.weights).mean()
        buffer.update_priorities(batch.indices, per_chunk_errors)
    """

    def __init__(self, capacity: int = 1_000_000, alpha: float = 0.6, beta: float = 0.4,
                 epsilon: float = 1e-6) -> None:
        super().__init__(capacity)
        self.alpha = _check_real(alpha, "alpha", low=0.0, strict=False)
        self.beta = _check_real(beta, "beta", low=0.0, strict=False)
        self.epsilon = _check_real(epsilon, "epsilon", low=0.0, strict=True)
        self._beta0 = self.beta
        self._max_priority = 1.0
        # Ring layout: the episode at position p has serial number first + p and lives in
        # leaf (first + p) % tree.capacity; the tree doubles when the episodes outgrow it.
        self._tree = SumTree(16)
        self._first = 0

    def _slot(self, position: int) -> int:
        return (self._first + position) % self._tree.capacity

    def _position(self, slot: int) -> int:
        return (slot - self._first) % self._tree.capacity

    def _on_added(self) -> None:
        n = len(self.episodes)
        if n > self._tree.capacity:
            old, grown = self._tree, SumTree(2 * self._tree.capacity)
            for p in range(n - 1):
                grown.set((self._first + p) % grown.capacity, old.get((self._first + p) % old.capacity))
            self._tree = grown
        self._tree.set(self._slot(n - 1), self._max_priority ** self.alpha)

    def _on_dropping_oldest(self) -> None:
        self._tree.set(self._slot(0), 0.0)
        self._first += 1

    def priority(self, index: int) -> float:
        """Stored p^alpha of the episode at position `index`."""
        return self._tree.get(self._slot(self._check_position(index)))

    def _check_position(self, index) -> int:
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"episode index must be an int, got {type(index).__name__}")
        if not 0 <= index < len(self.episodes):
            raise IndexError(f"episode index {index} outside [0, {len(self.episodes)})")
        return index

    def sample_prioritized(self, batch_size: int, length: int) -> PrioritizedBatch:
        """batch_size chunks of `length` steps, episodes drawn by priority, with weights."""
        check_positive_int(batch_size, "sample_prioritized: batch_size")
        check_positive_int(length, "sample_prioritized: length")
        usable = self._usable(length)
        if len(usable) == len(self.episodes):
            tree, position_of = self._tree, self._position
        else:
            # Draw among the long-enough episodes only: their priorities in a temporary tree.
            tree = SumTree(len(usable))
            for k, i in enumerate(usable):
                tree.set(k, self._tree.get(self._slot(i)))
            position_of = usable.__getitem__
        total = tree.total
        if total <= 0.0:
            raise ValueError("every usable episode has priority zero")
        draws = lucid.rand((batch_size,)).tolist()
        indices = [position_of(tree.find(u * total)) for u in draws]
        probabilities = [self._tree.get(self._slot(i)) / total for i in indices]
        raw = [(len(usable) * p) ** (-self.beta) for p in probabilities]
        largest = max(raw)
        weights = lucid.tensor([w / largest for w in raw], dtype=lucid.float32)
        return PrioritizedBatch(self._chunks(indices, length), indices, weights)

    def update_priorities(self, indices: list[int], errors) -> None:
        """Set the priority of each listed episode to |error| + epsilon. `errors` is a
        list of numbers or a 1-D tensor, one per index."""
        if hasattr(errors, "tolist"):
            errors = errors.tolist()
        indices, errors = list(indices), list(errors)
        if len(indices) != len(errors):
            raise ValueError(f"got {len(indices)} indices and {len(errors)} errors; need one error per index")
        for index, error in zip(indices, errors):
            self._check_position(index)
            error = _check_real(error, "error", low=-math.inf, strict=False)
            if math.isinf(error):
                raise ValueError(f"error for episode {index} is infinite")
            priority = abs(error) + self.epsilon
            self._max_priority = max(self._max_priority, priority)
            self._tree.set(self._slot(index), priority ** self.alpha)

    def anneal_beta(self, fraction: float, final: float = 1.0) -> None:
        """beta = beta0 + fraction * (final - beta0): linear annealing from the starting beta."""
        fraction = _check_real(fraction, "fraction", low=0.0, strict=False)
        if fraction > 1.0:
            raise ValueError(f"fraction must be in [0, 1], got {fraction}")
        final = _check_real(final, "final", low=0.0, strict=False)
        self.beta = self._beta0 + fraction * (final - self._beta0)
