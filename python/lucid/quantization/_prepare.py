"""Eager-mode workflows: prepare -> calibrate -> convert (static post-training
quantization), prepare_qat -> train -> convert (quantization-aware training), and
quantize_dynamic (weights only, no calibration).

Module swaps go through the parent's _modules dict so a Sequential keeps its order.
"""

import copy
import warnings

import lucid.nn as nn

from ._qscheme import check_qdtype, qint8
from .qconfig import (QConfig, QConfigMapping, check_qconfig, get_default_qat_qconfig_mapping,
                      get_default_qconfig_mapping)

__all__ = ["prepare", "prepare_qat", "convert", "quantize_dynamic"]


def _check_model(model, where):
    if not isinstance(model, nn.Module):
        raise TypeError(f"{where}: model must be an nn.Module, got {type(model).__name__}")


def _as_mapping(model, qconfig, default_mapping, where):
    """A QConfigMapping from a QConfig, a mapping, or None (then model.qconfig if the
    model carries one, else the default mapping)."""
    if qconfig is None:
        own = getattr(model, "qconfig", None)
        if own is not None:
            return QConfigMapping().set_global(check_qconfig(own, f"{where} (model.qconfig)"))
        return default_mapping()
    if isinstance(qconfig, QConfigMapping):
        return qconfig
    if isinstance(qconfig, QConfig):
        return QConfigMapping().set_global(check_qconfig(qconfig, where))
    raise TypeError(f"{where}: qconfig must be a QConfig, a QConfigMapping or None, got {type(qconfig).__name__}")


def _observe_output(module, args, output):
    # A plain function (not a closure) so a deep-copied prepared model feeds its own observers.
    module.activation_post_process(output)


def _observed_types():
    import lucid.nn.intrinsic as nni
    import lucid.nn.quantized as nnq
    return (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
            nn.ConvTranspose3d, nni.LinearReLU, nni.ConvReLU1d, nni.ConvReLU2d, nni.ConvReLU3d, nn.Sigmoid,
            nn.Tanh, nn.Hardsigmoid, nn.Hardswish, nn.ELU, nn.LeakyReLU, nnq.QuantStub)


def _walk(module, prefix=""):
    """(qualified name, parent, attribute name, child) depth first over a snapshot."""
    for name, child in list(module.named_children()):
        full = f"{prefix}.{name}" if prefix else name
        yield full, module, name, child


def prepare(model, qconfig=None, inplace=False):
    """Attach an activation observer to every quantizable module the mapping selects
    (fed by a forward hook) and put the model in eval mode; calibrate by running data
    through it, then call convert."""
    _check_model(model, "prepare")
    mapping = _as_mapping(model, qconfig, get_default_qconfig_mapping, "prepare")
    model = model if inplace else copy.deepcopy(model)
    model.eval()
    count = _prepare_children(model, mapping, "")
    if count == 0:
        warnings.warn("prepare(): no module was selected for quantization (check the qconfig / "
                      "QConfigMapping); convert() will leave the model unchanged", stacklevel=2)
    return model


def _prepare_children(module, mapping, prefix):
    import lucid.nn.quantized as nnq
    count = 0
    for full, _, _, child in _walk(module, prefix):
        qconfig = mapping.get_qconfig(type(child), full)
        if qconfig is not None and isinstance(child, (nn.Embedding, nn.EmbeddingBag)):
            child.qconfig = qconfig  # weight-only: quantized at convert, nothing to observe
            count += 1
        elif qconfig is not None and isinstance(child, nnq.FloatFunctional):
            child.qconfig = qconfig  # observes inside its merge methods, not via a hook
            child.activation_post_process = qconfig.activation()
            count += 1
        elif qconfig is not None and type(child) in _observed_types():
            already_prepared = hasattr(child, "activation_post_process")
            child.qconfig = qconfig
            child.activation_post_process = qconfig.activation()
            if not already_prepared:  # preparing twice in place must not feed two hooks
                child.register_forward_hook(_observe_output)
            count += 1  # a fused pair is observed as a whole: its inner layer is not
        else:
            count += _prepare_children(child, mapping, full)
    return count


def _qat_mapping():
    import lucid.nn.intrinsic as nni
    import lucid.nn.qat as nnqat
    return {nn.Linear: nnqat.Linear, nn.Conv1d: nnqat.Conv1d, nn.Conv2d: nnqat.Conv2d,
            nn.Conv3d: nnqat.Conv3d, nn.Embedding: nnqat.Embedding, nni.LinearReLU: nnqat.LinearReLU,
            nni.ConvReLU1d: nnqat.ConvReLU1d, nni.ConvReLU2d: nnqat.ConvReLU2d,
            nni.ConvReLU3d: nnqat.ConvReLU3d}


def prepare_qat(model, qconfig=None, inplace=False):
    """Swap layers for their nn.qat forms (fake-quantized weight and output), give
    QuantStub / FloatFunctional a FakeQuantize, and put the model in train mode."""
    _check_model(model, "prepare_qat")
    mapping = _as_mapping(model, qconfig, get_default_qat_qconfig_mapping, "prepare_qat")
    model = model if inplace else copy.deepcopy(model)
    model.train()
    if _prepare_qat_children(model, mapping, "") == 0:
        warnings.warn("prepare_qat(): no module was selected for quantization-aware training",
                      stacklevel=2)
    return model


def _is_qat_module(module):
    from lucid.nn.intrinsic.qat.modules import _ConvBnNd
    return hasattr(module, "weight_fake_quant") or isinstance(module, _ConvBnNd)


def _prepare_qat_children(module, mapping, prefix):
    import lucid.nn.quantized as nnq
    swaps = _qat_mapping()
    count = 0
    for full, parent, name, child in _walk(module, prefix):
        qconfig = mapping.get_qconfig(type(child), full)
        if _is_qat_module(child):
            count += 1  # already trainable-quantized (e.g. ConvBn from fuse_modules_qat)
        elif qconfig is not None and type(child) in swaps:
            child.qconfig = qconfig
            parent._modules[name] = swaps[type(child)].from_float(child)
            count += 1
        elif qconfig is not None and isinstance(child, (nnq.QuantStub, nnq.FloatFunctional)):
            child.qconfig = qconfig
            child.activation_post_process = qconfig.activation()
            count += 1
        else:
            count += _prepare_qat_children(child, mapping, full)
    return count


def _convert_mapping():
    import lucid.nn.intrinsic as nni
    import lucid.nn.intrinsic.qat as nniqat
    import lucid.nn.qat as nnqat
    import lucid.nn.quantized as nnq
    mapping = {
        nn.Linear: nnq.Linear, nnqat.Linear: nnq.Linear, nni.LinearReLU: nnq.LinearReLU,
        nnqat.LinearReLU: nnq.LinearReLU, nn.Embedding: nnq.Embedding, nnqat.Embedding: nnq.Embedding,
        nn.EmbeddingBag: nnq.EmbeddingBag, nn.Sigmoid: nnq.Sigmoid, nn.Tanh: nnq.Tanh,
        nn.Hardsigmoid: nnq.Hardsigmoid, nn.Hardswish: nnq.Hardswish, nn.ELU: nnq.ELU,
        nn.LeakyReLU: nnq.LeakyReLU, nnq.QuantStub: nnq.Quantize, nnq.DeQuantStub: nnq.DeQuantize,
        nnq.FloatFunctional: nnq.QFunctional,
    }
    for n in (1, 2, 3):
        conv, relu = getattr(nnq, f"Conv{n}d"), getattr(nnq, f"ConvReLU{n}d")
        mapping.update({getattr(nn, f"Conv{n}d"): conv, getattr(nnqat, f"Conv{n}d"): conv,
                        getattr(nniqat, f"ConvBn{n}d"): conv, getattr(nni, f"ConvReLU{n}d"): relu,
                        getattr(nnqat, f"ConvReLU{n}d"): relu, getattr(nniqat, f"ConvBnReLU{n}d"): relu,
                        getattr(nn, f"ConvTranspose{n}d"): getattr(nnq, f"ConvTranspose{n}d")})
    return mapping


def _ready_to_convert(module):
    import lucid.nn.quantized as nnq
    if isinstance(module, nnq.DeQuantStub):
        return True
    if isinstance(module, (nn.Embedding, nn.EmbeddingBag)):
        return getattr(module, "qconfig", None) is not None or hasattr(module, "weight_fake_quant")
    return hasattr(module, "activation_post_process")


def convert(model, inplace=False):
    """Replace every prepared (calibrated) or QAT-trained module by its nn.quantized
    form; the result is in eval mode."""
    _check_model(model, "convert")
    model = model if inplace else copy.deepcopy(model)
    _convert_children(model, _convert_mapping())
    model.eval()
    return model


def _convert_children(module, mapping):
    for _, parent, name, child in _walk(module):
        target = mapping.get(type(child))
        if target is not None and _ready_to_convert(child):
            parent._modules[name] = target.from_float(child)
        else:
            _convert_children(child, mapping)


def quantize_dynamic(model, qconfig_spec=None, dtype=qint8, inplace=False):
    """Swap every module whose type is in qconfig_spec (default {nn.Linear, nn.LSTM}) for
    its nn.quantized.dynamic form: int8 weights, inputs quantized on the fly."""
    import lucid.nn.quantized.dynamic as nnqd
    _check_model(model, "quantize_dynamic")
    check_qdtype(dtype, "quantize_dynamic")
    builders = {nn.Linear: nnqd.Linear, nn.LSTM: nnqd.LSTM}
    if qconfig_spec is None:
        types = set(builders)
    else:
        types = set(qconfig_spec)  # a set of types, or a dict keyed by type (torch's form)
        unsupported = [t for t in types if t not in builders]
        if unsupported:
            raise ValueError(f"quantize_dynamic: no dynamic quantized form for "
                             f"{[getattr(t, '__name__', t) for t in unsupported]}; supported: Linear, LSTM")
    model = model if inplace else copy.deepcopy(model)
    model.eval()
    if type(model) in types:
        return builders[type(model)].from_float(model, dtype)
    if not any(type(m) in types for m in model.modules()):
        warnings.warn("quantize_dynamic(): the model has no module of the requested types "
                      f"({sorted(t.__name__ for t in types)}); it is returned unchanged", stacklevel=2)
    _swap_dynamic(model, builders, types, dtype)
    return model


def _swap_dynamic(module, builders, types, dtype):
    for _, parent, name, child in _walk(module):
        if type(child) in types:
            parent._modules[name] = builders[type(child)].from_float(child, dtype)
        else:
            _swap_dynamic(child, builders, types, dtype)
