# Upstream: github.com/pytorch/examples, super_resolution/data.py.
# Changed: the imports (torchvision.transforms -> lucid.utils.transforms; six's urllib, used
# only by the download, is left out), and the data: download_bsd300 writes eight small
# BSDS300-like images (smooth colour gradients with stripes, 260x260 PNGs made with PIL)
# instead of downloading the 300 photographs. Everything else is upstream's.
from os.path import exists, join, basename
from os import makedirs, remove
import tarfile
from lucid.utils.transforms import Compose, CenterCrop, ToTensor, Resize

from dataset import DatasetFromFolder

import math
from PIL import Image


def _write_images(output_image_dir):  # stand-in for the BSDS300 download (data only)
    for split, count in (("train", 6), ("test", 2)):
        makedirs(join(output_image_dir, split))
        for k in range(count):
            img = Image.new("RGB", (260, 260))
            img.putdata([(int(127 + 127 * math.sin((x + 3 * k) / 9.0)), (y * 255) // 259,
                          255 if (x // (4 + k)) % 2 else 40) for y in range(260) for x in range(260)])
            img.save(join(output_image_dir, split, "%d.png" % k))


def download_bsd300(dest="dataset"):
    output_image_dir = join(dest, "BSDS300/images")

    if not exists(output_image_dir):
        _write_images(output_image_dir)

    return output_image_dir


def calculate_valid_crop_size(crop_size, upscale_factor):
    return crop_size - (crop_size % upscale_factor)


def input_transform(crop_size, upscale_factor):
    return Compose([
        CenterCrop(crop_size),
        Resize(crop_size // upscale_factor),
        ToTensor(),
    ])


def target_transform(crop_size):
    return Compose([
        CenterCrop(crop_size),
        ToTensor(),
    ])


def get_training_set(upscale_factor):
    root_dir = download_bsd300()
    train_dir = join(root_dir, "train")
    crop_size = calculate_valid_crop_size(256, upscale_factor)

    return DatasetFromFolder(train_dir,
                             input_transform=input_transform(crop_size, upscale_factor),
                             target_transform=target_transform(crop_size))


def get_test_set(upscale_factor):
    root_dir = download_bsd300()
    test_dir = join(root_dir, "test")
    crop_size = calculate_valid_crop_size(256, upscale_factor)

    return DatasetFromFolder(test_dir,
                             input_transform=input_transform(crop_size, upscale_factor),
                             target_transform=target_transform(crop_size))
