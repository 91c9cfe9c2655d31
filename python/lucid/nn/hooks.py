"""lucid.nn.hooks (upstream Lucid's): the hook handle and the hooks every module runs,
which lucid.nn.modules.module keeps (torch's torch.nn.modules.module functions, and the
global load_state_dict hooks upstream Lucid adds)."""

from .modules.module import (RemovableHandle, register_module_forward_hook,  # noqa: F401
                             register_module_forward_pre_hook, register_module_full_backward_hook,
                             register_module_full_backward_pre_hook, register_module_load_state_dict_post_hook,
                             register_module_load_state_dict_pre_hook)

__all__ = ["RemovableHandle", "register_module_forward_hook", "register_module_forward_pre_hook",
           "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_load_state_dict_post_hook", "register_module_load_state_dict_pre_hook"]
