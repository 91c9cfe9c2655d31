"""lucid.nn: neural-network building blocks, as torch.nn."""

from . import functional, init  # noqa: F401
from .parameter import Parameter, Buffer  # noqa: F401
from .modules import *  # noqa: F401,F403
from . import utils  # noqa: F401
from . import parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401
