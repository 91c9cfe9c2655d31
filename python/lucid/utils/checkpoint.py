"""Activation checkpointing (torch.utils.checkpoint): run a function without keeping its
intermediates, and run it again in backward to get them. Memory falls from the
function's activations to its inputs, for one more forward in backward.

With use_reentrant=True, checkpoint(function, *args) runs `function` under no_grad and
records one node; its backward restores the random state and the autocast state the forward ran
with, runs `function` again with grad enabled on detached copies of the inputs, and
backpropagates through it: the inputs get their gradients through the node, and the
tensors the function closes over (a module's parameters) accumulate theirs into .grad,
as in torch's reentrant variant.

use_reentrant=True is torch's reentrant variant: without an input that requires grad the
result records nothing (with torch's warning), and keyword arguments are refused.

use_reentrant=False is torch's non-reentrant variant (Note [Checkpoint through saved
tensor hooks]): the function runs with grad enabled, so its graph is recorded as usual,
but under saved-tensor hooks that keep an index instead of each tensor saved for
backward. The first time a backward reads one, the function runs again (on detached
inputs that require grad as the originals did, with the forward's random and autocast
state) and the tensors it saves, in the same order, stand in for the dropped ones. So
gradients reach every tensor of the graph, lucid.autograd.grad's `inputs` included, and
keyword arguments are taken.
"""

import contextlib
import sys
import types
import warnings

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn"]


def _lucid():
    import lucid
    return lucid


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _autocast_state():
    from ..amp import _autocast
    return [(device, _autocast.is_autocast_enabled(device), _autocast.get_autocast_dtype(device))
            for device in ("cpu", "cuda")]


def _replaying(state):
    """The autocast regions the forward ran in, entered again."""
    from ..amp import autocast
    stack = contextlib.ExitStack()
    for device, enabled, dtype in state:
        if enabled:
            stack.enter_context(autocast(device, dtype=dtype))
    return stack


def _make_function():
    from ..autograd.function import Function, once_differentiable
    from .._tensor import Tensor

    class CheckpointFunction(Function):
        @staticmethod
        def forward(ctx, run, preserve_rng_state, recompute_context, kwargs, *args):
            lucid = _lucid()
            ctx.run, ctx.kwargs, ctx.recompute_context = run, kwargs, recompute_context
            ctx.rng_state = lucid.get_rng_state() if preserve_rng_state else None
            ctx.autocast = _autocast_state()
            ctx.tensor_at = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
            ctx.others = [None if isinstance(a, Tensor) else a for a in args]
            ctx.save_for_backward(*[args[i] for i in ctx.tensor_at])
            return run(*args, **kwargs)

        @staticmethod
        @once_differentiable
        def backward(ctx, *grads):
            lucid = _lucid()
            args = list(ctx.others)
            for i, t in zip(ctx.tensor_at, ctx.saved_tensors):
                args[i] = t.detach().requires_grad_(t.requires_grad)
            after = lucid.get_rng_state()
            try:
                if ctx.rng_state is not None:
                    lucid.set_rng_state(ctx.rng_state)
                with lucid.enable_grad(), _replaying(ctx.autocast), ctx.recompute_context:
                    outputs = ctx.run(*args, **ctx.kwargs)
            finally:
                lucid.set_rng_state(after)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            pairs = [(o, g) for o, g in zip(outputs, grads)
                     if isinstance(o, Tensor) and o.requires_grad and g is not None]
            if not pairs:
                raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
            lucid.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
            return (None, None, None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in args)

    return CheckpointFunction


# Note [Checkpoint through saved tensor hooks]
# A non-reentrant checkpoint is one _Recomputation. Its pack hook numbers the tensors the
# forward saves and drops them; its unpack hook, at the first read of a backward (told
# apart by the engine's graph-task id), runs the function again under a hook that only
# collects what it saves, and answers each read by number. The recomputation must save
# the same tensors in the same order (determinism_check="default" compares their count,
# shapes and dtypes); it sees the same random state and autocast regions, and inputs
# that require grad exactly as the forward's did, since which tensors an op saves
# depends on that. A checkpoint inside another pushes its own hooks, innermost, in the
# forward and in the outer one's recomputation alike, so both see the same sequence.
class _Recomputation:
    def __init__(self, function, args, kwargs, preserve_rng_state, recompute_context, check):
        lucid = _lucid()
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng_state = lucid.get_rng_state() if preserve_rng_state else None
        self.autocast = _autocast_state()
        self.recompute_context = recompute_context
        self.check = check
        self.saved_meta = []  # (shape, dtype, device) of each tensor the forward saved
        self.values = {}      # the backward's id -> the recomputed tensors, by number

    def pack(self, tensor):
        self.saved_meta.append((tuple(tensor.shape), tensor.dtype, tensor.device))
        return len(self.saved_meta) - 1

    def unpack(self, index):
        backward_id = _lucid()._C._current_graph_task_id()
        if backward_id not in self.values:
            self.values = {backward_id: self._recompute()}  # (an earlier backward's are dropped)
        values = self.values[backward_id]
        if index >= len(values):  # (possible only with determinism_check="none")
            raise RuntimeError(f"lucid.utils.checkpoint: the recomputation saved {len(values)} tensors where the "
                               f"forward saved {len(self.saved_meta)}: the function did not run the same way again")
        return values[index]

    def _recompute(self):
        lucid = _lucid()
        from .._tensor import Tensor
        from ..autograd.graph import saved_tensors_hooks
        args = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in self.args]
        saved = []

        def collect(tensor):
            saved.append(tensor.detach())  # (without its history: the recomputed graph is not kept)

        after = lucid.get_rng_state()
        try:
            if self.rng_state is not None:
                lucid.set_rng_state(self.rng_state)
            with lucid.enable_grad(), _replaying(self.autocast), self.recompute_context, \
                    saved_tensors_hooks(collect, lambda _: None):
                self.function(*args, **self.kwargs)
        finally:
            lucid.set_rng_state(after)
        if self.check:
            self._check_same(saved)
        return saved

    def _check_same(self, saved):
        if len(saved) != len(self.saved_meta):
            raise RuntimeError("lucid.utils.checkpoint: A different number of tensors was saved during the original "
                               f"forward and recomputation.\nNumber of tensors saved during forward: "
                               f"{len(self.saved_meta)}\nNumber of tensors saved during recomputation: {len(saved)}")
        for i, (t, (shape, dtype, device)) in enumerate(zip(saved, self.saved_meta)):
            if (tuple(t.shape), t.dtype, t.device) != (shape, dtype, device):
                raise RuntimeError("lucid.utils.checkpoint: Recomputed values for the following tensors have different "
                                   f"metadata than during the forward pass.\ntensor at position {i}:\nsaved metadata: "
                                   f"{{'shape': {shape}, 'dtype': {dtype}, 'device': {device}}}\nrecomputed metadata: "
                                   f"{{'shape': {tuple(t.shape)}, 'dtype': {t.dtype}, 'device': {t.device}}}")


def _checkpoint_without_reentrant(function, args, kwargs, preserve_rng_state, context_fn, determinism_check):
    from ..autograd.graph import saved_tensors_hooks
    forward_context, recompute_context = context_fn()
    frame = _Recomputation(function, args, kwargs, preserve_rng_state, recompute_context,
                           determinism_check == "default")
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return function(*args, **kwargs)


_FUNCTION = None


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), its intermediates recomputed in backward instead of kept
    (see the module's note for the two variants)."""
    global _FUNCTION
    lucid = _lucid()
    if use_reentrant is None:
        warnings.warn("lucid.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In a future "
                      "release, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False "
                      "is recommended, but if you need to preserve the current default behavior, you can pass "
                      "use_reentrant=True. Refer to docs for more details on the differences between the two "
                      "variants.", stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if not use_reentrant:
        if not lucid.is_grad_enabled():
            with context_fn()[0]:
                return function(*args, **kwargs)
        return _checkpoint_without_reentrant(function, args, kwargs, preserve_rng_state, context_fn,
                                             determinism_check)
    from .._tensor import Tensor
    if lucid.is_grad_enabled() and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
    _FUNCTION = _FUNCTION or _make_function()
    return _FUNCTION.apply(function, preserve_rng_state, contextlib.nullcontext(), kwargs, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """A Sequential (or list of functions) cut into `segments` runs, each checkpointed but
    the last, which runs plainly (its output's graph is kept), as torch's."""
    if use_reentrant is None:
        warnings.warn("lucid.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. use_reentrant=False is recommended.", stacklevel=2)
        use_reentrant = True
    if isinstance(functions, _lucid().nn.Sequential):
        functions = list(functions.children())
    functions = list(functions)
    segment_size = len(functions) // segments

    def run_function(start, end, functions):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant, **kwargs)
    return run_function(end + 1, len(functions) - 1, functions)(input)


class _CallableModule(types.ModuleType):
    """Upstream Lucid calls lucid.utils.checkpoint(function, ...) itself; torch's code imports
    the function from the module (torch.utils.checkpoint.checkpoint): both work."""

    def __call__(self, function, *args, **kwargs):
        return checkpoint(function, *args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
