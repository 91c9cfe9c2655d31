"""lucid.nn: neural-network building blocks, as torch.nn."""

from . import functional, init  # noqa: F401
from .parameter import (Buffer, Parameter, UninitializedBuffer, UninitializedParameter,  # noqa: F401
                        UninitializedParameterWarning)
from .modules import *  # noqa: F401,F403
# the hooks every module runs: torch.nn.modules.module's functions, upstream Lucid's lucid.nn names
from .modules.module import (register_module_buffer_registration_hook, register_module_forward_hook,  # noqa: F401
                             register_module_forward_pre_hook, register_module_full_backward_hook,
                             register_module_full_backward_pre_hook, register_module_load_state_dict_post_hook,
                             register_module_load_state_dict_pre_hook, register_module_module_registration_hook,
                             register_module_parameter_registration_hook)
from . import attention, hooks, utils  # noqa: F401
from .hooks import RemovableHandle  # noqa: F401  (upstream Lucid's place)
from .modules import MultilabelMarginLoss  # noqa: F401,E402  (upstream Lucid's spelling)
from . import parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401


def __getattr__(name):
    # upstream's quantization layers (lucid.nn.quantized / qat / intrinsic) load on first
    # use, so `import lucid` does not pay for them.
    if name in ("quantized", "qat", "intrinsic"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
