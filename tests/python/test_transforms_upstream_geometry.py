"""upstream Lucid's geometry in lucid.utils.transforms: the functional matrices and warps
against NumPy computations, and the geometric transforms moving boxes, masks and keypoints
exactly as they move the pixels (checked on images with a lit rectangle)."""

import math

import numpy as np
import pytest

import lucid
import lucid.utils.transforms as T
from lucid.utils.transforms import functional as F


def np_affine(cx, cy, scale=1.0, angle=0.0, shx=0.0, shy=0.0, tx=0.0, ty=0.0):
    """T(c + t) R(angle) Sh(shx, shy) S(scale) T(-c), R = [[cos, -sin], [sin, cos]]."""
    a = math.radians(angle)
    rot = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
    shear = np.array([[1, math.tan(math.radians(shx)), 0], [math.tan(math.radians(shy)), 1, 0], [0, 0, 1]])
    return (np.array([[1, 0, cx + tx], [0, 1, cy + ty], [0, 0, 1]]) @ rot @ shear @ np.diag([scale, scale, 1])
            @ np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]]))


def test_affine_and_rotation_matrices():
    m = F.affine_matrix(cx=3.5, cy=2.0, scale=1.5, angle_deg=30, shear_x_deg=10, shear_y_deg=-5, translate_x=2,
                        translate_y=-1)
    np.testing.assert_allclose(m.numpy(), np_affine(3.5, 2.0, 1.5, 30, 10, -5, 2, -1), atol=1e-5)
    # the centre stays put without translation, and 90 degrees sends x to y (y pointing down)
    m = F.affine_matrix(cx=4.0, cy=4.0, angle_deg=90)
    np.testing.assert_allclose(F.affine_points(lucid.tensor([[4.0, 4.0], [6.0, 4.0]]), m).numpy(),
                               [[4.0, 4.0], [4.0, 6.0]], atol=1e-5)
    # OpenCV's getRotationMatrix2D: [[a, b, (1 - a) cx - b cy], [-b, a, b cx + (1 - a) cy]]
    a, b = 2 * math.cos(math.radians(40)), 2 * math.sin(math.radians(40))
    ref = [[a, b, (1 - a) * 5 - b * 3], [-b, a, b * 5 + (1 - a) * 3], [0, 0, 1]]
    np.testing.assert_allclose(F.rotation_matrix(40, 5, 3, 2.0).numpy(), ref, atol=1e-5)


def test_perspective_matrix_maps_the_four_points():
    src = [[0, 0], [9, 0], [9, 7], [0, 7]]
    dst = [[1, 2], [8, 0.5], [10, 8], [-1, 6]]
    h = F.perspective_matrix(src, dst)
    np.testing.assert_allclose(F.affine_points(lucid.tensor(src, dtype=lucid.float32), h).numpy(), dst, atol=1e-4)
    with pytest.raises(ValueError, match="degenerate"):
        F.perspective_matrix([[0, 0], [1, 1], [2, 2], [3, 3]], dst)
    with pytest.raises(ValueError, match="src should be four \\(x, y\\) points"):
        F.perspective_matrix([[0, 0]], dst)


def test_affine_points_and_theta():
    pts = lucid.tensor([[1.0, 2.0], [3.0, -1.0]])
    two_by_three = [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]
    ref = np.array(two_by_three) @ np.array([[1, 2, 1], [3, -1, 1]]).T
    np.testing.assert_allclose(F.affine_points(pts, two_by_three).numpy(), ref.T, atol=1e-6)
    with pytest.raises(ValueError, match=r"pts should be a tensor \[N, 2\]"):
        F.affine_points(lucid.zeros(3), two_by_three)
    # affine_theta + affine_grid + grid_sample(align_corners=True) is warp_affine
    img = lucid.rand(1, 2, 9, 11)
    m = F.affine_matrix(cx=5, cy=4, angle_deg=20, scale=0.9, translate_x=1)
    theta = F.affine_theta(m, (9, 11), (9, 11))
    grid = lucid.nn.functional.affine_grid(theta, [1, 2, 9, 11], align_corners=True)
    ref = lucid.nn.functional.grid_sample(img, grid, align_corners=True)
    np.testing.assert_allclose(F.warp_affine(img, m, (9, 11)).numpy(), ref.numpy(), atol=1e-4)
    with pytest.raises(ValueError, match="perspective row"):
        F.affine_theta([[1, 0, 0], [0, 1, 0], [0.1, 0, 1]], (9, 11), (9, 11))


NP_MODES = {0: "constant", 1: "edge", 2: "symmetric", 3: "wrap", 4: "reflect"}


@pytest.mark.parametrize("border", [0, 1, 2, 3, 4])
def test_warp_affine_translation_matches_numpy_borders(border):
    x = np.random.default_rng(0).random((2, 6, 7)).astype(np.float32)
    dx, dy = 3, -2
    m = [[1, 0, dx], [0, 1, dy], [0, 0, 1]]
    out = F.warp_affine(lucid.tensor(x), m, (6, 7), mode="nearest", border_mode=border, fill=0.25)
    kw = {"constant_values": 0.25} if border == 0 else {}
    padded = np.pad(x, ((0, 0), (8, 8), (8, 8)), mode=NP_MODES[border], **kw)
    ref = padded[:, 8 - dy:8 - dy + 6, 8 - dx:8 - dx + 7]
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-6)


def np_bilinear(img, sx, sy):
    """img [C, H, W] sampled at pixel coordinates sx, sy, zeros outside."""
    c, h, w = img.shape
    x0, y0 = np.floor(sx).astype(int), np.floor(sy).astype(int)
    out = np.zeros((c,) + sx.shape)
    for ox, oy in ((0, 0), (1, 0), (0, 1), (1, 1)):
        xi, yi = x0 + ox, y0 + oy
        wgt = (1 - np.abs(sx - xi)) * (1 - np.abs(sy - yi))
        ok = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
        out += np.where(ok, img[:, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)], 0) * wgt
    return out


def test_warp_affine_homography_matches_numpy_sampling():
    x = np.random.default_rng(1).random((3, 10, 12)).astype(np.float32)
    h = F.perspective_matrix([[0, 0], [11, 0], [11, 9], [0, 9]], [[1, 0.5], [10, 1], [11.5, 9], [-0.5, 8]])
    out = F.warp_affine(lucid.tensor(x), h, (11, 13))
    inv = np.linalg.inv(h.numpy().astype(np.float64))
    ys, xs = np.mgrid[0:11, 0:13].astype(np.float64)
    src = inv @ np.stack([xs.ravel(), ys.ravel(), np.ones(xs.size)])
    ref = np_bilinear(x, (src[0] / src[2]).reshape(11, 13), (src[1] / src[2]).reshape(11, 13))
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-4)
    # batches and integer images go through too (nearest keeps the values exact)
    assert F.warp_affine(lucid.rand(2, 3, 10, 12), h, (5, 6)).shape == (2, 3, 5, 6)
    with pytest.raises(TypeError, match="expected a float image"):
        F.warp_affine(lucid.zeros(3, 4, 4, dtype=lucid.int64), h, (4, 4))
    with pytest.raises(ValueError, match="singular"):
        F.warp_affine(lucid.rand(3, 4, 4), [[1, 1, 0], [1, 1, 0], [0, 0, 1]], (4, 4))
    with pytest.raises(ValueError, match="unknown border_mode 'mirror'"):
        F.warp_affine(lucid.rand(3, 4, 4), h, (4, 4), border_mode="mirror")


def test_remap_and_sample_field_at_points():
    x = np.random.default_rng(2).random((1, 5, 6)).astype(np.float32)
    dx = lucid.full((5, 6), 1.0)
    dy = lucid.full((5, 6), 0.5)
    out = F.remap(lucid.tensor(x), dx, dy)  # reflect_101 outside
    padded = np.pad(x, ((0, 0), (2, 2), (2, 2)), mode="reflect")
    ys, xs = np.mgrid[0:5, 0:6]
    ref = np_bilinear(padded, xs + 1.0 + 2, ys + 0.5 + 2)
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-5)
    with pytest.raises(ValueError, match=r"remap: dx should be a tensor \[H, W\] = \[5, 6\]"):
        F.remap(lucid.tensor(x), lucid.zeros(4, 6), dy)
    field = lucid.tensor(x[0])
    pts = lucid.tensor([[0.5, 0.25], [4.0, 3.5], [2.25, 1.75]])
    ref = np_bilinear(x, pts.numpy()[:, 0], pts.numpy()[:, 1])[0]
    np.testing.assert_allclose(F.sample_field_at_points(field, pts, (5, 6)).numpy()[:, 0], ref, atol=1e-5)


def np_correlate(x, kernel):
    """Correlation of each channel of x [C, H, W] with kernel, reflect_101 borders (kernel
    anchored at its centre, kh // 2, kw // 2)."""
    kh, kw = kernel.shape
    p = np.pad(x, ((0, 0), (kh // 2, kh - 1 - kh // 2), (kw // 2, kw - 1 - kw // 2)), mode="reflect")
    out = np.zeros_like(x, dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            out += kernel[i, j] * p[:, i:i + x.shape[1], j:j + x.shape[2]]
    return out


def test_gaussian_blur_and_depthwise_conv_match_direct_convolution():
    x = np.random.default_rng(3).random((2, 9, 10)).astype(np.float32)
    for sigma, k in ((1.0, None), (0.8, 5), (1.3, 4)):
        size = int(2 * round(3 * sigma) + 1) if k is None else k + 1 - k % 2
        g = np.exp(-((np.arange(size) - size // 2) ** 2) / (2 * sigma ** 2))
        g /= g.sum()
        out = F.gaussian_blur(lucid.tensor(x), sigma, k)
        np.testing.assert_allclose(out.numpy(), np_correlate(x, np.outer(g, g)), atol=1e-5)
    kernel = np.array([[1.0, -2.0], [0.5, 3.0], [0.0, 1.0]])
    out = F.depthwise_conv2d(lucid.tensor(x), kernel.tolist())
    np.testing.assert_allclose(out.numpy(), np_correlate(x, kernel), atol=1e-5)
    with pytest.raises(ValueError, match="sigma should be a positive number, got 0"):
        F.gaussian_blur(lucid.tensor(x), 0)


def test_resize_target():
    assert F.resize_target(30, 40, 15) == (15, 20) and F.resize_target(40, 30, 15) == (20, 15)
    assert F.resize_target(30, 40, (7, 9)) == (7, 9)
    with pytest.raises(TypeError, match="size should be an int or \\(height, width\\)"):
        F.resize_target(30, 40, "big")


# ---- transforms move every target like the pixels -------------------------------------------------------
def lit(h, w, x1, y1, x2, y2, marker):
    """[2, h, w]: channel 0 lit over the box, channel 1 at the marker pixel."""
    img = np.zeros((2, h, w), np.float32)
    img[0, y1:y2, x1:x2] = 1
    img[1, marker[1], marker[0]] = 1
    return img


def lit_box(channel):
    ys, xs = np.nonzero(channel > 0.5)
    return [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]


EXACT = [
    lambda: T.HorizontalFlip(p=1), lambda: T.VerticalFlip(p=1), lambda: T.Flip(p=1), lambda: T.Transpose(p=1),
    lambda: T.RandomRotate90(p=1), lambda: T.D4(), lambda: T.CenterCrop(9, 10), lambda: T.RandomCrop(height=10, width=9),
    lambda: T.Crop(2, 1, 13, 12), lambda: T.PadIfNeeded(16, 20, border_mode=0),
    lambda: T.CropAndPad((1, -2, 3, -1)), lambda: T.Resize(24, 32, interpolation=0),
    lambda: T.RandomScale((1.0, 1.0), interpolation=0, p=1), lambda: T.LongestMaxSize(32, interpolation=0),
    lambda: T.SafeRotate(limit=(90, 90), interpolation=0, border_mode=0, p=1),
    lambda: T.Rotate(limit=(-90, -90), interpolation=0, border_mode=0, p=1),
    lambda: T.BBoxSafeRandomCrop(), lambda: T.RandomCropNearBBox(0.5)]


@pytest.mark.parametrize("make", EXACT)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_exact_transforms_move_boxes_masks_and_keypoints_with_the_pixels(make, seed):
    lucid.manual_seed(seed)
    tf = make()
    size = (12, 12) if type(tf) is T.Rotate else (12, 16)  # a turn in place needs a square
    img = lit(*size, 3, 4, 9, 7, marker=(5, 5))
    sample = {"image": T.Image(lucid.tensor(img)), "mask": T.Mask(lucid.tensor(img[0]).to(lucid.int64)),
              "boxes": T.BoundingBoxes([[3.0, 4.0, 9.0, 7.0]], "xyxy", size, labels=[5]),
              "kps": T.Keypoints([[5.5, 5.5, 2.0]], size)}
    out = tf(sample)
    image = out["image"].data.numpy()
    assert out["boxes"].canvas_size == image.shape[-2:] and out["kps"].canvas_size == image.shape[-2:]
    np.testing.assert_allclose(out["boxes"].data.numpy()[0], lit_box(image[0]), atol=1e-4)
    assert out["boxes"].labels.tolist() == [5]
    np.testing.assert_array_equal(out["mask"].data.numpy(), image[0].round().astype(np.int64))
    x, y, extra = out["kps"].data.numpy()[0]
    assert extra == 2.0
    if 0 <= x < image.shape[-1] and 0 <= y < image.shape[-2]:
        assert image[1, int(math.floor(y)), int(math.floor(x))] > 0.5
    else:  # the crop left the marker out
        assert image[1].max() == 0


def test_bbox_safe_crops_keep_every_box_whole():
    boxes = [[3.0, 4.0, 9.0, 7.0], [12.0, 1.0, 15.0, 3.0]]
    for seed in range(20):
        lucid.manual_seed(seed)
        sample = {"image": lucid.rand(3, 12, 16), "boxes": T.BoundingBoxes(boxes, "xyxy", (12, 16))}
        for tf in (T.BBoxSafeRandomCrop(), T.RandomSizedBBoxSafeCrop(8, 8), T.RandomCropNearBBox()):
            out = tf(sample)["boxes"]
            np.testing.assert_allclose(out.visibility.numpy(), [1.0, 1.0])
    # an eroded union may cut boxes, by at most the erosion
    sample = {"image": lucid.rand(3, 12, 16), "boxes": T.BoundingBoxes(boxes, "xyxy", (12, 16))}
    assert T.RandomSizedBBoxSafeCrop(8, 8)(sample)["image"].shape == (3, 8, 8)
    with pytest.raises(ValueError, match="erosion_rate should be in \\[0, 1\\]"):
        T.BBoxSafeRandomCrop(erosion_rate=2)


@pytest.mark.parametrize("make", [  # border_mode 0: reflections would light copies of the box
    lambda: T.Rotate(limit=(25, 25), border_mode=0, p=1), lambda: T.Affine(rotate=(-30, 30), shear=15, border_mode=0, p=1),
    lambda: T.ShiftScaleRotate(border_mode=0, p=1), lambda: T.Perspective(scale=(0.1, 0.1), border_mode=0, p=1),
    lambda: T.SafeRotate(limit=(40, 40), border_mode=0, p=1)])
def test_warps_keep_the_lit_pixels_inside_the_boxes(make):
    for seed in range(3):
        lucid.manual_seed(seed)
        img = lit(20, 24, 8, 6, 14, 12, marker=(10, 9))
        out = make()({"image": lucid.tensor(img), "boxes": T.BoundingBoxes([[8.0, 6.0, 14.0, 12.0]], "xyxy", (20, 24)),
                      "kps": T.Keypoints([[10.5, 9.5]], (20, 24))})
        x1, y1, x2, y2 = out["boxes"].data.numpy()[0]
        ys, xs = np.nonzero(out["image"].numpy()[0] > 0.5)
        assert xs.min() >= x1 - 1 and xs.max() + 1 <= x2 + 1 and ys.min() >= y1 - 1 and ys.max() + 1 <= y2 + 1
        # the keypoint sits where the marker went
        marker = out["image"].numpy()[1]
        kx, ky = out["kps"].data.numpy()[0]
        my, mx = np.unravel_index(np.argmax(marker), marker.shape)
        assert abs(kx - (mx + 0.5)) <= 1.0 and abs(ky - (my + 0.5)) <= 1.0


@pytest.mark.parametrize("make", [lambda: T.OpticalDistortion(distort_limit=(0.3, 0.3), shift_limit=0, p=1),
                                  lambda: T.GridDistortion(num_steps=3, distort_limit=0.3, p=1),
                                  lambda: T.ElasticTransform(alpha=20, sigma=5, p=1),
                                  lambda: T.GridElasticDeform((2, 2), magnitude=2, p=1)])
def test_distortions_move_keypoints_where_the_pixels_go(make):
    lucid.manual_seed(4)
    img = lit(24, 24, 8, 8, 12, 12, marker=(16, 7))
    out = make()({"image": lucid.tensor(img), "kps": T.Keypoints([[16.5, 7.5]], (24, 24)),
                  "boxes": T.BoundingBoxes([[8.0, 8.0, 12.0, 12.0]], "xyxy", (24, 24))})
    marker = out["image"].numpy()[1]
    my, mx = np.unravel_index(np.argmax(marker), marker.shape)
    kx, ky = out["kps"].data.numpy()[0]
    assert abs(kx - (mx + 0.5)) <= 1.0 and abs(ky - (my + 0.5)) <= 1.0
    x1, y1, x2, y2 = out["boxes"].data.numpy()[0]
    ys, xs = np.nonzero(out["image"].numpy()[0] > 0.5)
    assert xs.min() >= x1 - 1 and xs.max() + 1 <= x2 + 1 and ys.min() >= y1 - 1 and ys.max() + 1 <= y2 + 1


def test_zero_distortions_are_the_identity():
    x = lucid.rand(3, 10, 12)
    np.testing.assert_allclose(T.ElasticTransform(alpha=0, p=1)(x).numpy(), x.numpy(), atol=1e-5)
    np.testing.assert_allclose(T.GridDistortion(distort_limit=0, p=1)(x).numpy(), x.numpy(), atol=1e-5)
    np.testing.assert_allclose(T.Affine(p=1)(x).numpy(), x.numpy(), atol=1e-5)


def test_resizes_and_crops_match_interpolate():
    x = lucid.rand(3, 12, 20)
    ref = lucid.nn.functional.interpolate(x[None], size=(6, 10), mode="bilinear", align_corners=False)[0]
    np.testing.assert_allclose(T.SmallestMaxSize(6)(x).numpy(), ref.numpy(), atol=1e-6)
    np.testing.assert_allclose(T.LongestMaxSize(10)(x).numpy(), ref.numpy(), atol=1e-6)
    assert T.ResizeShortestEdge(24, 30)(x).shape == (3, 18, 30)  # 24 / 12 would make 40 > 30 wide
    assert T.ResizeShortestEdge([6, 9])(x).shape[-2] in (6, 9)
    out = T.RandomSizedCrop((4, 6), 5, 7, w2h_ratio=2.0)(x)
    assert out.shape == (3, 5, 7)
    lucid.manual_seed(0)
    rrc = T.RandomResizedCrop(8, 8, scale=(0.3, 0.6))
    top, left, h, w, size = rrc.make_params(x)
    assert size == (8, 8) and 0.25 <= h * w / 240 <= 0.65 and top + h <= 12 and left + w <= 20
    with pytest.raises(ValueError, match="Crop: expected x_min < x_max"):
        T.Crop(5, 0, 5, 4)
    with pytest.raises(ValueError, match="does not fit the 12x20 image"):
        T.Crop(0, 0, 30, 4)(x)


def test_pads_use_the_border_mode_and_mask_value():
    x = np.random.default_rng(5).random((1, 3, 4)).astype(np.float32)
    for border, mode in ((1, "edge"), (2, "symmetric"), (4, "reflect"), (3, "wrap")):
        out = T.PadIfNeeded(7, 9, border_mode=border)({"image": lucid.tensor(x), "mask": T.Mask(lucid.ones(3, 4))})
        np.testing.assert_allclose(out["image"].numpy(), np.pad(x, ((0, 0), (2, 2), (2, 3)), mode=mode), atol=0)
    out = T.PadIfNeeded(5, 4, border_mode=0, value=0.5, mask_value=7)(
        {"image": lucid.tensor(x), "mask": T.Mask(lucid.ones(3, 4, dtype=lucid.int64))})
    np.testing.assert_array_equal(out["image"].numpy(), np.pad(x, ((0, 0), (1, 1), (0, 0)), constant_values=0.5))
    assert out["mask"].data.numpy()[0].tolist() == [7] * 4 and out["mask"].data.dtype == lucid.int64


def test_grid_shuffle_permutes_cells_and_keypoints_follow():
    x = lucid.arange(2 * 4 * 6, dtype=lucid.float32).reshape(2, 4, 6)
    lucid.manual_seed(2)
    out = T.RandomGridShuffle((2, 3), p=1)({"image": x, "kps": T.Keypoints([[0.5, 0.5]], (4, 6))})
    cells = sorted(out["image"].numpy()[0, r:r + 2, c:c + 2].tobytes() for r in (0, 2) for c in (0, 2, 4))
    assert cells == sorted(x.numpy()[0, r:r + 2, c:c + 2].tobytes() for r in (0, 2) for c in (0, 2, 4))
    kx, ky = out["kps"].data.numpy()[0]
    assert out["image"].numpy()[0, int(ky), int(kx)] == 0.0  # pixel (0, 0) went with its cell
    with pytest.raises(NotImplementedError, match="bounding boxes cannot follow a grid shuffle"):
        T.RandomGridShuffle(p=1)({"image": x, "b": T.BoundingBoxes(BOXES, "xyxy", (4, 6))})


BOXES = [[0.0, 0.0, 2.0, 2.0]]
