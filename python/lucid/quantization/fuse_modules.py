"""fuse_modules / fuse_modules_qat: merge runs of adjacent layers before quantization.

Each group names a run (dotted names): [Conv, BN], [Conv, BN, ReLU], [Conv, ReLU] or
[Linear, ReLU] (also [Linear, BN1d] for fuse_modules). The first name receives the fused
module and the others become nn.Identity, so a hand-written forward that still calls
them keeps working. fuse_modules folds BN into the conv with its running statistics
(eval semantics); fuse_modules_qat keeps Conv+BN trainable as nn.intrinsic.qat modules.
"""

import copy

import lucid.nn as nn

__all__ = ["fuse_modules", "fuse_modules_qat"]

_CONV = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
_BN = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)


def _resolve(root, dotted, where):
    module = root
    for part in dotted.split("."):
        children = dict(module.named_children())
        if part not in children:
            raise AttributeError(f"{where}: model has no submodule {dotted!r} (no child {part!r} "
                                 f"in {type(module).__name__})")
        module = children[part]
    return module


def _replace(root, dotted, value):
    *path, leaf = dotted.split(".")
    parent = root
    for part in path:
        parent = parent._modules[part]
    parent._modules[leaf] = value


def _conv_relu(conv):
    import lucid.nn.intrinsic as nni
    fused = {nn.Conv1d: nni.ConvReLU1d, nn.Conv2d: nni.ConvReLU2d, nn.Conv3d: nni.ConvReLU3d}[type(conv)]
    return fused(conv, nn.ReLU())


def _pattern_error(where, modules):
    return ValueError(f"{where}: cannot fuse {[type(m).__name__ for m in modules]}; supported runs are "
                      "[Conv, BN], [Conv, BN, ReLU], [Conv, ReLU], [Linear, ReLU] and [Linear, BatchNorm1d]")


def _fuse_eval(modules):
    from lucid.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
    import lucid.nn.intrinsic as nni
    first, rest = modules[0], list(modules[1:])
    if type(first) in _CONV:
        if rest and isinstance(rest[0], _BN):
            if first.training or rest[0].training:
                raise RuntimeError("fuse_modules folds BatchNorm with its running statistics: call "
                                   "model.eval() first (use fuse_modules_qat for training)")
            first = fuse_conv_bn_eval(first, rest.pop(0))
        if rest and isinstance(rest[0], nn.ReLU) and len(rest) == 1:
            return _conv_relu(first)
        if not rest:
            return first
    elif type(first) is nn.Linear and len(rest) == 1:
        if isinstance(rest[0], nn.ReLU):
            return nni.LinearReLU(first, nn.ReLU())
        if isinstance(rest[0], nn.BatchNorm1d):
            if first.training or rest[0].training:
                raise RuntimeError("fuse_modules folds BatchNorm with its running statistics: call "
                                   "model.eval() first")
            return fuse_linear_bn_eval(first, rest[0])
    raise _pattern_error("fuse_modules", modules)


def _fuse_qat(modules, qconfig):
    import lucid.nn.intrinsic as nni
    import lucid.nn.intrinsic.qat as nniqat
    first, rest = modules[0], list(modules[1:])
    if type(first) in _CONV and rest:
        rank = _CONV.index(type(first)) + 1
        if isinstance(rest[0], _BN) and len(rest) <= 2:
            if len(rest) == 2:
                if not isinstance(rest[1], nn.ReLU):
                    raise _pattern_error("fuse_modules_qat", modules)
                return getattr(nniqat, f"ConvBnReLU{rank}d")(first, rest[0], nn.ReLU(), qconfig=qconfig)
            return getattr(nniqat, f"ConvBn{rank}d")(first, rest[0], qconfig=qconfig)
        if isinstance(rest[0], nn.ReLU) and len(rest) == 1:
            return _conv_relu(first)
    if type(first) is nn.Linear and len(rest) == 1 and isinstance(rest[0], nn.ReLU):
        return nni.LinearReLU(first, nn.ReLU())
    raise _pattern_error("fuse_modules_qat", modules)


def _check_groups(modules_to_fuse, where):
    if isinstance(modules_to_fuse, (list, tuple)) and modules_to_fuse and all(
            isinstance(n, str) for n in modules_to_fuse):
        return [list(modules_to_fuse)]  # one group given flat, as torch accepts
    groups = [list(g) for g in modules_to_fuse]
    for g in groups:
        if len(g) < 2 or not all(isinstance(n, str) for n in g):
            raise ValueError(f"{where}: each group must list at least two module names, got {g!r}")
    return groups


def _apply(model, groups, fuse, where):
    for group in groups:
        modules = [_resolve(model, name, where) for name in group]
        fused = fuse(modules)
        _replace(model, group[0], fused)
        for name in group[1:]:
            _replace(model, name, nn.Identity())
    return model


def fuse_modules(model, modules_to_fuse, inplace=False):
    if not isinstance(model, nn.Module):
        raise TypeError(f"fuse_modules: model must be an nn.Module, got {type(model).__name__}")
    groups = _check_groups(modules_to_fuse, "fuse_modules")
    model = model if inplace else copy.deepcopy(model)
    return _apply(model, groups, _fuse_eval, "fuse_modules")


def fuse_modules_qat(model, modules_to_fuse, qconfig=None, inplace=False):
    from .qconfig import check_qconfig, get_default_qat_qconfig
    if not isinstance(model, nn.Module):
        raise TypeError(f"fuse_modules_qat: model must be an nn.Module, got {type(model).__name__}")
    groups = _check_groups(modules_to_fuse, "fuse_modules_qat")
    qconfig = check_qconfig(qconfig, "fuse_modules_qat") or getattr(model, "qconfig", None) \
        or get_default_qat_qconfig()
    model = model if inplace else copy.deepcopy(model)
    return _apply(model, groups, lambda mods: _fuse_qat(mods, qconfig), "fuse_modules_qat")
