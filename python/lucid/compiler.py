"""lucid.compiler: torch.compiler's functions, for lucid.compile (python/lucid/compile)."""

from .compile._function import is_compiling, reset

__all__ = ["reset", "is_compiling", "disable", "allow_in_graph", "assume_constant_result"]


def disable(fn=None, recursive=True):
    """Marks `fn` (or, with no fn, the function decorated) as never compiled:
    lucid.compile of it returns it unchanged (torch.compiler.disable)."""
    def mark(f):
        f._lucid_compile_disabled = True
        return f
    return mark if fn is None else mark(fn)


def allow_in_graph(fn):
    """torch.compiler.allow_in_graph: every function may run inside a compiled call in lucid
    (its Python runs), so `fn` is returned as it is."""
    return fn


def assume_constant_result(fn):
    """torch.compiler.assume_constant_result: lucid runs a compiled call's Python each
    time, so `fn`'s result is simply computed; `fn` is returned as it is."""
    return fn
