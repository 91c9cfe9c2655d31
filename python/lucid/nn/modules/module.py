"""nn.Module: the tree of parameters, buffers and submodules, as in PyTorch.

Numeric work happens in the engine; this file only keeps the tree: registration
through attribute assignment, traversal, state dicts, modes, device/dtype moves and
hooks. Names, signatures, key formats and error messages follow torch.nn.Module so
that model code ports by changing the import.
"""

import itertools
from collections import OrderedDict, namedtuple

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Buffer, Parameter, UninitializedBuffer, is_lazy

_EXTRA_STATE_KEY = "_extra_state"  # (torch's name for it in a state dict)

__all__ = ["Module"]

class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns; prints as torch's does when every key matched."""
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """A hook's handle (torch.utils.hooks', upstream Lucid's lucid.nn.hooks'): remove()
    takes entry `key` (a fresh id by default) out of `hooks` and of each dict or set of
    `extra_sets` (the flags kept beside it: with_kwargs, always_call)."""

    _next_id = itertools.count()

    def __init__(self, hooks, key=None, extra_sets=()):
        self.id = next(self._next_id) if key is None else key
        self._dicts = (hooks, *extra_sets)

    def remove(self):
        for d in self._dicts:
            if isinstance(d, dict):
                d.pop(self.id, None)
            else:
                d.discard(self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# Hooks every module runs before its own (torch.nn.modules.module's register_module_*
# functions, below the class).
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = {}
_global_forward_hooks_always_called = {}
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_load_state_dict_pre_hooks = OrderedDict()
_global_load_state_dict_post_hooks = OrderedDict()


def _registered(hooks, module, name, value):
    """value after the registration hooks in `hooks` (each may return a replacement)."""
    for hook in list(hooks.values()):
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def _addindent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * num_spaces + line for line in lines)


class Module:
    """Base class of every layer and model."""

    dump_patches = False
    _version = 1
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes no arguments")
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks_with_kwargs", {})
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks_with_kwargs", {})
        object.__setattr__(self, "_forward_hooks_always_called", {})
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_state_dict_hooks", OrderedDict())
        object.__setattr__(self, "_state_dict_pre_hooks", OrderedDict())
        object.__setattr__(self, "_load_state_dict_pre_hooks", OrderedDict())
        object.__setattr__(self, "_load_state_dict_post_hooks", OrderedDict())

    forward = None  # set by subclasses

    # ---- registration -------------------------------------------------------------------
    def _check_init(self, what):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {what} before Module.__init__() call")

    @staticmethod
    def _check_name(name, kind, existing):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def register_parameter(self, name, param):
        self._check_init("parameters")
        self._check_name(name, "parameter", self._parameters)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             "created explicitly. To express '{name}' as a function of another Tensor, compute the "
                             "value in the forward() method.")
        self._parameters[name] = _registered(_global_parameter_registration_hooks, self, name, param)

    def register_buffer(self, name, tensor, persistent=True):
        self._check_init("buffers")
        self._check_name(name, "buffer", self._buffers)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = _registered(_global_buffer_registration_hooks, self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module", self._modules)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = _registered(_global_module_registration_hooks, self, name, module)

    register_module = add_module

    def __setattr__(self, name, value):
        def remove_from(*dicts):
            for d in dicts:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            modules = self.__dict__.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = _registered(_global_module_registration_hooks, self, name, value)
        elif self.__dict__.get("_modules") is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            self._modules[name] = _registered(_global_module_registration_hooks, self, name, value)
        elif isinstance(value, Buffer):
            self.register_buffer(name, value.data, value.persistent)
        elif isinstance(value, UninitializedBuffer) and name not in (self.__dict__.get("_buffers") or ()):
            self.register_buffer(name, value, UninitializedBuffer._persistent(value))
        elif self.__dict__.get("_buffers") is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            self._buffers[name] = _registered(_global_buffer_registration_hooks, self, name, value)
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Puts `module` at the dotted path `target` (its parent must exist); with `strict`, only in place of an
        existing attribute. As torch's."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    # ---- traversal ------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self in memo and remove_duplicate:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def has_uninitialized_parameters(self, recurse=True):
        """upstream Lucid's: whether a lazy layer's parameters are still placeholders
        (UninitializedParameter, before the first call shapes them)."""
        from ..parameter import UninitializedParameter
        return any(isinstance(p, UninitializedParameter) for p in self.parameters(recurse=recurse))

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes and bulk changes ------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g = g.detach()
                    p.grad = g
                g.zero_()

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        """Sets every parameter to fn(it) in place (`param.data = fn(param)`, its gradient
        to fn(gradient)), so the Parameter objects stay the ones an optimizer holds, as
        torch's `_apply` does; replaces every buffer t by fn(t); the children's too when
        `recurse`."""
        if recurse:
            for m in self.children():
                m._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                new = fn(param)
                grad = None if param.grad is None else fn(param.grad)
                if grad is not None:
                    param.grad = None  # (else param.data's setter would convert the old gradient a second time)
                if new is not param:
                    param.data = new
                if grad is not None:
                    param.grad = grad
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        from ..._tensor import _parse_to_args
        from ..._creation import empty

        from ..._memory_format import _check, to_format
        fmt = kwargs.pop("memory_format", None)
        if fmt is not None:
            _check(fmt, "to")
        dtype, device, _ = _parse_to_args(empty(0), args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}")

        def convert(t):
            want = dtype if dtype is not None and (t.is_floating_point() or t.is_complex()) else None
            out = t._to(want, device)
            # (as torch: a memory format applies to the 4-d and 5-d tensors, conv weights;
            # channels_last on a 5-d one raises, as there)
            if fmt is not None and t.ndim in (4, 5):
                out = to_format(out, fmt, "to")
            return out
        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Moves the parameters and buffers to `device` without copying their values: each
        becomes an uninitialized tensor of its shape and dtype there (for a model about to
        load a checkpoint or initialise its weights there)."""
        from ..._creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def share_memory(self):
        """torch's Hogwild step: lucid cannot share parameters between processes, so this
        raises (Tensor.share_memory_ says why) rather than let workers train copies."""
        return self._apply(lambda t: t.share_memory_())

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def gpu(self, device=None):
        return self._apply(lambda t: t.gpu(device))

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def metal(self):
        """upstream Lucid's: the module to the GPU ("metal" is lucid's other name for it)."""
        return self._apply(lambda t: t.gpu())

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def _float_apply(self, dtype_name):
        return self._apply(lambda t: getattr(t, dtype_name)() if t.is_floating_point() else t)

    def float(self):
        return self._float_apply("float")

    def double(self):
        return self._float_apply("double")

    def half(self):
        return self._float_apply("half")

    def bfloat16(self):
        return self._float_apply("bfloat16")

    # ---- state dicts ---------------------------------------------------------------------------
    # A module with state that is neither a parameter nor a buffer (a vocabulary, a config)
    # overrides get_extra_state and set_extra_state: its state dict then holds that state
    # under "<prefix>_extra_state", and loading hands it back (torch's protocol).
    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. "
                           "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
                           "bug-report.yml to report this bug.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. "
                           "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
                           "bug-report.yml to report this bug.")

    def _has_extra_state(self, method):
        return getattr(type(self), method) is not getattr(Module, method)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state("get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:  # torch's positional (destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
        for hook in self.__dict__.get("_state_dict_pre_hooks", {}).values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, {})
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs, assign=False):
        for hook in list(_global_load_state_dict_pre_hooks.values()):
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items()) if v is not None}
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if is_lazy(value) and not is_lazy(param):  # (torch's message, from the placeholder's shape)
                raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                                   "happens in `load_state_dict` when trying to load an uninitialized parameter into "
                                   "an initialized one. Call `forward` to initialize the parameters before accessing "
                                   "their attributes.")
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(value)}")
                continue
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                if assign:
                    if name in self._parameters:
                        setattr(self, name, Parameter(value, param.requires_grad))
                    else:
                        self._buffers[name] = value
                else:
                    with no_grad():
                        param.copy_(value)
            except Exception as e:  # noqa: BLE001 (reported with the key, as torch does)
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.shape} and whose dimensions in the checkpoint are {value.shape}, an "
                                  f"exception occurred : {e.args}.")
        extra = self._has_extra_state("set_extra_state")
        if extra:
            if prefix + _EXTRA_STATE_KEY in state_dict:
                self.set_extra_state(state_dict[prefix + _EXTRA_STATE_KEY])
            elif strict:
                missing_keys.append(prefix + _EXTRA_STATE_KEY)
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    rest = key[len(prefix):]
                    name = rest.split(".", 1)[0]
                    if name not in self._modules and name not in local and not (extra and rest == _EXTRA_STATE_KEY):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        state_dict = OrderedDict(state_dict)

        def load(module, prefix=""):
            module._load_from_state_dict(state_dict, prefix, {}, True, missing, unexpected, errors, assign)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")
            # post-hooks see the keys so far and may clear them (torch's order: after the subtree)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in [*_global_load_state_dict_post_hooks.values(),
                         *module.__dict__.get("_load_state_dict_post_hooks", {}).values()]:
                if hook(module, keys) is not None:
                    raise RuntimeError("load_state_dict post hooks must return None, as they change the "
                                       "incompatible keys in place")

        load(self)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self._get_name(), "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)  # reported with strict=False too, as torch

    def register_state_dict_post_hook(self, hook):
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    register_state_dict_hook = register_state_dict_post_hook
    _register_state_dict_hook = register_state_dict_post_hook  # (torch's private name, which libraries use)

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) before state_dict saves this module."""
        return self._add_hook(self.__dict__.setdefault("_state_dict_pre_hooks", OrderedDict()), hook, False)

    def register_load_state_dict_pre_hook(self, hook):
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """hook([module,] state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        before this module loads its part of a state dict (torch's private form, which libraries use)."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = (
            (lambda sd, prefix, *rest: hook(self, sd, prefix, *rest)) if with_module else hook)
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) after load_state_dict has loaded this module and
        its children; it may remove keys from incompatible_keys' lists (then strict loading
        does not report them) and must return None."""
        return self._add_hook(self._load_state_dict_post_hooks, hook, False)

    # ---- calling and hooks ----------------------------------------------------------------------------
    @staticmethod
    def _add_hook(hooks, hook, prepend, flags=()):
        """Adds `hook` to the ordered dict `hooks`; `flags` are (dict, on) pairs that
        mark it (with_kwargs, always_call). The handle removes it from all of them."""
        handle = RemovableHandle(hooks, extra_sets=[d for d, _ in flags])
        hooks[handle.id] = hook
        for d, on in flags:
            if on:
                d[handle.id] = True
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        return self._add_hook(self._forward_pre_hooks, hook, prepend,
                              [(self._forward_pre_hooks_with_kwargs, with_kwargs)])

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        return self._add_hook(self._forward_hooks, hook, prepend,
                              [(self._forward_hooks_with_kwargs, with_kwargs),
                               (self._forward_hooks_always_called, always_call)])

    def register_full_backward_pre_hook(self, hook, prepend=False):
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """torch's deprecated form, run as a full backward hook: grad_output is the same,
        but grad_input holds the gradients of the module's inputs, where torch's non-full
        hook gets those of the inputs of the last operation its forward ran (a Linear's
        bias gradient first), which a warning says."""
        import warnings
        warnings.warn(f"{type(self).__name__}.register_backward_hook: lucid runs it as a full backward hook "
                      "(register_full_backward_hook): grad_input holds the gradients of the module's inputs, not "
                      "those of its last operation's inputs as torch's deprecated hooks do", UserWarning,
                      stacklevel=2)
        return self.register_full_backward_hook(hook)

    def _call_impl(self, *args, **kwargs):
        forward = self.forward
        if forward is None:
            raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')
        # the global hooks first, then the module's own (torch's order)
        for hook_id, hook in [*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()]:
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        forward_hooks = [*_global_forward_hooks.items(), *self._forward_hooks.items()]
        with_kwargs = (_global_forward_hooks_with_kwargs, self._forward_hooks_with_kwargs)
        try:
            if self._backward_hooks or self._backward_pre_hooks or _global_backward_hooks or \
                    _global_backward_pre_hooks:
                from .backward_hooks import call_with_backward_hooks
                output = call_with_backward_hooks(self, forward, args, kwargs)
            else:
                output = forward(*args, **kwargs)
        except Exception:
            # hooks registered with always_call run on a failed forward too, with None for
            # its output; an error of theirs is a warning, the forward's error is raised
            always = (_global_forward_hooks_always_called, self._forward_hooks_always_called)
            for hook_id, hook in forward_hooks:
                if any(hook_id in d for d in always):
                    try:
                        if any(hook_id in d for d in with_kwargs):
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception as e:
                        import warnings

                        warnings.warn("forward hook with ``always_call=True`` raised an exception that was silenced "
                                      f"as another error was raised in forward: {e}")
            raise
        for hook_id, hook in forward_hooks:
            if any(hook_id in d for d in with_kwargs):
                result = hook(self, args, kwargs, output)
            else:
                result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    def _wrapped_call_impl(self, *args, **kwargs):
        compiled = self.__dict__.get("_compiled_call_impl")
        if compiled is not None:
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    __call__ = _wrapped_call_impl

    def compile(self, *args, **kwargs):
        """Compiles this module's __call__ in place with lucid.compile (torch's
        Module.compile): arguments are lucid.compile's."""
        from ... import compile as compile_module

        self.__dict__["_compiled_call_impl"] = compile_module.compile(self._call_impl, *args, **kwargs)

    # ---- printing -----------------------------------------------------------------------------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        children = []
        for name, module in self._modules.items():
            children.append("(" + name + "): " + _addindent(repr(module), 2))
        main = self._get_name() + "("
        if lines or children:
            if len(lines) == 1 and not children:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines + children) + "\n"
        return main + ")"

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)


# ---- hooks for every module (torch.nn.modules.module's functions) ------------------------------------
def register_module_forward_pre_hook(hook):
    """hook(module, args) before every module's forward, before the module's own pre-hooks;
    it may return new args. Returns a handle whose remove() takes it away."""
    return Module._add_hook(_global_forward_pre_hooks, hook, False)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """hook(module, args, output) (hook(module, args, kwargs, output) with with_kwargs) after
    every module's forward, before the module's own hooks; it may return a new output.
    always_call: also when forward raises (output None)."""
    return Module._add_hook(_global_forward_hooks, hook, False,
                            [(_global_forward_hooks_with_kwargs, with_kwargs),
                             (_global_forward_hooks_always_called, always_call)])


def register_module_full_backward_pre_hook(hook):
    """hook(module, grad_output) for every module, before its own backward pre-hooks."""
    return Module._add_hook(_global_backward_pre_hooks, hook, False)


def register_module_full_backward_hook(hook):
    """hook(module, grad_input, grad_output) for every module, before its own backward hooks."""
    return Module._add_hook(_global_backward_hooks, hook, False)


def register_module_parameter_registration_hook(hook):
    """hook(module, name, param) whenever a module registers a parameter; it may return a
    replacement."""
    return Module._add_hook(_global_parameter_registration_hooks, hook, False)


def register_module_buffer_registration_hook(hook):
    """hook(module, name, buffer) whenever a module registers a buffer; it may return a
    replacement."""
    return Module._add_hook(_global_buffer_registration_hooks, hook, False)


def register_module_module_registration_hook(hook):
    """hook(module, name, submodule) whenever a module registers a submodule; it may return
    a replacement."""
    return Module._add_hook(_global_module_registration_hooks, hook, False)


def register_module_load_state_dict_pre_hook(hook):
    """hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
    unexpected_keys, error_msgs) as every module loads its part of a state dict, before the
    module's own pre-hooks (upstream Lucid's lucid.nn.hooks)."""
    return Module._add_hook(_global_load_state_dict_pre_hooks, hook, False)


def register_module_load_state_dict_post_hook(hook):
    """hook(module, incompatible_keys) after every module's load_state_dict part, before the
    module's own post-hooks (upstream Lucid's lucid.nn.hooks)."""
    return Module._add_hook(_global_load_state_dict_post_hooks, hook, False)
