"""VGG (Simonyan & Zisserman, "Very Deep Convolutional Networks"), as torchvision's:
`features` (3x3 convolutions and 2x2 max-pools, with batch norm in the _bn variants),
`avgpool` to 7x7, and a three-layer `classifier`, with torchvision's initialisation.
"""

from ... import flatten
from ... import nn
from ._weights import check_no_weights

# Output channels of each 3x3 convolution; "M" is a 2x2 max-pool.
_CONFIGS = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


def _features(config, batch_norm):
    layers, channels = [], 3
    for v in config:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2d(channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2d(v))
        layers.append(nn.ReLU(inplace=True))
        channels = v
    return nn.Sequential(*layers)


class VGG(nn.Module):
    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes))
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return self.classifier(flatten(self.avgpool(self.features(x)), 1))


def _vgg(name, config, batch_norm, weights, kwargs):
    kwargs = check_no_weights(name, weights, kwargs)
    return VGG(_features(_CONFIGS[config], batch_norm), **kwargs)


def vgg11(*, weights=None, **kwargs):
    return _vgg("vgg11", "A", False, weights, kwargs)


def vgg11_bn(*, weights=None, **kwargs):
    return _vgg("vgg11_bn", "A", True, weights, kwargs)


def vgg13(*, weights=None, **kwargs):
    return _vgg("vgg13", "B", False, weights, kwargs)


def vgg13_bn(*, weights=None, **kwargs):
    return _vgg("vgg13_bn", "B", True, weights, kwargs)


def vgg16(*, weights=None, **kwargs):
    return _vgg("vgg16", "D", False, weights, kwargs)


def vgg16_bn(*, weights=None, **kwargs):
    return _vgg("vgg16_bn", "D", True, weights, kwargs)


def vgg19(*, weights=None, **kwargs):
    return _vgg("vgg19", "E", False, weights, kwargs)


def vgg19_bn(*, weights=None, **kwargs):
    return _vgg("vgg19_bn", "E", True, weights, kwargs)
