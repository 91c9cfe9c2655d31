"""lucid.jit: torch.jit's names, for model code written to be scriptable.

lucid has no TorchScript. Code full of `@torch.jit.ignore`, `torch.jit.is_scripting()`
and `torch.jit.annotate` (torchvision's and timm's models) runs as Python, which is
what torch itself does with PYTORCH_JIT=0: script() and trace() give back what they
are given, the decorators leave functions alone, is_scripting() is False. lucid.compile
is what compiles a lucid program. save() and load() keep a module with lucid.save /
lucid.load (a pickled module, as torch.save(model) writes), so a program that saves a
scripted model and loads it back runs; the file is not a TorchScript archive, and
torch.jit.load cannot read it (nor lucid.jit.load torch's archives).
"""

import typing

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting", "is_tracing",
           "annotate", "Final", "Attribute", "interface", "fork", "wait", "freeze", "optimize_for_inference",
           "save", "load", "ScriptModule", "ScriptFunction", "RecursiveScriptModule", "Future"]

Final = typing.Final


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """obj itself (a function, module or class): it runs as Python."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """func itself: it runs as Python on every call, so unlike a torch trace it follows
    data-dependent branches instead of replaying the example's path."""
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    return mod


def _decorator_or_identity(fn=None, **kwargs):
    """@ignore, @ignore(drop=True), @unused, @export: for the TorchScript compiler only."""
    if fn is None:
        return lambda f: f
    return fn


def ignore(drop=False, **kwargs):
    if callable(drop):
        return drop
    return _decorator_or_identity()


unused = _decorator_or_identity
export = _decorator_or_identity
interface = _decorator_or_identity


def is_scripting():
    """False: lucid code always runs as Python."""
    return False


def is_tracing():
    return False


def annotate(the_type, the_value):
    return the_value


def Attribute(value, type):  # noqa: A002  (torch's parameter name)
    return value


class Future:
    """torch.jit.fork's result: the call has run when fork returns (lucid runs it at
    once; TorchScript's interpreter may run it on another thread)."""

    def __init__(self, value=None, error=None):
        self._value, self._error = value, error

    def wait(self):
        if self._error is not None:
            raise self._error
        return self._value

    def done(self):
        return True

    def value(self):
        return self.wait()


def fork(func, *args, **kwargs):
    try:
        return Future(func(*args, **kwargs))
    except Exception as e:  # raised by wait(), as torch's future does
        return Future(error=e)


def wait(future):
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """mod, which must be in eval mode (torch's rule for freezing)."""
    if getattr(mod, "training", False):
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() "
                           "on your module before freezing.")
    return mod


def optimize_for_inference(mod, other_methods=None):
    return freeze(mod.eval())


def save(m, f, _extra_files=None):
    """Writes module m with lucid.save (see the module's docstring)."""
    from . import save as lucid_save
    if _extra_files:
        raise NotImplementedError("lucid.jit.save: _extra_files needs a TorchScript archive, which lucid does not "
                                  "write")
    lucid_save(m, f)


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """A module written by lucid.jit.save (a pickled module: only load files you trust)."""
    from . import load as lucid_load
    return lucid_load(f, map_location=map_location, weights_only=False)


class ScriptModule:
    """No lucid object is a ScriptModule (nothing is compiled to TorchScript), so
    `isinstance(m, torch.jit.ScriptModule)` checks take their Python path."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("lucid has no TorchScript: lucid.jit.ScriptModule cannot be made (use the module "
                           "itself, or lucid.compile)")


class ScriptFunction(ScriptModule):
    pass


class RecursiveScriptModule(ScriptModule):
    pass
