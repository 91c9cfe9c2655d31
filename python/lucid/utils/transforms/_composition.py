"""Containers: Compose and Lambda (torchvision's and upstream Lucid's in one class each),
and upstream's OneOf, SomeOf, OneOrOther, Sequential and ReplayCompose.

Children may be upstream-style transforms (which keep their own probability p) or any
callable (torchvision-style transforms, functions), which is simply called. OneOf, SomeOf and
OneOrOther apply the child they pick unconditionally (its p only weighs OneOf's choice), as
upstream does; Compose and Sequential let each child apply its own p.
"""

from collections.abc import Sequence

from ._base import (BboxParams, Transform, check_positive_int, check_probability, filter_sample_boxes,
                    is_typed_sample, permutation, rand, wrap_raw_boxes)


class _Marker:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


# Records of how a child was run, for ReplayCompose: skipped by its p, or a plain callable
# whose call cannot be recorded (it is called again on replay).
SKIPPED = _Marker("skipped")
OPAQUE = _Marker("opaque")


def run_child(child, inputs, forced=False):
    """(output, record) of running child on inputs; forced ignores the child's p."""
    if not isinstance(child, Transform):
        return child(inputs), OPAQUE
    if child._needs_reference:
        child._reference(inputs)
    if not forced and not child._gate():
        return inputs, SKIPPED
    return child._record_apply(inputs)


def replay_child(child, inputs, record):
    if record is SKIPPED:
        return inputs
    if record is OPAQUE:
        return child(inputs)
    return child._replay(inputs, record)


def _check_transforms(transforms, where):
    if not isinstance(transforms, Sequence) or isinstance(transforms, str) or not all(
            callable(t) for t in transforms):
        raise TypeError(f"{where}: transforms should be a list of callables, got {transforms!r}")
    return transforms


class _Container(Transform):
    """Holds children; a container's record is the list of its children's records."""
    _needs_reference = False

    def _apply_image(self, img, params):
        return self._record_apply(img)[0]

    def _replay(self, inputs, record):
        for child, rec in record:
            inputs = replay_child(child, inputs, rec)
        return inputs


class Compose(_Container):
    """Applies transforms in order (torchvision's Compose, and upstream Lucid's
    Compose(transforms, bbox_params)).

    Each upstream-style child applies with its own p. bbox_params (a BboxParams) filters the
    sample's bounding boxes after the pipeline (min_area / min_visibility, labels kept in
    step) and lets a dict sample carry Albumentations-style raw boxes under "bboxes" in
    bbox_params.format. Without bbox_params, Compose is torchvision's: any callables, any
    input (tensor, PIL image, ...).
    """

    def __init__(self, transforms, bbox_params=None):
        super().__init__(p=1.0)
        self.transforms = _check_transforms(transforms, "Compose")
        if bbox_params is not None and not isinstance(bbox_params, BboxParams):
            raise TypeError(f"Compose: bbox_params should be a BboxParams, got {type(bbox_params).__name__}")
        self.bbox_params = bbox_params

    def _record_apply(self, inputs):
        unwrap = None
        if self.bbox_params is not None:
            inputs, unwrap = wrap_raw_boxes(inputs, self.bbox_params)
        record = []
        for t in self.transforms:
            inputs, rec = run_child(t, inputs)
            record.append((t, rec))
        if self.bbox_params is not None:
            inputs = unwrap(filter_sample_boxes(inputs, self.bbox_params))
        return inputs, record

    def _replay(self, inputs, record):
        if self.bbox_params is None:
            return super()._replay(inputs, record)
        inputs, unwrap = wrap_raw_boxes(inputs, self.bbox_params)
        return unwrap(filter_sample_boxes(super()._replay(inputs, record), self.bbox_params))

    def __call__(self, inputs):
        return self._record_apply(inputs)[0]

    def __repr__(self):
        return self.__class__.__name__ + "(" + "".join(f"\n    {t}" for t in self.transforms) + "\n)"


class Lambda(Transform):
    """A user function as a transform: torchvision's Lambda(lambd) and upstream's
    Lambda(image, mask, bboxes, keypoints, name, p) in one.

    Called on a typed sample (Image / Mask / BoundingBoxes / Keypoints, or dicts / lists of
    them), each function goes to its kind of target (the first argument, or image=, to the
    images; mask to Mask data; bboxes / keypoints to the BoundingBoxes / Keypoints objects),
    all with probability p. Called on anything else (a tensor, a PIL image, ...), the first
    function gets the input itself, as torchvision's Lambda.
    """
    _needs_reference = False

    def __init__(self, lambd=None, mask=None, bboxes=None, keypoints=None, name=None, p=1.0, *, image=None):
        super().__init__(p=p)
        if lambd is not None and image is not None:
            raise TypeError("Lambda: give the image function once, as the first argument or as image=")
        if lambd is not None and not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        for arg, fn in (("image", image), ("mask", mask), ("bboxes", bboxes), ("keypoints", keypoints)):
            if fn is not None and not callable(fn):
                raise TypeError(f"Lambda: {arg} should be callable, got {type(fn).__name__}")
        self.lambd = lambd if lambd is not None else image
        self.mask, self.bboxes, self.keypoints, self.name = mask, bboxes, keypoints, name
        # Only lambd given: torchvision's form (its repr is "Lambda()").
        self._torchvision_form = lambd is not None and (mask, bboxes, keypoints, name, image) == (None,) * 5 \
            and p == 1.0

    def _apply_image(self, img, params):
        return img if self.lambd is None else self.lambd(img)

    def _apply_mask(self, mask, params):
        return mask if self.mask is None else self.mask(mask)

    def _apply_boxes(self, boxes, params):
        return boxes if self.bboxes is None else self.bboxes(boxes)

    def _apply_keypoints(self, kps, params):
        return kps if self.keypoints is None else self.keypoints(kps)

    def _apply_with(self, inputs, params):
        if is_typed_sample(inputs):
            return self._dispatch(inputs, params)
        return self._apply_image(inputs, params)

    def _draw(self, inputs):
        return None

    def __repr__(self):
        if self._torchvision_form:
            return f"{self.__class__.__name__}()"
        return f"{self.__class__.__name__}(name={self.name!r}, p={self.p})"


class Sequential(_Container):
    """Runs all transforms in order, the whole block with probability p; each child keeps
    its own p."""

    def __init__(self, transforms, p=1.0):
        super().__init__(p=p)
        self.transforms = list(_check_transforms(transforms, "Sequential"))

    def _record_apply(self, inputs):
        record = []
        for t in self.transforms:
            inputs, rec = run_child(t, inputs)
            record.append((t, rec))
        return inputs, record

    def _args_repr(self):
        return f"{self.transforms}, p={self.p}"


class OneOf(_Container):
    """Applies exactly one of transforms (with probability p), picked with weights
    proportional to the children's own p (equal weights if they are all 0 or plain
    callables); the picked child is applied regardless of its p."""

    def __init__(self, transforms, p=0.5):
        super().__init__(p=p)
        self.transforms = list(_check_transforms(transforms, "OneOf"))
        weights = [float(getattr(t, "p", 1.0)) for t in self.transforms]
        total = sum(weights)
        self.weights = [w / total for w in weights] if total > 0 else [1.0 / max(len(weights), 1)] * len(weights)

    def _pick(self):
        r, acc = rand(), 0.0
        for i, w in enumerate(self.weights):
            acc += w
            if r < acc:
                return i
        return len(self.transforms) - 1

    def _record_apply(self, inputs):
        if not self.transforms:
            return inputs, []
        child = self.transforms[self._pick()]
        out, rec = run_child(child, inputs, forced=True)
        return out, [(child, rec)]

    def _args_repr(self):
        return f"{self.transforms}, p={self.p}"


class SomeOf(_Container):
    """Applies n of transforms (with probability p): n distinct children picked uniformly,
    run in their listed order, each regardless of its own p."""

    def __init__(self, transforms, n=1, p=1.0):
        super().__init__(p=p)
        self.transforms = list(_check_transforms(transforms, "SomeOf"))
        self.n = check_positive_int(n, "SomeOf", "n")

    def _record_apply(self, inputs):
        picks = sorted(permutation(len(self.transforms))[:self.n])
        record = []
        for i in picks:
            inputs, rec = run_child(self.transforms[i], inputs, forced=True)
            record.append((self.transforms[i], rec))
        return inputs, record

    def _args_repr(self):
        return f"{self.transforms}, n={self.n}, p={self.p}"


class OneOrOther(_Container):
    """Applies first with probability p, else second (either regardless of its own p)."""

    def __init__(self, first, second, p=0.5):
        super().__init__(p=1.0)
        _check_transforms([first, second], "OneOrOther")
        self.first, self.second = first, second
        self.transforms = [first, second]
        self.switch = check_probability(p, "OneOrOther")

    def _record_apply(self, inputs):
        child = self.first if rand() < self.switch else self.second
        out, rec = run_child(child, inputs, forced=True)
        return out, [(child, rec)]

    def _args_repr(self):
        return f"{self.first}, {self.second}, p={self.switch}"


class ReplayCompose(_Container):
    """Compose that records what it did, to do it again on another sample.

    After a call, replay_data lists (transform, record, applied) per child (empty when
    ReplayCompose's own p skipped the call); replay(replay_data, sample) applies the same
    choices and parameters (crop windows, angles, picked children, ...) to sample. Plain
    callables among the children are simply called again.
    """

    def __init__(self, transforms, p=1.0):
        super().__init__(p=p)
        self.transforms = list(_check_transforms(transforms, "ReplayCompose"))
        self.replay_data = []

    def _record_apply(self, inputs):
        record = []
        for t in self.transforms:
            inputs, rec = run_child(t, inputs)
            record.append((t, rec))
        return inputs, record

    def __call__(self, inputs):
        self.replay_data = []
        if not self._gate():
            return inputs
        out, record = self._record_apply(inputs)
        self.replay_data = [(t, rec, rec is not SKIPPED) for t, rec in record]
        return out

    def replay(self, saved, inputs):
        """inputs transformed exactly as the call that produced saved (its replay_data)."""
        for t, rec, applied in saved:
            inputs = replay_child(t, inputs, rec if applied else SKIPPED)
        return inputs

    def _args_repr(self):
        return f"{self.transforms}, p={self.p}"

