"""Upstream Lucid's task presets: ready pipelines that describe themselves as a JSON-friendly
dict ({"preprocessor_type": name, "init_kwargs": {...}}) and are rebuilt from one
(TransformsPreset.from_dict / AutoTransformsPreset.from_dict), the way pretrained weights
carry their preprocessing. Each preset is a Transform: call it on an image tensor or a
typed sample.

Inputs are float images in [0, 1] (Normalize runs with max_pixel_value=1).
"""

import abc

from ._autoaugment import AutoAugment, POLICIES, RandAugment, TrivialAugmentWide
from ._base import BboxParams, Interpolation, Transform, as_interpolation, check_positive_int, check_probability
from ._composition import Compose
from ._geometric import (CenterCrop, HorizontalFlip, RandomResizedCrop, Resize, ResizeShortestEdge,
                         SmallestMaxSize)
from ._noise_dropout import RandomErasing
from ._photometric import ColorJitter, Normalize

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
_REGISTRY = {}


def register_preset(cls):
    """Class decorator: makes cls rebuildable from its preset_type."""
    if cls.preset_type in _REGISTRY and _REGISTRY[cls.preset_type] is not cls:
        raise ValueError(f"preset type {cls.preset_type!r} is already registered to "
                         f"{_REGISTRY[cls.preset_type].__qualname__}")
    _REGISTRY[cls.preset_type] = cls
    return cls


class TransformsPreset(Transform):
    """Base of the presets: a subclass sets preset_type, builds self.pipeline (a Compose) in
    __init__ from keyword arguments, and returns them from init_kwargs()."""
    preset_type = None
    _needs_reference = False

    @abc.abstractmethod
    def init_kwargs(self):
        """The keyword arguments that rebuild this preset (JSON-friendly values)."""

    def to_dict(self):
        return {"preprocessor_type": self.preset_type, "init_kwargs": self.init_kwargs()}

    @classmethod
    def from_dict(cls, cfg):
        """The preset described by cfg (as to_dict gives); on a subclass, cfg must name it."""
        if not isinstance(cfg, dict) or not isinstance(cfg.get("preprocessor_type"), str):
            raise ValueError(f"from_dict: expected {{'preprocessor_type': str, 'init_kwargs': dict}}, got {cfg!r}")
        kwargs = cfg.get("init_kwargs", {})
        if not isinstance(kwargs, dict):
            raise ValueError(f"from_dict: init_kwargs should be a dict, got {type(kwargs).__name__}")
        target = _REGISTRY.get(cfg["preprocessor_type"])
        if target is None:
            raise KeyError(f"unknown preset type {cfg['preprocessor_type']!r}; registered: {sorted(_REGISTRY)}")
        if cls is not TransformsPreset and target is not cls:
            raise ValueError(f"from_dict: {cls.__name__}.from_dict got a config for {target.__name__}")
        return target(**kwargs)

    def _apply_image(self, img, params):
        return self.pipeline(img)

    def _record_apply(self, inputs):
        return self.pipeline._record_apply(inputs)

    def _replay(self, inputs, record):
        return self.pipeline._replay(inputs, record)

    def __call__(self, inputs):
        return self.pipeline(inputs)

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.init_kwargs().items())})"


class AutoTransformsPreset:
    """Builds presets from their dicts, whatever their type (as Hugging Face's
    AutoImageProcessor)."""

    @staticmethod
    def from_dict(cfg):
        return TransformsPreset.from_dict(cfg)

    @staticmethod
    def registered():
        """The preset types from_dict knows, sorted."""
        return sorted(_REGISTRY)


def _stats(mean, std):
    return tuple(IMAGENET_MEAN if mean is None else mean), tuple(IMAGENET_STD if std is None else std)


def _interp_name(interpolation, where):
    return as_interpolation(interpolation, where).value


@register_preset
class ImageClassification(TransformsPreset):
    """Classification inference: SmallestMaxSize(resize_size), CenterCrop(crop_size),
    Normalize(mean, std) (ImageNet statistics by default)."""
    preset_type = "ImageClassification"

    def __init__(self, crop_size, *, resize_size=256, mean=None, std=None, interpolation=Interpolation.BILINEAR):
        super().__init__()
        self.crop_size = check_positive_int(crop_size, self.preset_type, "crop_size")
        self.resize_size = check_positive_int(resize_size, self.preset_type, "resize_size")
        self.mean, self.std = _stats(mean, std)
        self.interpolation = _interp_name(interpolation, self.preset_type)
        self.pipeline = Compose([SmallestMaxSize(self.resize_size, self.interpolation),
                                 CenterCrop(self.crop_size, self.crop_size),
                                 Normalize(self.mean, self.std, max_pixel_value=1.0)])

    def init_kwargs(self):
        return {"crop_size": self.crop_size, "resize_size": self.resize_size, "mean": list(self.mean),
                "std": list(self.std), "interpolation": self.interpolation}


_AUTO_AUGMENT = ("randaugment", "ra", "trivialaugmentwide", "ta_wide") + tuple(POLICIES)


@register_preset
class ImageClassificationAugment(TransformsPreset):
    """Classification training (torchvision's reference recipe): RandomResizedCrop(crop_size,
    scale, ratio), HorizontalFlip(hflip_prob), then auto_augment ("imagenet" / "cifar10" /
    "svhn" for AutoAugment, "ra" / "randaugment", "ta_wide" / "trivialaugmentwide") or, without
    it, ColorJitter(color_jitter) for brightness / contrast / saturation; Normalize(mean, std);
    RandomErasing(p=random_erasing) last."""
    preset_type = "ImageClassificationAugment"

    def __init__(self, crop_size, *, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), color_jitter=0.4, hflip_prob=0.5,
                 auto_augment=None, random_erasing=0.0, mean=None, std=None, interpolation=Interpolation.BILINEAR):
        super().__init__()
        where = self.preset_type
        self.crop_size = check_positive_int(crop_size, where, "crop_size")
        self.scale, self.ratio = tuple(scale), tuple(ratio)
        self.color_jitter = float(color_jitter)
        self.hflip_prob = check_probability(hflip_prob, where, "hflip_prob")
        if auto_augment is not None and auto_augment not in _AUTO_AUGMENT:
            raise ValueError(f"{where}: auto_augment should be None or one of {_AUTO_AUGMENT}, got {auto_augment!r}")
        self.auto_augment = auto_augment
        self.random_erasing = check_probability(random_erasing, where, "random_erasing")
        self.mean, self.std = _stats(mean, std)
        self.interpolation = _interp_name(interpolation, where)
        stages = [RandomResizedCrop(self.crop_size, self.crop_size, self.scale, self.ratio, self.interpolation)]
        if self.hflip_prob > 0:
            stages.append(HorizontalFlip(p=self.hflip_prob))
        if auto_augment in ("ra", "randaugment"):
            stages.append(RandAugment(interpolation=self.interpolation))
        elif auto_augment in ("ta_wide", "trivialaugmentwide"):
            stages.append(TrivialAugmentWide(interpolation=self.interpolation))
        elif auto_augment is not None:
            stages.append(AutoAugment(auto_augment, interpolation=self.interpolation))
        elif self.color_jitter > 0:
            stages.append(ColorJitter(self.color_jitter, self.color_jitter, self.color_jitter, 0.0, p=1.0))
        stages.append(Normalize(self.mean, self.std, max_pixel_value=1.0))
        if self.random_erasing > 0:
            stages.append(RandomErasing(p=self.random_erasing))
        self.pipeline = Compose(stages)

    def init_kwargs(self):
        return {"crop_size": self.crop_size, "scale": list(self.scale), "ratio": list(self.ratio),
                "color_jitter": self.color_jitter, "hflip_prob": self.hflip_prob, "auto_augment": self.auto_augment,
                "random_erasing": self.random_erasing, "mean": list(self.mean), "std": list(self.std),
                "interpolation": self.interpolation}


@register_preset
class Detection(TransformsPreset):
    """Detection: ResizeShortestEdge(min_size, max_size) (the shorter side to min_size, the
    longer at most max_size), Normalize(mean, std); boxes ride along and, through
    BboxParams(min_area, min_visibility), those left too small are dropped with their
    labels. Batching pads the varying sizes (in the collate function), as torchvision's
    detection models do."""
    preset_type = "Detection"

    def __init__(self, *, max_size=1333, min_size=800, min_area=1.0, min_visibility=0.0, mean=None, std=None,
                 interpolation=Interpolation.BILINEAR):
        super().__init__()
        self.max_size = check_positive_int(max_size, self.preset_type, "max_size")
        self.min_size = check_positive_int(min_size, self.preset_type, "min_size")
        self.min_area, self.min_visibility = float(min_area), float(min_visibility)
        self.mean, self.std = _stats(mean, std)
        self.interpolation = _interp_name(interpolation, self.preset_type)
        self.pipeline = Compose([ResizeShortestEdge(self.min_size, self.max_size, self.interpolation),
                                 Normalize(self.mean, self.std, max_pixel_value=1.0)],
                                bbox_params=BboxParams(min_area=self.min_area, min_visibility=self.min_visibility))

    def init_kwargs(self):
        return {"max_size": self.max_size, "min_size": self.min_size, "min_area": self.min_area,
                "min_visibility": self.min_visibility, "mean": list(self.mean), "std": list(self.std),
                "interpolation": self.interpolation}


@register_preset
class Segmentation(TransformsPreset):
    """Segmentation: SmallestMaxSize(resize_size) then CenterCrop(crop_size), or with
    stretch=True a plain Resize to crop_size x crop_size (aspect ratio not kept, nothing cut
    off); Normalize(mean, std) on the image. Masks follow with nearest sampling."""
    preset_type = "Segmentation"

    def __init__(self, crop_size, *, resize_size=520, mean=None, std=None, interpolation=Interpolation.BILINEAR,
                 stretch=False):
        super().__init__()
        self.crop_size = check_positive_int(crop_size, self.preset_type, "crop_size")
        self.resize_size = check_positive_int(resize_size, self.preset_type, "resize_size")
        self.mean, self.std = _stats(mean, std)
        self.interpolation = _interp_name(interpolation, self.preset_type)
        self.stretch = bool(stretch)
        geometry = [Resize(self.crop_size, self.crop_size, self.interpolation)] if self.stretch else [
            SmallestMaxSize(self.resize_size, self.interpolation), CenterCrop(self.crop_size, self.crop_size)]
        self.pipeline = Compose(geometry + [Normalize(self.mean, self.std, max_pixel_value=1.0)])

    def init_kwargs(self):
        return {"crop_size": self.crop_size, "resize_size": self.resize_size, "mean": list(self.mean),
                "std": list(self.std), "interpolation": self.interpolation, "stretch": self.stretch}


@register_preset
class Pose(ImageClassification):
    """Pose / keypoint inference: SmallestMaxSize(resize_size), CenterCrop(crop_size),
    Normalize(mean, std); keypoints ride along (extra columns unchanged)."""
    preset_type = "Pose"
