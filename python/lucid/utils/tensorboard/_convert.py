"""Turning what users log (lucid tensors, Python numbers, NumPy arrays) into lucid
tensors on the CPU, the one form the summary builders work on.

NumPy is never imported here: an array can only reach us if the caller imported
NumPy already, so it is looked up in sys.modules.
"""

import numbers
import sys

import lucid


def _numpy():
    return sys.modules.get("numpy")


def to_tensor(value):
    """A detached CPU lucid tensor holding `value` (a number becomes a 1-element
    tensor, as torch's make_np makes a 1-element array)."""
    if isinstance(value, lucid.Tensor):
        return value.detach().cpu()
    np = _numpy()
    if np is not None and isinstance(value, np.ndarray):
        return lucid.as_tensor(np.ascontiguousarray(value), device="cpu")
    if np is not None and isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, numbers.Number) and not isinstance(value, complex):
        return lucid.tensor([value], device="cpu")
    raise NotImplementedError(
        f"Got {type(value)}, but a lucid tensor, NumPy array or Python number is expected.")


def to_float(value):
    """The single value of a one-element input, as a Python float (torch squeezes
    and requires 0 dimensions; a one-element tensor of any shape squeezes to that).
    Numbers skip the tensor, which would round them to float32."""
    np = _numpy()
    if np is not None and isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, numbers.Real):
        return float(value)
    flat = to_tensor(value).reshape(-1)
    if flat.numel() != 1:
        raise AssertionError(
            f"Tensor should contain one element (0 dimensions). Was given size: "
            f"{flat.numel()} and {len(to_tensor(value).shape)} dimensions.")
    return float(flat.item())


def to_hwc_uint8(value, dataformats):
    """torch's image(): reorder to HWC (grayscale to 3 channels, a batch tiled into a
    grid of 8 columns), then scale floats by 255 (uint8 kept) and clip to [0, 255]."""
    image = to_tensor(value)
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt):
        raise AssertionError(
            f"You can not use the same dimension shorthand twice. input_format: {dataformats}")
    if len(image.shape) != len(fmt):
        raise AssertionError(
            f"size of input tensor and input format are different. tensor shape: "
            f"{tuple(image.shape)}, input_format: {dataformats}")
    if len(fmt) == 4:
        image = _grid_chw(image.permute(*[fmt.find(c) for c in "NCHW"])).permute(1, 2, 0)
    elif len(fmt) == 3:
        image = image.permute(*[fmt.find(c) for c in "HWC"])
        if image.shape[2] == 1:
            image = lucid.cat([image, image, image], 2)
    elif len(fmt) == 2:
        image = image.permute(*[fmt.find(c) for c in "HW"])
        image = lucid.stack([image, image, image], 2)
    else:
        raise ValueError(f"dataformats must have 2, 3 or 4 letters, got {dataformats!r}")
    if image.dtype != lucid.uint8:
        # Same arithmetic as torch: float32 multiply, clip, truncating cast.
        image = (image.to(lucid.float32) * 255).clamp(0, 255).to(lucid.uint8)
    return image.contiguous()


def _grid_chw(batch, ncols=8):
    """torch.utils.tensorboard's make_grid: N images side by side, 8 per row, no padding."""
    if batch.shape[1] == 1:
        batch = lucid.cat([batch, batch, batch], 1)
    if batch.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    count, _, height, width = batch.shape
    ncols = min(count, ncols)
    nrows = -(-count // ncols)
    canvas = lucid.zeros(3, height * nrows, width * ncols, dtype=batch.dtype, device=batch.device)
    for i in range(count):
        y, x = divmod(i, ncols)
        canvas[:, y * height:(y + 1) * height, x * width:(x + 1) * width] = batch[i]
    return canvas
