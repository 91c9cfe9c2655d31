"""SequenceReplay: whole episodes in, contiguous same-episode chunks out.

A recurrent world model learns from sequences, so a batch is a set of windows that never
straddle an episode boundary. Draws use lucid's global generator: lucid.manual_seed makes
them repeat.
"""

import lucid

from ._env import Episode

__all__ = ["SequenceReplay"]


def check_positive_int(value, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def uniform_below(bounds: list[int]) -> list[int]:
    """One uniform integer in [0, b) per bound, from a single lucid.rand draw."""
    if not bounds:
        return []
    u = lucid.rand((len(bounds),)).tolist()
    # min(): a float32 uniform times b can round up to b.
    return [min(int(x * b), b - 1) for x, b in zip(u, bounds)]


class SequenceReplay:
    """Episode storage that samples contiguous chunks.

        replay = SequenceReplay(capacity=100_000)
        replay.add(episode)                      # an Episode of T steps
        batch = replay.sample(16, 50)            # Episode of (16, 50, ...) tensors

    capacity counts transitions, not episodes (frames dominate the memory); adding past it
    drops the oldest episodes, always keeping the newest. `sample` picks an episode
    uniformly among those at least `length` steps long, then a start uniformly within it
    (the world-model papers' scheme: steps of short episodes are drawn more often).
    Episodes shorter than `length` are skipped rather than padded, since padding would
    feed the model frames the dynamics never produced.
    """

    def __init__(self, capacity: int = 1_000_000) -> None:
        self.capacity = check_positive_int(capacity, "SequenceReplay: capacity")
        self.episodes: list[Episode] = []
        self._steps = 0

    def __len__(self) -> int:
        """Number of stored episodes."""
        return len(self.episodes)

    @property
    def steps(self) -> int:
        """Number of stored transitions."""
        return self._steps

    @staticmethod
    def _check_episode(episode) -> Episode:
        if not isinstance(episode, Episode):
            raise TypeError(f"add takes an Episode, got {type(episode).__name__}")
        for name in Episode._fields:
            if not isinstance(getattr(episode, name), lucid.Tensor):
                raise TypeError(f"Episode.{name} must be a lucid.Tensor, got {type(getattr(episode, name)).__name__}")
        length = len(episode)
        if length == 0:
            raise ValueError("cannot store an empty episode (0 steps)")
        for name in ("actions", "rewards", "discounts"):
            steps = int(getattr(episode, name).shape[0])
            if steps != length:
                raise ValueError(f"Episode.{name} has {steps} steps but observations has {length}")
        return episode

    def add(self, episode: Episode) -> None:
        """Store an episode, then drop the oldest ones while over capacity."""
        self._check_episode(episode)
        self.episodes.append(episode)
        self._steps += len(episode)
        self._on_added()
        while self._steps > self.capacity and len(self.episodes) > 1:
            self._on_dropping_oldest()
            self._steps -= len(self.episodes.pop(0))

    def _on_added(self) -> None:
        """Hook: the newest episode was appended."""

    def _on_dropping_oldest(self) -> None:
        """Hook: episodes[0] is about to be dropped."""

    def _usable(self, length: int) -> list[int]:
        usable = [i for i, e in enumerate(self.episodes) if len(e) >= length]
        if not usable:
            longest = max((len(e) for e in self.episodes), default=0)
            raise ValueError(f"no stored episode has {length} steps (longest has {longest}, "
                             f"{len(self.episodes)} stored); add longer episodes or sample shorter chunks")
        return usable

    def _chunks(self, indices: list[int], length: int) -> Episode:
        """Stack one random window of `length` steps from each listed episode."""
        starts = uniform_below([len(self.episodes[i]) - length + 1 for i in indices])
        fields = {name: [] for name in Episode._fields}
        for i, start in zip(indices, starts):
            episode = self.episodes[i]
            for name in Episode._fields:
                fields[name].append(getattr(episode, name)[start:start + length])
        return Episode(**{name: lucid.stack(parts, dim=0) for name, parts in fields.items()})

    def sample(self, batch_size: int, length: int) -> Episode:
        """batch_size chunks of `length` consecutive steps, as an Episode of
        (batch_size, length, ...) tensors."""
        check_positive_int(batch_size, "sample: batch_size")
        check_positive_int(length, "sample: length")
        usable = self._usable(length)
        picks = uniform_below([len(usable)] * batch_size)
        return self._chunks([usable[k] for k in picks], length)
