"""Names that are both torchvision's and upstream Lucid's (Resize, CenterCrop, RandomCrop,
RandomResizedCrop, Normalize, ColorJitter): the public class is torchvision's; a call in
upstream's form (its keywords height= / width= / p= / max_pixel_value=, or positional
arguments torchvision's signature cannot take) builds the upstream-style transform instead.
Each class's docstring says which calls go where. isinstance(x, T.CenterCrop) holds for both
forms.
"""

import lucid
from ._base import is_typed_sample


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_plain_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class TwinMeta(type):
    """Metaclass of the torchvision classes with an upstream twin: routes upstream-form
    calls to the twin, and counts the twin's instances as instances."""

    def __call__(cls, *args, **kwargs):
        twin = cls.__dict__.get("_upstream_twin")
        if twin is not None and cls._upstream_call(args, kwargs):
            return twin(*args, **kwargs)
        return super().__call__(*args, **kwargs)

    def __instancecheck__(cls, obj):
        twin = cls.__dict__.get("_upstream_twin")
        return type.__instancecheck__(cls, obj) or (twin is not None and isinstance(obj, twin))


def reject_typed_sample(obj, where, upstream_form):
    """torchvision-form transforms take tensors and PIL images; typed samples need the
    upstream form, which moves masks / boxes / keypoints too."""
    if is_typed_sample(obj):
        raise TypeError(f"{where}: this is torchvision's form, which takes a tensor or PIL image, got a sample "
                        f"with Image / Mask / BoundingBoxes / Keypoints; use upstream's form {upstream_form}")


def images_of(obj, fn):
    """A typed sample with fn applied to its images (Image, or [C, H, W] / [B, C, H, W]
    tensors inside the sample), other targets unchanged."""
    from ._base import Image, map_sample

    def apply(leaf):
        if isinstance(leaf, Image):
            return Image(fn(leaf.data))
        if isinstance(leaf, lucid.Tensor) and leaf.ndim in (3, 4):
            return fn(leaf)
        return leaf
    return map_sample(obj, apply)
