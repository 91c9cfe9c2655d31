"""lucid.autograd.functional: jacobian, hessian, vjp, jvp, vhp, hvp of a function.

jvp, hvp use the double-backward trick (a VJP of a VJP), which needs only the
reverse mode the engine has: every built-in VJP is written with ops, so it is
differentiable.
"""

from .. import _C
from .._tensor import Tensor
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(x, what, fn_name):
    single = isinstance(x, Tensor)
    xs = (x,) if single else tuple(x)
    for i, t in enumerate(xs):
        if not isinstance(t, Tensor):
            raise TypeError(f"The {what} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"the value at index {i} has type {type(t).__name__}.")
    return single, xs


def _grad_preprocess(inputs, create_graph):
    # Fresh leaves (or graph-connected aliases when create_graph), so the function's
    # own graph starts at them.
    if create_graph:
        return tuple(i if i.requires_grad else i.detach().requires_grad_() for i in inputs)
    return tuple(i.detach().requires_grad_() for i in inputs)


def _autograd_grad(outputs, inputs, grad_outputs, create_graph):
    from . import grad as autograd_grad

    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return autograd_grad([o for o, _ in pairs], inputs, [g for _, g in pairs], create_graph=create_graph,
                         retain_graph=True, allow_unused=True)


def _fill_none(grads, like):
    from .._creation import zeros_like
    return tuple(zeros_like(x) if g is None else g for g, x in zip(grads, like))


def _detach(xs, create_graph):
    return tuple(x if create_graph else x.detach() for x in xs)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product."""
    from .._creation import ones_like

    with enable_grad():
        single_in, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph)
        out = func(*inputs)
        single_out, outputs = _as_tuple(out, "outputs of the user-provided function", "vjp")
        if v is None:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                                   "Tensor with a single element.")
            v = (ones_like(outputs[0]),)
        else:
            _, v = _as_tuple(v, "v", "vjp")
        grads = _fill_none(_autograd_grad(outputs, inputs, v, create_graph), inputs)
    outs = _detach(outputs, create_graph)
    grads = _detach(grads, create_graph)
    return (outs[0] if single_out else outs), (grads[0] if single_in else grads)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by differentiating a VJP."""
    from .._creation import ones_like, zeros_like

    with enable_grad():
        single_in, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph)
        if v is None:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                                   "single Tensor with a single element.")
            v = (ones_like(inputs[0]),)
        else:
            _, v = _as_tuple(v, "v", "jvp")
        out = func(*inputs)
        single_out, outputs = _as_tuple(out, "outputs of the user-provided function", "jvp")
        dummies = tuple(zeros_like(o).requires_grad_() for o in outputs)
        g = _fill_none(_autograd_grad(outputs, inputs, dummies, True), inputs)
        jv = _fill_none(_autograd_grad(g, dummies, v, create_graph), outputs)
    outs = _detach(outputs, create_graph)
    jv = _detach(jv, create_graph)
    return (outs[0] if single_out else outs), (jv[0] if single_out else jv)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian: shape output.shape + input.shape, nested per output and input."""
    from .._creation import zeros

    with enable_grad():
        single_in, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph)
        out = func(*inputs)
        single_out, outputs = _as_tuple(out, "outputs of the user-provided function", "jacobian")
        result = []
        for o in outputs:
            rows = []
            for j in range(o.numel()):
                seed = zeros(o.shape, dtype=o.dtype, device=o.device)
                with _no_grad():
                    seed.view(-1)[j] = 1.0
                rows.append(_fill_none(_autograd_grad((o,), inputs, (seed,), create_graph), inputs))
            per_input = []
            for i, x in enumerate(inputs):
                cols = [r[i].reshape(-1) for r in rows]
                jac = _stack_rows(cols, o.numel(), x.numel(), x)
                per_input.append(jac.reshape(tuple(o.shape) + tuple(x.shape)))
            result.append(tuple(_detach(per_input, create_graph)))
    if single_out and single_in:
        return result[0][0]
    if single_out:
        return result[0]
    if single_in:
        return tuple(r[0] for r in result)
    return tuple(result)


def _no_grad():
    from .grad_mode import no_grad
    return no_grad()


def _stack_rows(rows, n_out, n_in, like):
    from .. import stack
    if n_out == 0:
        from .._creation import zeros
        return zeros((0, n_in), dtype=like.dtype, device=like.device)
    return stack(rows)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    single_in, ins = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs):
        out = func(*xs)
        _, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single element.")
        from . import grad as autograd_grad
        g = autograd_grad(outs[0], xs, create_graph=True, allow_unused=True)
        g = _fill_none(g, xs)
        return g[0] if single_in else g

    return jacobian(gradient, inputs, create_graph=create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    with enable_grad():
        single_in, ins = _as_tuple(inputs, "inputs", "vhp")
        ins = _grad_preprocess(ins, create_graph)
        out = func(*ins)
        _, outs = _as_tuple(out, "outputs of the user-provided function", "vhp")
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The function given to vhp should return a single Tensor with a single element.")
        _, v = _as_tuple(v, "v", "vhp")
        from . import grad as autograd_grad
        g = _fill_none(autograd_grad(outs[0], ins, create_graph=True, allow_unused=True), ins)
        res = _fill_none(_autograd_grad(g, ins, v, create_graph), ins)
    o = _detach(outs, create_graph)[0]
    res = _detach(res, create_graph)
    return o, (res[0] if single_in else res)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v); the Hessian is symmetric, so this is vhp."""
    return vhp(func, inputs, v, create_graph, strict)
