"""odeint_adjoint: the solve differentiated by the adjoint method, at constant memory.

The forward solve records nothing. Backward integrates, from the last time to the
first, the state together with its adjoint a = dL/dy and the parameters' gradient g:

    dy/dt = f,   da/dt = -a^T df/dy,   dg/dt = -a^T df/dtheta,

one vector-Jacobian product through f per evaluation. Memory is then set by the size of
the state and the parameters, not by the number of steps. The gradient is that of the
continuous problem, solved to adjoint_rtol / adjoint_atol: it approaches odeint's
(which differentiates the steps actually taken) as the tolerances tighten.
"""

import itertools
import math
import weakref
from dataclasses import dataclass

import lucid
from .._tensor import Tensor
from ..autograd.function import Function
from ._event import attach_event_gradient
from ._methods import check_method
from ._odeint import _Solver, _event_grid, _stack, find_event, odeint
from ._problem import Problem, check_tolerances, parse_grid

__all__ = ["odeint_adjoint"]


@dataclass(frozen=True)
class _Settings:
    flat_func: object
    grid: list
    rtol: float
    atol: float
    method: object
    options: object
    adjoint_rtol: float
    adjoint_atol: float
    adjoint_method: object
    adjoint_options: object


def _parameters(func, adjoint_params):
    """The tensors to return gradients for: adjoint_params, else func.parameters() when
    func has it (an nn.Module), else none (gradients then reach y0 only)."""
    if adjoint_params is not None:
        params = tuple(adjoint_params)
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"adjoint_params[{i}] must be a Tensor, got {type(p).__name__}")
        return params
    parameters = getattr(func, "parameters", None)
    if callable(parameters):
        return tuple(p for p in parameters() if isinstance(p, Tensor))
    return ()


def _augmented_dynamics(func, params, shape):
    """d/dt of [y, a, g...], all flattened into one vector; one vector-Jacobian product
    per call. func takes and returns states of `shape`."""
    n = math.prod(shape)
    sizes = [p.numel() for p in params]

    def dynamics(t, state):
        y, adjoint = state[:n].reshape(shape), state[n:2 * n].reshape(shape)
        with lucid.enable_grad():
            y_leaf = y.detach().clone().requires_grad_(True)
            f = func(t.detach(), y_leaf)
            wanted = [y_leaf, *[p for p in params if p.requires_grad]]
            if f.requires_grad:
                grads = lucid.autograd.grad([f], wanted, grad_outputs=[-adjoint.detach()], allow_unused=True)
            else:
                grads = [None] * len(wanted)
        grads = list(grads)
        d_adjoint = grads.pop(0)
        if d_adjoint is None:
            d_adjoint = lucid.zeros_like(y)
        pieces = [f.detach().reshape(-1), d_adjoint.detach().reshape(-1)]
        for p, size in zip(params, sizes):
            g = grads.pop(0) if p.requires_grad else None
            pieces.append(lucid.zeros(size, dtype=y.dtype, device=y.device) if g is None
                          else g.detach().reshape(-1).to(y.dtype))
        return lucid.cat(pieces)

    return dynamics


# The settings (func among them) of each solve whose graph is alive, by key. The graph's
# node holds ctx, and ctx only the key: were ctx to hold func, a func that refers to the
# solve's result (a module-level function whose globals hold it) would close a cycle
# through the engine's node, which Python's collector cannot see into. The entry goes
# when ctx does, that is when the node is freed.
_LIVE_SETTINGS = {}
_KEYS = itertools.count()


class _AdjointSolve(Function):
    @staticmethod
    def forward(ctx, y0, *params, settings):
        with lucid.no_grad():
            ys = odeint(settings.flat_func, y0, settings.grid, rtol=settings.rtol, atol=settings.atol,
                        method=settings.method, options=settings.options)
        ctx.save_for_backward(ys)
        key = next(_KEYS)
        _LIVE_SETTINGS[key] = settings
        weakref.finalize(ctx, _LIVE_SETTINGS.pop, key, None)
        ctx.key, ctx.params = key, params
        return ys

    @staticmethod
    def backward(ctx, grad_ys):
        (ys,) = ctx.saved_tensors
        settings, params = _LIVE_SETTINGS[ctx.key], ctx.params
        grid, shape = settings.grid, tuple(ys.shape[1:])
        n = math.prod(shape)
        dynamics = _augmented_dynamics(settings.flat_func, params, shape)
        adjoint = lucid.zeros_like(ys[0])
        grads = [lucid.zeros(p.numel(), dtype=ys.dtype, device=ys.device) for p in params]
        with lucid.no_grad():
            for i in range(len(grid) - 1, 0, -1):
                adjoint = adjoint + grad_ys[i]
                # Restart from the stored forward state at every output time, so the
                # backward solve cannot drift away from the trajectory it differentiates.
                state = lucid.cat([ys[i].reshape(-1), adjoint.reshape(-1), *grads])
                state = odeint(dynamics, state, [grid[i], grid[i - 1]], rtol=settings.adjoint_rtol,
                               atol=settings.adjoint_atol, method=settings.adjoint_method,
                               options=settings.adjoint_options, return_trajectory=False)
                adjoint = state[n:2 * n].reshape(shape)
                offset, grads = 2 * n, []
                for p in params:
                    grads.append(state[offset:offset + p.numel()])
                    offset += p.numel()
            adjoint = adjoint + grad_ys[0]
        param_grads = [g.reshape(p.shape).to(p.dtype) if p.requires_grad else None for g, p in zip(grads, params)]
        return (adjoint, *param_grads)


def odeint_adjoint(func, y0, t, *, rtol=1e-7, atol=1e-9, method=None, options=None, event_fn=None,
                   adjoint_rtol=None, adjoint_atol=None, adjoint_method=None, adjoint_options=None,
                   adjoint_params=None):
    """odeint, with gradients from the adjoint method instead of backpropagating through
    the steps: the forward solve keeps no graph. adjoint_rtol / adjoint_atol /
    adjoint_method / adjoint_options set the backward solve (each defaults to its forward
    counterpart). adjoint_params: the tensors to return gradients for; by default
    func.parameters() when func is an nn.Module, else none, so a plain function's
    captured tensors must be listed here to get gradients.

    With event_fn, the event time is found with no graph, the solve up to it is
    differentiated by the adjoint method, and the event time's derivative is attached
    as in odeint; returns (event_t, solution). Gradients with respect to t are not
    produced: t is read as host floats throughout lucid.diffeq."""
    check_tolerances(rtol, atol)
    check_method(method)
    adjoint_method = method if adjoint_method is None else adjoint_method
    check_method(adjoint_method)
    adjoint_rtol = rtol if adjoint_rtol is None else adjoint_rtol
    adjoint_atol = atol if adjoint_atol is None else adjoint_atol
    check_tolerances(adjoint_rtol, adjoint_atol)
    params = _parameters(func, adjoint_params)
    problem = Problem(func, y0, event_fn)

    def flat_func(time, y):
        return problem.call_func(time, y)

    def settings_for(grid):
        return _Settings(flat_func, grid, rtol, atol, method, options, adjoint_rtol, adjoint_atol, adjoint_method,
                         options if adjoint_options is None else adjoint_options)

    if event_fn is None:
        grid = parse_grid(t)
        _Solver(problem, method, rtol, atol, options)  # (fails fast on bad options)
        ys = _AdjointSolve.apply(problem.y0, *params, settings=settings_for(grid))
        return problem.split_rows(ys)

    grid = _event_grid(t)
    direction = 1.0 if grid[1] > grid[0] else -1.0
    solver = _Solver(problem, method, rtol, atol, options)
    solver.reject_adams("event detection")
    with lucid.no_grad():
        event_t, _ = find_event(problem, solver.make_stepper, solver.tableau, grid[0], direction, rtol, atol,
                                options, solver.fixed_opts)
    if event_t == grid[0]:
        state = problem.y0
    else:
        state = _AdjointSolve.apply(problem.y0, *params, settings=settings_for([grid[0], event_t]))[-1]
    time, state = attach_event_gradient(problem, event_t, state)
    return time, problem.split_rows(_stack([problem.y0, state]))
