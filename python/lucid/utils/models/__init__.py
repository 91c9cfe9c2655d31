"""lucid.utils.models: torchvision.models' ResNet and VGG networks, with torchvision's
module names (so state dicts move between the two), layer shapes and initialisation.

Only weights=None is accepted: torchvision's pretrained weights come from a download, which
lucid does not do; build the network with weights=None and load_state_dict a checkpoint.
"""

from .resnet import BasicBlock, Bottleneck, ResNet, resnet18, resnet34, resnet50
from .vgg import VGG, vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19, vgg19_bn

__all__ = ["BasicBlock", "Bottleneck", "ResNet", "resnet18", "resnet34", "resnet50", "VGG", "vgg11", "vgg11_bn",
           "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"]
