"""gradcheck / gradgradcheck: autograd's gradients against central finite differences.

Both work column by column on the Jacobian, as PyTorch's slow mode does: for each
input element, perturb it by ±eps and difference the outputs (numerical); for each
output element, one backward pass with a one-hot gradient (analytical).
"""

from .. import _C
from .._tensor import Tensor
from .grad_mode import no_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when a check fails."""


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _flat_values(t):
    return t.detach().reshape(-1).tolist()


def _differentiable_inputs(inputs):
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _outputs(func, inputs):
    return [o for o in _tuple(func(*inputs)) if isinstance(o, Tensor)]


def _numerical_jacobian(func, inputs, index, eps):
    """J[k][j] = d out_k[j] / d inputs[index][flat element], per output k, as rows per input element."""
    x = inputs[index]
    flat = x.detach().view(-1) if x.is_contiguous() else None
    if flat is None:
        raise GradcheckError("gradcheck needs contiguous inputs")
    def write(e, value):
        with no_grad():  # the input may be a leaf that requires grad
            flat[e] = value

    # func runs in the caller's grad mode: gradgradcheck's func calls autograd.grad.
    columns = []  # one per input element: list over outputs of flat derivative lists
    for e in range(flat.numel()):
        orig = flat[e].item()
        write(e, orig + eps)
        plus = [_flat_values(o) for o in _outputs(func, inputs)]
        write(e, orig - eps)
        minus = [_flat_values(o) for o in _outputs(func, inputs)]
        write(e, orig)
        columns.append([[(p - m) / (2 * eps) for p, m in zip(po, mo)] for po, mo in zip(plus, minus)])
    return columns


def _analytical_jacobian(func, inputs, diff_indices):
    """rows[k][j][i] = d out_k[j] / d inputs[diff_indices[i]] (flat lists), via one backward per output element."""
    from . import grad as autograd_grad
    from .._creation import zeros

    outputs = _outputs(func, inputs)
    diff_inputs = [inputs[i] for i in diff_indices]
    rows = []
    for out in outputs:
        out_rows = []
        for j in range(out.numel()):
            # row-major seed, whatever the output's layout (gradients come back in
            # the input's layout)
            seed = zeros(out.shape, dtype=out.dtype, device=out.device)
            with no_grad():
                seed.view(-1)[j] = 1.0
            if not out.requires_grad:
                out_rows.append([[0.0] * t.numel() for t in diff_inputs])
                continue
            grads = autograd_grad(out, diff_inputs, seed, retain_graph=True, allow_unused=True)
            out_rows.append([[0.0] * t.numel() if g is None else _flat_values(g) for g, t in zip(grads, diff_inputs)])
        rows.append(out_rows)
    return rows


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """True when autograd's gradients of func at inputs match finite differences."""
    inputs = _tuple(inputs)
    diff = _differentiable_inputs(inputs)
    try:
        if not diff:
            raise GradcheckError("gradcheck expects at least one input tensor to require gradient, but none of "
                                 "the them have requires_grad=True.")
        for i in diff:
            if inputs[i].dtype.itemsize < 8 and not inputs[i].dtype.is_complex:
                import warnings
                warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point. "
                              "This check will likely fail if all the inputs are not of double precision "
                              "floating point.", stacklevel=2)
        analytical = _analytical_jacobian(func, inputs, diff)
        for col, i in enumerate(diff):
            numerical = _numerical_jacobian(func, inputs, i, eps)
            for k, out_rows in enumerate(analytical):
                for j, row in enumerate(out_rows):
                    for e in range(inputs[i].numel()):
                        a, n = row[col][e], numerical[e][k][j]
                        if abs(a - n) > atol + rtol * abs(n):
                            raise GradcheckError(
                                f"Jacobian mismatch for output {k} with respect to input {i},\n"
                                f"at output element {j}, input element {e}: numerical {n!r}, analytical {a!r}")
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True,
                  fast_mode=False, masked=False):
    """gradcheck of the gradient: checks second derivatives (create_graph backward)."""
    from . import grad as autograd_grad
    from .._random import randn

    inputs = _tuple(inputs)
    diff = _differentiable_inputs(inputs)
    outputs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(randn(o.shape, dtype=o.dtype, device=o.device).requires_grad_() for o in outputs)
    grad_outputs = _tuple(grad_outputs)
    n_in = len(inputs)

    def first_derivative(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _outputs(func, ins)
        diff_ins = [ins[i] for i in diff]
        grads = autograd_grad(outs, diff_ins, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
