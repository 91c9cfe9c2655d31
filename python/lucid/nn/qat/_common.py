"""What every QAT layer shares: building its FakeQuantize modules from a QConfig and
taking over a float layer's parameters in from_float."""


def require_qconfig(qconfig, where):
    from lucid.quantization.qconfig import QConfig
    if qconfig is None:
        raise ValueError(f"{where} needs a qconfig (e.g. lucid.quantization.get_default_qat_qconfig()); "
                         "got None")
    if not isinstance(qconfig, QConfig):
        raise TypeError(f"{where}: qconfig must be a lucid.quantization.QConfig, got {type(qconfig).__name__}")
    return qconfig


def attach_fake_quants(module, qconfig, with_activation=True):
    module.qconfig = require_qconfig(qconfig, type(module).__name__)
    module.weight_fake_quant = qconfig.weight()
    if with_activation:
        module.activation_post_process = qconfig.activation()


def float_source(mod, float_type, fused_type, where):
    """(float layer, has_relu) from a float layer or its nn.intrinsic fused pair."""
    if fused_type is not None and type(mod) is fused_type:
        return mod[0], True
    if type(mod) is float_type:
        return mod, False
    expected = float_type.__name__ + (f" or nn.intrinsic.{fused_type.__name__}" if fused_type else "")
    raise TypeError(f"{where}.from_float expects nn.{expected}, got {type(mod).__name__}")


def adopt_parameters(qat_module, source):
    """Share the float layer's weight and bias (training continues on the same tensors)."""
    qat_module.weight = source.weight
    qat_module.bias = source.bias
