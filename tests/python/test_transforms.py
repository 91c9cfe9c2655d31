"""lucid.utils.transforms against torch: torchvision is not installed, so each reference
is the torch.nn.functional computation torchvision's tensor path performs (interpolate,
pad, flip, and its affine grid + grid_sample for rotation), written out here."""

import math
import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import lucid
import lucid.utils.transforms as T
from conftest import to_lucid, to_torch


def image(shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.uint8:
        return torch.randint(0, 256, shape, generator=g, dtype=torch.uint8)
    return torch.rand(shape, generator=g, dtype=dtype)


def check(lt, tt, atol=1e-5):
    assert tuple(lt.shape) == tuple(tt.shape)
    assert str(lt.dtype).split(".")[-1] == str(tt.dtype).split(".")[-1]
    np.testing.assert_allclose(lt.numpy().astype(np.float64), tt.numpy().astype(np.float64), atol=atol, rtol=0)


# ---- torch references (torchvision's tensor code, on torch ops) ---------------------------------------
def ref_resize(img, size, mode="bilinear", antialias=True):
    x = img.reshape(-1, *img.shape[-3:]) if img.ndim >= 3 else img[None, None]
    out_dtype = x.dtype
    if x.dtype not in (torch.float32, torch.float64):
        x = x.float()
    align = False if mode in ("bilinear", "bicubic") else None
    aa = antialias and mode in ("bilinear", "bicubic")
    x = TF.interpolate(x, size=size, mode=mode, align_corners=align, antialias=aa)
    if mode == "bicubic" and out_dtype == torch.uint8:
        x = x.clamp(0, 255)
    if x.dtype != out_dtype:
        x = x.round().to(out_dtype)
    return x.reshape(*img.shape[:-2], *x.shape[-2:])


def ref_rotate(img, angle, mode="nearest", expand=False, center=None, fill=None):
    """torchvision.transforms.functional.rotate for a tensor [N, C, H, W]."""
    n, c, h, w = img.shape
    center_f = [0.0, 0.0] if center is None else [cc - s * 0.5 for cc, s in zip(center, [w, h])]
    rot = math.radians(-angle)
    m = [math.cos(rot), math.sin(rot), 0.0, -math.sin(rot), math.cos(rot), 0.0]
    cx, cy = center_f
    m[2] += m[0] * -cx + m[1] * -cy + cx
    m[5] += m[3] * -cx + m[4] * -cy + cy
    if expand:
        pts = torch.tensor([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0], [0.5 * w, 0.5 * h, 1.0],
                            [0.5 * w, -0.5 * h, 1.0]])
        new = pts @ torch.tensor(m, dtype=torch.float).view(2, 3).T
        half = torch.tensor((w * 0.5, h * 0.5))
        lo, hi = new.min(0).values + half, new.max(0).values + half
        size = torch.ceil((hi / 1e-4).trunc() * 1e-4) - torch.floor((lo / 1e-4).trunc() * 1e-4)
        ow, oh = int(size[0]), int(size[1])
    else:
        ow, oh = w, h
    dtype = img.dtype if img.is_floating_point() else torch.float32
    theta = torch.tensor(m, dtype=dtype).reshape(1, 2, 3)
    base = torch.empty(1, oh, ow, 3, dtype=dtype)
    base[..., 0].copy_(torch.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, steps=ow))
    base[..., 1].copy_(torch.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, steps=oh).unsqueeze(-1))
    base[..., 2].fill_(1)
    grid = base.view(1, oh * ow, 3).bmm(theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h], dtype=dtype))
    grid = grid.view(1, oh, ow, 2).expand(n, oh, ow, 2)
    x = img.to(dtype)
    if fill is not None:
        x = torch.cat([x, torch.ones(n, 1, h, w, dtype=dtype)], 1)
    x = TF.grid_sample(x, grid, mode=mode, padding_mode="zeros", align_corners=False)
    if fill is not None:
        x, mask = x[:, :-1], x[:, -1:].expand(n, c, oh, ow)
        f = torch.tensor(fill, dtype=dtype).view(1, -1, 1, 1).expand_as(x)
        x = torch.where(mask < 0.5, f, x) if mode == "nearest" else x * mask + (1.0 - mask) * f
    if x.dtype != img.dtype:
        x = x.round().to(img.dtype)
    return x


def ref_pad(img, left, right, top, bottom, mode, fill=0):
    if mode == "symmetric":
        a = img.numpy()
        widths = [(0, 0)] * (a.ndim - 2) + [(top, bottom), (left, right)]
        return torch.from_numpy(np.pad(a, widths, mode="symmetric").copy())
    x = img if mode == "constant" or img.ndim >= 3 else img[None]
    x = TF.pad(x.float() if mode != "constant" else x, (left, right, top, bottom),
               mode={"edge": "replicate"}.get(mode, mode), **({"value": float(fill)} if mode == "constant" else {}))
    return x.to(img.dtype).reshape(*img.shape[:-2], *x.shape[-2:])


# ---- ToTensor, Normalize, ConvertImageDtype -------------------------------------------------------------
def test_to_tensor_uint8_hw_and_hwc():
    hw = image((5, 7), torch.uint8)
    out = T.ToTensor()(to_lucid(hw))
    check(out, hw[None].float() / 255)
    hwc = image((5, 7, 3), torch.uint8, seed=1)
    out = T.to_tensor(to_lucid(hwc))
    check(out, hwc.permute(2, 0, 1).float() / 255)
    assert out.is_contiguous()
    assert float(out.max().item()) <= 1.0


def test_to_tensor_other_dtypes_keep_values_and_numpy_arrays():
    f = image((4, 6, 2), torch.float64)
    check(T.to_tensor(to_lucid(f)), f.permute(2, 0, 1))
    a = np.arange(24, dtype=np.uint8).reshape(4, 6)[:, ::-1]  # negative strides: copied
    check(T.to_tensor(a), torch.from_numpy(a.copy())[None].float() / 255)
    i = np.arange(12, dtype=np.int32).reshape(2, 3, 2)
    check(T.to_tensor(i), torch.from_numpy(i).permute(2, 0, 1))


def test_to_tensor_pil_image():
    Image = pytest.importorskip("PIL.Image")
    rgb = np.random.default_rng(0).integers(0, 256, (5, 4, 3), dtype=np.uint8)
    check(T.to_tensor(Image.fromarray(rgb)), torch.from_numpy(rgb).permute(2, 0, 1).float() / 255)
    bw = Image.fromarray(rgb[..., 0] > 128)  # mode "1": 0 / 255
    check(T.to_tensor(bw), torch.from_numpy(rgb[..., 0] > 128)[None].float())


def test_to_tensor_errors():
    with pytest.raises(TypeError, match="pic should be"):
        T.to_tensor([[1, 2]])
    with pytest.raises(ValueError, match="2/3 dimensional"):
        T.to_tensor(lucid.zeros(1, 2, 3, 4, dtype=lucid.uint8))


def test_import_does_not_pull_numpy_or_torch():
    code = "import sys, lucid.utils.transforms; assert 'numpy' not in sys.modules and 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, env=None)


@pytest.mark.parametrize("shape", [(3, 5, 6), (2, 3, 5, 6)])
def test_normalize_matches_formula(shape):
    x = image(shape)
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    lx = to_lucid(x)
    out = T.Normalize(mean, std)(lx)
    check(out, (x - torch.tensor(mean).view(3, 1, 1)) / torch.tensor(std).view(3, 1, 1), atol=1e-6)
    check(lx, x)  # not in place by default
    T.normalize(lx, mean, std, inplace=True)
    check(lx, out, atol=0)
    check(T.normalize(to_lucid(x), 0.5, 2.0), (x - 0.5) / 2.0, atol=1e-6)


def test_normalize_errors():
    with pytest.raises(ValueError, match="std evaluated to zero"):
        T.normalize(lucid.rand(3, 4, 4), [0.0] * 3, [1.0, 0.0, 1.0])
    with pytest.raises(TypeError, match="should be a float tensor"):
        T.normalize(lucid.zeros(3, 4, 4, dtype=lucid.uint8), [0.0] * 3, [1.0] * 3)
    with pytest.raises(ValueError, match=r"\(\.\.\., C, H, W\)"):
        T.Normalize([0.5], [0.5])(lucid.rand(4, 4))
    with pytest.raises(ValueError, match="one per channel \\(3\\)"):
        T.normalize(lucid.rand(3, 4, 4), [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(TypeError, match="lucid Tensor"):
        T.normalize([[[1.0]]], [0.0], [1.0])


def test_convert_image_dtype():
    u = to_lucid(image((3, 4, 4), torch.uint8))
    f = T.ConvertImageDtype(lucid.float32)(u)
    check(f, to_torch(u).float() / 255)
    back = T.convert_image_dtype(f, lucid.uint8)
    check(back, to_torch(u), atol=0)  # (v / 255 * 255.999) truncates back to v
    check(T.convert_image_dtype(u, lucid.int16), to_torch(u).to(torch.int16) * 128, atol=0)
    check(T.convert_image_dtype(to_lucid(torch.tensor([32767, 256, 255], dtype=torch.int16)), lucid.uint8),
          torch.tensor([255, 2, 1], dtype=torch.uint8), atol=0)
    with pytest.raises(RuntimeError, match="cannot be performed safely"):
        T.convert_image_dtype(f, lucid.int32)
    with pytest.raises(TypeError, match="expected float or integer"):
        T.convert_image_dtype(f, lucid.bool)


# ---- Compose, Lambda, repr ----------------------------------------------------------------------------
def test_compose_order_and_lambda():
    calls = []
    c = T.Compose([T.Lambda(lambda x: calls.append("a") or x + 1), T.Lambda(lambda x: calls.append("b") or x * 10)])
    assert c(lucid.tensor(1.0)).item() == 20.0 and calls == ["a", "b"]
    with pytest.raises(TypeError, match="should be callable"):
        T.Lambda(3)
    with pytest.raises(TypeError, match="list of callables"):
        T.Compose([T.ToTensor(), 3])


def test_reprs_match_torchvision():
    assert repr(T.Compose([T.ToTensor(), T.Lambda(abs)])) == "Compose(\n    ToTensor()\n    Lambda()\n)"
    assert repr(T.Normalize((0.5,), (0.25,))) == "Normalize(mean=(0.5,), std=(0.25,))"
    assert repr(T.RandomCrop(4, padding=2)) == "RandomCrop(size=(4, 4), padding=2)"
    assert repr(T.CenterCrop((3, 5))) == "CenterCrop(size=(3, 5))"
    assert repr(T.RandomHorizontalFlip()) == "RandomHorizontalFlip(p=0.5)"
    assert repr(T.RandomVerticalFlip(0.3)) == "RandomVerticalFlip(p=0.3)"
    assert repr(T.Resize(8)) == "Resize(size=8, interpolation=bilinear, max_size=None, antialias=True)"
    assert repr(T.RandomRotation(10)) == \
        "RandomRotation(degrees=[-10.0, 10.0], interpolation=nearest, expand=False, fill=0)"
    assert repr(T.RandomRotation((0, 90), "bilinear", center=(1, 2), fill=1)) == \
        "RandomRotation(degrees=[0.0, 90.0], interpolation=bilinear, expand=False, center=(1, 2), fill=1)"


# ---- flips -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 6), (3, 5, 6), (2, 3, 5, 6)])
def test_flips(shape):
    x = image(shape, torch.uint8)
    lx = to_lucid(x)
    check(T.RandomHorizontalFlip(p=1.0)(lx), torch.flip(x, [-1]), atol=0)
    check(T.RandomVerticalFlip(p=1.0)(lx), torch.flip(x, [-2]), atol=0)
    assert T.RandomHorizontalFlip(p=0.0)(lx) is lx
    assert T.RandomVerticalFlip(p=0.0)(lx) is lx


def test_random_flip_is_seeded():
    flip = T.RandomHorizontalFlip()
    x = lucid.arange(4.0).reshape(1, 2, 2)
    lucid.manual_seed(3)
    first = [flip(x)[0, 0, 0].item() for _ in range(20)]
    lucid.manual_seed(3)
    assert [flip(x)[0, 0, 0].item() for _ in range(20)] == first
    assert set(first) == {0.0, 1.0}  # both outcomes occur in 20 draws at p=0.5
    with pytest.raises(ValueError, match="probability"):
        T.RandomHorizontalFlip(p=1.5)


# ---- pad, crops ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
@pytest.mark.parametrize("shape", [(5, 6), (3, 5, 6), (2, 3, 5, 6)])
def test_pad_modes(mode, shape):
    x = image(shape, torch.uint8)
    for padding, ltrb in [(2, (2, 2, 2, 2)), ([1, 3], (1, 3, 1, 3)), ((1, 2, 3, 4), (1, 2, 3, 4))]:
        out = T.pad(to_lucid(x), padding, fill=7, padding_mode=mode)
        left, top, right, bottom = ltrb
        check(out, ref_pad(x, left, right, top, bottom, mode, fill=7), atol=0)


def test_pad_negative_crops_and_errors():
    x = image((3, 5, 6))
    check(T.pad(to_lucid(x), [-1, 2, 1, -2]), TF.pad(x, (-1, 1, 2, -2)))
    check(T.pad(to_lucid(x), [-1, 1], padding_mode="symmetric"), ref_pad(x[..., :, 1:-1], 0, 0, 1, 1, "symmetric"))
    with pytest.raises(ValueError, match=r"padding \(6, 6\) along the width \(6\).*at most 5"):
        T.pad(to_lucid(x), 6, padding_mode="reflect")
    with pytest.raises(ValueError, match="at most 5"):
        T.pad(to_lucid(x), [0, 6], padding_mode="symmetric")
    with pytest.raises(ValueError, match="constant, edge, reflect or symmetric"):
        T.pad(to_lucid(x), 1, padding_mode="wrap")
    with pytest.raises(ValueError, match="1, 2, or 4 element"):
        T.pad(to_lucid(x), [1, 2, 3])
    # (a tuple fill is for PIL images, as in torchvision: a tensor refuses it when padded)
    with pytest.raises(TypeError, match="fill should be an int or float"):
        T.pad(to_lucid(x), 1, fill=(1, 2))


def test_center_crop_and_crop_with_padding():
    x = image((3, 7, 8), torch.uint8)
    lx = to_lucid(x)
    check(T.CenterCrop(4)(lx), x[:, 2:6, 2:6], atol=0)  # round(1.5) == 2, as torchvision
    check(T.CenterCrop((3, 5))(lx), x[:, 2:5, 2:7], atol=0)
    # larger than the image: zero padding, the odd pixel right / bottom
    big = T.center_crop(lx, [10, 11])
    check(big, TF.pad(x, (1, 2, 1, 2)), atol=0)
    check(T.center_crop(to_lucid(x[0]), 9), TF.pad(x[0], (0, 1, 1, 1)), atol=0)
    # crop reaching outside the image is zero-filled there
    check(T.crop(lx, -2, 5, 4, 6), TF.pad(x, (0, 3, 2, 0))[:, 0:4, 5:11], atol=0)
    with pytest.raises(ValueError, match="only two dimensions"):
        T.CenterCrop((1, 2, 3))


def test_random_crop_window_and_seed():
    x = image((3, 6, 7))
    lx = to_lucid(x)
    padded = TF.pad(x, (2, 2, 2, 2))
    rc = T.RandomCrop(5, padding=2)
    lucid.manual_seed(11)
    crops = [rc(lx) for _ in range(12)]
    lucid.manual_seed(11)
    again = [rc(lx) for _ in range(12)]
    positions = set()
    for c, d in zip(crops, again):
        assert tuple(c.shape) == (3, 5, 5)
        check(c, to_torch(d), atol=0)
        tc = to_torch(c)
        found = [(i, j) for i in range(padded.shape[1] - 4) for j in range(padded.shape[2] - 4)
                 if torch.equal(padded[:, i:i + 5, j:j + 5], tc)]
        assert found, "the crop is not a window of the padded image"
        positions.add(found[0])
    assert len(positions) > 1  # the place varies
    assert tuple(T.RandomCrop((6, 7))(lx).shape) == (3, 6, 7)


def test_random_crop_pad_if_needed_and_errors():
    x = image((1, 3, 4), torch.uint8)
    out = T.RandomCrop((5, 6), pad_if_needed=True, fill=9)(to_lucid(x))
    # pad_if_needed pads the shortfall on both sides (width 2 + 4 + 2, height 2 + 3 + 2), then crops
    padded = TF.pad(x, (2, 2, 2, 2), value=9)
    to = to_torch(out)
    assert any(torch.equal(padded[:, i:i + 5, j:j + 6], to) for i in range(3) for j in range(3))
    with pytest.raises(ValueError, match=r"Required crop size \(5, 6\) is larger than input image size \(3, 4\)"):
        T.RandomCrop((5, 6))(to_lucid(x))
    with pytest.raises(ValueError, match=r"crop size \(9, 9\) is larger than input image size \(7, 8\)"):
        T.RandomCrop(9, padding=2)(to_lucid(x))
    with pytest.raises(ValueError, match="constant, edge, reflect or symmetric"):
        T.RandomCrop(2, padding=1, padding_mode="mirror")


# ---- resize ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic", "nearest-exact"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.uint8])
def test_resize_matches_interpolate(mode, dtype):
    x = image((3, 12, 10), dtype)
    for size in [(6, 5), (17, 23), (5, 14)]:
        out = T.Resize(size, interpolation=mode)(to_lucid(x))
        check(out, ref_resize(x, size, mode), atol=1e-4 if dtype == torch.float32 else 1)
    out = T.resize(to_lucid(x), [7, 9], mode, antialias=False)
    check(out, ref_resize(x, [7, 9], mode, antialias=False), atol=1e-4 if dtype == torch.float32 else 1)


def test_resize_smaller_edge_max_size_and_shapes():
    x = to_lucid(image((2, 3, 12, 20)))
    assert tuple(T.Resize(6)(x).shape) == (2, 3, 6, 10)
    assert tuple(T.Resize([9])(x[0, 0]).shape) == (9, 15)
    assert tuple(T.Resize(6, max_size=8)(x).shape) == (2, 3, 4, 8)
    assert tuple(T.Resize(None, max_size=10)(x).shape) == (2, 3, 6, 10)
    check(T.Resize(7)(x), ref_resize(to_torch(x), [7, 11]), atol=1e-5)
    assert T.Resize((12, 20))(x) is x
    with pytest.raises(ValueError, match="max_size = 6 must be strictly greater"):
        T.resize(x, 6, max_size=6)
    with pytest.raises(ValueError, match="max_size should only be passed"):
        T.Resize((4, 4), max_size=10)
    with pytest.raises(ValueError, match="1 or 2 element"):
        T.Resize((1, 2, 3))
    with pytest.raises(ValueError, match="unsupported with tensor input"):
        T.rotate(x, 10, T.InterpolationMode.BICUBIC)
    with pytest.raises(ValueError, match="unknown interpolation 'lanczos'"):
        T.Resize(4, interpolation="lanczos")


# ---- rotation -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
@pytest.mark.parametrize("expand", [False, True])
def test_rotate_matches_affine_grid_sample(mode, expand):
    x = image((2, 3, 9, 12))
    for angle, center, fill in [(33.7, None, None), (-71.0, (3, 4), [0.5]), (140.0, None, [0.1, 0.2, 0.3])]:
        out = T.rotate(to_lucid(x), angle, mode, expand=expand, center=center, fill=fill)
        check(out, ref_rotate(x, angle, mode, expand, center, fill), atol=1e-4)


def test_rotate_90_is_rot90_and_keeps_dtype():
    x = image((3, 8, 8), torch.uint8)
    for mode in ("nearest", "bilinear"):
        out = T.rotate(to_lucid(x), 90.0, mode)
        assert out.dtype == lucid.uint8
        check(out, torch.rot90(x, 1, (-2, -1)), atol=0)  # counter-clockwise
        check(T.rotate(to_lucid(x[0]), -90, mode), torch.rot90(x[0], -1, (-2, -1)), atol=0)
    rect = image((1, 4, 6))
    out = T.rotate(to_lucid(rect), 90, expand=True)
    check(out, torch.rot90(rect, 1, (-2, -1)), atol=0)
    check(T.rotate(to_lucid(x), 0.0), x, atol=0)


def test_random_rotation_seeded_and_fill():
    x = to_lucid(image((1, 7, 7)))
    rr = T.RandomRotation((10, 80), fill=2.0)
    lucid.manual_seed(5)
    a = rr(x)
    lucid.manual_seed(5)
    angle = T.RandomRotation.get_params(rr.degrees)
    assert 10 <= angle < 80
    check(a, ref_rotate(to_torch(x)[None], angle, "nearest", fill=[2.0])[0], atol=1e-5)
    assert (a == 2.0).any().item()  # the corners get the fill
    with pytest.raises(ValueError, match="must be positive"):
        T.RandomRotation(-5)
    with pytest.raises(ValueError, match=r"fill.*\(2 != 1\)"):
        T.rotate(x, 10.0, fill=[1.0, 2.0])
    with pytest.raises(TypeError, match="angle should be an int or float"):
        T.rotate(x, "10")


# ---- DataLoader workers --------------------------------------------------------------------------------
class _Images(lucid.utils.data.Dataset):
    def __init__(self, transform):
        self.transform = transform

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.transform(lucid.arange(36, dtype=lucid.uint8).reshape(6, 6) + i)


@pytest.mark.usefixtures("cpu_default")  # forked workers cannot use CUDA (as in torch): CPU tensors
def test_transforms_in_dataloader_workers_are_reproducible():
    t = T.Compose([T.ToTensor(), T.RandomCrop(4, padding=1), T.RandomHorizontalFlip()])
    pickle.dumps(T.Compose([T.ToTensor(), T.RandomCrop(4), T.Resize(3), T.RandomRotation(5)]))

    def run():
        lucid.manual_seed(0)
        loader = lucid.utils.data.DataLoader(_Images(t), batch_size=2, num_workers=2)
        return [b.tolist() for b in loader]
    first = run()
    assert first == run()
    assert len(first) == 4 and len(first[0]) == 2 and len(first[0][0][0]) == 4
