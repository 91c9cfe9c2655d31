"""Mixup and CutMix as DataLoader collate functions (upstream lucid.utils.data._mix):
MixupCollator, CutMixCollator and RandomMixupCutMixCollator.

Each collator first builds the usual batch with default_collate from (image, label)
samples, turns the integer labels into float32 one-hot targets of width num_classes and
then, with probability p, mixes the batch with a random permutation of itself:

    loader = DataLoader(train_set, batch_size=64, shuffle=True,
                        collate_fn=MixupCollator(0.2, num_classes=10))
    for images, targets in loader:       # targets: float32 (B, num_classes), rows sum to 1
        loss = cross_entropy(model(images), targets)

A batch that is not mixed still gets one-hot targets, so the loop always sees the same
target shape and dtype. The randomness (the p gate, lambda ~ Beta(alpha, alpha), the
permutation, the CutMix box) comes from lucid's default generator, drawn on the host:
lucid.manual_seed makes a run reproducible, and the DataLoader reseeds it per worker."""

from __future__ import annotations

import math
import numbers

from ... import _dtype as D
from ..._creation import arange, tensor
from ..._gamma_samplers import _sample_dirichlet
from ..._random import rand, randint, randperm
from ..._tensor import Tensor
from ._collate import default_collate

__all__ = ["MixupCollator", "CutMixCollator", "RandomMixupCutMixCollator"]

_HOST = "cpu"  # where every draw is made, whatever device the batch lives on


# ---- argument checks ----------------------------------------------------------------------

def _check_real(value, name, owner):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{owner}: {name} should be a real number, but got "
                        f"{type(value).__name__}")
    return float(value)


def _check_alpha(alpha, name, owner):
    alpha = _check_real(alpha, name, owner)
    if not (alpha > 0 and math.isfinite(alpha)):  # (NaN fails alpha > 0)
        raise ValueError(f"{owner}: {name} should be a finite number > 0 (the Beta({name}, "
                         f"{name}) concentration), but got {name}={alpha}")
    return alpha


def _check_probability(value, name, owner):
    value = _check_real(value, name, owner)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{owner}: {name} should be a probability in [0, 1], but got "
                         f"{name}={value}")
    return value


def _check_num_classes(num_classes, owner):
    if isinstance(num_classes, bool) or not isinstance(num_classes, numbers.Integral):
        raise TypeError(f"{owner}: num_classes should be an int, but got "
                        f"{type(num_classes).__name__}")
    if num_classes < 1:
        raise ValueError(f"{owner}: num_classes should be >= 1, but got "
                         f"num_classes={num_classes}")
    return int(num_classes)


# ---- the batch ----------------------------------------------------------------------------

def _is_integer_dtype(dtype):
    return not (dtype.is_floating_point or dtype.is_complex or dtype is D.bool)


def _collate_pairs(batch, owner, min_image_dim):
    """default_collate(batch) as (images, labels): a (B, ...) tensor and int64 (B,)."""
    collated = default_collate(batch)
    if not isinstance(collated, (list, tuple)) or len(collated) != 2:
        raise TypeError(f"{owner} expects each sample to be an (image, label) pair, but the "
                        f"collated batch is a {type(collated).__name__}"
                        + (f" of {len(collated)} fields" if isinstance(collated, (list, tuple))
                           else ""))
    images, labels = collated
    if not isinstance(images, Tensor) or not isinstance(labels, Tensor):
        raise TypeError(f"{owner} expects each sample to be an (image tensor, integer label) "
                        f"pair; the collated batch has images={type(images).__name__}, "
                        f"labels={type(labels).__name__}")
    if images.ndim < min_image_dim:
        raise ValueError(f"{owner} expects images of at least {min_image_dim - 1} dimensions "
                         f"per sample (the last two being height and width), but the batch "
                         f"has shape {tuple(images.shape)}")
    if labels.ndim != 1 or not _is_integer_dtype(labels.dtype):
        raise TypeError(f"{owner} expects each label to be one integer class index, but the "
                        f"collated labels have dtype {labels.dtype} and shape "
                        f"{tuple(labels.shape)}")
    return images, labels.long()


def _one_hot(labels, num_classes, owner):
    """float32 (B, num_classes) one-hot rows of int64 (B,) labels."""
    if labels.numel() > 0:
        low, high = int(labels.min()), int(labels.max())
        if low < 0 or high >= num_classes:
            bad = low if low < 0 else high
            raise ValueError(f"{owner}: labels should be class indices in [0, {num_classes}) "
                             f"(num_classes={num_classes}), but got label {bad}")
    classes = arange(num_classes, dtype=D.int64, device=labels.device)
    return (labels.unsqueeze(-1) == classes).to(D.float32)


# ---- the draws ----------------------------------------------------------------------------

def _uniform():
    """One uniform float in [0, 1) from lucid's default generator."""
    return rand(1, dtype=D.float64, device=_HOST).item()


def _beta(alpha):
    """One lambda ~ Beta(alpha, alpha): the first coordinate of a Dirichlet(alpha, alpha)."""
    concentration = tensor([alpha, alpha], dtype=D.float64, device=_HOST)
    return _sample_dirichlet(concentration)[0].item()


def _permutation(n, device):
    return randperm(n, device=_HOST).to(device)


def _blend(lam, a, b):
    """lam * a + (1 - lam) * b."""
    return a * lam + b * (1.0 - lam)


def _mixup(images, targets, alpha):
    lam = _beta(alpha)
    perm = _permutation(images.shape[0], images.device)
    mixed_targets = _blend(lam, targets, targets[perm.to(targets.device)])
    return _blend(lam, images, images[perm]), mixed_targets


def _cutmix_box(height, width, lam):
    """(y1, y2, x1, x2) of a box of about (1 - lam) of the image around a uniform centre,
    clipped to the image (CutMix's rand_bbox); None when the box has no side."""
    ratio = math.sqrt(1.0 - lam)
    cut_h, cut_w = int(height * ratio), int(width * ratio)
    if cut_h == 0 or cut_w == 0:
        return None
    cx = randint(0, width, (1,), device=_HOST).item()
    cy = randint(0, height, (1,), device=_HOST).item()
    return (max(cy - cut_h // 2, 0), min(cy + cut_h // 2, height),
            max(cx - cut_w // 2, 0), min(cx + cut_w // 2, width))


def _cutmix(images, targets, alpha):
    height, width = images.shape[-2], images.shape[-1]
    box = _cutmix_box(height, width, _beta(alpha))
    if box is None:  # the box rounds to nothing: nothing to paste this batch
        return images, targets
    y1, y2, x1, x2 = box
    # lambda from the clipped box's actual area, so targets match the pixels (CutMix Eq. 1).
    lam = 1.0 - (y2 - y1) * (x2 - x1) / float(height * width)
    perm = _permutation(images.shape[0], images.device)
    rows = arange(height, device=images.device)
    cols = arange(width, device=images.device)
    inside = (((rows >= y1) & (rows < y2)).unsqueeze(-1)
              & ((cols >= x1) & (cols < x2)).unsqueeze(0))  # (H, W), broadcast over B, C
    mixed = images[perm].where(inside, images)
    return mixed, _blend(lam, targets, targets[perm.to(targets.device)])


# ---- the collators ------------------------------------------------------------------------

class _BatchMix:
    """What MixupCollator and CutMixCollator share: their arguments, the p gate, the
    collate and one-hot steps; `_mix(images, targets, alpha)` is the mixing itself, and
    `_image_dims` the fewest dims an image may have."""

    _image_dims = 1

    def __init__(self, alpha, num_classes, p):
        owner = type(self).__name__
        self.alpha = _check_alpha(alpha, "alpha", owner)
        self.num_classes = _check_num_classes(num_classes, owner)
        self.p = _check_probability(p, "p", owner)

    def __call__(self, batch):
        owner = type(self).__name__
        images, labels = _collate_pairs(batch, owner, self._image_dims)
        targets = _one_hot(labels, self.num_classes, owner)
        if _uniform() >= self.p:
            return images, targets
        return self._mix(images, targets, self.alpha)

    def __repr__(self):
        return (f"{type(self).__name__}(alpha={self.alpha}, num_classes={self.num_classes}, "
                f"p={self.p})")


class MixupCollator(_BatchMix):
    """Mixup (Zhang et al., 2018) as a collate_fn: with probability p, a batch (x, y) with
    one-hot y becomes (lam * x + (1 - lam) * x[perm], lam * y + (1 - lam) * y[perm]) for
    lam ~ Beta(alpha, alpha) and perm a random permutation of the batch; otherwise
    (x, one_hot(y)). Returns the (images, targets) pair, targets float32 (B, num_classes).

    alpha: the Beta concentration (0.2 is the usual ImageNet value, 1.0 for CIFAR).
    num_classes: the width of the targets; labels must lie in [0, num_classes).
    p: the probability that a batch is mixed."""

    _mix = staticmethod(_mixup)

    def __init__(self, alpha=0.2, *, num_classes, p=1.0):
        super().__init__(alpha, num_classes, p)


class CutMixCollator(_BatchMix):
    """CutMix (Yun et al., 2019) as a collate_fn: with probability p, draw
    lam ~ Beta(alpha, alpha) and a box of about (1 - lam) of the image (sides
    sqrt(1 - lam) * H and W, centred uniformly, clipped to the image), and paste that box
    of x[perm] into every image of the batch; the targets are lam' * y + (1 - lam') * y[perm]
    with lam' = 1 - (box area) / (H * W), the lambda of the clipped box. Images are
    (B, ..., H, W); returns the (images, targets) pair, targets float32 (B, num_classes).

    alpha: the Beta concentration (1.0, a uniform lambda, is the usual value).
    num_classes: the width of the targets; labels must lie in [0, num_classes).
    p: the probability that a batch is mixed."""

    _mix = staticmethod(_cutmix)
    _image_dims = 3

    def __init__(self, alpha=1.0, *, num_classes, p=1.0):
        super().__init__(alpha, num_classes, p)


class RandomMixupCutMixCollator:
    """Mixup or CutMix, chosen per batch: with probability p the batch is mixed, by
    CutMix (alpha = cutmix_alpha) with probability switch_prob and otherwise by Mixup
    (alpha = mixup_alpha); an unmixed batch gets one-hot targets. Images are
    (B, ..., H, W); returns the (images, targets) pair, targets float32 (B, num_classes)."""

    def __init__(self, *, mixup_alpha=0.2, cutmix_alpha=1.0, num_classes, p=1.0,
                 switch_prob=0.5):
        owner = type(self).__name__
        self.p = _check_probability(p, "p", owner)
        self.switch_prob = _check_probability(switch_prob, "switch_prob", owner)
        self.mixup_alpha = _check_alpha(mixup_alpha, "mixup_alpha", owner)
        self.cutmix_alpha = _check_alpha(cutmix_alpha, "cutmix_alpha", owner)
        self.num_classes = _check_num_classes(num_classes, owner)
        # The two policies, as upstream exposes them (each always fires once chosen).
        self.mixup = MixupCollator(self.mixup_alpha, num_classes=self.num_classes, p=1.0)
        self.cutmix = CutMixCollator(self.cutmix_alpha, num_classes=self.num_classes, p=1.0)

    def __call__(self, batch):
        owner = type(self).__name__
        images, labels = _collate_pairs(batch, owner, 3)
        targets = _one_hot(labels, self.num_classes, owner)
        if _uniform() >= self.p:
            return images, targets
        if _uniform() < self.switch_prob:
            return _cutmix(images, targets, self.cutmix_alpha)
        return _mixup(images, targets, self.mixup_alpha)

    def __repr__(self):
        return (f"{type(self).__name__}(mixup_alpha={self.mixup_alpha}, "
                f"cutmix_alpha={self.cutmix_alpha}, num_classes={self.num_classes}, "
                f"p={self.p}, switch_prob={self.switch_prob})")
