"""The classic hook-based weight normalisation (torch.nn.utils.weight_norm): the parameter
`name` becomes name_g (the norms over every dim but `dim`) and name_v (the direction);
a forward pre-hook recomputes name = v * g / ||v|| before every call."""

import warnings

from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim"]


def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm of v over every dim except `dim`, keeping v's rank (dim -1: the whole tensor)."""
    from ... import norm
    if dim == -1:
        return norm(v, pow)
    if dim == 0:
        shape = [v.shape[0]] + [1] * (v.dim() - 1)
        return norm(v.reshape(v.shape[0], -1), pow, 1).reshape(shape)
    if dim == v.dim() - 1:
        shape = [1] * (v.dim() - 1) + [v.shape[-1]]
        return norm(v.reshape(-1, v.shape[-1]), pow, 0).reshape(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim=0):
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        if name not in module._parameters or module._parameters[name] is None:
            raise ValueError(f"weight_norm: module {type(module).__name__} has no parameter named '{name}'")
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Reparametrises module.<name> as name_g * name_v / ||name_v|| (norm over all dims but `dim`;
    dim=None: over the whole tensor). Returns the module. Deprecated, as in torch, in favour of
    nn.utils.parametrizations.weight_norm."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
