"""lucid.utils.data's batch-mixing collators (MixupCollator, CutMixCollator,
RandomMixupCutMixCollator) and DeiT's repeated-augmentation sampler (RASampler).

The collators return only (images, targets), so each check recovers what was drawn from
the output itself: with sample i labelled i (num_classes = batch size), target row i is
lam * e_i + (1 - lam) * e_perm[i], which gives lam and the permutation; the images are
then recomputed from them with NumPy. RASampler is compared with DeiT's algorithm
(samplers.py: repeat_interleave, pad from the start, stride by num_replicas), re-derived
here with NumPy and with PyTorch."""

import math

import numpy as np
import pytest
import torch

import lucid
from lucid.utils.data import (CutMixCollator, DataLoader, MixupCollator, RandomMixupCutMixCollator,
                              RASampler, TensorDataset)

B, C, H, W = 8, 3, 12, 10


# ---- helpers --------------------------------------------------------------------------------

def make_images(n=B, seed=0, shape=(C, H, W)):
    """n distinct images: every pixel differs between any two of them (almost surely)."""
    return np.random.default_rng(seed).standard_normal((n, *shape)).astype(np.float32)


def samples(images, labels=None):
    labels = range(len(images)) if labels is None else labels
    return [(lucid.tensor(img), int(y)) for img, y in zip(images, labels)]


def one_hot(labels, k):
    return np.eye(k, dtype=np.float32)[np.asarray(labels)]


def recover(targets):
    """(lam, perm) from targets of samples labelled 0..B-1: row i is lam * e_i +
    (1 - lam) * e_perm[i]. lam is None when every sample was paired with itself."""
    t = np.asarray(targets, dtype=np.float64)
    perm, lams = [], []
    for i, row in enumerate(t):
        others = row.copy()
        others[i] = 0.0
        j = int(others.argmax()) if others.max() > 0 else i
        perm.append(j)
        if j != i:
            lams.append(row[i])
            np.testing.assert_allclose(row[i] + row[j], 1.0, atol=1e-6)
            assert np.count_nonzero(row) == 2
    if lams:
        np.testing.assert_allclose(lams, lams[0], atol=1e-7)  # one lam for the whole batch
    return (lams[0] if lams else None), np.array(perm)


def changed_box(x, mixed, perm):
    """The (H, W) mask of pixels where a mixed image differs from its original, checked to
    be the same for every image paired with another one."""
    planes = tuple(range(x.ndim - 3))  # the axes of one image before (H, W)
    masks = [np.any(mixed[i] != x[i], axis=planes) for i in range(len(x)) if perm[i] != i]
    for m in masks[1:]:
        np.testing.assert_array_equal(m, masks[0])
    for i in range(len(x)):
        if perm[i] == i:
            np.testing.assert_array_equal(mixed[i], x[i])
    return masks[0]


def check_rectangle(mask):
    """mask is one axis-aligned rectangle: the outer product of its rows and columns."""
    rows, cols = mask.any(axis=1), mask.any(axis=0)
    np.testing.assert_array_equal(mask, np.outer(rows, cols))
    ys, xs = np.flatnonzero(rows), np.flatnonzero(cols)
    assert np.all(np.diff(ys) == 1) and np.all(np.diff(xs) == 1)  # contiguous
    return ys[0], ys[-1] + 1, xs[0], xs[-1] + 1


def check_mixup(x, mixed, targets):
    lam, perm = recover(targets)
    assert lam is not None
    expected = lam * x + (1.0 - lam) * x[perm]
    np.testing.assert_allclose(mixed, expected, rtol=1e-5, atol=1e-5)
    return lam, perm


def check_cutmix(x, mixed, targets):
    """Checks a CutMix batch (samples labelled 0..B-1) and returns (lam, perm, box)."""
    lam, perm = recover(targets)
    if np.array_equal(mixed, x):  # the box rounded to nothing: the batch is unmixed
        np.testing.assert_array_equal(targets, np.eye(len(x), dtype=np.float32))
        return 1.0, np.arange(len(x)), None
    mask = changed_box(x, mixed, perm)
    y1, y2, x1, x2 = check_rectangle(mask)
    h, w = mask.shape
    # lam is the pasted box's actual area.
    np.testing.assert_allclose(1.0 - lam, (y2 - y1) * (x2 - x1) / (h * w), atol=1e-6)
    # The box is centred: a side the image border did not clip spans 2 * (cut // 2) pixels.
    if y1 > 0 and y2 < h:
        assert (y2 - y1) % 2 == 0
    if x1 > 0 and x2 < w:
        assert (x2 - x1) % 2 == 0
    expected = x.copy()
    expected[..., y1:y2, x1:x2] = x[perm][..., y1:y2, x1:x2]
    np.testing.assert_array_equal(mixed, expected)
    return lam, perm, (y1, y2, x1, x2)


def run(collator, batch, seed):
    lucid.manual_seed(seed)
    images, targets = collator(batch)
    assert isinstance(images, lucid.Tensor) and isinstance(targets, lucid.Tensor)
    assert targets.dtype == lucid.float32
    assert tuple(targets.shape) == (len(batch), collator.num_classes)
    t = targets.numpy()
    np.testing.assert_allclose(t.sum(axis=1), 1.0, atol=1e-6)  # soft labels are distributions
    assert np.all(t >= 0)
    return images.numpy(), t


# ---- MixupCollator ---------------------------------------------------------------------------

@pytest.mark.parametrize("alpha", [1.0, 0.2, 4.0])
def test_mixup_is_lam_x_plus_one_minus_lam_x_perm(alpha):
    x = make_images()
    collator = MixupCollator(alpha, num_classes=B)
    lams, perms = [], set()
    for seed in range(6):
        mixed, targets = run(collator, samples(x), seed)
        lam, perm = check_mixup(x, mixed, targets)
        assert sorted(perm) == list(range(B))  # a permutation of the batch
        assert 0.0 <= lam <= 1.0
        lams.append(lam)
        perms.add(tuple(perm))
    assert len(set(lams)) == len(lams)  # a new lam for every batch
    assert len(perms) == len(lams)  # and a new random permutation (not a fixed flip)


def test_mixup_soft_labels_are_lam_mixtures_of_one_hots():
    """The draws do not depend on the labels: the same seed gives the same lam and perm
    with arbitrary (repeated) labels, whose targets are then lam * y + (1 - lam) * y[perm]."""
    x = make_images()
    labels = [2, 0, 4, 2, 1, 3, 0, 4]
    for seed in range(4):
        _, distinct = run(MixupCollator(1.0, num_classes=B), samples(x), seed)
        lam, perm = recover(distinct)
        mixed, targets = run(MixupCollator(1.0, num_classes=5), samples(x, labels), seed)
        y = one_hot(labels, 5)
        np.testing.assert_allclose(targets, lam * y + (1.0 - lam) * y[perm], atol=1e-6)
        np.testing.assert_allclose(mixed, lam * x + (1.0 - lam) * x[perm], rtol=1e-5, atol=1e-5)


def test_mixup_any_sample_shape():
    x = make_images(shape=(5,))  # feature vectors, not images
    mixed, targets = run(MixupCollator(1.0, num_classes=B), samples(x), 3)
    check_mixup(x, mixed, targets)


# ---- CutMixCollator --------------------------------------------------------------------------

@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_cutmix_pastes_one_rectangle_whose_area_is_one_minus_lam(alpha):
    x = make_images()
    collator = CutMixCollator(alpha, num_classes=B)
    boxes = set()
    for seed in range(12):
        mixed, targets = run(collator, samples(x), seed)
        _, _, box = check_cutmix(x, mixed, targets)
        boxes.add(box)
    assert len(boxes - {None}) >= 6  # boxes of many sizes and places


def test_cutmix_labels_follow_the_box_area():
    x = make_images()
    labels = [1, 1, 0, 2, 2, 0, 1, 2]
    for seed in range(6):
        _, distinct = run(CutMixCollator(num_classes=B), samples(x), seed)
        lam, perm = recover(distinct)
        mixed, targets = run(CutMixCollator(num_classes=3), samples(x, labels), seed)
        y = one_hot(labels, 3)
        np.testing.assert_allclose(targets, lam * y + (1.0 - lam) * y[perm], atol=1e-6)


def test_cutmix_box_broadcasts_over_extra_leading_dims_and_grey_images():
    for shape in [(H, W), (2, C, H, W)]:  # (B, H, W) grey images; (B, T, C, H, W) clips
        x = make_images(shape=shape)
        mixed, targets = run(CutMixCollator(num_classes=B), samples(x), 5)
        lam, perm = recover(targets)
        diff = mixed != x
        for i in range(B):
            if perm[i] != i:
                per_pixel = diff[i].reshape(-1, H, W)
                assert np.all(per_pixel == per_pixel[0])  # the same box in every plane
                check_rectangle(per_pixel[0])


# ---- RandomMixupCutMixCollator ---------------------------------------------------------------

def test_random_switch_prob_one_is_cutmix_and_zero_is_mixup():
    x = make_images()
    for seed in range(5):
        mixed, targets = run(RandomMixupCutMixCollator(num_classes=B, switch_prob=1.0),
                             samples(x), seed)
        check_cutmix(x, mixed, targets)
        mixed, targets = run(RandomMixupCutMixCollator(mixup_alpha=1.0, num_classes=B,
                                                       switch_prob=0.0), samples(x), seed)
        check_mixup(x, mixed, targets)


def test_random_picks_both_policies():
    x = make_images()
    collator = RandomMixupCutMixCollator(mixup_alpha=1.0, cutmix_alpha=1.0, num_classes=B)
    kinds = []
    for seed in range(30):
        mixed, targets = run(collator, samples(x), seed)
        lam, perm = recover(targets)
        changed = [i for i in range(B) if perm[i] != i]
        # Mixup changes every pixel of a paired image, CutMix only a box (maybe none).
        if changed and all(np.all(mixed[i] != x[i]) for i in changed):
            check_mixup(x, mixed, targets)
            kinds.append("mixup")
        else:
            check_cutmix(x, mixed, targets)
            kinds.append("cutmix")
    assert 5 <= kinds.count("cutmix") <= 25


# ---- the probability gate, reproducibility ---------------------------------------------------

ALL = [lambda **kw: MixupCollator(1.0, **kw), lambda **kw: CutMixCollator(**kw),
       lambda **kw: RandomMixupCutMixCollator(**kw)]


@pytest.mark.parametrize("make", ALL, ids=["mixup", "cutmix", "random"])
def test_p_zero_leaves_the_batch_and_one_hot_labels(make):
    x = make_images()
    labels = [3, 1, 4, 1, 5, 0, 2, 6]
    collator = make(num_classes=7, p=0.0)
    for seed in range(5):
        images, targets = run(collator, samples(x, labels), seed)
        np.testing.assert_array_equal(images, x)
        np.testing.assert_array_equal(targets, one_hot(labels, 7))


@pytest.mark.parametrize("make", ALL, ids=["mixup", "cutmix", "random"])
def test_p_gates_each_batch(make):
    x = make_images()
    collator = make(num_classes=B, p=0.5)
    mixed_count = 0
    for seed in range(40):
        images, targets = run(collator, samples(x), seed)
        if not np.array_equal(targets, np.eye(B, dtype=np.float32)):
            mixed_count += 1
        else:
            np.testing.assert_array_equal(images, x)
    assert 8 <= mixed_count <= 32
    always = make(num_classes=B, p=1.0)
    assert all(not np.array_equal(run(always, samples(x), s)[0], x) for s in range(10))


@pytest.mark.parametrize("make", ALL, ids=["mixup", "cutmix", "random"])
def test_reproducible_under_manual_seed(make):
    x = make_images()
    collator = make(num_classes=B)
    first = [run(collator, samples(x), 7) for _ in range(2)]
    np.testing.assert_array_equal(first[0][0], first[1][0])
    np.testing.assert_array_equal(first[0][1], first[1][1])
    lucid.manual_seed(7)
    a = [collator(samples(x)) for _ in range(3)]
    lucid.manual_seed(7)
    b = [collator(samples(x)) for _ in range(3)]
    for (ia, ta), (ib, tb) in zip(a, b):
        np.testing.assert_array_equal(ia.numpy(), ib.numpy())
        np.testing.assert_array_equal(ta.numpy(), tb.numpy())
    assert not np.array_equal(a[0][1].numpy(), a[1][1].numpy())  # successive batches differ
    other = run(collator, samples(x), 8)
    assert not np.array_equal(other[1], first[0][1])


def test_label_tensors_of_any_integer_dtype():
    x = make_images()
    batch = [(lucid.tensor(img), lucid.tensor(i, dtype=lucid.int32)) for i, img in enumerate(x)]
    lucid.manual_seed(0)
    images, targets = MixupCollator(1.0, num_classes=B)(batch)
    check_mixup(x, images.numpy(), targets.numpy())


# ---- inside a DataLoader ---------------------------------------------------------------------

def loader_dataset(n=10):
    x = make_images(n, seed=1)
    return x, TensorDataset(lucid.tensor(x), lucid.arange(n))


@pytest.mark.parametrize("make", ALL, ids=["mixup", "cutmix", "random"])
def test_inside_a_dataloader(make):
    x, ds = loader_dataset(10)
    loader = DataLoader(ds, batch_size=4, collate_fn=make(num_classes=10))
    lucid.manual_seed(0)
    batches = list(loader)
    assert [tuple(images.shape) for images, _ in batches] == [(4, C, H, W)] * 2 + [(2, C, H, W)]
    for k, (images, targets) in enumerate(batches):
        assert tuple(targets.shape) == (images.shape[0], 10)
        t = targets.numpy()[:, 4 * k:4 * k + 4]  # the batch holds samples 4k, 4k + 1, ...
        np.testing.assert_allclose(t.sum(axis=1), 1.0, atol=1e-6)
        xb = x[4 * k:4 * k + 4]
        lam, perm = recover(t)
        if lam is None:
            np.testing.assert_array_equal(images.numpy(), xb)
        elif np.all(images.numpy()[perm != np.arange(len(xb))] != xb[perm != np.arange(len(xb))]):
            check_mixup(xb, images.numpy(), t)
        else:
            check_cutmix(xb, images.numpy(), t)
    lucid.manual_seed(0)
    again = list(loader)
    for (ia, ta), (ib, tb) in zip(batches, again):
        np.testing.assert_array_equal(ia.numpy(), ib.numpy())
        np.testing.assert_array_equal(ta.numpy(), tb.numpy())


@pytest.mark.usefixtures("cpu_default")  # forked workers cannot touch a GPU (torch's rule too)
def test_inside_a_dataloader_with_workers():
    x, ds = loader_dataset(12)
    loader = DataLoader(ds, batch_size=4, num_workers=2, collate_fn=MixupCollator(1.0, num_classes=12))
    lucid.manual_seed(3)
    first = [(i.numpy(), t.numpy()) for i, t in loader]
    lucid.manual_seed(3)
    second = [(i.numpy(), t.numpy()) for i, t in loader]
    for k, ((ia, ta), (ib, tb)) in enumerate(zip(first, second)):
        np.testing.assert_array_equal(ia, ib)
        np.testing.assert_array_equal(ta, tb)
        check_mixup(x[4 * k:4 * k + 4], ia, ta[:, 4 * k:4 * k + 4])


# ---- arguments -------------------------------------------------------------------------------

def test_defaults_and_repr():
    m = MixupCollator(num_classes=10)
    assert (m.alpha, m.num_classes, m.p) == (0.2, 10, 1.0)
    assert repr(m) == "MixupCollator(alpha=0.2, num_classes=10, p=1.0)"
    c = CutMixCollator(num_classes=10, p=0.5)
    assert (c.alpha, c.num_classes, c.p) == (1.0, 10, 0.5)
    assert repr(c) == "CutMixCollator(alpha=1.0, num_classes=10, p=0.5)"
    r = RandomMixupCutMixCollator(num_classes=10)
    assert (r.mixup_alpha, r.cutmix_alpha, r.p, r.switch_prob) == (0.2, 1.0, 1.0, 0.5)
    assert (r.mixup.alpha, r.cutmix.alpha) == (0.2, 1.0)
    assert repr(r) == ("RandomMixupCutMixCollator(mixup_alpha=0.2, cutmix_alpha=1.0, "
                       "num_classes=10, p=1.0, switch_prob=0.5)")


@pytest.mark.parametrize("cls", [MixupCollator, CutMixCollator])
def test_bad_arguments(cls):
    with pytest.raises(ValueError, match=r"alpha should be a finite number > 0.*alpha=0.0"):
        cls(0.0, num_classes=3)
    with pytest.raises(ValueError, match="alpha should be a finite number > 0"):
        cls(-1, num_classes=3)
    with pytest.raises(ValueError, match="alpha should be a finite number > 0"):
        cls(float("nan"), num_classes=3)
    with pytest.raises(TypeError, match="alpha should be a real number, but got bool"):
        cls(True, num_classes=3)
    with pytest.raises(ValueError, match=r"num_classes should be >= 1, but got num_classes=0"):
        cls(1.0, num_classes=0)
    with pytest.raises(TypeError, match="num_classes should be an int, but got float"):
        cls(1.0, num_classes=3.0)
    with pytest.raises(ValueError, match=r"p should be a probability in \[0, 1\], but got p=1.5"):
        cls(1.0, num_classes=3, p=1.5)
    with pytest.raises(ValueError, match=r"p should be a probability in \[0, 1\]"):
        cls(1.0, num_classes=3, p=-0.1)
    with pytest.raises(TypeError):
        cls(1.0, 3)  # num_classes is keyword-only
    with pytest.raises(TypeError):
        cls(1.0)  # and required


def test_bad_arguments_random():
    with pytest.raises(ValueError, match=r"switch_prob should be a probability in \[0, 1\]"):
        RandomMixupCutMixCollator(num_classes=3, switch_prob=2)
    with pytest.raises(ValueError, match=r"RandomMixupCutMixCollator: p should be a probability"):
        RandomMixupCutMixCollator(num_classes=3, p=-1)
    with pytest.raises(ValueError, match="mixup_alpha should be a finite number > 0"):
        RandomMixupCutMixCollator(num_classes=3, mixup_alpha=0)
    with pytest.raises(ValueError, match="cutmix_alpha should be a finite number > 0"):
        RandomMixupCutMixCollator(num_classes=3, cutmix_alpha=-2.0)
    with pytest.raises(ValueError, match="num_classes should be >= 1"):
        RandomMixupCutMixCollator(num_classes=-1)
    with pytest.raises(TypeError):
        RandomMixupCutMixCollator(0.2, num_classes=3)  # all keyword-only


@pytest.mark.parametrize("make", ALL, ids=["mixup", "cutmix", "random"])
def test_bad_batches(make):
    x = make_images(4)
    collator = make(num_classes=3)
    with pytest.raises(ValueError, match=r"labels should be class indices in \[0, 3\).*label 3"):
        collator(samples(x, [0, 1, 2, 3]))
    with pytest.raises(ValueError, match=r"labels should be class indices in \[0, 3\).*label -1"):
        collator(samples(x, [0, -1, 2, 1]))
    with pytest.raises(TypeError, match="integer class index"):
        collator([(lucid.tensor(img), 0.5) for img in x])
    with pytest.raises(TypeError, match=r"\(image, label\) pair"):
        collator([(lucid.tensor(img), 0, "extra") for img in x])
    with pytest.raises(TypeError, match=r"\(image tensor, integer label\) pair"):
        collator([("image", 0) for _ in x])


def test_cutmix_needs_height_and_width():
    batch = [(lucid.tensor(v), 0) for v in make_images(4, shape=(6,))]
    for collator in (CutMixCollator(num_classes=2), RandomMixupCutMixCollator(num_classes=2)):
        with pytest.raises(ValueError, match="at least 2 dimensions per sample"):
            collator(batch)


# ---- RASampler -------------------------------------------------------------------------------

class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


def lucid_order(n, seed, epoch, shuffle):
    if not shuffle:
        return np.arange(n)
    g = lucid.Generator().manual_seed(seed + epoch)
    return np.array(lucid.randperm(n, generator=g).tolist(), dtype=np.int64)


def deit_reference(n, num_replicas, rank, num_repeats, order):
    """DeiT's samplers.py RASampler.__iter__ (without its 256-multiple truncation):
    repeat_interleave, pad with the start, take every num_replicas-th position."""
    num_samples = math.ceil(n * num_repeats / num_replicas)
    total = num_samples * num_replicas
    indices = np.repeat(order, num_repeats)
    indices = np.resize(indices, total) if total else indices  # cyclic padding
    return indices[rank:total:num_replicas].tolist()


def replicas(n, num_replicas, **kw):
    return [RASampler(Sized(n), num_replicas=num_replicas, rank=r, **kw) for r in range(num_replicas)]


@pytest.mark.parametrize("n,num_replicas,num_repeats", [(10, 5, 3), (12, 4, 3), (7, 3, 3), (9, 2, 4),
                                                        (16, 8, 2), (5, 1, 3)])
def test_ra_every_index_num_repeats_times(n, num_replicas, num_repeats):
    samplers = replicas(n, num_replicas, num_repeats=num_repeats, seed=3)
    for epoch in range(3):
        for s in samplers:
            s.set_epoch(epoch)
        lists = [list(s) for s in samplers]
        assert len({len(li) for li in lists}) == 1  # equal lengths
        assert all(len(li) == len(s) == math.ceil(n * num_repeats / num_replicas)
                   for li, s in zip(lists, samplers))
        counts = np.bincount(np.concatenate(lists), minlength=n)
        assert np.all(counts == num_repeats)  # N * r splits evenly here: no padding


def test_ra_padding_repeats_the_start():
    n, num_replicas, num_repeats = 10, 4, 3  # 30 indices padded to 32
    samplers = replicas(n, num_replicas, num_repeats=num_repeats)
    lists = [list(s) for s in samplers]
    assert [len(li) for li in lists] == [8] * 4
    merged = np.empty(32, dtype=np.int64)
    for rank, li in enumerate(lists):
        merged[rank::num_replicas] = li  # disjoint position slices cover the padded epoch
    order = lucid_order(n, 0, 0, True)
    np.testing.assert_array_equal(merged[:30], np.repeat(order, num_repeats))
    np.testing.assert_array_equal(merged[30:], [order[0], order[0]])
    counts = np.bincount(merged, minlength=n)
    assert counts[order[0]] == 5 and np.all(np.delete(counts, order[0]) == 3)


@pytest.mark.parametrize("n,num_replicas,num_repeats,shuffle", [
    (10, 4, 3, True), (10, 4, 3, False), (13, 3, 2, True), (1, 4, 1, True), (3, 8, 2, False),
    (25, 2, 5, True), (0, 2, 3, True)])
def test_ra_matches_deit(n, num_replicas, num_repeats, shuffle):
    for seed, epoch in [(0, 0), (0, 1), (5, 2)]:
        for rank in range(num_replicas):
            s = RASampler(Sized(n), num_replicas=num_replicas, rank=rank, shuffle=shuffle,
                          seed=seed, num_repeats=num_repeats)
            s.set_epoch(epoch)
            order = lucid_order(n, seed, epoch, shuffle)
            assert list(s) == deit_reference(n, num_replicas, rank, num_repeats, order)
            assert len(s) == math.ceil(n * num_repeats / num_replicas)


def test_ra_unshuffled_matches_torch_deit():
    """DeiT's code itself, on PyTorch, for shuffle=False (torch.arange order)."""
    n, num_replicas, num_repeats = 11, 4, 3
    num_samples = int(math.ceil(n * num_repeats / num_replicas))
    total_size = num_samples * num_replicas
    indices = torch.repeat_interleave(torch.arange(n), repeats=num_repeats, dim=0).tolist()
    indices += indices[:total_size - len(indices)]
    for rank in range(num_replicas):
        s = RASampler(Sized(n), num_replicas=num_replicas, rank=rank, shuffle=False,
                      num_repeats=num_repeats)
        assert list(s) == indices[rank:total_size:num_replicas]


def test_ra_unshuffled_order():
    ranks = replicas(4, 2, shuffle=False, num_repeats=3)
    assert list(ranks[0]) == [0, 0, 1, 2, 2, 3]
    assert list(ranks[1]) == [0, 1, 1, 2, 3, 3]
    ranks[0].set_epoch(5)
    assert list(ranks[0]) == [0, 0, 1, 2, 2, 3]  # no shuffle: the epoch does not matter


def test_ra_copies_go_to_different_replicas():
    n, num_replicas, num_repeats = 20, 4, 3
    lists = [list(s) for s in replicas(n, num_replicas, num_repeats=num_repeats)]
    for i in range(n):
        holders = [rank for rank, li in enumerate(lists) if i in li]
        assert len(holders) == num_repeats  # each copy on its own replica


def test_ra_set_epoch_and_seed():
    s = RASampler(Sized(30), num_replicas=2, rank=1, seed=0)
    e0 = list(s)
    assert list(s) == e0  # the same epoch repeats its order
    s.set_epoch(1)
    e1 = list(s)
    assert e1 != e0 and sorted(e1) != e1
    s.set_epoch(0)
    assert list(s) == e0
    assert list(RASampler(Sized(30), num_replicas=2, rank=1, seed=1)) != e0
    # The order comes from seed + epoch alone, not from lucid's global generator.
    lucid.manual_seed(1)
    a = list(RASampler(Sized(30), num_replicas=2, rank=1))
    lucid.manual_seed(2)
    assert list(RASampler(Sized(30), num_replicas=2, rank=1)) == a == e0


def test_ra_defaults():
    s = RASampler(Sized(7))
    assert (s.num_replicas, s.rank, s.shuffle, s.seed, s.num_repeats, s.epoch) == (1, 0, True, 0, 3, 0)
    li = list(s)
    assert len(li) == len(s) == 21 and s.num_samples == 21 and s.total_size == 21
    assert np.all(np.bincount(li) == 3)
    assert list(RASampler(Sized(0))) == [] and len(RASampler(Sized(0))) == 0


def test_ra_in_a_dataloader():
    n = 10
    ds = TensorDataset(lucid.arange(n))
    sampler = RASampler(ds, num_replicas=2, rank=0, num_repeats=2, seed=4)
    loader = DataLoader(ds, batch_size=4, sampler=sampler)
    batches = [b[0].tolist() for b in loader]
    assert [len(b) for b in batches] == [4, 4, 2]
    assert sum(batches, []) == list(sampler)


def test_ra_bad_arguments():
    ds = Sized(10)
    with pytest.raises(ValueError, match=r"invalid rank 4, rank should be in the interval \[0, 3\]"):
        RASampler(ds, num_replicas=4, rank=4)
    with pytest.raises(ValueError, match="invalid rank -1"):
        RASampler(ds, num_replicas=4, rank=-1)
    with pytest.raises(ValueError, match="invalid rank 1"):
        RASampler(ds, rank=1)  # a single process by default
    with pytest.raises(ValueError, match="num_replicas should be a positive integer, but got num_replicas=0"):
        RASampler(ds, num_replicas=0, rank=0)
    with pytest.raises(ValueError, match="num_repeats should be >= 1.*num_repeats=0"):
        RASampler(ds, num_repeats=0)
    with pytest.raises(TypeError, match="RASampler expects num_repeats to be an int, but got float"):
        RASampler(ds, num_repeats=2.0)
    with pytest.raises(TypeError, match="RASampler expects rank to be an int, but got str"):
        RASampler(ds, num_replicas=2, rank="0")
    with pytest.raises(TypeError, match="RASampler expects seed to be an int"):
        RASampler(ds, seed=None)
