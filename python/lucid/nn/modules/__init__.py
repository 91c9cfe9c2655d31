"""The layers of lucid.nn, in torch.nn.modules' files: each class lives where torch's does
(lucid.nn.modules.linear.Linear is torch.nn.modules.linear.Linear's counterpart), so code and
pickles that name a layer by its torch path find it. `__all__` joins the files' lists so that
`from .modules import *` brings the classes and not the submodules (nn.modules.utils would
otherwise shadow nn.utils)."""

from . import (activation, adaptive, attention, batchnorm, channelshuffle, container, conv, distance, dropout,
               flatten, fold, instancenorm, lazy, linear, loss, lucid_layers, module, normalization, padding,
               pixelshuffle, pooling, positional, rnn, sparse, transformer, upsampling, utils)
from .activation import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .lucid_layers import *  # noqa: F401,F403
from .module import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .positional import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403

__all__ = [name for file in (module, activation, adaptive, attention, batchnorm, channelshuffle, container, conv,
                             distance, dropout, flatten, fold, instancenorm, linear, loss, lucid_layers,
                             normalization, padding, pixelshuffle, pooling, positional, rnn, sparse, transformer,
                             upsampling)
           for name in file.__all__]

MultilabelMarginLoss = loss.MultiLabelMarginLoss  # (upstream Lucid's spelling; also at lucid.nn)
