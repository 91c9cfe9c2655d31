"""Full backward hooks (Module.register_full_backward_hook / _pre_hook).

As in PyTorch, the module's tensor inputs and outputs pass through identity
autograd Functions: the one on the outputs sees grad_output first (running the
pre-hooks, which may replace it), the one on the inputs sees grad_input and runs
the hooks hook(module, grad_input, grad_output), which may replace it.
"""

from ..._tensor import Tensor
from ...autograd.function import Function
from . import module as _module  # (the hooks every module runs)


class _State:
    def __init__(self, module, n_args, positions):
        self.module = module
        self.grad_output = None
        self.n_args = n_args  # grad_input has a slot per positional argument, as torch's
        self.positions = positions  # the tensor arguments given gradients (the other slots are None)


class _Identity(Function):
    """Passes tensors through; its backward runs the module's hooks: on the outputs'
    side the pre-hooks (on grad_output), on the inputs' side the hooks."""

    @staticmethod
    def forward(ctx, state, outputs_side, *tensors):
        ctx.state, ctx.outputs_side = state, outputs_side
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        state = ctx.state
        if not ctx.outputs_side:
            slots = [None] * state.n_args
            for i, g in zip(state.positions, grads):
                slots[i] = g
            slots = _run_hooks(state, tuple(slots))
            return (None, None) + tuple(slots[i] for i in state.positions)
        for hook in [*_module._global_backward_pre_hooks.values(), *state.module._backward_pre_hooks.values()]:
            result = hook(state.module, grads)
            if result is not None:
                grads = tuple(result)
        state.grad_output = grads
        if not state.positions:  # no input needs a gradient: hooks run with grad_input all None
            _run_hooks(state, (None,) * state.n_args)
        return (None, None) + tuple(grads)


def _run_hooks(state, grad_input):
    for hook in [*_module._global_backward_hooks.values(), *state.module._backward_hooks.values()]:
        result = hook(state.module, grad_input, state.grad_output)
        if result is not None:
            if len(result) != len(grad_input):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(result)}, "
                                   f"but expected {len(grad_input)}")
            grad_input = tuple(result)
    return grad_input


def call_with_backward_hooks(module, forward, args, kwargs):
    # every tensor argument passes through the identity when one needs a gradient (so each gets its gradient,
    # as in torch, whose identity's outputs all require one then)
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if not any(args[i].requires_grad for i in positions):
        positions = []
    state = _State(module, len(args), positions)
    if positions:
        wrapped = _Identity.apply(state, False, *[args[i] for i in positions])
        args = list(args)
        for i, w in zip(positions, wrapped):
            args[i] = w
        args = tuple(args)
    output = forward(*args, **kwargs)
    single = isinstance(output, Tensor)
    outs = (output,) if single else output
    if isinstance(outs, tuple) and any(isinstance(o, Tensor) and o.requires_grad for o in outs):
        idx = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
        wrapped = _Identity.apply(state, True, *[outs[i] for i in idx])
        outs = list(outs)
        for i, w in zip(idx, wrapped):
            outs[i] = w
        output = outs[0] if single else tuple(outs)
    return output
