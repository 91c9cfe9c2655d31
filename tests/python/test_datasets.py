"""The IDX reader and the MNIST / Fashion-MNIST datasets: well-formed files of every
IDX type read back exactly, malformed ones are refused with the file's name."""

import gzip
import os
import struct

import numpy as np
import pytest

import lucid
from lucid.utils.datasets import MNIST, FashionMNIST, read_idx

FASHION = "/usr/share/datasets/fashion-mnist"


def write_idx(path, array, code, gz=False):
    header = struct.pack(">HBB", 0, code, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    body = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    with (gzip.open if gz else open)(path, "wb") as f:
        f.write(body)


@pytest.mark.parametrize("code, dtype", [(0x08, np.uint8), (0x09, np.int8), (0x0B, np.int16), (0x0C, np.int32),
                                         (0x0D, np.float32), (0x0E, np.float64)])
@pytest.mark.parametrize("gz", [False, True])
def test_every_idx_type_reads_back(tmp_path, code, dtype, gz):
    values = (np.arange(24).reshape(2, 3, 4) * 7 - 50).astype(dtype)
    path = str(tmp_path / ("x.idx" + (".gz" if gz else "")))
    write_idx(path, values, code, gz)
    t = read_idx(path)
    assert tuple(t.shape) == (2, 3, 4)
    np.testing.assert_array_equal(t.numpy(), values)


@pytest.mark.parametrize("mangle, message", [
    (lambda b: b[:3], "too short for an IDX header"),
    (lambda b: b"\x01" + b[1:], "not an IDX file"),
    (lambda b: b[:2] + b"\x07" + b[3:], "not an IDX file"),
    (lambda b: b[:6], "the IDX header promises 3 dimensions"),
    (lambda b: b[:-1], "bytes of data, but shape"),
    (lambda b: b + b"\0", "bytes of data, but shape"),
    (lambda b: b[:4] + struct.pack(">I", 1 << 30) + b[8:], "bytes of data, but shape"),  # lying size: no allocation
])
def test_malformed_files_are_refused(tmp_path, mangle, message):
    path = tmp_path / "x.idx"
    write_idx(str(path), np.zeros((2, 3, 4), np.uint8), 0x08)
    path.write_bytes(mangle(path.read_bytes()))
    with pytest.raises(ValueError, match=message) as e:
        read_idx(str(path))
    assert "x.idx" in str(e.value)


def test_corrupt_gzip_is_refused(tmp_path):
    path = tmp_path / "x.idx.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(ValueError, match="cannot be read as a gzipped IDX file"):
        read_idx(str(path))


def make_mnist(root, n=5, labels=None):
    images = (np.arange(n * 28 * 28) % 251).astype(np.uint8).reshape(n, 28, 28)
    labels = np.arange(n, dtype=np.uint8) % 10 if labels is None else labels
    write_idx(os.path.join(root, "train-images-idx3-ubyte"), images, 0x08)
    write_idx(os.path.join(root, "train-labels-idx1-ubyte.gz"), labels, 0x08, gz=True)
    return images, labels


def test_mnist_from_a_directory(tmp_path):
    images, labels = make_mnist(str(tmp_path))
    ds = MNIST(tmp_path, transform=lambda x: x.float() / 255, target_transform=lambda y: y + 100)
    assert len(ds) == 5
    image, target = ds[3]
    assert image.dtype == lucid.float32 and tuple(image.shape) == (28, 28)
    np.testing.assert_allclose(image.numpy(), images[3] / 255, rtol=1e-6)
    assert target == int(labels[3]) + 100
    assert ds.class_to_idx["3 - three"] == 3


def test_label_count_must_match(tmp_path):
    make_mnist(str(tmp_path), labels=np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match="expected 5 labels"):
        MNIST(tmp_path)


def test_missing_files_name_the_path_and_the_package(tmp_path):
    with pytest.raises(FileNotFoundError, match="dataset-fashion-mnist") as e:
        FashionMNIST(tmp_path)
    assert str(tmp_path) in str(e.value)
    with pytest.raises(FileNotFoundError, match="does not download"):
        MNIST(tmp_path, train=False, download=True)


@pytest.mark.skipif(not os.path.isdir(FASHION), reason="Debian's dataset-fashion-mnist is not installed")
def test_fashion_mnist_from_debian_package():
    test = FashionMNIST(train=False)
    assert len(test) == 10000
    image, target = test[0]
    assert image.dtype == lucid.uint8 and tuple(image.shape) == (28, 28)
    assert target == 9 and test.classes[target] == "Ankle boot"  # the test set's first item
    counts = np.bincount(test.targets.numpy(), minlength=10)
    assert counts.tolist() == [1000] * 10
