"""lucid.nn: neural-network building blocks, as torch.nn."""

from . import functional, init  # noqa: F401
from .parameter import Parameter, Buffer  # noqa: F401
from .modules import Module, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .modules.layers import *  # noqa: F401,F403
from .modules.activation import *  # noqa: F401,F403
from .modules.loss import *  # noqa: F401,F403
from .modules.conv import *  # noqa: F401,F403
from .modules.pooling import *  # noqa: F401,F403
