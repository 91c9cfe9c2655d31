"""Convolutions of small images (the deep layers of ResNets and VGGs: 1x1 to 14x14
images with 256-512 channels, batch 64; Note [Batched small images] in
csrc/backend/cpu/conv_batched.cpp), and ResNet-18 / VGG-11 training steps at 32x32
and 64x64 inputs, batch 32: the same nn code for lucid and torch, the same weights."""

import torch

from workloads import to_lucid, workload

BATCH = 64


def _conv_setup(c_in, c_out, hw, stride):
    def setup():
        gen = torch.Generator().manual_seed(0)
        x = torch.randn(BATCH, c_in, hw, hw, generator=gen)
        w = torch.randn(c_out, c_in, 3, 3, generator=gen) * (c_in * 9) ** -0.5
        b = torch.zeros(c_out)
        ls = [to_lucid(t) for t in (x, w, b)]
        ts = [x, w.clone(), b.clone()]
        for t in ls + ts:
            t.requires_grad_(True)
        return tuple(ls), tuple(ts)
    return setup


def _conv_fwd_bwd(stride):
    def fn(m, x, w, b):
        y = m.nn.functional.conv2d(x, w, b, stride=stride, padding=1)
        y.sum().backward()
        x.grad = w.grad = b.grad = None
        return y
    return fn


for c_in, c_out, hw, stride in [(512, 512, 1, 1), (512, 512, 4, 1), (512, 512, 7, 1), (256, 256, 14, 1),
                                (256, 512, 8, 2)]:
    out_hw = (hw - 1) // stride + 1
    # forward 2 * N * Cout * Cin * 9 * out positions (padding included); backward twice that
    workload(f"conv2d fwd+bwd 3x3 {c_in}->{c_out} ch, {hw}x{hw}" + (f" stride {stride}" if stride > 1 else "")
             + f", batch {BATCH}", "conv", _conv_setup(c_in, c_out, hw, stride), _conv_fwd_bwd(stride),
             flops=3 * 2 * BATCH * c_out * c_in * 9 * out_hw * out_hw)


# ---- networks ---------------------------------------------------------------------------------

def resnet18(nn, num_classes=10):
    """torchvision's resnet18 (BasicBlock, [2, 2, 2, 2]), written against `nn`."""
    class BasicBlock(nn.Module):
        def __init__(self, c_in, c_out, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(c_out)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(c_out)
            self.downsample = None
            if stride != 1 or c_in != c_out:
                self.downsample = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + identity)

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
              nn.MaxPool2d(3, 2, 1)]
    c = 64
    for c_out, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        layers += [BasicBlock(c, c_out, stride), BasicBlock(c_out, c_out, 1)]
        c = c_out
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, num_classes)]
    return nn.Sequential(*layers)


def vgg11(nn, hw, num_classes=10):
    """torchvision's VGG-11 features; the classifier is the CIFAR form (one linear layer
    on the final feature map) rather than the 224x224 form's 4096-wide layers."""
    layers, c = [], 3
    for v in [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"]:
        if v == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers += [nn.Conv2d(c, v, 3, padding=1), nn.ReLU(inplace=True)]
            c = v
    layers += [nn.Flatten(), nn.Linear(512 * (hw // 32) ** 2, num_classes)]
    return nn.Sequential(*layers)


NET_BATCH = 32


def _net_setup(build, hw):
    def setup():
        torch.manual_seed(0)
        tnet = build(torch.nn, hw)
        import lucid
        lnet = build(lucid.nn, hw)
        lnet.load_state_dict({k: to_lucid(v) for k, v in tnet.state_dict().items()})
        gen = torch.Generator().manual_seed(1)
        x = torch.randn(NET_BATCH, 3, hw, hw, generator=gen)
        y = torch.randint(0, 10, (NET_BATCH,), generator=gen)
        sides = []
        for m, net, xs, ys in [(lucid, lnet, to_lucid(x), to_lucid(y)), (torch, tnet, x, y)]:
            net.train()
            opt = m.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
            sides.append((net, opt, xs, ys))
        return tuple(sides[0]), tuple(sides[1])
    return setup


def train_step(m, net, opt, x, y):
    loss = m.nn.functional.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.detach()


def _conv_flops(net_builder, hw):
    """Multiply-adds of the network's convolutions and linear layers for one image, x 2,
    from torch forward hooks: the step does that forward and twice it backward."""
    net = net_builder(torch.nn, hw).eval()  # (batch norm in training mode refuses one image)
    total = [0]

    def hook(mod, inp, out):
        if isinstance(mod, torch.nn.Conv2d):
            total[0] += out.numel() * mod.in_channels // mod.groups * mod.kernel_size[0] * mod.kernel_size[1]
        elif isinstance(mod, torch.nn.Linear):
            total[0] += out.numel() * mod.in_features
    for mod in net.modules():
        mod.register_forward_hook(hook)
    with torch.no_grad():
        net(torch.zeros(1, 3, hw, hw))
    return 2 * total[0]


for name, build in [("ResNet-18", lambda nn, hw: resnet18(nn)), ("VGG-11", vgg11)]:
    for hw in (32, 64):
        workload(f"{name} training step [{NET_BATCH},3,{hw},{hw}], SGD momentum", "training",
                 _net_setup(build, hw), train_step, flops=3 * NET_BATCH * _conv_flops(build, hw))
