"""Policies: what chooses actions during a rollout."""

from typing import Callable, Protocol, runtime_checkable

import lucid

__all__ = ["Policy", "RandomPolicy", "LatentPolicy"]


@runtime_checkable
class Policy(Protocol):
    """Chooses actions and can be told that a new episode began.

    reset() matters for policies with memory (a world model acts from a belief built up
    over the episode); a stateless policy implements it as a no-op. __call__(observation)
    returns an action of shape (action_dim,).
    """

    def reset(self) -> None:
        """Forget the previous episode."""
        ...

    def __call__(self, observation: lucid.Tensor) -> lucid.Tensor:
        """The action for `observation`."""
        ...


def _check_action_dim(action_dim) -> int:
    if not isinstance(action_dim, int) or isinstance(action_dim, bool) or action_dim < 1:
        raise ValueError(f"action_dim must be a positive int, got {action_dim!r}")
    return action_dim


class RandomPolicy:
    """Uniformly random actions, ignoring the observation; what fills a replay buffer
    before there is a model worth acting with.

    Continuous (discrete=False): each entry uniform in [-1, 1). Discrete (discrete=True):
    a one-hot float32 vector with its 1 at a uniformly drawn index, the action encoding of
    world models over discrete action spaces (DreamerV2 on Atari). Draws come from lucid's
    global generator.
    """

    def __init__(self, action_dim: int, discrete: bool = False) -> None:
        self.action_dim = _check_action_dim(action_dim)
        self.discrete = bool(discrete)

    def reset(self) -> None:
        """Nothing to forget."""

    def __call__(self, observation: lucid.Tensor | None = None) -> lucid.Tensor:
        if self.discrete:
            choice = int(lucid.randint(0, self.action_dim, (1,)).tolist()[0])
            return lucid.tensor([1.0 if k == choice else 0.0 for k in range(self.action_dim)], dtype=lucid.float32)
        return lucid.rand((self.action_dim,)) * 2.0 - 1.0


class LatentPolicy:
    """Acts from a recurrent state-space model's belief, carried through the episode.

    Each call encodes the observation, folds it into the belief with the action taken
    last (`rssm.posterior_step`) and asks `act` for the next action; reset() drops the
    belief so the next episode starts from `rssm.initial`.

    Parameters
    ----------
    encode : callable
        (B, T, *obs_shape) -> (B, T, embed_dim), normally `model.encode`.
    rssm : object
        The model's RSSM: `initial(batch_size, device=...)` returns the starting state and
        `posterior_step(state, previous_action, embed, sample=False)` returns
        (prior, posterior) after one step.
    act : callable
        posterior state -> action of shape (1, action_dim): Dreamer's actor
        (`lambda s: model.act(s, sample=False)`) or PlaNet's planner.
    action_dim : int
    noise : float, default 0.0
        Standard deviation of Gaussian exploration noise added to each action (the
        papers collect with 0.3 and evaluate with 0).

    Actions are clipped to [-1, 1] whether or not noise was added, and computed under
    lucid.no_grad().
    """

    def __init__(self, encode: Callable, rssm, act: Callable, action_dim: int, noise: float = 0.0) -> None:
        for name, fn in (("encode", encode), ("act", act)):
            if not callable(fn):
                raise TypeError(f"LatentPolicy: {name} must be callable, got {type(fn).__name__}")
        for method in ("initial", "posterior_step"):
            if not callable(getattr(rssm, method, None)):
                raise TypeError(f"LatentPolicy: rssm must have a {method}() method (an RSSM), "
                                f"got {type(rssm).__name__}")
        if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not noise >= 0.0:
            raise ValueError(f"LatentPolicy: noise must be a number >= 0, got {noise!r}")
        self._encode = encode
        self.rssm = rssm
        self._act = act
        self.action_dim = _check_action_dim(action_dim)
        self.noise = float(noise)
        self.reset()

    def reset(self) -> None:
        """Drop the belief; the next call starts from the RSSM's initial state."""
        self._state = None
        self._previous_action = None

    def __call__(self, observation: lucid.Tensor) -> lucid.Tensor:
        with lucid.no_grad():
            if self._state is None:
                device = observation.device.type
                self._state = self.rssm.initial(1, device=device)
                self._previous_action = lucid.zeros((1, self.action_dim), device=device)
            embed = self._encode(observation.reshape(1, 1, *observation.shape))[:, 0]
            _, self._state = self.rssm.posterior_step(self._state, self._previous_action, embed, sample=False)
            action = self._act(self._state)
            if tuple(action.shape) != (1, self.action_dim):
                raise ValueError(f"LatentPolicy: act returned shape {tuple(action.shape)}, "
                                 f"expected (1, {self.action_dim})")
            if self.noise > 0.0:
                action = action + lucid.randn(tuple(action.shape), dtype=action.dtype,
                                              device=action.device.type) * self.noise
            action = lucid.clip(action, -1.0, 1.0)
            self._previous_action = action
            return action[0]
