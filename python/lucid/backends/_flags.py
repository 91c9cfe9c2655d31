"""The settable switches of lucid.backends.*: module attributes that keep a bool, checked on
assignment as torch checks its own (`torch.backends.cudnn.benchmark = 1` is a RuntimeError).

A module object cannot hold descriptors, its class can: install() gives a backends module a
class of its own (a types.ModuleType subclass) carrying one Flag per switch. Code that
consults a switch reads it as an attribute (`lucid.backends.cudnn.benchmark`)."""

import sys
import types
from contextlib import contextmanager


class Flag:
    """A bool switch with a default, set through `setter` (named after torch's own setter so
    that the error reads alike)."""

    def __init__(self, default, setter, on_set=None):
        self.value = default
        self.setter = setter
        self.on_set = on_set  # told each new value: a switch the engine reads

    def __get__(self, module, owner=None):
        return self if module is None else self.value

    def __set__(self, module, value):
        if not isinstance(value, bool):
            raise RuntimeError(f"{self.setter} expects a bool, but got {type(value).__name__}")
        if self.on_set is not None:
            self.on_set(value)
        self.value = value


def install(module_name, **flags):
    """Gives sys.modules[module_name] the Flags `flags` (name -> Flag) as attributes."""
    module = sys.modules[module_name]
    cls = type(type(module).__name__ + "_" + module_name.rsplit(".", 1)[-1], (types.ModuleType,), dict(flags))
    module.__class__ = cls


@contextmanager
def overridden(module, **values):
    """Sets module's switches to `values` (None: left as is) for the block, then restores them."""
    saved = {name: getattr(module, name) for name in values}
    try:
        for name, value in values.items():
            if value is not None:
                setattr(module, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)
