"""make_grid and save_image, as torchvision.utils': a batch of images tiled into one
(C, H, W) image with padding between them, and that grid written to an image file.

save_image needs Pillow and NumPy, imported when it is called (`import lucid` imports
neither), as torchvision's.
"""

import math

import lucid

__all__ = ["make_grid", "save_image"]


def _normalize(img, low, high):
    img.clamp_(min=low, max=high)
    img.sub_(low).div_(max(high - low, 1e-5))


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    """A (C, H', W') image of the images in `tensor` ((B, C, H, W), or a list of (C, H, W)),
    `nrow` to a row with `padding` pixels of `pad_value` around each; one-channel images become
    three-channel. normalize=True maps `value_range` (default: the min and max, per image with
    scale_each=True) to [0, 1] first."""
    if not lucid.is_tensor(tensor):
        if isinstance(tensor, list):
            for t in tensor:
                if not lucid.is_tensor(t):
                    raise TypeError(f"tensor or list of tensors expected, got a list containing {type(t)}")
        else:
            raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if isinstance(tensor, list):
        tensor = lucid.stack(tensor, dim=0)

    if tensor.dim() == 2:  # one image, H x W
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:  # one image, C x H x W
        if tensor.size(0) == 1:
            tensor = lucid.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() != 4:
        raise ValueError(f"make_grid expects a 2-, 3- or 4-dimensional tensor, got {tensor.dim()} dimensions")
    if tensor.size(1) == 1:  # one-channel images
        tensor = lucid.cat((tensor, tensor, tensor), 1)

    if normalize is True:
        tensor = tensor.clone()  # normalised in place below; the caller's tensor stays
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")
        for t in (tensor if scale_each is True else [tensor]):
            low, high = value_range if value_range is not None else (float(t.min()), float(t.max()))
            _normalize(t, low, high)

    if tensor.size(0) == 1:
        return tensor.squeeze(0)

    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = tensor.new_full((tensor.size(1), height * ymaps + padding, width * xmaps + padding), pad_value)
    for k in range(nmaps):
        y, x = divmod(k, xmaps)
        grid.narrow(1, y * height + padding, height - padding).narrow(
            2, x * width + padding, width - padding).copy_(tensor[k])
    return grid


def save_image(tensor, fp, format=None, **kwargs):
    """Writes make_grid(tensor, **kwargs), values in [0, 1], as an 8-bit image to `fp` (a path
    or a file object; `format` as PIL's Image.save)."""
    from PIL import Image

    grid = make_grid(tensor, **kwargs)
    # + 0.5 after scaling to [0, 255]: round to the nearest integer, as torchvision
    ndarr = grid.detach().mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(dtype=lucid.uint8).cpu().numpy()
    Image.fromarray(ndarr).save(fp, format=format)
