"""Image datasets read from IDX files: MNIST and Fashion-MNIST (torchvision's classes).

Nothing is downloaded. Debian's dataset-fashion-mnist package installs Fashion-MNIST
under /usr/share/datasets/fashion-mnist; MNIST is read from any directory holding its
four files. Files may be gzipped (name.gz) or not. A sample is (image, label): the
image a uint8 tensor [28, 28] (where torchvision gives a PIL image: ToTensor turns
either into a float [1, 28, 28] in [0, 1]), the label an int.
"""

import array
import gzip
import os
import struct
import sys
import zlib

from ._image_folder import DatasetFolder, ImageFolder  # noqa: F401  (torchvision's folder datasets)
from .data import Dataset

__all__ = ["MNIST", "FashionMNIST", "read_idx", "DatasetFolder", "ImageFolder"]

# IDX element types: code -> (lucid dtype name, array typecode, bytes per element)
_IDX_TYPES = {0x08: ("uint8", "B", 1), 0x09: ("int8", "b", 1), 0x0B: ("int16", "h", 2), 0x0C: ("int32", "i", 4),
              0x0D: ("float32", "f", 4), 0x0E: ("float64", "d", 8)}
# A file larger than this is refused before it is read (MNIST's largest is 47 MB).
_MAX_BYTES = 1 << 31


def _read_at_most(f, limit, chunk=1 << 20):
    """Up to `limit` bytes of f, read a chunk at a time: f.read(limit) would allocate
    the whole limit (2 GiB) up front, and write all of it where malloc fills new memory
    (MALLOC_PERTURB_, the API fuzzer's workers: 5 s to open a dataset)."""
    data = bytearray()
    while len(data) < limit:
        piece = f.read(min(chunk, limit - len(data)))
        if not piece:
            break
        data += piece
    return bytes(data)


def read_idx(path):
    """An IDX file (gzipped or not) as a lucid tensor of its shape and element type.
    Raises ValueError naming the file when it is not a well-formed IDX file."""
    import lucid

    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            data = _read_at_most(f, _MAX_BYTES + 1)
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise ValueError(f"{path}: cannot be read as a{' gzipped' if opener is gzip.open else 'n'} IDX file: {e}") from e
    if len(data) > _MAX_BYTES:
        raise ValueError(f"{path}: larger than {_MAX_BYTES} bytes, too large for an IDX dataset file")
    if len(data) < 4:
        raise ValueError(f"{path}: {len(data)} bytes, too short for an IDX header (4 bytes of magic)")
    zero, code, ndims = struct.unpack(">HBB", data[:4])
    if zero != 0 or code not in _IDX_TYPES:
        raise ValueError(f"{path}: not an IDX file (magic {data[:4].hex()}: expected 0000 then a type code "
                         f"among {', '.join(f'{c:02x}' for c in _IDX_TYPES)} and the number of dimensions)")
    header = 4 + 4 * ndims
    if ndims == 0 or len(data) < header:
        raise ValueError(f"{path}: the IDX header promises {ndims} dimensions but the file ends at byte {len(data)}")
    dims = struct.unpack(f">{ndims}I", data[4:header])
    dtype, typecode, itemsize = _IDX_TYPES[code]
    count = 1
    for d in dims:
        count *= d
    payload = len(data) - header
    if payload != count * itemsize:
        raise ValueError(f"{path}: {payload} bytes of data, but shape {list(dims)} of {dtype} needs "
                         f"{count * itemsize}")
    body = data[header:]
    if itemsize > 1 and sys.byteorder == "little":  # IDX is big-endian
        values = array.array(typecode)
        values.frombytes(body)
        values.byteswap()
        body = values.tobytes()
    if count == 0:  # a dimension of size 0: frombuffer refuses an empty buffer
        return lucid.empty(list(dims), dtype=getattr(lucid, dtype), device="cpu")
    return lucid.frombuffer(bytearray(body), dtype=getattr(lucid, dtype)).reshape(dims)


class MNIST(Dataset):
    """MNIST(root, train=True, transform=None, target_transform=None, download=False)."""

    default_root = "/usr/share/datasets/mnist"
    package_hint = "put MNIST's four IDX files there"
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]
    _files = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
              False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}

    def __init__(self, root=None, train=True, transform=None, target_transform=None, download=False):
        self.root = os.fspath(root) if root is not None else self.default_root
        self.train = bool(train)
        self.transform = transform
        self.target_transform = target_transform
        images, labels = (self._find(name, download) for name in self._files[self.train])
        self.data = read_idx(images)
        self.targets = read_idx(labels).long()
        if self.data.dim() != 3:
            raise ValueError(f"{images}: images must be a 3-d IDX array [N, rows, cols], got shape "
                             f"{list(self.data.shape)}")
        if self.targets.dim() != 1 or len(self.targets) != len(self.data):
            raise ValueError(f"{labels}: expected {len(self.data)} labels (one per image in {images}), got shape "
                             f"{list(self.targets.shape)}")

    def _find(self, name, download):
        for candidate in (name, name + ".gz"):
            path = os.path.join(self.root, candidate)
            if os.path.exists(path):
                return path
        extra = " (lucid does not download datasets)" if download else ""
        raise FileNotFoundError(f"{type(self).__name__}: {os.path.join(self.root, name)}[.gz] not found{extra}: "
                                f"{self.package_hint}, or point root= (the examples' --data) at the directory that holds it")

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        image, target = self.data[index], int(self.targets[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def __repr__(self):
        split = "Train" if self.train else "Test"
        return (f"Dataset {type(self).__name__}\n    Number of datapoints: {len(self)}\n    Root location: "
                f"{self.root}\n    Split: {split}")


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: MNIST's format and sizes, ten kinds of clothing."""

    default_root = "/usr/share/datasets/fashion-mnist"
    package_hint = "install Debian's dataset-fashion-mnist package (apt-get install dataset-fashion-mnist)"
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]
