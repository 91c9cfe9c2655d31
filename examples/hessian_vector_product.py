"""Hessian-vector products by double backward (create_graph=True), checked two ways.

The Hessian H of a scalar f(x) is never formed: H v is the gradient of the scalar
<grad f(x), v>, and because lucid.autograd.grad(..., create_graph=True) returns
gradients that are themselves part of the graph, a second grad() call gives it
(Pearlmutter's trick, as in PyTorch). The program computes H v

  1. for a quadratic f(x) = 0.5 x^T A x, whose Hessian is A: H v must equal A v;
     also through lucid.autograd.functional.hvp, which does the same thing;
  2. for the loss of a small tanh MLP, with respect to all its parameters at once
     (a list of tensors), compared with central finite differences of gradients,
     (grad f(w + eps v) - grad f(w - eps v)) / (2 eps);
  3. and runs power iteration on H v to find the largest Hessian eigenvalue: of A
     (known by construction, so checked) and of the MLP's loss at its current weights.

Everything is float64, on one device: --device auto picks the GPU when there is
one (and says so). main() returns the largest relative error of the checks.

    PYTHONPATH=python python examples/hessian_vector_product.py [--device auto]
    PYTHONPATH=python python examples/hessian_vector_product.py --dim 20 --iters 30
"""

import argparse
import sys

import lucid
from _device import pick_device  # examples/_device.py
import lucid.nn as nn
import lucid.nn.functional as F

DTYPE = lucid.float64


def hvp(loss_fn, params, vector):
    """H v for the scalar loss_fn() with respect to params (a list of tensors; vector matches)."""
    loss = loss_fn()
    grads = lucid.autograd.grad(loss, params, create_graph=True)  # first backward, kept differentiable
    dot = sum((g * v).sum() for g, v in zip(grads, vector))
    return lucid.autograd.grad(dot, params)  # second backward: d<grad, v>/dparams = H v


def gradient(loss_fn, params):
    return lucid.autograd.grad(loss_fn(), params)


def finite_difference_hvp(loss_fn, params, vector, eps):
    """(grad(params + eps v) - grad(params - eps v)) / (2 eps), moving the parameters in place."""
    def shift(scale):
        with lucid.no_grad():
            for p, v in zip(params, vector):
                p.add_(v, alpha=scale)

    shift(eps)
    plus = gradient(loss_fn, params)
    shift(-2 * eps)
    minus = gradient(loss_fn, params)
    shift(eps)  # back where we started
    return [(a - b) / (2 * eps) for a, b in zip(plus, minus)]


def norm(tensors):
    return sum((t * t).sum() for t in tensors).sqrt().item()


def relative_error(a, b):
    return norm([x - y for x, y in zip(a, b)]) / max(norm(b), 1e-300)


def power_iteration(loss_fn, params, iters):
    """Largest-magnitude eigenvalue of the Hessian (and its eigenvector) from H v products alone."""
    v = [lucid.randn(p.shape, dtype=p.dtype, device=p.device) for p in params]
    eigenvalue = 0.0
    for _ in range(iters):
        n = norm(v)
        v = [x / n for x in v]
        hv = hvp(loss_fn, params, v)
        eigenvalue = sum((a * b).sum() for a, b in zip(v, hv)).item()  # Rayleigh quotient v^T H v
        v = [x.detach() for x in hv]
    return eigenvalue


def householder(u):
    """I - 2 u u^T / u^T u: symmetric and orthogonal, so Q diag(l) Q has eigenvalues l."""
    return lucid.eye(u.shape[0], dtype=u.dtype, device=u.device) - 2 * lucid.outer(u, u) / (u @ u)


class MLP(nn.Module):
    def __init__(self, n_in, hidden, n_out):
        super().__init__()
        self.fc1 = nn.Linear(n_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, n_out)

    def forward(self, x):  # tanh, not ReLU: smooth, so finite differences are accurate
        return self.fc3(lucid.tanh(self.fc2(lucid.tanh(self.fc1(x)))))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dim", type=int, default=50, help="size of the quadratic's x")
    p.add_argument("--hidden", type=int, default=32, help="width of the MLP")
    p.add_argument("--samples", type=int, default=128, help="data points in the MLP's loss")
    p.add_argument("--iters", type=int, default=60, help="power-iteration steps")
    p.add_argument("--eps", type=float, default=1e-5, help="finite-difference step")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="auto, cpu, gpu or cuda[:N]")
    args = p.parse_args(argv)
    lucid.manual_seed(args.seed)
    device = pick_device(args.device, "running")
    errors = {}

    # 1. f(x) = 0.5 x^T A x with A = Q diag(eigenvalues) Q: the Hessian is A, its top eigenvalue 10.
    n = args.dim
    eigenvalues = lucid.cat([lucid.linspace(-2.0, 5.0, n - 1, dtype=DTYPE, device=device),
                             lucid.tensor([10.0], dtype=DTYPE, device=device)])
    Q = householder(lucid.randn(n, dtype=DTYPE, device=device))
    A = Q @ lucid.diag(eigenvalues) @ Q
    x = lucid.randn(n, dtype=DTYPE, device=device, requires_grad=True)
    v = lucid.randn(n, dtype=DTYPE, device=device)

    def quadratic(x):
        return 0.5 * (x @ A @ x)

    (hv,) = hvp(lambda: quadratic(x), [x], [v])
    errors["quadratic: double backward vs A v"] = relative_error([hv], [A @ v])
    _, hv_functional = lucid.autograd.functional.hvp(quadratic, x.detach(), v)
    errors["quadratic: autograd.functional.hvp vs A v"] = relative_error([hv_functional], [A @ v])
    fd = finite_difference_hvp(lambda: quadratic(x), [x], [v], args.eps)
    errors["quadratic: finite differences vs A v"] = relative_error(fd, [A @ v])
    top = power_iteration(lambda: quadratic(x), [x], args.iters)
    errors["quadratic: power-iteration top eigenvalue vs 10"] = abs(top - 10.0) / 10.0
    print(f"quadratic, n = {n}: power iteration finds top eigenvalue {top:.12f} (exact: 10)")

    # 2. The loss of a small MLP, with respect to all of its parameters.
    data = lucid.randn(args.samples, 10, dtype=DTYPE, device=device)
    labels = lucid.randint(0, 3, (args.samples,), device=device)
    model = MLP(10, args.hidden, 3).to(device, DTYPE)
    params = list(model.parameters())

    def loss_fn():
        return F.cross_entropy(model(data), labels)

    vector = [lucid.randn(p.shape, dtype=DTYPE, device=device) for p in params]
    hv = hvp(loss_fn, params, vector)
    fd = finite_difference_hvp(loss_fn, params, vector, args.eps)
    errors["MLP loss: double backward vs finite differences"] = relative_error(hv, fd)
    top = power_iteration(loss_fn, params, args.iters)
    n_params = sum(p.numel() for p in params)
    print(f"MLP with {n_params} parameters: loss {loss_fn().item():.4f}, largest Hessian eigenvalue ~ {top:.6f} "
          f"(power iteration, {args.iters} steps)")

    for name, err in errors.items():
        print(f"  {name:52s} relative error {err:.2e}")
    worst = max(errors.values())
    print(f"max relative error: {worst:.2e}")
    return worst


if __name__ == "__main__":
    sys.exit(0 if main() < 1e-6 else 1)
