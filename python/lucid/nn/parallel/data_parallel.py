"""DataParallel and data_parallel (torch.nn.parallel.data_parallel).

Note [DataParallel on one device]
torch's DataParallel splits each batch over its device_ids, runs a replica of the module
on each and gathers the outputs. With no accelerator it keeps the module as it is and
forward is the module's forward; with one device it moves the module there, moves the
inputs there and returns the module's outputs as they come (output_device is not
consulted). lucid does the same. Replicas on several GPUs need broadcasting parameters and
reducing their gradients across devices, which lucid does not have yet: given several
device_ids, lucid warns and runs the whole batch on device_ids[0], then moves the outputs
to output_device. The results are those of the module on one device (a BatchNorm sees the
whole batch, not one chunk of it per replica).
"""

import warnings
from itertools import chain

from ... import gpu
from ..._device import device as _device
from ..._tensor import Tensor
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


def _device_index(d):
    """A GPU index from an int, a "gpu:N" / "cuda:N" string or a lucid.device (no index: 0,
    the GPU lucid uses for "gpu")."""
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    if isinstance(d, (str, _device)):
        d = _device(d)
        if d.type != "gpu":
            raise ValueError(f"Expected a non cpu device, but got: {d}")
        return d.index or 0
    raise TypeError(f"a device id must be an int, a device string or a lucid.device, but got {type(d).__name__}")


def _devices(device_ids, output_device):
    """(device_ids, output_device) as indices; None: every GPU, and the first of them."""
    if device_ids is None:
        device_ids = list(range(gpu.device_count()))
    device_ids = [_device_index(d) for d in device_ids]
    if not device_ids:
        raise RuntimeError("no available devices were found")
    for i in device_ids:
        if not 0 <= i < gpu.device_count():
            raise RuntimeError(f"DataParallel: device id {i} is not a GPU of this machine "
                               f"({gpu.device_count()} found)")
    output_device = device_ids[0] if output_device is None else _device_index(output_device)
    if len(device_ids) > 1:
        warnings.warn(f"DataParallel: lucid runs the module on one GPU (gpu:{device_ids[0]}) for now, not on "
                      f"each of device_ids={device_ids}; see Note [DataParallel on one device] in "
                      "lucid/nn/parallel/data_parallel.py", stacklevel=3)
    return device_ids, output_device


def _to(obj, device):
    """obj with every tensor in it (through tuples, named tuples, lists and dicts) moved to
    device, as torch's scatter to one device leaves it; anything else is passed as is."""
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to(v, device) for v in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to(v, device) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to(v, device)) for k, v in obj.items())
    return obj


def _check_on(module, src):
    for t in chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError(f"module must have its parameters and buffers on device {src} (device_ids[0]) "
                               f"but found one of them on device: {t.device}")


def _run(module, inputs, kwargs, device_ids, output_device):
    src = _device("gpu", device_ids[0])
    _check_on(module, src)
    out = module(*_to(inputs, src), **_to(kwargs, src))
    if len(device_ids) == 1:
        return out
    return _to(out, _device("gpu", output_device))


class DataParallel(Module):
    """DataParallel(module, device_ids=None, output_device=None, dim=0), as torch's: the
    wrapped module is `.module` (so state_dict keys start with "module."); see
    Note [DataParallel on one device]. dim is where torch would split the batch."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not gpu.is_available():
            # as torch without an accelerator: the module as it is, nothing else recorded
            self.module = module
            self.device_ids = []
            return
        self.dim = dim
        self.module = module
        self.device_ids, self.output_device = _devices(device_ids, output_device)
        self.src_device_obj = _device("gpu", self.device_ids[0])
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        return _run(self.module, inputs, kwargs, self.device_ids, self.output_device)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional DataParallel: module(*inputs, **module_kwargs) on device_ids[0], which
    must hold the module's parameters and buffers. As torch, it needs a GPU."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not gpu.is_available():
        raise RuntimeError("device type could not be determined")
    device_ids, output_device = _devices(device_ids, output_device)
    return _run(module, inputs, module_kwargs or {}, device_ids, output_device)
