"""The layers of lucid.nn."""

from .module import Module  # noqa: F401
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .layers import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .normalization_seq import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .loss_seq import *  # noqa: F401,F403
from .resample import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
