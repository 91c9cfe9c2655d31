"""lucid.utils.datasets.ImageFolder / DatasetFolder against torchvision.datasets': the same
classes, samples and images, and the same errors."""

import pytest

import lucid

tv_datasets = pytest.importorskip("torchvision.datasets")
Image = pytest.importorskip("PIL.Image")


@pytest.fixture
def root(tmp_path):
    for cls, names in {"cat": ["b.png", "a.JPG", "notes.txt"], "dog": ["x.bmp", "deep/y.png"]}.items():
        for name in names:
            path = tmp_path / cls / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if name.endswith(".txt"):
                path.write_text("not an image")
            else:
                Image.new("L" if "y" in name else "RGB", (3, 2), color=len(name) * 20).save(
                    path, format="JPEG" if name.endswith("JPG") else None)
    return tmp_path


def test_image_folder_matches_torchvision(root):
    ours, theirs = lucid.utils.datasets.ImageFolder(root), tv_datasets.ImageFolder(root)
    assert (ours.classes, ours.class_to_idx, ours.targets) == (theirs.classes, theirs.class_to_idx, theirs.targets)
    assert ours.samples == theirs.samples == ours.imgs
    assert len(ours) == len(theirs) == 4
    for i in range(len(ours)):
        (img, target), (want, want_target) = ours[i], theirs[i]
        assert target == want_target and img.mode == "RGB" and img.tobytes() == want.tobytes()


def test_transforms_and_loader_tensors(root):
    ds = lucid.utils.datasets.ImageFolder(root, transform=lucid.utils.transforms.ToTensor(),
                                          target_transform=lambda t: t + 10)
    loader = lucid.utils.data.DataLoader(ds, batch_size=4)
    images, targets = next(iter(loader))
    assert tuple(images.shape) == (4, 3, 2, 3) and targets.tolist() == [10, 10, 11, 11]


def test_dataset_folder_with_a_loader_and_filters(root):
    def ours(**kw):
        return lucid.utils.datasets.DatasetFolder(root, loader=lambda p: p, **kw)

    def theirs(**kw):
        return tv_datasets.DatasetFolder(root, loader=lambda p: p, **kw)

    assert ours(extensions=".txt", allow_empty=True).samples == theirs(extensions=".txt", allow_empty=True).samples
    valid = lambda p: p.endswith(".png")  # noqa: E731
    assert ours(is_valid_file=valid).samples == theirs(is_valid_file=valid).samples


@pytest.mark.parametrize("make", [
    lambda ds, root: ds.ImageFolder(root / "cat"),                 # no class folders
    lambda ds, root: ds.DatasetFolder(root, loader=str, extensions=".txt"),  # "dog" has no .txt
    lambda ds, root: ds.DatasetFolder(root, loader=str),           # neither extensions nor is_valid_file
])
def test_errors_match_torchvision(root, make):
    with pytest.raises(Exception) as theirs:
        make(tv_datasets, root)
    with pytest.raises(type(theirs.value)) as ours:
        make(lucid.utils.datasets, root)
    assert str(ours.value) == str(theirs.value)
