"""Custom autograd Functions: a numerically stable softplus and a straight-through clamp.

Subclass lucid.autograd.Function with static forward(ctx, ...) and
backward(ctx, grad_output), save what backward needs with ctx.save_for_backward, and
call Function.apply, exactly as with torch.autograd.Function. The program

  1. defines SoftplusFunction, log(1 + exp(x)) computed as max(x, 0) + log1p(exp(-|x|))
     so that it neither overflows for large x nor loses precision for very negative x,
     with the hand-written gradient sigmoid(x);
  2. checks that gradient with lucid.autograd.gradcheck (float64, against finite
     differences), and the second derivative with gradgradcheck (backward is written
     with differentiable lucid ops, so double backward works too); then measures the
     largest difference between the hand-written gradient and central finite
     differences, which main() returns;
  3. defines ClampSTE, a clamp whose backward passes the gradient straight through
     (the straight-through estimator used for quantization), and shows how its
     gradient differs from lucid.clamp's;
  4. trains a small MLP that uses both (Softplus activations, a straight-through
     clamp on the output) to fit sin(3x) for a few hundred Adam steps.

All of it runs on one device: --device auto picks the GPU when there is one (and
says so); a Function's forward and backward run wherever their tensors are.

    PYTHONPATH=python python examples/custom_function.py [--device auto]
    PYTHONPATH=python python examples/custom_function.py --steps 50
"""

import argparse
import math
import sys

import lucid
from _device import pick_device  # examples/_device.py
import lucid.nn as nn
from lucid.autograd import Function, gradcheck, gradgradcheck


class SoftplusFunction(Function):
    """softplus(x) = log(1 + exp(x)), stable for any x; d/dx = sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        # Naively, log(1 + exp(800.)) is inf and log(1 + exp(-40.)) rounds to 0 in float32.
        return x.clamp(min=0) + lucid.log1p(lucid.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # Differentiable ops only, so backward(create_graph=True) gives second derivatives.
        return grad_output * lucid.sigmoid(x)


class ClampSTE(Function):
    """clamp(x, min, max) forward; identity backward (straight-through estimator)."""

    @staticmethod
    def forward(ctx, x, min, max):
        return x.clamp(min, max)

    @staticmethod
    def backward(ctx, grad_output):
        # One gradient per forward input: none for the Python numbers min and max.
        return grad_output, None, None


def softplus(x):
    return SoftplusFunction.apply(x)


class Softplus(nn.Module):
    def forward(self, x):
        return softplus(x)


def finite_difference_error(fn, x, eps=1e-6):
    """max |analytic d/dx - central difference| for an elementwise fn, over all of x (float64)."""
    x = x.detach().requires_grad_()
    (analytic,) = lucid.autograd.grad(fn(x).sum(), x)
    with lucid.no_grad():
        numeric = (fn(x + eps) - fn(x - eps)) / (2 * eps)
    return (analytic - numeric).abs().max().item()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=500, help="training steps of the small model")
    p.add_argument("--points", type=int, default=256, help="training points for the small model")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="auto, cpu, gpu or cuda[:N]")
    args = p.parse_args(argv)
    lucid.manual_seed(args.seed)
    device = pick_device(args.device, "running")

    # 1-2. The softplus and its gradient, checked in float64.
    x = (lucid.randn(64, dtype=lucid.float64, device=device) * 5).requires_grad_()
    assert gradcheck(softplus, (x,), eps=1e-6, atol=1e-8)  # raises GradcheckError on a mismatch
    assert gradgradcheck(softplus, (x,), eps=1e-6, atol=1e-8)
    points = lucid.cat([x.detach(), lucid.linspace(-30, 30, 121, dtype=lucid.float64, device=device)])
    err = finite_difference_error(softplus, points)
    ref = lucid.nn.functional.softplus(points)
    value_err = (softplus(points) - ref).abs().max().item()
    print(f"gradcheck and gradgradcheck passed; max |grad - finite difference| = {err:.2e}, "
          f"max |softplus - F.softplus| = {value_err:.2e} (F.softplus returns x itself above x = 20)")
    extreme = lucid.tensor([-800.0, -40.0, 0.0, 40.0, 800.0], device=device)
    naive = lucid.log(1 + lucid.exp(extreme))
    print(f"float32 at {extreme.tolist()}:\n  naive  {naive.tolist()}\n  stable {softplus(extreme).tolist()}")

    # 3. Straight-through clamp: the gradient ignores the clamp.
    v = lucid.tensor([-2.0, -0.5, 0.5, 2.0], device=device, requires_grad=True)
    (g_clamp,) = lucid.autograd.grad(v.clamp(-1, 1).sum(), v)
    (g_ste,) = lucid.autograd.grad(ClampSTE.apply(v, -1.0, 1.0).sum(), v)
    print(f"d/dx clamp(x, -1, 1) at {v.tolist()}: clamp {g_clamp.tolist()}, straight-through {g_ste.tolist()}")

    # 4. A small model built from them, trained as usual.
    inputs = lucid.rand(args.points, 1, device=device) * 2 - 1
    targets = lucid.sin(3 * inputs)
    model = nn.Sequential(nn.Linear(1, args.hidden), Softplus(), nn.Linear(args.hidden, args.hidden), Softplus(),
                          nn.Linear(args.hidden, 1)).to(device)
    optimizer = lucid.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.MSELoss()
    first = None
    for step in range(1, args.steps + 1):
        optimizer.zero_grad()
        loss = loss_fn(ClampSTE.apply(model(inputs), -1.0, 1.0), targets)
        loss.backward()
        optimizer.step()
        first = loss.item() if first is None else first
        if step == 1 or step % max(1, args.steps // 5) == 0:
            print(f"step {step:4d}: mse {loss.item():.5f}")
    print(f"mse {first:.4f} -> {loss.item():.5f} (the target's variance is {targets.var().item():.4f})")
    print(f"max gradient error: {err:.2e}")
    return err


if __name__ == "__main__":
    err = main()
    sys.exit(0 if math.isfinite(err) and err < 1e-6 else 1)
