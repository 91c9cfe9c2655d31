"""torch.nn.utils.skip_init: a module built without spending time on its initial values."""

import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) whose parameters and buffers hold unspecified values, to
    be filled by the caller (a checkpoint's). torch builds it on the meta device and then
    allocates; lucid has no meta device, so it builds the module on the CPU in the default
    way and moves it to `device`: the contract (shapes, dtypes, device; values unspecified)
    is torch's."""
    if not isinstance(module_cls, type):
        raise RuntimeError(f"Expected a Module class, but got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs).to(device)
