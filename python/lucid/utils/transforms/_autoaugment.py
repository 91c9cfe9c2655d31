"""Learned / random augmentation policies: AutoAugment (Cubuk et al. 2019), RandAugment
(Cubuk et al. 2020) and TrivialAugmentWide (Muller & Hutter 2021), with torchvision's
operations and magnitude tables, on float images [C, H, W] / [B, C, H, W] in [0, 1].

Like torchvision's (and upstream Lucid's), they change the image only, even for the
geometric operations (shear, translate, rotate); masks, boxes and keypoints pass through.
"""

import math

import lucid
from . import _functional_color as FC
from ._base import PhotometricTransform, as_interpolation, check_positive_int, is_number, rand, randint
from ._functional_warp import affine_matrix, rotation_matrix, warp_affine
from ._tv_color import adjust_brightness, adjust_contrast, adjust_saturation

# The operations RandAugment and TrivialAugmentWide draw from (torchvision's space).
OPS = ("Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color", "Contrast",
       "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize")
_SIGNED = {"ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color", "Contrast", "Sharpness"}
_NO_MAGNITUDE = {"Identity", "AutoContrast", "Equalize", "Invert"}


def magnitudes(op, bins, height, width, wide=False):
    """The magnitude table of op over bins bins (None for operations without one), as
    torchvision's augmentation spaces (wide: TrivialAugmentWide's)."""
    if op in _NO_MAGNITUDE:
        return None

    def linspace(top):
        return [top * i / (bins - 1) for i in range(bins)]
    if op in ("ShearX", "ShearY"):
        return linspace(0.99 if wide else 0.3)
    if op in ("TranslateX", "TranslateY"):
        return linspace(32.0 if wide else 150.0 / 331.0 * (width if op == "TranslateX" else height))
    if op == "Rotate":
        return linspace(135.0 if wide else 30.0)
    if op in ("Brightness", "Color", "Contrast", "Sharpness"):
        return linspace(0.99 if wide else 0.9)
    if op == "Posterize":
        return [8 - int(round(i / ((bins - 1) / (6 if wide else 4)))) for i in range(bins)]
    if op == "Solarize":
        return linspace(1.0)[::-1]
    raise ValueError(f"unknown augmentation operation {op!r}")


def _warp(img, matrix, interpolation, fill):
    """img warped by matrix with a constant fill (one value, or one per channel)."""
    h, w = img.shape[-2], img.shape[-1]
    if is_number(fill):
        return warp_affine(img, matrix, (h, w), mode=interpolation, fill=float(fill))
    values = lucid.tensor(list(fill), dtype=img.dtype, device=img.device).reshape(-1, 1, 1)
    inside = warp_affine(lucid.ones_like(img[..., :1, :, :]), matrix, (h, w), mode=interpolation)
    return warp_affine(img, matrix, (h, w), mode=interpolation) + values * (1 - inside)


def apply_op(img, op, magnitude, interpolation, fill):
    """img after operation op with (signed) magnitude, as torchvision's _apply_op: shears and
    translations about the top-left corner / in whole pixels, rotations about the centre
    (counter-clockwise), colour ops with factor 1 + magnitude."""
    h, w = img.shape[-2], img.shape[-1]
    if op == "Identity":
        return img
    if op in ("ShearX", "ShearY"):
        # x' = x - m y (or y' = y - m x) with the origin at the image's top-left corner, which
        # is pixel-index coordinate -0.5.
        deg = -math.degrees(math.atan(magnitude))
        m = affine_matrix(cx=-0.5, cy=-0.5, shear_x_deg=deg if op == "ShearX" else 0.0,
                          shear_y_deg=deg if op == "ShearY" else 0.0)
        return _warp(img, m, interpolation, fill)
    if op in ("TranslateX", "TranslateY"):
        shift = float(int(magnitude))
        m = [[1.0, 0.0, shift if op == "TranslateX" else 0.0], [0.0, 1.0, shift if op == "TranslateY" else 0.0],
             [0.0, 0.0, 1.0]]
        return _warp(img, m, interpolation, fill)
    if op == "Rotate":
        return _warp(img, rotation_matrix(magnitude, (w - 1) / 2, (h - 1) / 2), interpolation, fill)
    if op == "Brightness":
        return adjust_brightness(img, 1.0 + magnitude)
    if op == "Color":
        return adjust_saturation(img, 1.0 + magnitude)
    if op == "Contrast":
        return adjust_contrast(img, 1.0 + magnitude)
    if op == "Sharpness":
        return FC.adjust_sharpness(img, 1.0 + magnitude)
    if op == "Posterize":
        return FC.posterize(img, int(magnitude))
    if op == "Solarize":
        return FC.solarize(img, magnitude)
    if op == "AutoContrast":
        return FC.autocontrast(img)
    if op == "Equalize":
        return FC.equalize(img)
    if op == "Invert":
        return FC.invert(img)
    raise ValueError(f"unknown augmentation operation {op!r}")


def _check_fill(fill, where):
    if not is_number(fill) and not (isinstance(fill, (tuple, list)) and fill and all(is_number(f) for f in fill)):
        raise TypeError(f"{where}: fill should be a number or one number per channel, got {fill!r}")
    return fill


class _Policy(PhotometricTransform):
    """Base: params = the list of (operation, signed magnitude) to apply in order."""

    def _init_policy(self, num_magnitude_bins, interpolation, fill):
        if not isinstance(num_magnitude_bins, int) or isinstance(num_magnitude_bins, bool) or num_magnitude_bins < 2:
            raise ValueError(f"{type(self).__name__}: num_magnitude_bins should be an int >= 2, got "
                             f"{num_magnitude_bins!r}")
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = as_interpolation(interpolation, type(self).__name__)
        self.fill = _check_fill(fill, type(self).__name__)

    def _signed(self, op, table, index):
        if table is None:
            return 0.0
        value = float(table[index])
        return -value if op in _SIGNED and randint(0, 2) else value

    def _apply_image(self, img, ops):
        for op, magnitude in ops:
            img = apply_op(img, op, magnitude, self.interpolation, self.fill)
        return img

    def _policy_repr(self):
        return (f"num_magnitude_bins={self.num_magnitude_bins}, interpolation={self.interpolation.value!r}, "
                f"fill={self.fill}, p={self.p}")


class TrivialAugmentWide(_Policy):
    """One operation, uniform over torchvision's 14, with a magnitude uniform over
    num_magnitude_bins bins of the wide space (and a random sign for symmetric ones)."""

    def __init__(self, num_magnitude_bins=31, *, interpolation="bilinear", fill=0.0, p=1.0):
        super().__init__(p=p)
        self._init_policy(num_magnitude_bins, interpolation, fill)

    def make_params(self, img):
        op = OPS[randint(0, len(OPS))]
        table = magnitudes(op, self.num_magnitude_bins, img.shape[-2], img.shape[-1], wide=True)
        return [(op, self._signed(op, table, randint(0, self.num_magnitude_bins)))]

    def _args_repr(self):
        return self._policy_repr()


class RandAugment(_Policy):
    """num_ops operations drawn uniformly (with replacement) from torchvision's 14, all at
    magnitude bin magnitude of num_magnitude_bins (symmetric ones with a random sign)."""

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31, *, interpolation="bilinear", fill=0.0, p=1.0):
        super().__init__(p=p)
        self._init_policy(num_magnitude_bins, interpolation, fill)
        self.num_ops = check_positive_int(num_ops, "RandAugment", "num_ops")
        if not isinstance(magnitude, int) or isinstance(magnitude, bool) or not 0 <= magnitude < num_magnitude_bins:
            raise ValueError(f"RandAugment: magnitude should be an int in [0, {num_magnitude_bins}), got {magnitude!r}")
        self.magnitude = magnitude

    def make_params(self, img):
        ops = []
        for _ in range(self.num_ops):
            op = OPS[randint(0, len(OPS))]
            table = magnitudes(op, self.num_magnitude_bins, img.shape[-2], img.shape[-1])
            ops.append((op, self._signed(op, table, self.magnitude)))
        return ops

    def _args_repr(self):
        return f"num_ops={self.num_ops}, magnitude={self.magnitude}, {self._policy_repr()}"


# The policies of the AutoAugment paper (as torchvision ships them): 25 sub-policies of two
# "operation probability magnitude-bin" steps each ("-" for operations without magnitude).
_POLICY_TEXT = {
    "imagenet": """
        Posterize .4 8, Rotate .6 9 / Solarize .6 5, AutoContrast .6 - / Equalize .8 -, Equalize .6 -
        Posterize .6 7, Posterize .6 6 / Equalize .4 -, Solarize .2 4 / Equalize .4 -, Rotate .8 8
        Solarize .6 3, Equalize .6 - / Posterize .8 5, Equalize 1 - / Rotate .2 3, Solarize .6 8
        Equalize .6 -, Posterize .4 6 / Rotate .8 8, Color .4 0 / Rotate .4 9, Equalize .6 -
        Equalize 0 -, Equalize .8 - / Invert .6 -, Equalize 1 - / Color .6 4, Contrast 1 8
        Rotate .8 8, Color 1 2 / Color .8 8, Solarize .8 7 / Sharpness .4 7, Invert .6 -
        ShearX .6 5, Equalize 1 - / Color .4 0, Equalize .6 - / Equalize .4 -, Solarize .2 4
        Solarize .6 5, AutoContrast .6 - / Invert .6 -, Equalize 1 - / Color .6 4, Contrast 1 8
        Equalize .8 -, Equalize .6 -""",
    "cifar10": """
        Invert .1 -, Contrast .2 6 / Rotate .7 2, TranslateX .3 9 / Sharpness .8 1, Sharpness .9 3
        ShearY .5 8, TranslateY .7 9 / AutoContrast .5 -, Equalize .9 - / ShearY .2 7, Posterize .3 7
        Color .4 3, Brightness .6 7 / Sharpness .3 9, Brightness .7 9 / Equalize .6 -, Equalize .5 -
        Contrast .6 7, Sharpness .6 5 / Color .7 7, TranslateX .5 8 / Equalize .3 -, AutoContrast .4 -
        TranslateY .4 3, Sharpness .2 6 / Brightness .9 6, Color .2 8 / Solarize .5 2, Invert 0 -
        Equalize .2 -, AutoContrast .6 - / Equalize .2 -, Equalize .6 - / Color .9 9, Equalize .6 -
        AutoContrast .8 -, Solarize .2 8 / Brightness .1 3, Color .7 0 / Solarize .4 5, AutoContrast .9 -
        TranslateY .9 9, TranslateY .7 9 / AutoContrast .9 -, Solarize .8 3 / Equalize .8 -, Invert .1 -
        TranslateY .7 9, AutoContrast .9 -""",
    "svhn": """
        ShearX .9 4, Invert .2 - / ShearY .9 8, Invert .7 - / Equalize .6 -, Solarize .6 6
        Invert .9 -, Equalize .6 - / Equalize .6 -, Rotate .9 3 / ShearX .9 4, AutoContrast .8 -
        ShearY .9 8, Invert .4 - / ShearY .9 5, Solarize .2 6 / Invert .9 -, AutoContrast .8 -
        Equalize .6 -, Rotate .9 3 / ShearX .9 4, Solarize .3 3 / ShearY .8 8, Invert .7 -
        Equalize .9 -, TranslateY .6 6 / Invert .9 -, Equalize .6 - / Contrast .3 3, Rotate .8 4
        Invert .8 -, TranslateY 0 2 / ShearY .7 6, Solarize .4 8 / Invert .6 -, Rotate .8 4
        ShearY .3 7, TranslateX .9 3 / ShearX .1 6, Invert .6 - / Solarize .7 2, TranslateY .6 7
        ShearY .8 4, Invert .8 - / ShearX .7 9, TranslateY .8 3 / ShearY .8 5, AutoContrast .7 -
        ShearX .7 2, Invert .1 -""",
}


def _parse_policy(text):
    policy = []
    for sub in text.replace("\n", " / ").split("/"):
        if sub.strip():
            steps = [step.split() for step in sub.split(",")]
            policy.append([(op, float(prob), None if mag == "-" else int(mag)) for op, prob, mag in steps])
    return policy


POLICIES = {name: _parse_policy(text) for name, text in _POLICY_TEXT.items()}


class AutoAugment(_Policy):
    """One of the policy's 25 sub-policies, uniformly; each of its two operations applies
    with its probability, at its magnitude bin of num_magnitude_bins (the paper's 10) and
    a random sign for symmetric ones. policy: "imagenet", "cifar10" or "svhn" (or
    torchvision's AutoAugmentPolicy)."""

    def __init__(self, policy="imagenet", num_magnitude_bins=10, *, interpolation="bilinear", fill=0.0, p=1.0):
        super().__init__(p=p)
        name = getattr(policy, "value", policy)
        if not isinstance(name, str) or name.lower() not in POLICIES:
            raise ValueError(f"AutoAugment: unknown policy {policy!r}, expected one of {sorted(POLICIES)}")
        self.policy = name.lower()
        self._init_policy(num_magnitude_bins, interpolation, fill)
        top = max(mag for sub in POLICIES[self.policy] for _, _, mag in sub if mag is not None)
        if num_magnitude_bins <= top:
            raise ValueError(f"AutoAugment: the {self.policy} policy uses magnitude bin {top}, so num_magnitude_bins "
                             f"should be more than that, got {num_magnitude_bins}")

    def make_params(self, img):
        table = POLICIES[self.policy]
        ops = []
        for op, prob, bin_index in table[randint(0, len(table))]:
            if rand() < prob:
                values = magnitudes(op, self.num_magnitude_bins, img.shape[-2], img.shape[-1])
                ops.append((op, self._signed(op, values, bin_index or 0)))
        return ops

    def _args_repr(self):
        return f"policy={self.policy!r}, {self._policy_repr()}"
