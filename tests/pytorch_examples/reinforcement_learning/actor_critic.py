# Upstream: github.com/pytorch/examples, reinforcement_learning/actor_critic.py.
# Changed: the imports (torch -> lucid), and the environment: gym is not installed, so
# `gym.make('CartPole-v1')` builds the in-file CartPole below (gym's dynamics, with the
# solved threshold lowered to 40). Nothing else differs from upstream.
# Shrunk: nothing beyond the threshold (the program runs until the environment is solved).
import argparse
import numpy as np
from itertools import count
from collections import namedtuple

import lucid as torch
import lucid.nn as nn
import lucid.nn.functional as F
import lucid.optim as optim
from lucid.distributions import Categorical

import math


class gym:  # offline stand-in for gym (not installed): CartPole-v1's dynamics, in-file
    class _CartPole:
        # gym's CartPole-v1 equations and limits; the reward threshold is lowered from 475
        # to 40 so that a run "solves" it within a few dozen episodes.
        spec = type("EnvSpec", (), {"reward_threshold": 40.0})

        def __init__(self):
            self.np_random = np.random.default_rng()

        def reset(self, seed=None):
            if seed is not None:
                self.np_random = np.random.default_rng(seed)
            self.state = self.np_random.uniform(-0.05, 0.05, size=(4,))
            return np.array(self.state, dtype=np.float32), {}

        def step(self, action):
            x, x_dot, theta, theta_dot = self.state
            force = 10.0 if action == 1 else -10.0
            cos, sin = math.cos(theta), math.sin(theta)
            temp = (force + 0.05 * theta_dot ** 2 * sin) / 1.1
            theta_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos ** 2 / 1.1))
            x_acc = temp - 0.05 * theta_acc * cos / 1.1
            x, x_dot = x + 0.02 * x_dot, x_dot + 0.02 * x_acc
            theta, theta_dot = theta + 0.02 * theta_dot, theta_dot + 0.02 * theta_acc
            self.state = (x, x_dot, theta, theta_dot)
            terminated = abs(x) > 2.4 or abs(theta) > 12 * 2 * math.pi / 360
            return np.array(self.state, dtype=np.float32), 1.0, terminated, False, {}

        def render(self):
            pass

    @staticmethod
    def make(name):
        assert name == 'CartPole-v1'
        return gym._CartPole()


# Cart Pole

parser = argparse.ArgumentParser(description='PyTorch actor-critic example')
parser.add_argument('--gamma', type=float, default=0.99, metavar='G',
                    help='discount factor (default: 0.99)')
parser.add_argument('--seed', type=int, default=543, metavar='N',
                    help='random seed (default: 543)')
parser.add_argument('--render', action='store_true',
                    help='render the environment')
parser.add_argument('--log-interval', type=int, default=10, metavar='N',
                    help='interval between training status logs (default: 10)')
args = parser.parse_args()


env = gym.make('CartPole-v1')
env.reset(seed=args.seed)
torch.manual_seed(args.seed)


SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])


class Policy(nn.Module):
    """
    implements both actor and critic in one model
    """
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)

        # actor's layer
        self.action_head = nn.Linear(128, 2)

        # critic's layer
        self.value_head = nn.Linear(128, 1)

        # action & reward buffer
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        """
        forward of both actor and critic
        """
        x = F.relu(self.affine1(x))

        # actor: choses action to take from state s_t
        # by returning probability of each action
        action_prob = F.softmax(self.action_head(x), dim=-1)

        # critic: evaluates being in the state s_t
        state_values = self.value_head(x)

        # return values for both actor and critic as a tuple of 2 values:
        # 1. a list with the probability of each action over the action space
        # 2. the value from state s_t
        return action_prob, state_values


model = Policy()
optimizer = optim.Adam(model.parameters(), lr=3e-2)
eps = np.finfo(np.float32).eps.item()


def select_action(state):
    state = torch.from_numpy(state).float()
    probs, state_value = model(state)

    # create a categorical distribution over the list of probabilities of actions
    m = Categorical(probs)

    # and sample an action using the distribution
    action = m.sample()

    # save to action buffer
    model.saved_actions.append(SavedAction(m.log_prob(action), state_value))

    # the action to take (left or right)
    return action.item()


def finish_episode():
    """
    Training code. Calculates actor and critic loss and performs backprop.
    """
    R = 0
    saved_actions = model.saved_actions
    policy_losses = [] # list to save actor (policy) loss
    value_losses = [] # list to save critic (value) loss
    returns = [] # list to save the true values

    # calculate the true value using rewards returned from the environment
    for r in model.rewards[::-1]:
        # calculate the discounted value
        R = r + args.gamma * R
        returns.insert(0, R)

    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)

    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()

        # calculate actor (policy) loss
        policy_losses.append(-log_prob * advantage)

        # calculate critic (value) loss using L1 smooth loss
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))

    # reset gradients
    optimizer.zero_grad()

    # sum up all the values of policy_losses and value_losses
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()

    # perform backprop
    loss.backward()
    optimizer.step()

    # reset rewards and action buffer
    del model.rewards[:]
    del model.saved_actions[:]


def main():
    running_reward = 10

    # run infinitely many episodes
    for i_episode in count(1):

        # reset environment and episode reward
        state, _ = env.reset()
        ep_reward = 0

        # for each episode, only run 9999 steps so that we don't
        # infinite loop while learning
        for t in range(1, 10000):

            # select action from policy
            action = select_action(state)

            # take the action
            state, reward, done, _, _ = env.step(action)

            if args.render:
                env.render()

            model.rewards.append(reward)
            ep_reward += reward
            if done:
                break

        # update cumulative reward
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward

        # perform backprop
        finish_episode()

        # log results
        if i_episode % args.log_interval == 0:
            print('Episode {}\tLast reward: {:.2f}\tAverage reward: {:.2f}'.format(
                  i_episode, ep_reward, running_reward))

        # check if we have "solved" the cart pole problem
        if running_reward > env.spec.reward_threshold:
            print("Solved! Running reward is now {} and "
                  "the last episode runs to {} time steps!".format(running_reward, t))
            break


if __name__ == '__main__':
    main()
