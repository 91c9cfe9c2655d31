"""torch.utils.hooks' handle: what every register_*_hook of modules and optimizers returns."""

from ..nn.modules.module import RemovableHandle

__all__ = ["RemovableHandle"]
