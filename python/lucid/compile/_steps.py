"""Upstream Lucid's compiled training steps: the model's forward, the loss, backward and
(fused_step) the optimizer's update as one compiled call (_function.py), which on the
GPU is one fused list of kernels replayed as one CUDA graph."""

import weakref

from ..nn.modules.container import Sequential
from ..nn.modules.module import Module
from ..optim.optimizer import Optimizer
from ._function import CompiledFunction
from ._replay import NOT_MINE, Replayer
from ._signature import spec


def _check_model(where, model):
    if not isinstance(model, Module):
        raise TypeError(f"{where}: model must be an nn.Module, got {type(model).__name__}")


def _check_loss_fn(where, loss_fn):
    if not callable(loss_fn):
        raise TypeError(f"{where}: loss_fn must be callable (output, *targets) -> loss, got "
                        f"{type(loss_fn).__name__}")


def _backward(where, loss, scaler=None):
    if not loss.requires_grad:
        raise RuntimeError(f"{where}: the loss does not require grad (no parameter of the model reached it, or "
                           "grad mode is off)")
    (scaler.scale(loss) if scaler is not None else loss).backward()


def compile_optimizer(opt):
    """`opt` with its step() compiled: a step over every parameter group is one compiled
    call (one fused list on the GPU). Returns the same optimizer (schedulers and
    state_dict() keep working)."""
    if not isinstance(opt, Optimizer):
        raise TypeError(f"compile_optimizer: expected a lucid.optim.Optimizer, got {type(opt).__name__}")
    if not isinstance(opt.__dict__.get("step"), CompiledFunction):
        opt.step = CompiledFunction(type(opt).step.__get__(opt))
    return opt


_compiled_steps = weakref.WeakKeyDictionary()  # model -> {loss_fn: CompiledFunction}


def compiled_step(model, x, loss_fn, *, use_grad_mode=True):
    """loss_fn(model(x)) as one compiled call, with its backward when use_grad_mode
    (gradients accumulate into the parameters' .grad, as loss.backward() does); returns
    the loss, detached. The compiled call is kept per (model, loss_fn)."""
    _check_model("compiled_step", model)
    _check_loss_fn("compiled_step", loss_fn)
    per_model = _compiled_steps.setdefault(model, {})
    step = per_model.get((loss_fn, bool(use_grad_mode)))
    if step is None:
        def run(x):
            loss = loss_fn(model(x))
            if use_grad_mode:
                _backward("compiled_step", loss)
            return loss.detach()
        step = per_model[(loss_fn, bool(use_grad_mode))] = CompiledFunction(run, state=lambda: model.training)
    return step(x)


def _segmented_forward(model, segments):
    if segments is None or segments == 1:
        return model
    if isinstance(segments, bool) or not isinstance(segments, int) or segments < 1:
        raise ValueError(f"make_step: segments must be a positive int, got {segments!r}")
    if not isinstance(model, Sequential):
        raise ValueError(f"make_step: segments={segments} splits an nn.Sequential's layers into compiled pieces; "
                         f"{type(model).__name__} is not one (use segments=1)")
    layers = list(model)
    if segments > len(layers):
        raise ValueError(f"make_step: segments={segments} is more than the model's {len(layers)} layers")
    bounds = [len(layers) * i // segments for i in range(segments + 1)]
    pieces = [Sequential(*layers[a:b]) for a, b in zip(bounds, bounds[1:])]
    compiled = [CompiledFunction(p, state=lambda: model.training) for p in pieces]

    def forward(x):
        for piece in compiled:
            x = piece(x)
        return x
    return forward


class CompiledStep(CompiledFunction):
    """A training step made by make_step or fused_step: call it with the model's input
    and the loss function's other arguments, step(x, *targets); returns the loss,
    detached."""


class ReplayedStep(CompiledStep):
    """fused_step's step: from its fourth call with a signature, a replay of the GPU
    kernels its third call recorded (Note [Replayed steps], _replay.py)."""

    def __init__(self, fn, replayer, **kwargs):
        super().__init__(fn, **kwargs)
        self._replayer = replayer

    def _run_known(self, key, args, kwargs):
        if not kwargs:
            if self._dynamic:  # a capture is of one set of sizes
                key = (spec(args, False),) + key[1:]
            out = self._replayer.run(self._fn, args, key)
            if out is not NOT_MINE:
                return out
        return super()._run_known(key, args, kwargs)

    @property
    def stats(self):
        """CompiledFunction's, with "replays" (calls run as a replay)."""
        return {**super().stats, "replays": self._replayer.replays}


def make_step(model, loss_fn, *, dynamic=None, segments=1):
    """step(x, *targets): loss = loss_fn(model(x), *targets) and its backward, as one
    compiled call (gradients accumulate into .grad; zeroing them and the update are the
    caller's, or use fused_step). `segments` > 1 runs an nn.Sequential's forward as that
    many compiled pieces (each one fused list), the backward as one."""
    _check_model("make_step", model)
    _check_loss_fn("make_step", loss_fn)
    forward = _segmented_forward(model, segments)

    def step(x, *targets):
        loss = loss_fn(forward(x), *targets)
        _backward("make_step", loss)
        return loss.detach()
    return CompiledStep(step, dynamic=dynamic, state=lambda: model.training)


def fused_step(model, loss_fn, optimizer, *, grad_scaler=None, replay=True):
    """step(x, *targets): zero the gradients, loss = loss_fn(model(x), *targets), its
    backward and the optimizer's update (through `grad_scaler`'s scale, step and update
    when given, for mixed precision) as one compiled call; returns the loss, detached.
    On the GPU, from the fourth call with a signature the step is a replay of the
    kernels the third recorded, without running Python (replay=False: never; what a
    replay takes as fixed is in python/lucid/compile/_replay.py)."""
    _check_model("fused_step", model)
    _check_loss_fn("fused_step", loss_fn)
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"fused_step: optimizer must be a lucid.optim.Optimizer, got {type(optimizer).__name__}")
    from ..amp import GradScaler

    if grad_scaler is not None and not isinstance(grad_scaler, GradScaler):
        raise TypeError(f"fused_step: grad_scaler must be a lucid.amp.GradScaler, got {type(grad_scaler).__name__}")

    def step(x, *targets):
        optimizer.zero_grad()
        loss = loss_fn(model(x), *targets)
        _backward("fused_step", loss, grad_scaler)
        if grad_scaler is not None:
            grad_scaler.step(optimizer)
            grad_scaler.update()
        else:
            optimizer.step()
        return loss.detach()
    if replay:
        return ReplayedStep(step, Replayer(model, optimizer), state=lambda: model.training)
    return CompiledStep(step, state=lambda: model.training)
