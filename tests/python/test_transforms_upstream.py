"""upstream Lucid's (Albumentations-style) lucid.utils.transforms: names, typed targets, the
Transform base (probability, seeding), composition (Compose with BboxParams, OneOf, SomeOf,
OneOrOther, Sequential, ReplayCompose, Lambda) and the names shared with torchvision."""

import subprocess
import sys

import numpy as np
import pytest

import lucid
import lucid.utils.transforms as T
from lucid.utils.transforms import functional as F

UPSTREAM_CLASSES = """Affine AutoAugment AutoTransformsPreset BBoxSafeRandomCrop BboxParams Blur BoundingBoxes CLAHE
CenterCrop ChannelDropout ChannelShuffle CoarseDropout ColorJitter Compose Crop CropAndPad D4 Defocus Detection Downscale
ElasticTransform Emboss Equalize FancyPCA Flip FromFloat GaussNoise GaussianBlur GeometricTransform GridDistortion
GridDropout GridElasticDeform HorizontalFlip HueSaturationValue ISONoise Image ImageClassification
ImageClassificationAugment Interpolation InvertImg Keypoints Lambda LongestMaxSize Mask MaskDropout MedianBlur MotionBlur
MultiplicativeNoise Normalize OneOf OneOrOther OpticalDistortion PadIfNeeded Perspective PhotometricTransform
PixelDropout Pose Posterize RGBShift RandAugment RandomBrightness RandomBrightnessContrast RandomContrast RandomCrop
RandomCropNearBBox RandomErasing RandomGamma RandomGridShuffle RandomResizedCrop RandomRotate90 RandomScale
RandomSizedBBoxSafeCrop RandomSizedCrop RandomToneCurve ReplayCompose Resize ResizeShortestEdge RingingOvershoot Rotate
SafeRotate Segmentation Sequential Sharpen ShiftScaleRotate SmallestMaxSize Solarize SomeOf ToFloat ToGray ToSepia
Transform TransformsPreset Transpose TrivialAugmentWide UnsharpMask VerticalFlip XYMasking ZoomBlur""".split()
UPSTREAM_FUNCTIONS = """adjust_brightness adjust_contrast adjust_hsv adjust_hue adjust_saturation adjust_sharpness
affine_matrix affine_points affine_theta autocontrast center_crop clahe crop depthwise_conv2d equalize gaussian_blur
hflip hsv_to_rgb invert normalize pad perspective_matrix posterize remap rescale resize resize_target resized_crop
rgb_to_grayscale rgb_to_hsv rotation_matrix sample_field_at_points solarize vflip warp_affine""".split()


def test_every_upstream_name_is_there():
    assert len(UPSTREAM_CLASSES) == 98 and len(UPSTREAM_FUNCTIONS) == 35
    assert [n for n in UPSTREAM_CLASSES if not hasattr(T, n)] == []
    assert [n for n in UPSTREAM_FUNCTIONS if not callable(getattr(F, n, None))] == []
    assert set(UPSTREAM_CLASSES) <= set(T.__all__)
    import lucid.utils.transforms.functional as F2
    assert F2 is F


def test_using_the_transforms_imports_no_numpy_torch_or_pil():
    code = ("import sys, lucid, lucid.utils.transforms as T\n"
            "x = lucid.rand(3, 16, 16)\n"
            "T.Compose([T.Affine(rotate=10, p=1), T.CLAHE(p=1), T.RandAugment(), T.GaussianBlur(p=1)])(x)\n"
            "print(sorted(m for m in ('numpy', 'torch', 'PIL') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---- typed targets -----------------------------------------------------------------------------------
BOX = [[10.0, 20.0, 50.0, 40.0]]  # xyxy on a 100 (h) x 200 (w) canvas


@pytest.mark.parametrize("fmt, data", [
    ("xyxy", [10.0, 20.0, 50.0, 40.0]), ("pascal_voc", [10.0, 20.0, 50.0, 40.0]),
    ("xywh", [10.0, 20.0, 40.0, 20.0]), ("coco", [10.0, 20.0, 40.0, 20.0]),
    ("cxcywh", [30.0, 30.0, 40.0, 20.0]), ("albumentations", [0.05, 0.2, 0.25, 0.4]),
    ("yolo", [0.15, 0.3, 0.2, 0.2])])
def test_box_formats_convert_both_ways(fmt, data):
    from lucid.utils.transforms._targets import from_xyxy, to_xyxy
    boxes = T.BoundingBoxes([data], fmt, (100, 200))
    np.testing.assert_allclose(to_xyxy(boxes).numpy(), BOX, atol=1e-5)
    np.testing.assert_allclose(from_xyxy(lucid.tensor(BOX), boxes.format, (100, 200)).numpy(), [data], atol=1e-6)
    # a flip keeps the format: x -> 200 - x
    flipped = T.HorizontalFlip(p=1)({"image": lucid.rand(3, 100, 200), "boxes": boxes})["boxes"]
    assert flipped.format == boxes.format
    np.testing.assert_allclose(to_xyxy(flipped).numpy(), [[150.0, 20.0, 190.0, 40.0]], atol=1e-4)


def test_target_errors_say_what_was_expected():
    with pytest.raises(ValueError, match=r"unknown bounding box format 'xyzw'.*expected one of"):
        T.BoundingBoxes(BOX, "xyzw", (10, 10))
    with pytest.raises(ValueError, match=r"data should be \[N, 4\], got shape \[1, 3\]"):
        T.BoundingBoxes([[1.0, 2.0, 3.0]], "xyxy", (10, 10))
    with pytest.raises(ValueError, match="canvas_size .* required"):
        T.BoundingBoxes(BOX, "xyxy")
    with pytest.raises(ValueError, match="canvas_size should be \\(height, width\\)"):
        T.BoundingBoxes(BOX, "xyxy", (10, -1))
    with pytest.raises(ValueError, match="labels should have one entry per box"):
        T.BoundingBoxes(BOX, "xyxy", (10, 10), labels=[1, 2])
    with pytest.raises(TypeError, match="Image: data should be a lucid Tensor"):
        T.Image([[1.0]])
    with pytest.raises(ValueError, match=r"Image: data should be \[C, H, W\] or \[B, C, H, W\], got shape \[4, 4\]"):
        T.Image(lucid.zeros(4, 4))
    with pytest.raises(ValueError, match="Mask: data should be"):
        T.Mask(lucid.zeros(4))
    with pytest.raises(ValueError, match="Keypoints: data should be \\[N, D\\] with D >= 2"):
        T.Keypoints([[1.0]], (4, 4))
    with pytest.raises(ValueError, match="unknown bounding box format"):
        T.BboxParams(format="voc")
    with pytest.raises(ValueError, match="min_visibility should be a probability in \\[0, 1\\], got 2"):
        T.BboxParams(min_visibility=2)


def test_probability_checks_and_p0_p1():
    for bad in (-0.1, 1.5, "0.5", True):
        with pytest.raises(ValueError, match=r"HorizontalFlip: p should be a probability in \[0, 1\]"):
            T.HorizontalFlip(p=bad)
    x = lucid.rand(3, 5, 6)
    assert T.HorizontalFlip(p=0.0)(x) is x
    assert T.GaussNoise(p=0.0)(x) is x
    for _ in range(5):
        np.testing.assert_array_equal(T.HorizontalFlip(p=1.0)(x).numpy(), x.numpy()[..., ::-1])
    # p=0.5 applies about half the time
    lucid.manual_seed(0)
    flips = sum(not np.array_equal(T.HorizontalFlip(p=0.5)(x).numpy(), x.numpy()) for _ in range(400))
    assert 150 < flips < 250


def test_a_seed_repeats_the_draws():
    x = lucid.rand(3, 24, 24)
    pipeline = T.Compose([T.RandomResizedCrop(16, 16), T.Affine(rotate=30, p=1), T.ColorJitter(p=0.5),
                          T.CoarseDropout(p=0.5), T.RandAugment()])
    lucid.manual_seed(7)
    a = pipeline(x)
    lucid.manual_seed(7)
    b = pipeline(x)
    lucid.manual_seed(8)
    c = pipeline(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())


def test_bad_inputs_raise_with_the_expected_shape():
    with pytest.raises(TypeError, match="HorizontalFlip: expected an image tensor, an Image / Mask"):
        T.HorizontalFlip(p=1)([1, 2, 3])
    with pytest.raises(TypeError, match="expected a float image .* got dtype .*int"):
        T.GaussNoise(p=1)(lucid.zeros(3, 4, 4, dtype=lucid.int64))
    with pytest.raises(ValueError, match="crop size \\(8, 8\\) is larger than the image \\(4, 6\\)"):
        T.CenterCrop(8, 8)(lucid.rand(3, 4, 6))
    with pytest.raises(ValueError, match="expected an image with 3 channels, got 1"):
        T.ToSepia(p=1)(lucid.rand(1, 4, 4))


# ---- samples -----------------------------------------------------------------------------------------
def test_a_sample_moves_together_and_untyped_entries_pass_through():
    x = lucid.rand(3, 6, 8)
    mask = lucid.randint(0, 4, (6, 8))
    sample = {"image": T.Image(x), "mask": T.Mask(mask), "boxes": T.BoundingBoxes(BOX[:1], "xyxy", (100, 200)),
              "labels": lucid.tensor([3]), "name": "a.png", "extra": [T.Image(x), 5]}
    sample["boxes"] = T.BoundingBoxes([[1.0, 2.0, 3.0, 5.0]], "xyxy", (6, 8), labels=[4])
    out = T.HorizontalFlip(p=1)(sample)
    np.testing.assert_array_equal(out["image"].data.numpy(), x.numpy()[..., ::-1])
    np.testing.assert_array_equal(out["mask"].data.numpy(), mask.numpy()[..., ::-1])
    np.testing.assert_array_equal(out["extra"][0].data.numpy(), x.numpy()[..., ::-1])
    assert out["extra"][1] == 5 and out["name"] == "a.png" and out["labels"] is sample["labels"]
    np.testing.assert_allclose(out["boxes"].data.numpy(), [[5.0, 2.0, 7.0, 5.0]])
    assert out["boxes"].labels.tolist() == [4]
    # a photometric transform leaves masks and boxes alone
    out = T.InvertImg(p=1)(sample)
    assert out["mask"].data is sample["mask"].data and out["boxes"] is sample["boxes"]
    np.testing.assert_allclose(out["image"].data.numpy(), 1 - x.numpy(), atol=1e-6)


# ---- composition -------------------------------------------------------------------------------------
def crop_box_sample():
    x = lucid.rand(3, 20, 20)
    boxes = T.BoundingBoxes([[2.0, 2.0, 6.0, 6.0], [8.0, 8.0, 18.0, 14.0], [15.0, 15.0, 19.0, 19.0]], "xyxy",
                            (20, 20), labels=[1, 2, 3])
    return {"image": x, "boxes": boxes}


def test_compose_bbox_params_filters_boxes_and_labels():
    crop = T.Crop(0, 0, 12, 20)  # keeps x < 12: box 1 whole, box 2 60% visible, box 3 gone
    out = T.Compose([crop])(crop_box_sample())
    assert len(out["boxes"]) == 3  # without bbox_params nothing is dropped
    np.testing.assert_allclose(out["boxes"].visibility.numpy(), [1.0, 0.4, 0.0], atol=1e-6)
    out = T.Compose([crop], bbox_params=T.BboxParams())(crop_box_sample())
    assert out["boxes"].labels.tolist() == [1, 2]
    out = T.Compose([crop], bbox_params=T.BboxParams(min_visibility=0.5))(crop_box_sample())
    assert out["boxes"].labels.tolist() == [1]
    np.testing.assert_allclose(out["boxes"].data.numpy(), [[2.0, 2.0, 6.0, 6.0]])
    out = T.Compose([crop], bbox_params=T.BboxParams(min_area=20.0))(crop_box_sample())
    assert out["boxes"].labels.tolist() == [2]  # box 1 has area 16, what is left of box 2 4 x 6 = 24
    # visibility does not change under a resize
    out = T.Compose([T.Resize(5, 5)], bbox_params=T.BboxParams(min_visibility=0.9))(crop_box_sample())
    assert out["boxes"].labels.tolist() == [1, 2, 3]


def test_compose_takes_albumentations_raw_boxes_and_label_fields():
    x = lucid.rand(3, 10, 20)
    sample = {"image": x, "bboxes": [[1, 2, 4, 3], [16, 0, 4, 4]], "class_labels": ["cat", "dog"]}
    tf = T.Compose([T.HorizontalFlip(p=1), T.Crop(0, 0, 10, 10)],
                   bbox_params=T.BboxParams(format="coco", label_fields=["class_labels"]))
    out = tf(sample)
    assert out["class_labels"] == ["dog"]  # the cat (x 1..5) went to x 15..19, outside the crop
    assert out["bboxes"] == [[0.0, 0.0, 4.0, 4.0]]
    with pytest.raises(KeyError, match="label field\\(s\\) \\['names'\\] not found"):
        T.Compose([], bbox_params=T.BboxParams(format="coco", label_fields=["names"]))(sample)
    two = {"a": T.BoundingBoxes(BOX, "xyxy", (100, 200)), "b": T.BoundingBoxes(BOX, "xyxy", (100, 200)),
           "image": lucid.rand(3, 100, 200), "l": [1]}
    with pytest.raises(ValueError, match="exactly one set of boxes, got 2"):
        T.Compose([], bbox_params=T.BboxParams(label_fields=["l"]))(two)
    with pytest.raises(TypeError, match="bbox_params should be a BboxParams"):
        T.Compose([], bbox_params={"format": "coco"})


def test_one_of_uses_child_p_as_weight_and_forces_the_pick():
    x = lucid.rand(3, 4, 5)
    tf = T.OneOf([T.HorizontalFlip(p=0.0), T.VerticalFlip(p=0.3)], p=1.0)
    for _ in range(10):  # the flip of weight 0 is never chosen; the chosen one ignores its p
        np.testing.assert_array_equal(tf(x).numpy(), x.numpy()[..., ::-1, :])
    lucid.manual_seed(1)
    tf = T.OneOf([T.HorizontalFlip(p=1.0), T.VerticalFlip(p=1.0)], p=1.0)
    picks = [np.array_equal(tf(x).numpy(), x.numpy()[..., ::-1]) for _ in range(300)]
    assert 100 < sum(picks) < 200
    assert T.OneOf([T.HorizontalFlip()], p=0.0)(x) is x


def test_some_of_sequential_and_one_or_other():
    x = lucid.rand(3, 4, 5)
    tf = T.SomeOf([T.HorizontalFlip(p=0.0), T.VerticalFlip(p=0.0)], n=2)
    np.testing.assert_array_equal(tf(x).numpy(), x.numpy()[..., ::-1, ::-1])  # both, despite their p
    seq = T.Sequential([T.HorizontalFlip(p=1.0), T.VerticalFlip(p=0.0)])  # children keep their own p
    np.testing.assert_array_equal(seq(x).numpy(), x.numpy()[..., ::-1])
    assert T.Sequential([T.HorizontalFlip(p=1.0)], p=0.0)(x) is x
    first = T.OneOrOther(T.HorizontalFlip(p=0.0), T.VerticalFlip(p=0.0), p=1.0)
    np.testing.assert_array_equal(first(x).numpy(), x.numpy()[..., ::-1])
    second = T.OneOrOther(T.HorizontalFlip(p=0.0), T.VerticalFlip(p=0.0), p=0.0)
    np.testing.assert_array_equal(second(x).numpy(), x.numpy()[..., ::-1, :])
    with pytest.raises(ValueError, match="SomeOf: n should be a positive int"):
        T.SomeOf([T.HorizontalFlip()], n=0)
    with pytest.raises(TypeError, match="OneOf: transforms should be a list of callables"):
        T.OneOf([T.HorizontalFlip(), 3])


def test_replay_compose_repeats_every_choice_on_another_sample():
    lucid.manual_seed(3)
    tf = T.ReplayCompose([T.RandomCrop(height=8, width=9), T.OneOf([T.Rotate(limit=40, p=1), T.Affine(shear=20)], p=1.0),
                          T.HorizontalFlip(p=0.5), T.ColorJitter(p=1.0), T.GaussNoise(p=1.0),
                          T.Lambda(lambda t: t * 1.0)])
    x, y = lucid.rand(3, 16, 16), lucid.rand(3, 16, 16)
    out_x = tf(x)
    assert [applied for _, _, applied in tf.replay_data].count(True) >= 5
    np.testing.assert_allclose(tf.replay(tf.replay_data, x).numpy(), out_x.numpy(), atol=1e-6)
    saved = tf.replay_data
    again = tf.replay(saved, y)
    np.testing.assert_allclose(tf.replay(saved, y).numpy(), again.numpy(), atol=1e-6)
    # the crop window is the one chosen for x: pixels line up
    plain = T.ReplayCompose([T.RandomCrop(height=8, width=9)])
    plain(x)
    top, left = plain.replay_data[0][1][:2]
    np.testing.assert_array_equal(plain.replay(plain.replay_data, y).numpy(),
                                  y.numpy()[:, top:top + 8, left:left + 9])
    skipped = T.ReplayCompose([T.HorizontalFlip()], p=0.0)
    assert skipped(x) is x and skipped.replay_data == [] and skipped.replay([], y) is y


def test_lambda_torchvision_and_upstream_forms():
    x = lucid.rand(3, 4, 4)
    tv = T.Lambda(lambda t: t + 1)
    assert repr(tv) == "Lambda()"
    np.testing.assert_allclose(tv(x).numpy(), x.numpy() + 1, atol=1e-6)
    assert T.Lambda(len)([1, 2, 3]) == 3  # torchvision's: anything goes to the function
    up = T.Lambda(image=lambda t: t * 2, mask=lambda m: m + 1, bboxes=lambda b: "boxes!", name="double", p=1.0)
    out = up({"image": T.Image(x), "mask": T.Mask(lucid.zeros(4, 4)), "boxes": T.BoundingBoxes(BOX, "xyxy", (9, 9))})
    np.testing.assert_allclose(out["image"].data.numpy(), x.numpy() * 2, atol=1e-6)
    assert out["mask"].data.sum().item() == 16 and out["boxes"] == "boxes!"
    assert repr(up) == "Lambda(name='double', p=1.0)"
    assert T.Lambda(image=lambda t: t * 2, p=0.0)(x) is x
    with pytest.raises(TypeError, match="Lambda: mask should be callable"):
        T.Lambda(mask=3)


# ---- names shared with torchvision -------------------------------------------------------------------
def test_shared_names_pick_their_form():
    from lucid.nn import Module
    tv, up = T.CenterCrop(224), T.CenterCrop(4, 5)
    assert isinstance(tv, Module) and isinstance(up, T.GeometricTransform)
    assert isinstance(up, T.CenterCrop) and isinstance(tv, T.CenterCrop)
    assert repr(up) == "CenterCrop(height=4, width=5, p=1.0)" and repr(tv) == "CenterCrop(size=(224, 224))"
    assert isinstance(T.CenterCrop(height=4, width=5), T.GeometricTransform)
    assert isinstance(T.Resize(224, 224), T.GeometricTransform)
    assert isinstance(T.Resize(224, 2), Module)  # 2 is Pillow's BILINEAR for torchvision
    assert isinstance(T.Resize(8), Module) and isinstance(T.Resize((8, 9)), Module)
    assert isinstance(T.RandomCrop(32, 4), Module)  # torchvision's (size, padding)
    assert isinstance(T.RandomCrop(32, 32, 1.0), T.GeometricTransform)
    assert isinstance(T.RandomCrop(height=32, width=32), T.GeometricTransform)
    assert isinstance(T.RandomResizedCrop(32), Module) and isinstance(T.RandomResizedCrop(32, 32), T.Transform)
    assert isinstance(T.Normalize((0.5,), (0.5,)), Module)
    assert isinstance(T.Normalize((0.5,), (0.5,), 255.0), T.PhotometricTransform)
    assert isinstance(T.Normalize((0.5,), (0.5,), max_pixel_value=1.0), T.PhotometricTransform)
    assert isinstance(T.ColorJitter(0.1), Module) and isinstance(T.ColorJitter(p=0.5), T.PhotometricTransform)
    # upstream's Normalize divides by max_pixel_value
    x = lucid.rand(3, 4, 4) * 255
    out = T.Normalize((0.5, 0.4, 0.3), (0.1, 0.2, 0.3), max_pixel_value=255.0)(x)
    ref = (x.numpy() - np.array([0.5, 0.4, 0.3])[:, None, None] * 255) / (np.array([0.1, 0.2, 0.3])[:, None, None]
                                                                        * 255)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_torchvision_forms_on_typed_samples():
    x = lucid.rand(3, 8, 8)
    sample = {"image": T.Image(x), "mask": T.Mask(lucid.zeros(8, 8))}
    out = T.Normalize((0.5,) * 3, (0.25,) * 3)(sample)  # photometric: the images are normalized
    np.testing.assert_allclose(out["image"].data.numpy(), (x.numpy() - 0.5) / 0.25, atol=1e-5)
    assert out["mask"] is sample["mask"]
    with pytest.raises(TypeError, match=r"CenterCrop: this is torchvision's form.*use upstream's form "
                                        r"CenterCrop\(height, width, p\)"):
        T.CenterCrop(4)(sample)
    with pytest.raises(TypeError, match="Resize\\(height, width, ...\\)"):
        T.Resize(4)(sample)


def test_functional_aliases_of_upstream_argument_names():
    x = lucid.rand(3, 6, 7)
    np.testing.assert_allclose(F.adjust_brightness(x, factor=0.5).numpy(), F.adjust_brightness(x, 0.5).numpy())
    np.testing.assert_allclose(F.adjust_hue(x, factor=0.1).numpy(), F.adjust_hue(x, 0.1).numpy())
    with pytest.raises(TypeError, match="give brightness_factor or factor=, not both"):
        F.adjust_brightness(x, 0.5, factor=0.5)
    with pytest.raises(TypeError, match="missing the contrast_factor argument"):
        F.adjust_contrast(x)
    assert F.rgb_to_grayscale(x, keep_channels=True).shape == (3, 6, 7)
    assert F.rgb_to_grayscale(x, keep_channels=False).shape == (1, 6, 7)
    assert F.rgb_to_grayscale(x).shape == (1, 6, 7)  # torchvision's default
    np.testing.assert_array_equal(F.center_crop(x, size=(2, 3)).numpy(), F.center_crop(x, (2, 3)).numpy())
    np.testing.assert_allclose(F.normalize(img=x, mean=[0.5] * 3, std=[2.0] * 3).numpy(), (x.numpy() - 0.5) / 2,
                               atol=1e-6)
    # upstream's pad: (left, right, top, bottom) and lucid.nn.functional.pad's modes
    padded = F.pad(x, (1, 2, 3, 0), mode="reflect")
    np.testing.assert_array_equal(padded.numpy(), np.pad(x.numpy(), ((0, 0), (3, 0), (1, 2)), mode="reflect"))
    np.testing.assert_array_equal(F.pad(x, 2, value=7.0).numpy(),
                                  np.pad(x.numpy(), ((0, 0), (2, 2), (2, 2)), constant_values=7.0))
    # torchvision's: (left, top, right, bottom)
    np.testing.assert_array_equal(F.pad(x, (1, 2, 3, 0)).numpy(), np.pad(x.numpy(), ((0, 0), (2, 0), (1, 3))))
    with pytest.raises(ValueError, match="mode should be one of"):
        F.pad(x, 1, mode="symmetric")
    with pytest.raises(TypeError, match="not both"):
        F.pad(x, 1, fill=2, value=3.0)


def test_interpolation_names_and_codes():
    from lucid.utils.transforms._base import as_interpolation
    assert T.Interpolation.BILINEAR == "bilinear" and str(T.Interpolation.AREA) == "area"
    assert as_interpolation(0, "x") is T.Interpolation.NEAREST and as_interpolation(2, "x") is T.Interpolation.BICUBIC
    assert as_interpolation(T.InterpolationMode.BICUBIC, "x") is T.Interpolation.BICUBIC
    assert as_interpolation("linear", "x") is T.Interpolation.BILINEAR
    with pytest.raises(ValueError, match="Resize: interpolation code 4 is not supported"):
        T.Resize(8, 8, interpolation=4)
    with pytest.raises(ValueError, match="Rotate: unknown interpolation 'lanczos'"):
        T.Rotate(interpolation="lanczos")


def test_mask_dropout_erases_whole_objects():
    mask = lucid.tensor([[0, 1, 1, 2], [0, 1, 2, 2], [3, 3, 0, 0]])
    x = lucid.rand(3, 3, 4)
    lucid.manual_seed(0)
    out = T.MaskDropout(max_objects=2, image_fill_value=-1.0, mask_fill_value=9, p=1)(
        {"image": T.Image(x), "mask": T.Mask(mask)})
    new_mask, new_img = out["mask"].data.numpy(), out["image"].data.numpy()
    dropped = sorted(set(mask.numpy().ravel()) - set(new_mask.ravel()) - {0})
    assert 1 <= len(dropped) <= 2 and 9 in new_mask
    hit = np.isin(mask.numpy(), dropped)
    assert np.array_equal(new_mask == 9, hit) and np.all(new_img[:, hit] == -1)
    np.testing.assert_array_equal(new_img[:, ~hit], x.numpy()[:, ~hit])
    with pytest.raises(ValueError, match="MaskDropout: the sample has no Mask"):
        T.MaskDropout(p=1)({"image": x})


def test_yolo_raw_boxes_round_trip_through_compose():
    x = lucid.rand(3, 10, 20)
    tf = T.Compose([T.VerticalFlip(p=1)], bbox_params=T.BboxParams(format="yolo"))
    out = tf({"image": x, "bboxes": lucid.tensor([[0.25, 0.2, 0.1, 0.2]])})
    assert isinstance(out["bboxes"], lucid.Tensor)
    np.testing.assert_allclose(out["bboxes"].numpy(), [[0.25, 0.8, 0.1, 0.2]], atol=1e-6)


def test_pipelines_pickle_for_dataloader_workers():
    import pickle
    tf = T.Compose([T.Resize(8, 8), T.CenterCrop(4, 4), T.Normalize((0.5,), (0.5,), 1.0),
                    T.OneOf([T.Affine(rotate=3), T.CLAHE()]), T.ReplayCompose([T.RandAugment()])],
                   bbox_params=T.BboxParams(min_area=2))
    back = pickle.loads(pickle.dumps(tf))
    assert repr(back) == repr(tf) and isinstance(back.transforms[0], T.Resize)
    x = lucid.rand(3, 12, 12)
    lucid.manual_seed(5)
    a = tf(x)
    lucid.manual_seed(5)
    np.testing.assert_array_equal(back(x).numpy(), a.numpy())
    assert pickle.loads(pickle.dumps(T.ImageClassification(8))).to_dict() == T.ImageClassification(8).to_dict()
