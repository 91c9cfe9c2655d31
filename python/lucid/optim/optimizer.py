"""Optimizer: PyTorch's base class (param groups, per-parameter state, state_dict).

The update math of every first-order optimizer is one fused C++ call per param group
(lucid._C._<name>_step, csrc/ops/optim.cpp): each parameter, its gradient and its
state are read and written once, and all of a group's tensors share one dispatch to
the thread pool. Python only gathers the lists and creates state on first use, in
torch.optim's layout, so state_dicts move between the two.
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections import OrderedDict, defaultdict
from itertools import chain

from .. import _C
from .. import _dtype as D
from .._tensor import Tensor

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

# Hooks every optimizer's step runs (torch.optim.optimizer's globals): before its own pre-hooks, after its
# own post-hooks.
_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()


def _handle(hooks, hook, prepend=False):
    from ..nn.modules.module import Module
    return Module._add_hook(hooks, hook, prepend)


def register_optimizer_step_pre_hook(hook):
    """hook(optimizer, args, kwargs) before every optimizer's step; it may return new (args, kwargs)."""
    return _handle(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """hook(optimizer, args, kwargs) after every optimizer's step."""
    return _handle(_global_step_post_hooks, hook)


class _RequiredParameter:
    """Marks a hyperparameter that has no default (SGD's lr in older torch)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _zeros(p):
    """A state tensor for `p`: zeros of its shape, dtype and device, contiguous."""
    import lucid

    return lucid.zeros(p.shape, dtype=p.dtype, device=p.device)


def _scalar_state(value):
    """A 0-d float32 CPU tensor: torch's layout for `step` and the other scalar state.
    On the CPU whatever the default device: the step ops read these counters on the
    host (torch keeps them there too, unless capturable)."""
    import lucid

    return lucid.tensor(float(value), dtype=lucid.float32, device="cpu")


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__name__}")
        if isinstance(params, set):
            warnings.warn("optimizer parameters need to be organized in ordered collections, but the ordering of "
                          "tensors in sets will change between runs. Please use a list instead.", FutureWarning,
                          stacklevel=3)
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    # ---- param groups ---------------------------------------------------------------
    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error", stacklevel=3)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    # upstream Lucid's switch (a class or instance attribute): True makes the end of
    # step() wait until the update has run on the device, a synchronisation point, as
    # its MLX eval after the step; by default the update only starts.
    AUTO_EVAL_AFTER_STEP = False

    def step(self, closure=None):
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    def __init_subclass__(cls, **kwargs):
        # The end of step() is a flush point of the lazy GPU (csrc/core/pending.h): the
        # update runs (asynchronously) before the next step records its work.
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_flushes", False):
            @functools.wraps(step)
            def flushing_step(self, *args, **kwargs):
                args = (self, *args)  # (the hooks' args start with the optimizer, as torch's)
                for hook in [*_global_step_pre_hooks.values(), *self._hooks("_optimizer_step_pre_hooks").values()]:
                    result = hook(self, args, kwargs)
                    if result is not None:
                        if not (isinstance(result, tuple) and len(result) == 2):
                            raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), but "
                                               f"got {result}.")
                        args, kwargs = result
                out = step(*args, **kwargs)
                for hook in [*self._hooks("_optimizer_step_post_hooks").values(), *_global_step_post_hooks.values()]:
                    hook(self, args, kwargs)
                if self.AUTO_EVAL_AFTER_STEP:
                    from .._upstream import eval as wait_for
                    wait_for([p for g in self.param_groups for p in g["params"]])
                else:
                    _C.gpu_boundary_flush()
                return out
            flushing_step._flushes = True
            cls.step = flushing_step

    # ---- hooks (torch's): step, state_dict and load_state_dict --------------------------------
    def _hooks(self, name):
        """The ordered dict of hooks `name` (made on first use: an unpickled optimizer has none yet)."""
        return self.__dict__.setdefault(name, OrderedDict())

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) before step; it may return new (args, kwargs)."""
        return _handle(self._hooks("_optimizer_step_pre_hooks"), hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) after step."""
        return _handle(self._hooks("_optimizer_step_post_hooks"), hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer) before state_dict."""
        return _handle(self._hooks("_optimizer_state_dict_pre_hooks"), hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) after state_dict; it may return the state dict to give instead."""
        return _handle(self._hooks("_optimizer_state_dict_post_hooks"), hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) before load_state_dict; it may return the state dict to load instead."""
        return _handle(self._hooks("_optimizer_load_state_dict_pre_hooks"), hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer) after load_state_dict."""
        return _handle(self._hooks("_optimizer_load_state_dict_post_hooks"), hook, prepend)

    # ---- state_dict -------------------------------------------------------------------
    def state_dict(self):
        """{"state": {index: {name: value}}, "param_groups": [{..., "params": [index]}]}, as
        torch: parameters are numbered in group order. Values are the live state (not copies)."""
        for hook in self._hooks("_optimizer_state_dict_pre_hooks").values():
            hook(self)
        out = self._state_dict()
        for hook in self._hooks("_optimizer_state_dict_post_hooks").values():
            result = hook(self, out)
            if result is not None:
                out = result
        return out

    def _state_dict(self):
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        for hook in self._hooks("_optimizer_load_state_dict_pre_hooks").values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        self._load_state_dict(state_dict)
        for hook in self._hooks("_optimizer_load_state_dict_post_hooks").values():
            hook(self)

    def _load_state_dict(self, state_dict):
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError("an optimizer state_dict is a dict with 'state' and 'param_groups'")
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        by_index = dict(zip(chain.from_iterable(s["params"] for s in saved_groups),
                            chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in by_index:
                param = by_index[key]
                state[param] = {name: _state_like(param, name, v) for name, v in value.items()}
            else:
                state[key] = value
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})

    # ---- helpers for the subclasses ---------------------------------------------------
    def _grads(self, group):
        """The parameters of `group` that have a gradient, with their gradients."""
        params, grads = [], []
        for p in group["params"]:
            if p.grad is not None:
                params.append(p)
                grads.append(p.grad)
        return params, grads

    def _step_groups(self, closure, step_group):
        """torch's step(): the closure's loss (re-evaluated with grad enabled), and
        step_group(group, params, grads) for each group with gradients."""
        loss = None
        if closure is not None:
            import lucid

            with lucid.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params, grads = self._grads(group)
            if params:
                step_group(group, params, grads)
        return loss

    def _states(self, params, init, *names):
        """One list per name: that state tensor of each parameter. A parameter's state
        is made by init(p, state) on its first step."""
        for p in params:
            state = self.state[p]
            if not state:
                init(p, state)
        return [[self.state[p][name] for p in params] for name in names]


def _state_like(param, name, value):
    """A loaded state value for `param`: tensors copied (the loaded dict stays the caller's)
    onto the parameter's device, floating ones in its dtype; the scalar counters as
    _scalar_state makes them (float32 on the CPU: a checkpoint of torch's capturable
    steps holds them on its GPU)."""
    if not isinstance(value, Tensor):
        return value
    value = value.detach().clone()
    if name in ("step", "mu_product", "eta", "mu"):
        return value.to(device="cpu", dtype=D.float32) if value.is_floating_point() else value
    if not value.is_floating_point():
        return value
    return value.to(device=param.device, dtype=param.dtype)


def _fused_step(kernel, params, grads, states, scalars, *options):
    """Runs `kernel` (a lucid._C._<name>_step) as kernel(params, grads, *states,
    *scalars, *options): `states` are lists of per-element state tensors (empty when an
    option turns one off), `scalars` lists of per-parameter counters or flags.
    Parameters the fused loops do not take directly (16-bit floats, non-contiguous
    memory) run on contiguous float32/float64 copies of themselves, their gradients and
    their state, written back after the step: one mechanism for every optimizer."""
    staged = [i for i, p in enumerate(params) if not _direct(p)]
    if not staged:
        return kernel(params, grads, *states, *scalars, *options)
    import lucid

    params, grads, states = list(params), list(grads), [list(s) for s in states]
    originals = []
    for i in staged:
        p = params[i]
        work = lucid.float32 if p.dtype in (lucid.float16, lucid.bfloat16) else p.dtype
        originals.append((i, p, [s[i] if s else None for s in states]))
        params[i] = p.detach().to(work).contiguous().clone()
        grads[i] = grads[i].to(work).contiguous()
        for s in states:
            if s:
                s[i] = s[i].to(work).contiguous().clone()
    kernel(params, grads, *states, *scalars, *options)
    with lucid.no_grad():
        for i, p, old in originals:
            p.copy_(params[i])
            for s, o in zip(states, old):
                if o is not None:
                    o.copy_(s[i])


def _direct(p):
    import lucid

    return p.dtype in (lucid.float32, lucid.float64) and p.is_contiguous()
