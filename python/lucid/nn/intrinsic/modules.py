"""Fused float containers: a Sequential of (layer, ReLU) whose type marks the pair as
one unit for prepare / prepare_qat / convert."""

import lucid.nn as nn

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU"]


class _FusedPair(nn.Sequential):
    _first_type = nn.Module

    def __init__(self, first, relu):
        name = type(self).__name__
        if type(first) is not self._first_type:
            raise TypeError(f"{name}: first module must be {self._first_type.__name__}, got "
                            f"{type(first).__name__}")
        if not isinstance(relu, nn.ReLU):
            raise TypeError(f"{name}: second module must be nn.ReLU, got {type(relu).__name__}")
        super().__init__(first, relu)


class ConvReLU1d(_FusedPair):
    _first_type = nn.Conv1d

    def __init__(self, conv, relu):
        super().__init__(conv, relu)


class ConvReLU2d(_FusedPair):
    _first_type = nn.Conv2d

    def __init__(self, conv, relu):
        super().__init__(conv, relu)


class ConvReLU3d(_FusedPair):
    _first_type = nn.Conv3d

    def __init__(self, conv, relu):
        super().__init__(conv, relu)


class LinearReLU(_FusedPair):
    _first_type = nn.Linear

    def __init__(self, linear, relu):
        super().__init__(linear, relu)
