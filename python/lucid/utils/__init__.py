"""lucid.utils: helpers around the core library (torch.utils's counterpart).

`lucid.utils.data` holds datasets, samplers and the DataLoader (also reachable as
`lucid.data`); `lucid.utils.datasets` the image datasets read from IDX files (MNIST,
Fashion-MNIST); `lucid.utils.transforms` torchvision's image transforms for tensors
and upstream Lucid's Albumentations-style ones (boxes, masks, keypoints, presets);
make_grid and save_image are torchvision.utils'; `lucid.utils.models` torchvision.models'
ResNet and VGG networks; `lucid.utils.checkpoint` activation checkpointing (a module, as
torch's, that can also be called, as upstream Lucid's function); upstream Lucid's
`lucid.utils.tokenizer` (text tokenizers) and `lucid.utils.rollout` (environments,
policies, replay buffers), loaded on first use (they add to import time and most
programs do not use them), as is `transforms`.
"""

from . import cache  # noqa: F401
from . import checkpoint  # noqa: F401
from . import data  # noqa: F401
from . import datasets  # noqa: F401
from . import models  # noqa: F401
from ._image_grid import make_grid, save_image  # noqa: F401


def __getattr__(name):
    if name in ("tokenizer", "rollout", "transforms", "tensorboard"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
