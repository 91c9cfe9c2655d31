# Upstream: github.com/pytorch/examples, reinforcement_learning/reinforce.py.
# Changed: the imports (torch -> lucid), and the environment: gym is not installed, so
# `gym.make('CartPole-v1')` builds the in-file CartPole below (gym's dynamics, with the
# solved threshold lowered to 40). Nothing else differs from upstream.
# Shrunk: nothing beyond the threshold (the program runs until the environment is solved).
import argparse
import numpy as np
from itertools import count
from collections import deque
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


parser = argparse.ArgumentParser(description='PyTorch REINFORCE example')
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


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.6)
        self.affine2 = nn.Linear(128, 2)

        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = np.finfo(np.float32).eps.item()


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    R = 0
    policy_loss = []
    returns = deque()
    for r in policy.rewards[::-1]:
        R = r + args.gamma * R
        returns.appendleft(R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]


def main():
    running_reward = 10
    for i_episode in count(1):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 10000):  # Don't infinite loop while learning
            action = select_action(state)
            state, reward, done, _, _ = env.step(action)
            if args.render:
                env.render()
            policy.rewards.append(reward)
            ep_reward += reward
            if done:
                break

        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        finish_episode()
        if i_episode % args.log_interval == 0:
            print('Episode {}\tLast reward: {:.2f}\tAverage reward: {:.2f}'.format(
                  i_episode, ep_reward, running_reward))
        if running_reward > env.spec.reward_threshold:
            print("Solved! Running reward is now {} and "
                  "the last episode runs to {} time steps!".format(running_reward, t))
            break


if __name__ == '__main__':
    main()
