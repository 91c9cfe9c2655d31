"""lucid.nn.parallel, as torch.nn.parallel: DataParallel and data_parallel run a module on one
device (what torch does with no accelerator or one GPU); DistributedDataParallel is here so
that programs import it, and refuses to construct until lucid.distributed exists."""

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["data_parallel", "DataParallel", "DistributedDataParallel"]
