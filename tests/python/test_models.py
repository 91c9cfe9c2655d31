"""lucid.utils.models against torchvision.models: the same state-dict names and shapes, the
same outputs from the same weights, torchvision's initialisation, and weights=None only."""

import copy
import functools
import math

import pytest
import torch

import lucid
from conftest import default_device_as, to_lucid, to_torch

tv_models = pytest.importorskip("torchvision.models")

# Every VGG holds a 25088 x 4096 classifier layer (~120M parameters in all): one is enough.
BUILDERS = ["resnet18", "resnet34", "resnet50", "vgg11_bn"]


@functools.lru_cache(maxsize=None)
def _pair(name, **kwargs):
    """torchvision's network and lucid's, holding the same weights."""
    torch.manual_seed(0)
    theirs = getattr(tv_models, name)(weights=None, **kwargs)
    with default_device_as("cpu"):  # the cached network lives on the CPU; tests move copies
        ours = getattr(lucid.utils.models, name)(weights=None, **kwargs)
    # through NumPy: conftest's to_lucid goes through lists, minutes for 100M weights
    ours.load_state_dict({k: lucid.from_numpy(v.numpy().copy()) for k, v in theirs.state_dict().items()})
    return theirs, ours


@pytest.mark.parametrize("name", BUILDERS)
def test_state_dict_names_and_shapes_match_torchvision(name):
    theirs, ours = _pair(name, num_classes=7)
    want = {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in ours.state_dict().items()}
    assert got == want


# 64x64 inputs, 4 of them: in training mode the last stage's batch norm then sees 4+ values
# a channel (with 2 values at 1x1 it amplifies float rounding into visible differences).
@pytest.mark.parametrize("name, train", [("resnet18", False), ("resnet18", True), ("resnet50", True),
                                         ("vgg11_bn", False)])
def test_same_weights_give_torchvision_outputs(name, train, device):
    theirs, ours = _pair(name, num_classes=7)
    if device != "cpu":
        ours = copy.deepcopy(ours).to(device)  # the cached CPU network stays as it is
    theirs.train(train)
    ours.train(train)
    torch.manual_seed(1)
    x = torch.randn(4, 3, 64, 64)
    with torch.no_grad():
        want = theirs(x)
        out = ours(to_lucid(x, device))
        assert out.device.type == device
        got = to_torch(out.detach())
    theirs.eval()
    ours.eval()
    assert (got - want).abs().max().item() < 1e-3 * max(1.0, want.abs().max().item())


def test_initialisation_follows_torchvision():
    resnet = lucid.utils.models.resnet18()
    w = resnet.layer1[0].conv1.weight  # kaiming normal, fan_out, relu: std sqrt(2 / (64 * 9))
    assert float(w.std()) == pytest.approx(math.sqrt(2 / (64 * 9)), rel=0.1)
    assert resnet.bn1.weight.tolist() == [1.0] * 64 and resnet.bn1.bias.tolist() == [0.0] * 64
    vgg = lucid.utils.models.vgg11_bn(num_classes=7)
    assert float(vgg.classifier[0].weight[:64].std()) == pytest.approx(0.01, rel=0.1)
    assert float(vgg.features[0].bias.abs().max()) == 0.0
    zero = lucid.utils.models.resnet18(zero_init_residual=True)
    assert float(zero.layer2[1].bn2.weight.abs().max()) == 0.0


def test_resnet_trains_and_the_head_can_be_replaced():
    # what pytorch/examples' siamese network does: one input channel, the head cut off
    model = lucid.utils.models.resnet18(weights=None)
    model.conv1 = lucid.nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3, bias=False)
    trunk = lucid.nn.Sequential(*list(model.children())[:-1])
    out = trunk(lucid.randn(2, 1, 28, 28))
    assert tuple(out.shape) == (2, 512, 1, 1)
    out.sum().backward()
    assert model.conv1.weight.grad is not None


def test_pretrained_weights_are_refused():
    with pytest.raises(ValueError, match="random weights only"):
        lucid.utils.models.resnet18(weights="IMAGENET1K_V1")
    with pytest.raises(ValueError, match="random weights only"):
        lucid.utils.models.vgg16(pretrained=True)
    with pytest.raises(ValueError, match="4 stages"):
        lucid.utils.models.ResNet(lucid.utils.models.BasicBlock, [2, 2])
