"""lucid.utils.data: datasets, samplers and the DataLoader (torch.utils.data for lucid).

    from lucid.utils.data import DataLoader, TensorDataset

    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True, num_workers=2)
    for xb, yb in loader:
        ...

Modules: dataset (Dataset, IterableDataset and their combinations), sampler (index
orders and batches), distributed (DistributedSampler), dataloader (DataLoader);
_collate, _fetch, _worker, _worker_iter and _loader_iter are the DataLoader's parts;
_mix (Mixup / CutMix collate functions) and _ra_sampler (RASampler, repeated
augmentation) are upstream lucid's training-recipe extras.
"""

from ._collate import collate, default_collate, default_collate_fn_map, default_convert
from ._mix import CutMixCollator, MixupCollator, RandomMixupCutMixCollator
from ._ra_sampler import RASampler
from ._worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset,
                      Subset, TensorDataset, random_split)
from .distributed import DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "CutMixCollator", "DataLoader", "Dataset",
    "DistributedSampler", "IterableDataset", "MixupCollator", "RASampler",
    "RandomMixupCutMixCollator", "RandomSampler", "Sampler", "SequentialSampler",
    "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
    "WorkerInfo", "collate", "default_collate", "default_collate_fn_map", "default_convert",
    "get_worker_info", "random_split",
]
