"""lucid.utils.rollout: collecting experience for world models and other sequence learners
(upstream Lucid's package).

Lucid ships no environments; this package fixes the contract one implements
(`Environment`: reset() and step(action) -> `StepResult`), runs a `Policy` against it
(`rollout`, with action repeat and truncation kept apart from termination), and stores the
resulting `Episode`s for sampling contiguous chunks (`SequenceReplay`, and
`PrioritizedSequenceReplay` over a `SumTree`). `RandomPolicy` seeds a buffer; `LatentPolicy`
acts from an RSSM belief. All randomness comes from lucid's global generator, so
lucid.manual_seed repeats a run.

Modules: _env (StepResult, Episode, Environment), _policies, _driver (rollout), _sum_tree,
_replay (SequenceReplay), _prioritized (PrioritizedSequenceReplay, PrioritizedBatch).
"""

from ._driver import rollout
from ._env import Environment, Episode, StepResult
from ._policies import LatentPolicy, Policy, RandomPolicy
from ._prioritized import PrioritizedBatch, PrioritizedSequenceReplay
from ._replay import SequenceReplay
from ._sum_tree import SumTree

__all__ = [
    "Environment", "Episode", "StepResult", "SequenceReplay", "SumTree", "PrioritizedBatch",
    "PrioritizedSequenceReplay", "Policy", "RandomPolicy", "LatentPolicy", "rollout",
]
