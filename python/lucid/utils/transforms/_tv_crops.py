"""Crops that choose their own windows, as torchvision: resized_crop, five_crop, ten_crop and
RandomResizedCrop, FiveCrop, TenCrop. They are built from transforms' crop / resize /
center_crop / flips, so they take tensor and PIL images alike (part of
lucid.utils.transforms, which imports this file once those are defined)."""

import math
import numbers
import warnings
from collections.abc import Sequence

import lucid
from ...nn import Module
from ._twins import TwinMeta, is_int, reject_typed_sample
from . import (InterpolationMode, _ALL_MODES, _interpolation, _setup_size, _uniform, center_crop, crop,
                         get_dimensions, hflip, resize, vflip)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR, antialias=True):
    """crop, then resize to size."""
    return resize(crop(img, top, left, height, width), size, interpolation, antialias=antialias)


def five_crop(img, size):
    """The four corner crops and the central crop of size ((h, w), or an int for a square),
    in the order top-left, top-right, bottom-left, bottom-right, centre."""
    crop_height, crop_width = _setup_size(size, "five_crop")
    _, image_height, image_width = get_dimensions(img)
    if crop_width > image_width or crop_height > image_height:
        raise ValueError(f"five_crop: requested crop size {(crop_height, crop_width)} is bigger than input size "
                         f"{(image_height, image_width)}")
    tl = crop(img, 0, 0, crop_height, crop_width)
    tr = crop(img, 0, image_width - crop_width, crop_height, crop_width)
    bl = crop(img, image_height - crop_height, 0, crop_height, crop_width)
    br = crop(img, image_height - crop_height, image_width - crop_width, crop_height, crop_width)
    return tl, tr, bl, br, center_crop(img, [crop_height, crop_width])


def ten_crop(img, size, vertical_flip=False):
    """five_crop of the image, then five_crop of its flip (horizontal, or vertical)."""
    size = _setup_size(size, "ten_crop")
    return five_crop(img, size) + five_crop(vflip(img) if vertical_flip else hflip(img), size)


class RandomResizedCrop(Module, metaclass=TwinMeta):
    """A crop of random area (scale: the share of the image) and aspect ratio (ratio, drawn
    log-uniformly), resized to size.

    Two forms: torchvision's RandomResizedCrop(size, scale, ratio, interpolation, antialias)
    and upstream Lucid's RandomResizedCrop(height, width, scale, ratio, interpolation, p),
    which moves masks / boxes / keypoints too; the upstream form is chosen by height= /
    width= / p= or by an int second argument (torchvision's second argument is scale).
    """

    @staticmethod
    def _upstream_call(args, kwargs):
        return bool({"height", "width", "p"} & set(kwargs)) or (len(args) >= 2 and is_int(args[1]))

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
        super().__init__()
        self.size = _setup_size(size, "RandomResizedCrop")
        for name, v in (("scale", scale), ("ratio", ratio)):
            if not isinstance(v, Sequence) or len(v) != 2 or not all(isinstance(x, numbers.Real) for x in v):
                raise TypeError(f"RandomResizedCrop: {name} should be a sequence of two numbers (min, max), got {v!r}")
        if ratio[0] <= 0:
            raise ValueError(f"RandomResizedCrop: ratio should be positive, got {ratio!r}")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)")
        # Checked against the image's kind in resize: PIL images take every mode.
        self.interpolation = _interpolation(interpolation, _ALL_MODES, "RandomResizedCrop")
        self.antialias = antialias
        self.scale = scale
        self.ratio = ratio

    @staticmethod
    def get_params(img, scale, ratio):
        """(top, left, height, width) of the crop: up to 10 draws of area and ratio until the
        window fits, else the central crop of the ratio nearest the image's."""
        _, height, width = get_dimensions(img)
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area = area * _uniform(scale[0], scale[1])
            aspect_ratio = math.exp(_uniform(log_ratio[0], log_ratio[1]))
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = lucid.randint(0, height - h + 1, size=(1,), device="cpu").item()
                j = lucid.randint(0, width - w + 1, size=(1,), device="cpu").item()
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            w, h = int(round(height * max(ratio))), height
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        reject_typed_sample(img, "RandomResizedCrop", "RandomResizedCrop(height, width, ...)")
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return resized_crop(img, i, j, h, w, self.size, self.interpolation, antialias=self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, interpolation={self.interpolation.value}, "
                f"antialias={self.antialias})")


class FiveCrop(Module):
    """five_crop: a tuple of the four corner crops and the central crop."""

    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, "FiveCrop")

    def forward(self, img):
        return five_crop(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class TenCrop(Module):
    """ten_crop: five_crop of the image and of its flip."""

    def __init__(self, size, vertical_flip=False):
        super().__init__()
        self.size = _setup_size(size, "TenCrop")
        self.vertical_flip = vertical_flip

    def forward(self, img):
        return ten_crop(img, self.size, self.vertical_flip)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, vertical_flip={self.vertical_flip})"
