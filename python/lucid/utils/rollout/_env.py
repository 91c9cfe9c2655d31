"""The environment contract a rollout runs against, and what it produces.

Lucid ships no environments; these types fix the shape one must have, so the replay
buffers and the rollout driver can be written against it.
"""

from typing import NamedTuple, Protocol, runtime_checkable

import lucid

__all__ = ["Environment", "Episode", "StepResult"]


class StepResult(NamedTuple):
    """What Environment.step returns.

    terminated: the episode reached a terminal state (nothing follows; the discount is 0).
    truncated: the episode was cut off from outside (a time limit); something would have
    followed, so the discount stays 1. They are kept apart because a world model's
    discount head must not learn that running out of time is the same as dying.
    """

    observation: lucid.Tensor
    reward: float
    terminated: bool
    truncated: bool


class _EpisodeFields(NamedTuple):
    observations: lucid.Tensor
    actions: lucid.Tensor
    rewards: lucid.Tensor
    discounts: lucid.Tensor


class Episode(_EpisodeFields):
    """One trajectory of T steps (or a batch of chunks with a leading batch axis).

    observations: (T, *obs_shape), the observation seen before each environment step.
    actions: (T, action_dim); actions[t] is the action that led to observations[t], so
        actions[0] is zeros (nothing came before the first observation).
    rewards: (T,), the reward of the step taken from observations[t].
    discounts: (T,), 0.0 where that step terminated the episode, else 1.0 (truncation
        included).

    len(episode) is T (the leading axis), not the number of fields.
    """

    __slots__ = ()

    def __len__(self) -> int:
        return int(self.observations.shape[0])

    @classmethod
    def _make(cls, iterable):
        # namedtuple's _make (used by _replace) checks len(result) == 4, which __len__
        # above redefines; build the tuple from the fields directly instead.
        return cls(*iterable)


@runtime_checkable
class Environment(Protocol):
    """What `rollout` needs: reset() -> first observation, step(action) -> StepResult.

    Any object with these two methods qualifies (isinstance checks the methods exist);
    subclassing is optional. Actions arrive in (-1, 1) for continuous control (scale
    them inside the environment), or one-hot for discrete actions.
    """

    def reset(self) -> lucid.Tensor:
        """Start an episode and return its first observation."""
        ...

    def step(self, action: lucid.Tensor) -> StepResult:
        """Apply one action and return the result."""
        ...
