"""lucid.utils.rollout: SumTree against a linear scan, the replay buffers' sampling against
the formulas (Schaul et al. 2016 for the prioritized one), rollout on a deterministic
environment, and the policies."""

import math
import random

import pytest

import lucid
from lucid.utils import rollout as R
from lucid.utils.rollout import (
    Environment, Episode, LatentPolicy, Policy, PrioritizedBatch, PrioritizedSequenceReplay, RandomPolicy,
    SequenceReplay, StepResult, SumTree, rollout,
)

UPSTREAM_NAMES = ["Environment", "Episode", "LatentPolicy", "Policy", "PrioritizedBatch", "PrioritizedSequenceReplay",
                  "RandomPolicy", "SequenceReplay", "StepResult", "SumTree", "rollout"]


def test_upstream_names_are_exported():
    assert sorted(R.__all__) == UPSTREAM_NAMES
    for name in UPSTREAM_NAMES:
        assert getattr(lucid.utils.rollout, name) is getattr(R, name)


# -- SumTree --------------------------------------------------------------------------------------


def linear_scan(priorities, prefix):
    """First leaf whose cumulative sum exceeds prefix: the definition find() must meet."""
    running = 0.0
    for i, p in enumerate(priorities):
        running += p
        if prefix < running:
            return i
    return max(i for i, p in enumerate(priorities) if p > 0)


@pytest.mark.parametrize("capacity", [1, 5, 8, 37])
def test_sum_tree_find_matches_linear_scan(capacity):
    rng = random.Random(capacity)
    tree = SumTree(capacity)
    priorities = [0.0] * capacity
    for _ in range(3 * capacity):
        i = rng.randrange(capacity)
        # Multiples of 1/4: every partial sum is exact, so boundaries can be tested exactly.
        priorities[i] = rng.choice([0.0, 0.25 * rng.randint(1, 20)])
        tree.set(i, priorities[i])
        assert tree.total == pytest.approx(sum(priorities))
        assert [tree.get(k) for k in range(capacity)] == priorities
        if sum(priorities) == 0:
            continue
        prefixes = [rng.uniform(0, sum(priorities)) for _ in range(20)]
        # Exact boundaries too: leaf i covers [cum_i, cum_i + p_i), so a boundary belongs to the right.
        prefixes += [sum(priorities[:k]) for k in range(capacity)]
        for prefix in prefixes:
            if prefix >= tree.total:
                continue
            found = tree.find(prefix)
            assert found == linear_scan(priorities, prefix)
            assert priorities[found] > 0


def test_sum_tree_is_a_tree_of_sums():
    tree = SumTree(6)
    for i, p in enumerate([1.0, 0.0, 2.0, 3.0, 0.5, 4.0]):
        tree.set(i, p)
    nodes, base = tree._nodes, tree._leaf_base
    assert base == 8 and len(nodes) == 16                             # depth log2(8) = 3
    for k in range(1, base):
        assert nodes[k] == nodes[2 * k] + nodes[2 * k + 1]
    assert tree.total == 10.5 and tree.find(0.0) == 0 and tree.find(1.0) == 2 and tree.find(10.49) == 5
    assert tree.find(tree.total) == 5                                 # the end point lands on the last positive leaf
    tree.set(5, 0.0)
    assert tree.find(tree.total) == 4


def test_sum_tree_errors():
    with pytest.raises(ValueError, match="capacity must be a positive int, got 0"):
        SumTree(0)
    tree = SumTree(4)
    with pytest.raises(ValueError, match="every priority is zero"):
        tree.find(0.0)
    with pytest.raises(ValueError, match="priority must be finite and >= 0, got -1.0"):
        tree.set(0, -1.0)
    with pytest.raises(ValueError, match="priority must be finite and >= 0, got nan"):
        tree.set(0, float("nan"))
    with pytest.raises(IndexError, match=r"index 4 outside \[0, 4\)"):
        tree.set(4, 1.0)
    tree.set(1, 2.0)
    with pytest.raises(ValueError, match=r"prefix 3.0 outside \[0, total=2.0\)"):
        tree.find(3.0)


# -- episodes and replay ---------------------------------------------------------------------------


def make_episode(tag, length, action_dim=2):
    """observations[t] = (tag, t), so a sampled chunk tells where it came from."""
    obs = lucid.tensor([[float(tag), float(t)] for t in range(length)])
    return Episode(obs, lucid.zeros((length, action_dim)), lucid.tensor([float(t) for t in range(length)]),
                   lucid.ones((length,)))


def chunk_origins(batch):
    """(episode tag, start) of every chunk, after checking each is contiguous."""
    origins = []
    for chunk in batch.observations.tolist():
        tag, start = int(chunk[0][0]), int(chunk[0][1])
        assert chunk == [[float(tag), float(start + t)] for t in range(len(chunk))]
        origins.append((tag, start))
    return origins


def test_sequence_replay_capacity_and_sampling():
    replay = SequenceReplay(capacity=25)
    for tag, length in enumerate([10, 3, 10, 10]):
        replay.add(make_episode(tag, length))
    # 33 steps > 25: the oldest (10 steps) is dropped.
    assert len(replay) == 3 and replay.steps == 23
    assert [int(e.observations[0, 0].item()) for e in replay.episodes] == [1, 2, 3]
    lucid.manual_seed(0)
    batch = replay.sample(64, 4)
    assert tuple(batch.observations.shape) == (64, 4, 2) and tuple(batch.actions.shape) == (64, 4, 2)
    assert tuple(batch.rewards.shape) == (64, 4) and tuple(batch.discounts.shape) == (64, 4)
    origins = chunk_origins(batch)
    assert {tag for tag, _ in origins} == {2, 3}                      # the 3-step episode is too short
    assert all(0 <= start <= 6 for _, start in origins)
    lucid.manual_seed(0)
    assert chunk_origins(replay.sample(64, 4)) == origins            # lucid.manual_seed repeats draws
    big = SequenceReplay(capacity=5)
    big.add(make_episode(0, 8))                                       # the newest is kept even over capacity
    assert len(big) == 1 and big.steps == 8


def test_sequence_replay_draws_uniformly():
    replay = SequenceReplay()
    for tag in range(4):
        replay.add(make_episode(tag, 5))
    lucid.manual_seed(1)
    origins = chunk_origins(replay.sample(4000, 2))
    for tag in range(4):                                              # 1000 expected, sd ~27
        assert abs(sum(t == tag for t, _ in origins) - 1000) < 120
    for start in range(4):
        assert abs(sum(s == start for _, s in origins) - 1000) < 120


def test_replay_errors():
    replay = SequenceReplay()
    with pytest.raises(ValueError, match="capacity must be a positive int, got 0"):
        SequenceReplay(0)
    with pytest.raises(TypeError, match="add takes an Episode, got tuple"):
        replay.add((1, 2, 3, 4))
    with pytest.raises(ValueError, match="empty episode"):
        replay.add(make_episode(0, 0))
    bad = make_episode(0, 7)._replace(rewards=lucid.zeros((3,)))     # len() is steps, yet _replace works
    assert len(bad) == 7 and bad.rewards.shape[0] == 3 and len(Episode._fields) == 4
    with pytest.raises(ValueError, match="Episode.rewards has 3 steps but observations has 7"):
        replay.add(bad)
    replay.add(make_episode(0, 4))
    with pytest.raises(ValueError, match=r"no stored episode has 5 steps \(longest has 4, 1 stored\)"):
        replay.sample(2, 5)
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        replay.sample(0, 2)


# -- prioritized replay -----------------------------------------------------------------------------


def test_prioritized_priorities_and_weights_follow_the_formula():
    buffer = PrioritizedSequenceReplay(capacity=1000, alpha=0.7, beta=0.5, epsilon=0.01)
    for tag in range(5):
        buffer.add(make_episode(tag, 6))
    assert [buffer.priority(i) for i in range(5)] == [1.0] * 5        # new episodes: max priority (1)^alpha
    errors = [0.5, -2.0, 0.0, 1.0, 3.0]
    buffer.update_priorities(list(range(5)), errors)
    p_alpha = [(abs(e) + 0.01) ** 0.7 for e in errors]
    assert [buffer.priority(i) for i in range(5)] == pytest.approx(p_alpha)
    buffer.add(make_episode(5, 6))                                    # largest priority seen: 3.01
    assert buffer.priority(5) == pytest.approx(3.01 ** 0.7)
    p_alpha.append(3.01 ** 0.7)

    lucid.manual_seed(3)
    draws = 20000
    batch = buffer.sample_prioritized(draws, 3)
    assert isinstance(batch, PrioritizedBatch) and tuple(batch.episode.observations.shape) == (draws, 3, 2)
    assert [tag for tag, _ in chunk_origins(batch.episode)] == batch.indices
    total = sum(p_alpha)
    for i, p in enumerate(p_alpha):
        share = p / total
        observed = batch.indices.count(i) / draws
        assert abs(observed - share) < 4 * math.sqrt(share * (1 - share) / draws) + 1e-3
    raw = [(6 * p_alpha[i] / total) ** -0.5 for i in batch.indices]
    largest = max(raw)
    assert batch.weights.dtype == lucid.float32
    assert batch.weights.tolist() == pytest.approx([w / largest for w in raw], rel=1e-6)


def test_prioritized_alpha_zero_is_uniform_and_beta_anneals():
    buffer = PrioritizedSequenceReplay(alpha=0.0, beta=0.4)
    for tag in range(3):
        buffer.add(make_episode(tag, 4))
    buffer.update_priorities([0, 1, 2], [10.0, 0.0, 1.0])
    lucid.manual_seed(4)
    batch = buffer.sample_prioritized(300, 2)
    assert batch.weights.tolist() == [1.0] * 300
    assert all(abs(batch.indices.count(i) - 100) < 40 for i in range(3))
    buffer.anneal_beta(0.5)
    assert buffer.beta == pytest.approx(0.7)
    buffer.anneal_beta(1.0)
    assert buffer.beta == pytest.approx(1.0)


def test_prioritized_skips_short_episodes_and_keeps_priorities_through_eviction():
    buffer = PrioritizedSequenceReplay(capacity=55, alpha=1.0, beta=1.0, epsilon=1e-6)
    for tag in range(20):                                             # grows the tree past 16 leaves
        buffer.add(make_episode(tag, 3 if tag % 2 else 2))
    buffer.update_priorities(list(range(20)), [float(tag + 1) for tag in range(20)])
    for i, episode in enumerate(buffer.episodes):
        assert buffer.priority(i) == pytest.approx(float(episode.observations[0, 0].item()) + 1 + 1e-6)
    buffer.add(make_episode(20, 10))                                  # 60 steps > 55: evicts the oldest
    tags = [int(e.observations[0, 0].item()) for e in buffer.episodes]
    assert buffer.steps == 55 and tags[0] == 2 and tags[-1] == 20
    for i, tag in enumerate(tags[:-1]):
        assert buffer.priority(i) == pytest.approx(tag + 1 + 1e-6)   # each priority moved with its episode
    lucid.manual_seed(5)
    batch = buffer.sample_prioritized(3000, 3)
    drawn = [tag for tag, _ in chunk_origins(batch.episode)]
    assert all(tag % 2 == 1 or tag == 20 for tag in drawn)            # 2-step episodes are never drawn
    usable = [(i, t) for i, t in enumerate(tags) if t % 2 == 1 or t == 20]
    weights = {i: buffer.priority(i) for i, _ in usable}
    total = sum(weights.values())
    for i, tag in usable:
        assert abs(drawn.count(tag) / 3000 - weights[i] / total) < 0.03
    raw = [(len(usable) * weights[i] / total) ** -1.0 for i in batch.indices]
    largest = max(raw)
    assert batch.weights.tolist() == pytest.approx([w / largest for w in raw], rel=1e-6)


def test_prioritized_errors():
    with pytest.raises(ValueError, match="alpha must be >= 0.0, got -0.1"):
        PrioritizedSequenceReplay(alpha=-0.1)
    with pytest.raises(ValueError, match="epsilon must be > 0.0, got 0"):
        PrioritizedSequenceReplay(epsilon=0)
    buffer = PrioritizedSequenceReplay()
    buffer.add(make_episode(0, 4))
    with pytest.raises(ValueError, match="got 2 indices and 1 errors"):
        buffer.update_priorities([0, 0], [1.0])
    with pytest.raises(IndexError, match=r"episode index 3 outside \[0, 1\)"):
        buffer.update_priorities([3], [1.0])
    with pytest.raises(ValueError, match="fraction must be in \\[0, 1\\], got 1.5"):
        buffer.anneal_beta(1.5)
    with pytest.raises(ValueError, match="no stored episode has 9 steps"):
        buffer.sample_prioritized(1, 9)


# -- rollout --------------------------------------------------------------------------------------


class CountingEnv(Environment):
    """Observation [t]; reward t after step t; terminates after `end` steps (or truncates)."""

    def __init__(self, end, truncate=False):
        self.end, self.truncate, self.actions = end, truncate, []

    def reset(self):
        self.t = 0
        return lucid.tensor([0.0])

    def step(self, action):
        self.actions.append(action.tolist())
        self.t += 1
        over = self.t >= self.end
        return StepResult(lucid.tensor([float(self.t)]), float(self.t), over and not self.truncate,
                          over and self.truncate)


class CountingPolicy:
    """Action [10 * decision number]; records resets."""

    def __init__(self):
        self.resets, self.calls = 0, 0

    def reset(self):
        self.resets += 1

    def __call__(self, observation):
        self.calls += 1
        return lucid.tensor([10.0 * self.calls])


def test_rollout_alignment_and_action_repeat():
    env, policy = CountingEnv(5), CountingPolicy()
    episode, total = rollout(env, policy, action_repeat=2)
    assert policy.resets == 1 and policy.calls == 3
    assert env.actions == [[10.0], [10.0], [20.0], [20.0], [30.0]]  # each decision repeated twice
    assert len(episode) == 5 and total == 15.0
    assert episode.observations.tolist() == [[0.0], [1.0], [2.0], [3.0], [4.0]]
    assert episode.actions.tolist() == [[0.0], [10.0], [10.0], [20.0], [20.0]]   # actions[t] led to obs[t]
    assert episode.rewards.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert episode.discounts.tolist() == [1.0, 1.0, 1.0, 1.0, 0.0]  # terminated at the last step
    replay = SequenceReplay()
    replay.add(episode)                                               # ready for a buffer as is


def test_rollout_truncation_and_max_steps():
    episode, _ = rollout(CountingEnv(3, truncate=True), CountingPolicy())
    assert episode.discounts.tolist() == [1.0, 1.0, 1.0]              # truncation is not termination
    episode, total = rollout(CountingEnv(100), CountingPolicy(), max_steps=4)
    assert len(episode) == 4 and total == 10.0 and episode.discounts.tolist() == [1.0] * 4


def test_rollout_errors():
    with pytest.raises(ValueError, match="action_repeat must be a positive int, got 0"):
        rollout(CountingEnv(3), CountingPolicy(), action_repeat=0)
    with pytest.raises(ValueError, match="max_steps must be a positive int or None, got 0"):
        rollout(CountingEnv(3), CountingPolicy(), max_steps=0)
    with pytest.raises(TypeError, match="env must have reset\\(\\) and step\\(action\\) methods, got int"):
        rollout(3, CountingPolicy())
    with pytest.raises(TypeError, match="policy must be callable and have reset\\(\\)"):
        rollout(CountingEnv(3), lambda obs: obs)

    class Broken(CountingEnv):
        def step(self, action):
            return lucid.tensor([0.0])

    with pytest.raises(TypeError, match="env.step must return a StepResult"):
        rollout(Broken(3), CountingPolicy())


# -- policies -------------------------------------------------------------------------------------


def test_random_policy():
    assert isinstance(RandomPolicy(2), Policy) and isinstance(CountingEnv(1), Environment)
    lucid.manual_seed(6)
    actions = [RandomPolicy(3)(None).tolist() for _ in range(200)]
    flat = [a for action in actions for a in action]
    assert all(-1.0 <= a < 1.0 for a in flat) and min(flat) < -0.9 and max(flat) > 0.9
    lucid.manual_seed(6)
    assert RandomPolicy(3)(None).tolist() == actions[0]
    discrete = RandomPolicy(4, discrete=True)
    picks = [discrete(None).tolist() for _ in range(400)]
    assert all(sorted(p) == [0.0, 0.0, 0.0, 1.0] for p in picks)
    assert all(abs(sum(p[k] for p in picks) - 100) < 40 for k in range(4))
    with pytest.raises(ValueError, match="action_dim must be a positive int, got 0"):
        RandomPolicy(0)


class FakeRSSM:
    """Records its calls; the state is the running sum of embeddings and actions."""

    def __init__(self):
        self.calls = []

    def initial(self, batch_size, device="cpu"):
        self.calls.append(("initial", batch_size, device))
        return lucid.zeros((batch_size, 1))

    def posterior_step(self, state, previous_action, embed, sample=True):
        self.calls.append(("step", previous_action.tolist(), embed.tolist(), sample))
        posterior = state + embed.sum(dim=-1, keepdim=True) + previous_action.sum(dim=-1, keepdim=True)
        return None, posterior


def test_latent_policy_carries_the_belief():
    rssm = FakeRSSM()
    seen_shapes = []

    def encode(x):
        seen_shapes.append(tuple(x.shape))
        return x.reshape(x.shape[0], x.shape[1], -1)

    policy = LatentPolicy(encode, rssm, lambda s: lucid.cat([s, -s], dim=-1) * 0.5, action_dim=2)
    assert isinstance(policy, Policy)
    a1 = policy(lucid.tensor([[1.0]]))                                # state 1 -> action [0.5, -0.5]
    a2 = policy(lucid.tensor([[3.0]]))                                # state 1 + 3 + (0.5 - 0.5) = 4 -> clipped
    assert seen_shapes == [(1, 1, 1, 1), (1, 1, 1, 1)]
    assert a1.tolist() == [0.5, -0.5] and a2.tolist() == [1.0, -1.0]
    assert rssm.calls[0] == ("initial", 1, lucid.get_default_device().type)  # the observation's device
    assert rssm.calls[1] == ("step", [[0.0, 0.0]], [[1.0]], False)
    assert rssm.calls[2] == ("step", [[0.5, -0.5]], [[3.0]], False)   # the previous action is fed back
    policy.reset()
    policy(lucid.tensor([[1.0]]))
    assert rssm.calls[3][0] == "initial"                              # a new episode starts from the prior


def test_latent_policy_noise_and_errors():
    lucid.manual_seed(7)
    noisy = LatentPolicy(lambda x: x.reshape(1, 1, -1), FakeRSSM(), lambda s: lucid.zeros((1, 3)), 3, noise=0.3)
    values = [v for _ in range(100) for v in noisy(lucid.zeros((1,))).tolist()]
    assert all(-1.0 <= v <= 1.0 for v in values)
    assert 0.2 < math.sqrt(sum(v * v for v in values) / len(values)) < 0.4
    with pytest.raises(ValueError, match="noise must be a number >= 0, got -1"):
        LatentPolicy(lambda x: x, FakeRSSM(), lambda s: s, 2, noise=-1)
    with pytest.raises(TypeError, match="rssm must have a initial\\(\\) method"):
        LatentPolicy(lambda x: x, object(), lambda s: s, 2)
    wrong = LatentPolicy(lambda x: x.reshape(1, 1, -1), FakeRSSM(), lambda s: lucid.zeros((1, 5)), 2)
    with pytest.raises(ValueError, match=r"act returned shape \(1, 5\), expected \(1, 2\)"):
        wrong(lucid.zeros((1,)))
