"""rollout: run one episode of a policy in an environment.

Its reason to exist is the collection hyperparameters the world-model papers state and a
hand-written loop tends to get subtly different: action repeat, the action/observation
alignment, and the split of termination from truncation.
"""

import lucid

from ._env import Episode, StepResult

__all__ = ["rollout"]


def rollout(env, policy, *, action_repeat: int = 1, max_steps: int | None = None) -> tuple[Episode, float]:
    """Run one episode; return it (ready for a replay buffer) and its undiscounted return.

    The policy is reset, then asked for an action every `action_repeat` environment
    steps; the chosen action is repeated that many times, and every environment step is
    recorded (the stored sequence runs at the environment's rate). The episode ends when
    a step reports terminated or truncated, or after `max_steps` recorded steps (which
    counts as truncation: the discount stays 1).

    Returned Episode, T steps: observations[t] is what the policy saw before step t,
    actions[t] the action that produced observations[t] (actions[0] is zeros),
    rewards[t] the reward of step t and discounts[t] 0.0 if step t terminated.
    """
    if not (callable(getattr(env, "reset", None)) and callable(getattr(env, "step", None))):
        raise TypeError(f"rollout: env must have reset() and step(action) methods, got {type(env).__name__}")
    if not (callable(policy) and callable(getattr(policy, "reset", None))):
        raise TypeError(f"rollout: policy must be callable and have reset(), got {type(policy).__name__}")
    if not isinstance(action_repeat, int) or isinstance(action_repeat, bool) or action_repeat < 1:
        raise ValueError(f"rollout: action_repeat must be a positive int, got {action_repeat!r}")
    if max_steps is not None and (not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1):
        raise ValueError(f"rollout: max_steps must be a positive int or None, got {max_steps!r}")

    policy.reset()
    observation = env.reset()
    observations: list = []
    taken: list = []          # the action applied at each recorded step
    rewards: list[float] = []
    discounts: list[float] = []
    done = False
    while not done:
        action = policy(observation)
        for _ in range(action_repeat):
            observations.append(observation)
            taken.append(action)
            result = env.step(action)
            if not isinstance(result, tuple) or len(result) != 4:
                raise TypeError(f"rollout: env.step must return a StepResult (observation, reward, terminated, "
                                f"truncated), got {type(result).__name__}")
            result = StepResult(*result)
            observation = result.observation
            rewards.append(float(result.reward))
            discounts.append(0.0 if result.terminated else 1.0)
            done = bool(result.terminated or result.truncated)
            done = done or (max_steps is not None and len(observations) >= max_steps)
            if done:
                break

    # actions[t] led to observations[t]: the action of step t-1, and zeros before step 0.
    actions = [lucid.zeros_like(taken[0])] + taken[:-1]
    episode = Episode(observations=lucid.stack(observations, dim=0), actions=lucid.stack(actions, dim=0),
                      rewards=lucid.tensor(rewards, dtype=lucid.float32),
                      discounts=lucid.tensor(discounts, dtype=lucid.float32))
    return episode, float(sum(rewards))
