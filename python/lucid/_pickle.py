"""Pickling of tensors: a tensor travels as its bytes in logical (row-major) order with
its dtype, shape, device and autograd flags, so it survives pickle, multiprocessing
queues (DataLoader workers) and lucid.save. The rebuilt tensor is a leaf with its own
memory; its graph history, like PyTorch's, does not travel."""

from . import _dtype as D


def reduce_tensor(t):
    """(callable, args) for Tensor.__reduce_ex__."""
    return _rebuild_tensor, (bytes(t.detach().to_bytes()), t.dtype._name, tuple(t.shape), str(t.device),
                             bool(t.requires_grad), bool(getattr(t, "_is_param", False)))


def _rebuild_tensor(data, dtype, shape, device, requires_grad, is_param):
    import lucid

    dt = D._BY_NAME.get(dtype) if isinstance(dtype, str) else None
    if dt is None:
        raise ValueError(f"cannot rebuild a tensor of unknown dtype {dtype!r}")
    numel = 1
    for s in shape:
        numel *= s
    if len(data) != numel * dt.itemsize:
        raise ValueError(f"cannot rebuild a tensor of shape {tuple(shape)} and dtype {dtype} from "
                         f"{len(data)} bytes (expected {numel * dt.itemsize})")
    # the bytes on the CPU (whatever the default device), then where they were saved from
    t = lucid.frombuffer(bytearray(data), dtype=dt).reshape(shape) if numel else lucid.empty(shape, dtype=dt,
                                                                                              device="cpu")
    if device != "cpu":
        t = t.to(device)
    if is_param:
        return lucid.nn.Parameter(t, requires_grad=requires_grad)
    return t.requires_grad_(requires_grad) if requires_grad else t
