"""The graph as Python sees it: grad_fn nodes (the engine's Node class), hook handles,
and hooks on the tensors the graph saves for backward (saved_tensors_hooks, save_on_cpu)."""

import contextlib
import threading

from .. import _C

__all__ = ["Node", "RemovableHandle", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "register_multi_grad_hook", "increment_version", "allow_mutation_on_saved_tensors"]

Node = _C.Node


class RemovableHandle:
    """What register_hook returns: remove() takes the hook off again. It holds the
    node weakly (the engine's _HookHandle), so keeping it keeps no graph alive."""

    def __init__(self, handle):
        self._handle = handle

    def remove(self):
        self._handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _node_register_hook(self, fn):
    """fn(grad_inputs, grad_outputs) runs after the node; it may return new grad_inputs."""
    return RemovableHandle(self._register_hook(fn))


def _node_register_prehook(self, fn):
    """fn(grad_outputs) runs before the node; it may return new grad_outputs."""
    return RemovableHandle(self._register_prehook(fn))


Node.register_hook = _node_register_hook
Node.register_prehook = _node_register_prehook
Node.__module__ = "lucid.autograd.graph"


class saved_tensors_hooks:
    """Within this context, each tensor an op saves for backward is given to
    pack_hook(tensor), whose result is kept instead of the tensor; backward calls
    unpack_hook(packed) each time it reads it, which must return a Tensor equal to the
    original. As in torch: the hooks are per thread and nest (the innermost applies);
    a tensor saved under them is not version-checked (the hooks decide what is kept);
    pack_hook must not modify its input in place; pack_hook runs without grad mode."""

    def __init__(self, pack_hook, unpack_hook):
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("saved_tensors_hooks expects two callables (pack_hook, unpack_hook), got "
                            f"{type(pack_hook).__name__} and {type(unpack_hook).__name__}")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        _C._pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors go to the CPU in the forward pass and come back to their device
    when backward reads them: GPU memory traded for copies. pin_memory copies into
    page-locked memory (the copies back can then overlap other work). device_type is
    accepted for torch's signature; lucid's one GPU type is "cuda"/"gpu"."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        if device_type not in ("cuda", "gpu", "cpu"):
            raise ValueError(f"save_on_cpu: device_type must be 'cuda' (or 'gpu'), got {device_type!r}")
        pin = bool(pin_memory)

        def pack_to_cpu(tensor):
            packed = tensor.cpu()
            if pin and tensor.device.type != "cpu":
                packed = packed.pin_memory()
            return (tensor.device, packed)

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Inside, a tensor saved for backward may be written in place: backward uses the
    values it had when saved. lucid keeps a copy of every tensor saved inside the context
    (torch copies only those later written, so lucid uses more memory here), and the
    graph may be differentiated after the context ends too (torch refuses that)."""
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        yield


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Within this context no saved tensor hooks apply, and entering saved_tensors_hooks
    raises RuntimeError(error_message): for features that cannot work with them."""
    previous = _C._set_saved_tensors_hooks_disabled(str(error_message))
    try:
        yield
    finally:
        _C._set_saved_tensors_hooks_disabled(previous)


class _MultiHandle:
    """The handle register_multi_grad_hook returns: remove() takes off every tensor's hook."""

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """mode "all": fn(grads) runs once a backward has computed the gradient of every tensor
    in `tensors` that it will compute (a tensor outside this backward's graph, or not
    needed for its `inputs`, is not waited for: None in its place). mode "any": fn(grad)
    runs with the first of them a backward computes. Once per backward either way."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = list(tensors)
    lock = threading.Lock()

    def task_id():
        tid = _C._current_graph_task_id()
        if tid == -1:
            raise AssertionError("expected this hook to be called inside a backward call")
        return tid

    if mode == "any":
        fired = set()

        def first(grad):
            tid = task_id()
            with lock:
                if tid in fired:
                    return
                fired.add(tid)
            fn(grad)

        return _MultiHandle(t.register_hook(first) for t in tensors if t.requires_grad)

    nodes = [_C._weak_gradient_node(t) for t in tensors]
    waiting = {}  # backward id -> [gradients so far, how many are still to come]

    def hook_for(index):
        def arrived(grad):
            tid = task_id()
            with lock:
                if tid not in waiting:  # the first of this backward: how many will come
                    waiting[tid] = [[None] * len(tensors), sum(n.will_execute() for n in nodes)]
                entry = waiting[tid]
                entry[0][index] = grad
                entry[1] -= 1
                done = entry[1] == 0
                if done:
                    del waiting[tid]
            if done:
                fn(entry[0])
        return arrived

    return _MultiHandle(t.register_hook(hook_for(i)) for i, t in enumerate(tensors))


def increment_version(tensor):
    """Bumps the version of `tensor` (or of each tensor of an iterable): for code that
    writes a tensor's memory behind autograd's back (a custom kernel through data_ptr),
    so that a backward that saved it raises as after an in-place op."""
    from .._tensor import Tensor
    for t in ((tensor,) if isinstance(tensor, Tensor) else tensor):
        _C._increment_version(t)
