"""The graph as Python sees it: grad_fn nodes (the engine's Node class) and hook handles."""

from .. import _C

__all__ = ["Node", "RemovableHandle"]

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
