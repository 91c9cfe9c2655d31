"""lucid.utils.transforms on PIL images (PIL in, PIL out; ToTensor, PILToTensor, ToPILImage),
checked two ways: against Pillow's own operations with torchvision's rules written out
(always run), and against torchvision itself where it is installed (it is not a
requirement: see requirements-dev.txt)."""

import io
import subprocess
import sys

import numpy as np
import pytest
import torch

import lucid
import lucid.utils.transforms as T
from conftest import to_lucid

Image = pytest.importorskip("PIL.Image")
from PIL import ImageEnhance, ImageOps  # noqa: E402

try:
    import torchvision.transforms as TV
    import torchvision.transforms.functional as TVF
except ImportError:
    TV = TVF = None
needs_tv = pytest.mark.skipif(TV is None, reason="torchvision is not installed")


def rgb(h=9, w=13, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def pil(mode, h=9, w=13, seed=0):
    """A random image of mode, made through the mode's natural array type."""
    a = rgb(h, w, seed)
    if mode == "I":
        return Image.fromarray(a[..., 0].astype(np.int32) * 40000 - 2 ** 30)
    if mode == "I;16":
        return Image.fromarray(a[..., 0].astype(np.uint16) * 257)
    if mode == "F":
        return Image.fromarray(a[..., 0].astype(np.float32) / 7 - 3)
    if mode == "1":
        return Image.fromarray(a[..., 0] > 128)
    if mode == "P":
        return Image.fromarray(a).quantize(16)
    return Image.fromarray(a).convert(mode)


def same(a, b):
    """Two PIL images of the same mode, size and pixels."""
    assert type(a).__module__.startswith("PIL.") and type(b).__module__.startswith("PIL.")
    assert (a.mode, a.size) == (b.mode, b.size)
    assert a.tobytes() == b.tobytes()


def zero_fill(img):
    """0 as PIL takes it for img: one value per band."""
    return 0 if len(img.getbands()) == 1 else (0,) * len(img.getbands())


def check(lt, tt, atol=0):
    assert tuple(lt.shape) == tuple(tt.shape)
    assert str(lt.dtype).split(".")[-1] == str(tt.dtype).split(".")[-1]
    np.testing.assert_allclose(lt.numpy().astype(np.float64), tt.numpy().astype(np.float64), atol=atol, rtol=0)


MODES = ["L", "RGB", "RGBA", "YCbCr", "LA", "I", "F"]


# ---- importing ------------------------------------------------------------------------------------------
def run_python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_import_loads_neither_pil_nor_numpy():
    r = run_python("import sys, lucid, lucid.utils.transforms as T\n"
                   "T.Compose([T.Resize(3), T.ToTensor()])(lucid.rand(3, 5, 5))\n"
                   "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PIL', 'numpy')))")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_without_pillow_the_errors_say_it_is_missing():
    r = run_python("import sys; sys.modules['PIL'] = None\n"  # import PIL now fails, as when not installed
                   "import lucid, lucid.utils.transforms as T\n"
                   "for f in (lambda: T.Resize(3)([[1]]), lambda: T.ToTensor()('x'),\n"
                   "          lambda: T.ToPILImage()(lucid.rand(1, 2, 2))):\n"
                   "    try: f()\n"
                   "    except (TypeError, ImportError) as e: print(type(e).__name__, e)\n")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 3 and all("Pillow is not installed (pip install pillow)" in line for line in lines)
    assert lines[0].startswith("TypeError") and lines[2].startswith("ModuleNotFoundError")


# ---- geometry against PIL's own operations -----------------------------------------------------------
@pytest.mark.parametrize("mode", MODES + ["1", "P", "I;16"])
def test_flips_and_crops_are_pil_operations(mode):
    img = pil(mode)
    same(T.RandomHorizontalFlip(p=1.0)(img), img.transpose(Image.FLIP_LEFT_RIGHT))
    same(T.RandomVerticalFlip(p=1.0)(img), img.transpose(Image.FLIP_TOP_BOTTOM))
    assert T.RandomHorizontalFlip(p=0.0)(img) is img
    same(T.crop(img, 2, 3, 4, 5), img.crop((3, 2, 8, 6)))
    same(T.crop(img, -2, 10, 4, 5), img.crop((10, -2, 15, 2)))  # outside the image: zeros
    # CenterCrop: round((9 - 5) / 2) = 2 rows, round((13 - 6) / 2) = round(3.5) = 4 columns
    same(T.CenterCrop((5, 6))(img), img.crop((4, 2, 10, 7)))
    # larger than the image: zero padding, the odd pixel going right / bottom
    same(T.CenterCrop((12, 14))(img), ImageOps.expand(img, (0, 1, 1, 2), fill=zero_fill(img)))
    assert T.get_dimensions(img) == [len(img.getbands()), 9, 13]
    assert T.functional.get_image_size(img) == [13, 9]


@pytest.mark.parametrize("mode", ["L", "RGB", "YCbCr", "RGBA", "I", "F"])
@pytest.mark.parametrize("interp, pil_filter", [("bilinear", Image.BILINEAR), ("nearest", Image.NEAREST),
                                                ("bicubic", Image.BICUBIC)])
def test_resize_is_pil_resize_with_torchvision_sizes(mode, interp, pil_filter):
    img = pil(mode, h=9, w=13)
    # an int sets the smaller edge, the other truncated: 13 * 5 / 9 = 7.2 -> 7
    same(T.Resize(5, interpolation=interp)(img), img.resize((7, 5), pil_filter))
    same(T.Resize([20], interpolation=interp)(img), img.resize((28, 20), pil_filter))
    same(T.Resize((4, 11), interpolation=interp)(img), img.resize((11, 4), pil_filter))
    same(T.Resize(8, max_size=10, interpolation=interp)(img), img.resize((10, 7), pil_filter))  # 8x11 -> 7x10
    same(T.resize(img, [6, 6], interpolation=pil_filter), img.resize((6, 6), pil_filter))  # Pillow's int constants
    assert T.Resize((9, 13))(img) is img


def test_resize_and_rotate_refuse_what_pil_lacks():
    img = pil("RGB")
    with pytest.raises(ValueError, match="Pillow resampling filter 1 has no InterpolationMode"):
        T.Resize(4, interpolation=Image.LANCZOS)
    with pytest.raises(ValueError, match="unsupported with tensor input"):
        T.RandomRotation(10, interpolation="bicubic")(lucid.rand(3, 4, 4))
    T.RandomRotation(10, interpolation="bicubic")(img)  # bicubic is fine for PIL


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA", "F", "1", "P"])
def test_pad_is_pil_expand_and_numpy_pad(mode):
    img = pil(mode)
    bands = len(img.getbands())
    fill = 7 if bands == 1 else tuple(range(3, 3 + bands))
    same(T.Pad((1, 2, 3, 4), fill=fill)(img), ImageOps.expand(img, (1, 2, 3, 4), fill=fill))
    same(T.pad(img, [-2, 3]), ImageOps.expand(img, (-2, 3), fill=zero_fill(img)))
    arr = np.asarray(img)
    for padding_mode in ("edge", "reflect", "symmetric"):
        out = T.Pad((2, 1, 0, 3), padding_mode=padding_mode)(img)
        widths = ((1, 3), (2, 0)) + (((0, 0),) if arr.ndim == 3 else ())
        want = np.pad(arr, widths, mode=padding_mode)
        assert out.mode == img.mode and out.size == (want.shape[1], want.shape[0])
        np.testing.assert_array_equal(np.asarray(out), want)
        if mode == "P":
            assert out.getpalette() == img.getpalette()
    with pytest.raises(ValueError, match="does not match the number of channels"):
        T.pad(img, 1, fill=(1,) * (bands + 1))


@pytest.mark.parametrize("mode", ["L", "RGB", "F"])
def test_rotate_is_pil_rotate(mode):
    img = pil(mode)
    same(T.rotate(img, 30), img.rotate(30, Image.NEAREST, False, None, fillcolor=zero_fill(img)))
    fill = 5 if mode != "RGB" else (1, 2, 3)
    same(T.rotate(img, -47.5, "bilinear", expand=True, center=(2, 3), fill=fill),
         img.rotate(-47.5, Image.BILINEAR, True, (2, 3), fillcolor=fill))
    same(T.rotate(img, 90, T.InterpolationMode.BICUBIC), img.rotate(90, Image.BICUBIC))


# ---- colour against PIL -------------------------------------------------------------------------------
def test_grayscale_and_enhancers_are_pil_operations():
    img = pil("RGB")
    gray = img.convert("L")
    same(T.Grayscale()(img), gray)
    same(T.Grayscale(3)(img), Image.merge("RGB", (gray, gray, gray)))
    same(T.RandomGrayscale(p=1.0)(img), Image.merge("RGB", (gray, gray, gray)))  # keeps 3 channels
    same(T.RandomGrayscale(p=1.0)(gray), gray)
    same(T.functional.to_grayscale(img), gray)
    same(T.functional.adjust_brightness(img, 1.3), ImageEnhance.Brightness(img).enhance(1.3))
    same(T.functional.adjust_contrast(img, 0.6), ImageEnhance.Contrast(img).enhance(0.6))
    same(T.functional.adjust_saturation(img, 1.7), ImageEnhance.Color(img).enhance(1.7))
    h, s, v = img.convert("HSV").split()
    shifted = Image.fromarray(((np.asarray(h).astype(np.int64) + int(-0.2 * 255)) % 256).astype(np.uint8))
    same(T.functional.adjust_hue(img, -0.2), Image.merge("HSV", (shifted.convert("L"), s, v)).convert("RGB"))
    same(T.functional.adjust_hue(gray, 0.3), gray)
    with pytest.raises(ValueError, match="is not in"):
        T.functional.adjust_hue(img, 0.6)
    with pytest.raises(TypeError, match="input should be PIL Image"):
        T.functional.to_grayscale(lucid.rand(3, 2, 2))


# ---- conversions -----------------------------------------------------------------------------------------
def tv_to_tensor_reference(img):
    """torchvision's to_tensor written with NumPy."""
    dtypes = {"I": np.int32, "I;16": np.int16, "F": np.float32}
    a = np.array(img, dtypes.get(img.mode, np.uint8), copy=True)
    if img.mode == "1":
        a = 255 * a
    t = torch.from_numpy(a).view(img.size[1], img.size[0], len(img.getbands())).permute(2, 0, 1).contiguous()
    return t.float().div(255) if t.dtype == torch.uint8 else t


@pytest.mark.parametrize("mode", MODES + ["1", "P", "I;16", "CMYK", "HSV"])
def test_to_tensor_and_pil_to_tensor_modes(mode):
    img = pil(mode)
    check(T.ToTensor()(img), tv_to_tensor_reference(img), atol=1e-7)
    values = T.PILToTensor()(img)
    want = torch.from_numpy(np.array(img)).view(img.size[1], img.size[0], -1).permute(2, 0, 1)
    if mode == "I;16":
        want = want.to(torch.int32)  # lucid has no uint16
    check(values, want)


def test_to_pil_image_modes_and_round_trips():
    for mode in MODES + ["I;16", "HSV", "CMYK", "RGBX"]:
        img = pil(mode) if mode != "RGBX" else pil("RGB").convert("RGBX")
        values = T.pil_to_tensor(img) if mode != "I;16" else T.to_tensor(img)  # int16 is what makes I;16
        out = T.ToPILImage(mode=mode if mode in ("YCbCr", "HSV", "CMYK", "RGBX", "F") else None)(values)
        same(out, img)
    x = lucid.rand(3, 4, 5)
    want = (x.permute(1, 2, 0).numpy() * 255).astype(np.uint8)  # scaled and truncated
    np.testing.assert_array_equal(np.asarray(T.ToPILImage()(x)), want)
    assert T.to_pil_image(x[:1]).mode == "L" and T.to_pil_image(x[0]).mode == "L"
    same(T.to_pil_image(x[0], mode="F"), Image.fromarray(x[0].numpy()))
    two = T.to_pil_image(x[:2])
    assert two.mode == "LA"
    np.testing.assert_array_equal(np.asarray(two), want[..., :2])
    arr = rgb()
    same(T.to_pil_image(arr), Image.fromarray(arr))  # a NumPy array [H, W, C]
    same(T.to_pil_image(arr[..., 0]), Image.fromarray(arr[..., 0]))
    with pytest.raises(ValueError, match="incorrect mode"):
        T.to_pil_image(x[:1], mode="I")
    with pytest.raises(ValueError, match="only modes"):
        T.to_pil_image(x, mode="RGBA")
    with pytest.raises(ValueError, match="> 4 channels"):
        T.to_pil_image(lucid.rand(5, 2, 2))
    with pytest.raises(TypeError, match="not supported"):
        T.to_pil_image(lucid.zeros(2, 2, 3, dtype=lucid.int32).permute(2, 0, 1))
    with pytest.raises(TypeError, match="pic should be a lucid Tensor or a NumPy array"):
        T.to_pil_image([[1, 2]])
    with pytest.raises(TypeError, match="pic should be PIL Image"):
        T.pil_to_tensor(x)
    assert repr(T.ToPILImage()) == "ToPILImage()" and repr(T.ToPILImage("RGB")) == "ToPILImage(mode=RGB)"


def test_saved_outputs_reload_equal():
    out = T.ToPILImage()(lucid.rand(3, 6, 7))
    buf = io.BytesIO()
    out.save(buf, format="PNG")
    same(Image.open(io.BytesIO(buf.getvalue())), out)


def test_new_transforms_pickle():
    """DataLoader workers get their transforms pickled."""
    import pickle
    t = T.Compose([T.RandomResizedCrop(8), T.ColorJitter(0.1, 0.2), T.RandomGrayscale(), T.ToPILImage(),
                   T.PILToTensor(), T.FiveCrop(2)])
    img = T.pil_to_tensor(pil("RGB"))
    lucid.manual_seed(0)
    want = t(img)
    lucid.manual_seed(0)
    got = pickle.loads(pickle.dumps(t))(img)
    assert all(a.equal(b) for a, b in zip(got, want))


# ---- the example programs' pipelines -----------------------------------------------------------------------
def test_super_resolution_pipeline():
    """pytorch/examples super_resolution: the Y band of YCbCr, centre-cropped then downscaled."""
    img = pil("RGB", h=40, w=50).convert("YCbCr")
    y, _, _ = img.split()
    crop_size, factor = 36, 3
    inp = T.Compose([T.CenterCrop(crop_size), T.Resize(crop_size // factor), T.ToTensor()])(y)
    target = T.Compose([T.CenterCrop(crop_size), T.ToTensor()])(y)
    cropped = y.crop((7, 2, 43, 38))
    check(inp, torch.from_numpy(np.array(cropped.resize((12, 12), Image.BILINEAR)))[None].float() / 255)
    check(target, torch.from_numpy(np.array(cropped))[None].float() / 255)
    # and back: the output's Y band as L, merged and converted as the example does
    out_y = T.ToPILImage()(inp.clamp(0, 1))
    assert out_y.mode == "L" and out_y.size == (12, 12)
    merged = Image.merge("YCbCr", [out_y, out_y, out_y]).convert("RGB")
    assert merged.mode == "RGB"


def test_dcgan_pipeline():
    img = pil("RGB", h=80, w=100)
    t = T.Compose([T.Resize(64), T.CenterCrop(64), T.ToTensor(), T.Normalize((0.5,) * 3, (0.5,) * 3)])
    out = t(img)
    resized = img.resize((80, 64), Image.BILINEAR).crop((8, 0, 72, 64))
    want = (torch.from_numpy(np.array(resized)).permute(2, 0, 1).float() / 255 - 0.5) / 0.5
    check(out, want, atol=1e-6)


# ---- random transforms: seeded, deterministic, and the parameters they draw --------------------------------
RANDOM = [lambda: T.RandomCrop(7, padding=2), lambda: T.RandomCrop((12, 15), pad_if_needed=True, fill=(1, 2, 3)),
          lambda: T.RandomCrop(6, padding=(1, 2), padding_mode="reflect"), lambda: T.RandomResizedCrop(8),
          lambda: T.RandomResizedCrop((5, 7), scale=(0.5, 1.0), interpolation="bicubic"),
          lambda: T.RandomRotation(25, fill=(9, 8, 7)), lambda: T.RandomHorizontalFlip(),
          lambda: T.RandomGrayscale(0.5), lambda: T.ColorJitter(0.4, 0.4, 0.4, 0.1)]
SIZES = [(7, 7), (12, 15), (6, 6), (8, 8), (5, 7), (9, 13), (9, 13), (9, 13), (9, 13)]


@pytest.mark.parametrize("i", range(len(RANDOM)))
def test_random_transforms_seeded(i):
    img = pil("RGB")
    outs = []
    for seed in (0, 0, 1, 2, 3):
        lucid.manual_seed(seed)
        outs.append(RANDOM[i]()(img))
    for out in outs:
        assert out.mode == "RGB" and (out.size[1], out.size[0]) == SIZES[i]
    same(outs[0], outs[1])
    assert len({o.tobytes() for o in outs[1:]}) > 1  # different seeds, different draws
    t = RANDOM[i]()
    if i == 1:  # a fill per band is for PIL images, as torchvision
        with pytest.raises(TypeError, match="fill should be an int or float for tensor images"):
            t(T.pil_to_tensor(img))
        return
    tensor_out = t(T.pil_to_tensor(img))  # the same transform takes tensors
    assert tuple(tensor_out.shape) == (3,) + SIZES[i]


def test_random_crop_and_resized_crop_use_their_params():
    img = pil("RGB", h=20, w=30)
    lucid.manual_seed(5)
    i, j, h, w = T.RandomResizedCrop.get_params(img, (0.08, 1.0), (3 / 4, 4 / 3))
    lucid.manual_seed(5)
    same(T.RandomResizedCrop(10)(img), img.crop((j, i, j + w, i + h)).resize((10, 10), Image.BILINEAR))
    padded = ImageOps.expand(img, 3, fill=(0, 0, 0))
    lucid.manual_seed(6)
    i, j, h, w = T.RandomCrop.get_params(padded, (8, 9))
    lucid.manual_seed(6)
    same(T.RandomCrop((8, 9), padding=3)(img), padded.crop((j, i, j + w, i + h)))
    lucid.manual_seed(7)
    angle = T.RandomRotation.get_params([-40.0, 40.0])
    lucid.manual_seed(7)
    same(T.RandomRotation(40)(img), img.rotate(angle, Image.NEAREST, fillcolor=(0, 0, 0)))


def test_five_and_ten_crop():
    img = pil("RGB")
    tl, tr, bl, br, c = T.FiveCrop((4, 5))(img)
    for got, box in ((tl, (0, 0, 5, 4)), (tr, (8, 0, 13, 4)), (bl, (0, 5, 5, 9)), (br, (8, 5, 13, 9)),
                     (c, (4, 2, 9, 6))):
        same(got, img.crop(box))
    ten = T.TenCrop(4, vertical_flip=True)(img)
    assert len(ten) == 10
    same(ten[5], img.transpose(Image.FLIP_TOP_BOTTOM).crop((0, 0, 4, 4)))
    with pytest.raises(ValueError, match="bigger than input size"):
        T.FiveCrop(10)(img)


# ---- against torchvision itself ---------------------------------------------------------------------
DETERMINISTIC = [
    ("Resize(5)", lambda M: M.Resize(5)),
    ("Resize((7, 4), bicubic)", lambda M: M.Resize((7, 4), M.InterpolationMode.BICUBIC)),
    ("Resize(20, nearest)", lambda M: M.Resize(20, M.InterpolationMode.NEAREST)),
    ("CenterCrop(5)", lambda M: M.CenterCrop(5)), ("CenterCrop((11, 16))", lambda M: M.CenterCrop((11, 16))),
    ("Pad(3)", lambda M: M.Pad(3)), ("Pad((1, 2), fill=9)", lambda M: M.Pad((1, 2), fill=9)),
    ("Pad edge", lambda M: M.Pad((1, 2, 3, 0), padding_mode="edge")),
    ("Pad reflect", lambda M: M.Pad(2, padding_mode="reflect")),
    ("Pad symmetric", lambda M: M.Pad([3, 1], padding_mode="symmetric")),
    ("Grayscale", lambda M: M.Grayscale()), ("Grayscale(3)", lambda M: M.Grayscale(3)),
    ("hflip", lambda M: M.RandomHorizontalFlip(1.0)), ("vflip", lambda M: M.RandomVerticalFlip(1.0)),
]


@needs_tv
@pytest.mark.parametrize("name, make", DETERMINISTIC, ids=[d[0] for d in DETERMINISTIC])
@pytest.mark.parametrize("mode", ["L", "RGB", "YCbCr", "F"])
def test_matches_torchvision_on_pil(name, make, mode):
    img = pil(mode)
    ours, theirs = make(T)(img), make(TV)(img)
    if mode == "YCbCr" and "Pad " in name:
        # torchvision's mirroring pad remakes the image from its array, which PIL labels RGB;
        # lucid keeps the mode (the pixels are the same).
        assert ours.mode == "YCbCr" and theirs.mode == "RGB"
        theirs = Image.frombytes("YCbCr", theirs.size, theirs.tobytes())
    same(ours, theirs)


@needs_tv
@pytest.mark.parametrize("mode", MODES + ["1", "P", "I;16"])
def test_conversions_match_torchvision(mode):
    img = pil(mode)
    check(T.to_tensor(img), TVF.to_tensor(img))
    if mode != "I;16":
        check(T.pil_to_tensor(img), TVF.pil_to_tensor(img))
    if mode in ("L", "RGB", "RGBA", "LA", "I", "F"):
        same(T.to_pil_image(T.pil_to_tensor(img)), TVF.to_pil_image(TVF.pil_to_tensor(img)))
    x = torch.rand(3, 5, 6)
    same(T.to_pil_image(to_lucid(x)), TVF.to_pil_image(x))
    same(T.to_pil_image(to_lucid(x[0])), TVF.to_pil_image(x[0]))
    same(T.to_pil_image(to_lucid(x[0]), "F"), TVF.to_pil_image(x[0], "F"))


@needs_tv
def test_functional_colour_and_rotation_match_torchvision():
    img = pil("RGB")
    for f, args in ((lambda M: M.adjust_brightness, (0.7,)), (lambda M: M.adjust_contrast, (1.4,)),
                    (lambda M: M.adjust_saturation, (0.3,)), (lambda M: M.adjust_hue, (0.27,)),
                    (lambda M: M.adjust_hue, (-0.41,)),
                    (lambda M: M.rotate, (33.0, TV.InterpolationMode.BILINEAR, True)),
                    (lambda M: M.rotate, (-12, TV.InterpolationMode.NEAREST, False, [3, 4], [10, 20, 30]))):
        lucid_args = tuple(T.InterpolationMode(a.value) if isinstance(a, TV.InterpolationMode) else a for a in args)
        same(f(T.functional)(img, *lucid_args), f(TVF)(img, *args))
    for a, b in zip(T.functional.ten_crop(img, (3, 4)), TVF.ten_crop(img, (3, 4))):
        same(a, b)


@needs_tv
@pytest.mark.parametrize("dtype", [torch.uint8, torch.float32])
def test_new_tensor_paths_match_torchvision(dtype):
    """Grayscale, the colour adjustments and the crops exist for tensors too."""
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, 256, (2, 3, 7, 9), generator=g, dtype=torch.uint8)
    x = x if dtype == torch.uint8 else x.float() / 255
    lx = to_lucid(x)
    atol = 1 if dtype == torch.uint8 else 1e-5
    check(T.rgb_to_grayscale(lx), TVF.rgb_to_grayscale(x), atol=atol)
    check(T.rgb_to_grayscale(lx, 3), TVF.rgb_to_grayscale(x, 3), atol=atol)
    for name, factor in (("adjust_brightness", 1.3), ("adjust_contrast", 0.6), ("adjust_saturation", 1.8),
                         ("adjust_hue", 0.2), ("adjust_hue", -0.45)):
        check(getattr(T.functional, name)(lx, factor), getattr(TVF, name)(x, factor), atol=atol)
    check(T.functional.resized_crop(lx, 1, 2, 5, 6, [4, 8]), TVF.resized_crop(x, 1, 2, 5, 6, [4, 8]), atol=atol)
    for a, b in zip(T.functional.five_crop(lx, 3), TVF.five_crop(x, 3)):
        check(a, b)
    lucid.manual_seed(3)
    fn_idx, *factors = T.ColorJitter.get_params((0.5, 1.5), (0.5, 1.5), (0.5, 1.5), (-0.1, 0.1))
    lucid.manual_seed(3)
    out = T.ColorJitter(0.5, 0.5, 0.5, 0.1)(lx)
    want = x
    for k in fn_idx.tolist():
        want = (TVF.adjust_brightness, TVF.adjust_contrast, TVF.adjust_saturation, TVF.adjust_hue)[k](want, factors[k])
    check(out, want, atol=atol)


@needs_tv
def test_reprs_match_torchvision():
    for make in (lambda M: M.RandomResizedCrop(8), lambda M: M.FiveCrop(3), lambda M: M.TenCrop((3, 4), True),
                 lambda M: M.Grayscale(3), lambda M: M.RandomGrayscale(),
                 lambda M: M.ColorJitter(0.2, (0.5, 1), 0, 0.1),
                 lambda M: M.PILToTensor(), lambda M: M.ToPILImage(), lambda M: M.ToPILImage("YCbCr")):
        assert repr(make(T)) == repr(make(TV))
