"""QAT Conv+BN(+ReLU).

The weight that will exist after conversion is the BN-folded one, w * gamma / sqrt(var +
eps), so that is what gets fake-quantized. Following torch's eager QAT ConvBn, the conv
runs with the fake-quantized folded weight, its output is divided back by the per-channel
fold factor, and the real BatchNorm is applied to that: in training BN uses (and updates)
batch statistics, so its running statistics keep learning; in eval the result equals the
folded conv exactly. (Upstream Lucid folds with the running statistics only and never
calls BN, which leaves the running statistics frozen during QAT.)
"""

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

from ...qat._common import require_qconfig

__all__ = ["ConvBn1d", "ConvBn2d", "ConvBn3d", "ConvBnReLU1d", "ConvBnReLU2d", "ConvBnReLU3d"]

_CONV_BY_RANK = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}
_BN_BY_RANK = {1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}


class _ConvBnNd(nn.Module):
    _rank = 2
    _relu = False

    def __init__(self, conv, bn, relu, qconfig):
        super().__init__()
        name = type(self).__name__
        if type(conv) is not _CONV_BY_RANK[self._rank]:
            raise TypeError(f"{name}: conv must be nn.{_CONV_BY_RANK[self._rank].__name__}, got {type(conv).__name__}")
        if not isinstance(bn, _BN_BY_RANK[self._rank]):
            raise TypeError(f"{name}: bn must be nn.{_BN_BY_RANK[self._rank].__name__}, got {type(bn).__name__}")
        if not bn.track_running_stats:
            raise ValueError(f"{name}: bn must track running statistics (they are folded into the conv)")
        if bn.num_features != conv.out_channels:
            raise ValueError(f"{name}: bn has {bn.num_features} features but conv has "
                             f"{conv.out_channels} output channels")
        if self._relu and not isinstance(relu, nn.ReLU):
            raise TypeError(f"{name}: relu must be nn.ReLU, got {type(relu).__name__}")
        self.qconfig = require_qconfig(qconfig, name)
        self.conv = conv
        self.bn = bn
        if self._relu:
            self.relu = relu
        self.weight_fake_quant = qconfig.weight()
        self.activation_post_process = qconfig.activation()

    def _fold_factor(self):
        bn = self.bn
        gamma = bn.weight if bn.affine else lucid.ones_like(bn.running_var)
        return gamma / lucid.sqrt(bn.running_var + bn.eps)

    def _weight_shape(self):
        """Broadcast shape of a per-output-channel vector against the conv weight."""
        return (-1,) + (1,) * (self._rank + 1)

    def _output_shape(self):
        """Broadcast shape of a per-channel vector against the (N, C, *spatial) output."""
        return (1, -1) + (1,) * self._rank

    def folded_weight_and_bias(self):
        """(w * gamma / std, beta + (b - mean) * gamma / std) from the running statistics."""
        factor = self._fold_factor()
        conv, bn = self.conv, self.bn
        weight = conv.weight * factor.reshape(self._weight_shape())
        conv_bias = conv.bias if conv.bias is not None else lucid.zeros_like(bn.running_mean)
        bias = (conv_bias - bn.running_mean) * factor
        if bn.affine:
            bias = bias + bn.bias
        return weight, bias

    def forward(self, input):
        factor = self._fold_factor()
        folded = self.weight_fake_quant(self.conv.weight * factor.reshape(self._weight_shape()))
        y = self.conv._conv_forward(input, folded, None)
        y = y / factor.reshape(self._output_shape())
        if self.conv.bias is not None:
            y = y + self.conv.bias.reshape(self._output_shape())
        y = self.bn(y)
        if self._relu:
            y = F.relu(y)
        return self.activation_post_process(y)

    @classmethod
    def from_float(cls, mod):
        """From an nn.Sequential (conv, bn[, relu]) carrying a qconfig."""
        parts = list(mod.children()) if isinstance(mod, nn.Sequential) else None
        if not parts or len(parts) != (3 if cls._relu else 2):
            raise TypeError(f"{cls.__name__}.from_float expects nn.Sequential(conv, bn"
                            f"{', relu' if cls._relu else ''}), got {type(mod).__name__}")
        qconfig = getattr(mod, "qconfig", None)
        return cls(*parts, qconfig=qconfig)


def _make(name, rank, relu):
    if relu:
        def __init__(self, conv, bn, relu, qconfig=None):
            _ConvBnNd.__init__(self, conv, bn, relu, qconfig)
    else:
        def __init__(self, conv, bn, qconfig=None):
            _ConvBnNd.__init__(self, conv, bn, None, qconfig)
    doc = (f"QAT Conv{rank}d + BatchNorm{rank}d{' + ReLU' if relu else ''}: the BN-folded weight "
           "is fake-quantized, BN keeps training.")
    return type(name, (_ConvBnNd,), {"__init__": __init__, "_rank": rank, "_relu": relu,
                                     "__module__": __name__, "__doc__": doc})


ConvBn1d = _make("ConvBn1d", 1, False)
ConvBn2d = _make("ConvBn2d", 2, False)
ConvBn3d = _make("ConvBn3d", 3, False)
ConvBnReLU1d = _make("ConvBnReLU1d", 1, True)
ConvBnReLU2d = _make("ConvBnReLU2d", 2, True)
ConvBnReLU3d = _make("ConvBnReLU3d", 3, True)
