"""lucid.autograd.Function: ops defined in Python with a hand-written backward.

The node is the engine's (a PyFunctionNode in csrc/bindings/autograd.cpp): tensors
given to ctx.save_for_backward become its saved tensors, with the same version
checks and the same freeing after backward as built-in ops. ctx holds no reference
to the node, so a graph never forms a cycle through Python.
"""

import functools

from .. import _C
from .._tensor import Tensor
from .grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The `ctx` passed to forward/setup_context and backward."""

    def __init__(self):
        self._to_save = None
        self._dirty = ()
        self._non_differentiable = ()
        self._node = None
        self._materialize_grads = True
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._saved_for_forward = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self._materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        if self._node is not None:
            return tuple(self._node._saved(i) for i in range(self._node._num_saved))
        if self._to_save is not None:  # inside forward, before the node exists
            return tuple(self._to_save)
        return ()


def _is_differentiable(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


class Function:
    """Subclass with static forward(ctx, *args) and backward(ctx, *grad_outputs), then
    call .apply(*args). forward may instead take only the inputs when setup_context(ctx,
    inputs, output) is defined, as in PyTorch 2."""

    # The grad_fn's name (default: the class's name + "Backward", as torch names custom
    # Functions). lucid's own Functions that stand for one of torch's built-in ops take
    # that op's node name, which reprs print (`grad_fn=<MseLossBackward0>`).
    _node_name = None

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not overridden")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def vjp(ctx, *grad_outputs):
        raise NotImplementedError

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method.")

    @classmethod
    def _backward_impl(cls):
        if cls.backward is not Function.backward:
            return cls.backward
        if cls.vjp is not Function.vjp:
            return cls.vjp
        return cls.backward

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        recording = _C.is_grad_enabled() and any(ctx.needs_input_grad)
        separate_setup = cls.setup_context is not Function.setup_context
        with no_grad():
            if separate_setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        if not recording:
            ctx._to_save = None
            return output

        single = not isinstance(output, tuple)
        outputs = list((output,) if single else output)
        input_ids = {id(a) for a in args if isinstance(a, Tensor)}
        dirty = {id(t) for t in ctx._dirty}
        non_diff = {id(t) for t in ctx._non_differentiable}
        for t in ctx._dirty:
            if t.is_leaf and t.requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        for i, o in enumerate(outputs):
            # An input returned unchanged becomes a new alias, so it keeps its own history.
            if isinstance(o, Tensor) and id(o) in input_ids and id(o) not in dirty:
                outputs[i] = o.detach()
        differentiable = [isinstance(o, Tensor) and id(o) not in non_diff and _is_differentiable(o)
                          for o in outputs]
        backward_impl = cls._backward_impl()

        def run_backward(node, *grads):
            ctx._node = node
            try:
                return backward_impl(ctx, *grads)
            finally:
                ctx._node = None

        _C._function_node(cls._node_name or cls.__name__ + "Backward", run_backward,
                          [a if isinstance(a, Tensor) else None for a in args],
                          [o if isinstance(o, Tensor) else None for o in outputs], differentiable,
                          list(ctx._to_save or ()))
        # ctx must not keep tensors alive: the node holds ctx, and a tensor holding its
        # node would close a cycle Python's collector cannot see through C++.
        ctx._to_save = None
        ctx._dirty = ctx._non_differentiable = ()
        return outputs[0] if single else tuple(outputs)


def once_differentiable(fn):
    """Marks a backward that cannot itself be differentiated: it runs without recording."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper
