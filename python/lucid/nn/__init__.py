"""lucid.nn: neural-network building blocks, as torch.nn."""

from . import functional, init  # noqa: F401
from .parameter import Parameter, Buffer  # noqa: F401
from .modules import Module, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .modules.layers import *  # noqa: F401,F403
from .modules.activation import *  # noqa: F401,F403
from .modules.loss import *  # noqa: F401,F403
from .modules.batchnorm import *  # noqa: F401,F403
from .modules.sparse import *  # noqa: F401,F403
from .modules.dropout import *  # noqa: F401,F403
from .modules.normalization_seq import *  # noqa: F401,F403
from .modules.transformer import *  # noqa: F401,F403
from .modules.rnn import *  # noqa: F401,F403
from . import utils  # noqa: F401
from .modules.loss_seq import *  # noqa: F401,F403
from .modules.resample import *  # noqa: F401,F403
from .modules.padding import *  # noqa: F401,F403
from .modules.distance import *  # noqa: F401,F403
from .modules.conv import *  # noqa: F401,F403
from .modules.pooling import *  # noqa: F401,F403
