"""lucid.distributions: probability distributions with sampling and log-densities
(torch.distributions' counterpart). Only Categorical so far, the one reinforcement-learning
programs (pytorch/examples' reinforce.py and actor_critic.py) draw actions from."""

from .categorical import Categorical

__all__ = ["Categorical"]
