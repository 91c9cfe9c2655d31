"""Replayed training steps (Note [Replayed steps], csrc/core/pending.h): a step made by
fused_step runs its Python at its first three calls of a signature and from then on
replays the third call's captured list of GPU kernels, without Python or recording.

    call 1   traced: a compiled call (_function.py), the optimizer's state made
    call 2   a compiled call whose list's signature is noted
    call 3   captured: run on private copies of its tensor inputs; its list, fused
             once, is kept if its signature is call 2's (the step does the same work
             every call), it had no break (no host read: a GradScaler's inf check is
             one) and no random numbers (dropout)
    call 4+  replayed: the new inputs copied into the private copies, the capture run
             again (the optimizer's step counts advanced by the capture itself), the
             parameters' .grad set to the gradients it wrote; returns a copy of its loss

A replay is used only while the guard it was captured under holds: the storages of the
model's parameters and buffers and of the optimizer's state, the optimizer's
hyperparameters, the model's training flag, grad mode and autocast. Otherwise the step
runs as a compiled call and captures again. What a replay does not redo is the Python
of the model and the loss: Python values they read (attributes, globals) are taken as
they were at the capture, as jax.jit and mx.compile take them."""

from .. import _C
from .._tensor import Tensor

_ATTEMPTS = 3  # captures tried for a signature before its step stays a compiled call
NOT_MINE = object()


class _Signature:
    __slots__ = ("previous", "attempts", "capture", "inputs", "loss", "grads", "guard")

    def __init__(self):
        self.previous = None  # the signature of the last call's list (None: none without a break)
        self.attempts = 0
        self.capture = None


class _Guard:
    """What a capture assumed of the model and the optimizer, checked before each replay
    without walking the model: every module's members (parameters, buffers, submodules)
    and the optimizer's groups and state entries by identity, the storages of the
    tensors among them, and the hyperparameters by value. (The walk, model.parameters()
    and buffers() each call, had cost 45 us of a 270 us step.) The objects compared by
    identity are held, so that no id is reused by a newcomer."""

    __slots__ = ("_modules", "_optimizer", "_held", "_ids", "_tensors", "_keys", "_hyper")

    def __init__(self, model, optimizer):
        self._modules = list(model.modules())
        self._optimizer = optimizer
        self._held = self._members()
        self._ids = list(map(id, self._held))
        self._tensors = [v for v in self._held if isinstance(v, Tensor)]
        self._keys = [t._storage_key for t in self._tensors]
        self._hyper = self._hyperparameters()

    def _members(self):
        """The modules' parameters, buffers and submodules; the optimizer's state, its
        groups' parameter lists, their parameters and the values of their state entries."""
        members = []
        for module in self._modules:
            attrs = module.__dict__
            members.extend(attrs["_parameters"].values())
            members.extend(attrs["_buffers"].values())
            members.extend(attrs["_modules"].values())
        state = self._optimizer.state
        members.append(state)
        for group in self._optimizer.param_groups:
            params = group["params"]
            members.append(params)
            members.extend(params)
            for p in params:
                entry = state.get(p)
                if entry is not None:
                    members.extend(entry.values())
        return members

    def _hyperparameters(self):
        return [tuple((k, v) for k, v in group.items() if k != "params") for group in self._optimizer.param_groups]

    def holds(self):
        return (list(map(id, self._members())) == self._ids and [t._storage_key for t in self._tensors] == self._keys
                and self._hyperparameters() == self._hyper)


class Replayer:
    """The replay side of a fused_step: run(fn, args) for a call whose signature has
    been traced."""

    def __init__(self, model, optimizer):
        self._model = model
        self._optimizer = optimizer
        self._signatures = {}
        self.replays = 0

    def run(self, fn, args, signature):
        """fn(*args), replayed when it can be; NOT_MINE when the call is not the
        replayer's (a step on the CPU, or one that has failed to capture). `signature`:
        the compiled step's (the arguments, grad mode and the model's training flag)."""
        if not any(isinstance(a, Tensor) and a.is_cuda for a in args):
            return NOT_MINE
        key = (signature, _C._autocast_get(True))
        sig = self._signatures.get(key)
        if sig is None:
            sig = self._signatures[key] = _Signature()
        if sig.capture is not None:
            if sig.guard.holds():
                return self._replay(sig, args)
            sig.capture, sig.previous = None, None  # something changed: capture again
        if sig.attempts >= _ATTEMPTS:
            return NOT_MINE
        if sig.previous is None:
            return self._noted(sig, fn, args)
        return self._captured(sig, fn, args)

    def _region(self, fn, args, capture):
        _C.gpu_flush(-1)  # the list holds this call's work only
        _C.gpu_enter_region()
        try:
            out = fn(*args)
        except BaseException:
            _C.gpu_exit_region()
            raise
        signature, breaks, kept = _C.gpu_exit_region_reporting(capture)
        return out, (signature if breaks == 0 else None), kept

    def _noted(self, sig, fn, args):
        out, sig.previous, _ = self._region(fn, args, False)
        if sig.previous is None:
            sig.attempts += 1
        return out

    def _captured(self, sig, fn, args):
        inputs = [a.detach().clone() if isinstance(a, Tensor) else a for a in args]
        out, signature, kept = self._region(fn, inputs, True)
        if kept is None or signature != sig.previous or not isinstance(out, Tensor):
            sig.attempts += 1
            sig.previous = signature
            return out
        sig.capture, sig.inputs, sig.loss = kept, inputs, out
        sig.grads = [(p, p.grad) for p in self._model.parameters() if p.grad is not None]
        sig.guard = _Guard(self._model, self._optimizer)
        return out.clone()

    def _replay(self, sig, args):
        for static, new in zip(sig.inputs, args):
            if isinstance(static, Tensor):
                static.copy_(new)
        sig.capture.replay()
        for p, g in sig.grads:
            if p.grad is not g:
                p.grad = g
        self.replays += 1
        return sig.loss.clone()

    def captured_calls(self):
        """Kernel calls of each signature's capture (0: none kept)."""
        return [s.capture.calls if s.capture is not None else 0 for s in self._signatures.values()]
