"""lucid.diffeq under autograd: gradients through odeint's steps, the adjoint method,
events (the falling ball) and implicit methods on stiff problems.

References are exact solutions and central finite differences in float64; torch has no
ODE solver to compare with.
"""

import math
import warnings

import pytest

import lucid
import lucid.diffeq as dq
import lucid.nn as nn

F64 = lucid.float64
G = 9.8


def vec(*values):
    return lucid.tensor(list(values), dtype=F64)


def damped_pendulum(k):
    def f(t, y):
        return lucid.stack([y[1], -k[0] * lucid.sin(y[0]) - k[1] * y[1] + 0.1 * lucid.cos(t)])
    return f


def _loss(method, options, y0_values, k_values, requires_grad):
    y0 = lucid.tensor(y0_values, dtype=F64, requires_grad=requires_grad)
    k = lucid.tensor(k_values, dtype=F64, requires_grad=requires_grad)
    ys = dq.odeint(damped_pendulum(k), y0, [0.0, 0.5, 1.5], method=method, options=options)
    return (ys[1:] ** 2).sum() + ys[-1, 0], y0, k


def _finite_difference(method, options, y0_values, k_values, which, index, eps=1e-6):
    values = [list(y0_values), list(k_values)]
    results = []
    for sign in (1, -1):
        shifted = [list(v) for v in values]
        shifted[which][index] += sign * eps
        with lucid.no_grad():
            loss, _, _ = _loss(method, options, shifted[0], shifted[1], False)
        results.append(loss.item())
    return (results[0] - results[1]) / (2 * eps)


@pytest.mark.parametrize("method,options", [
    ("rk4", None), ("midpoint", {"step_size": 0.1, "interp": "cubic"}),
    ("explicit_adams", {"step_size": 0.05, "max_order": 4}), ("implicit_adams", {"step_size": 0.05}),
    ("gl4", {"step_size": 0.25}), ("radauIIA5", {"step_size": 0.25}),
    ("implicit_euler", {"step_size": 0.25}), ("sdirk2", {"step_size": 0.25}), ("trbdf2", {"step_size": 0.25}),
    ("trapezoid", {"step_size": 0.25}), ("gl6", {"step_size": 0.5})])
def test_odeint_gradient_matches_finite_differences(method, options):
    y0_values, k_values = [0.8, -0.2], [2.0, 0.3]
    loss, y0, k = _loss(method, options, y0_values, k_values, True)
    grad_y0, grad_k = lucid.autograd.grad(loss, [y0, k])
    for which, grad in ((0, grad_y0), (1, grad_k)):
        for i in range(2):
            expected = _finite_difference(method, options, y0_values, k_values, which, i)
            assert grad[i].item() == pytest.approx(expected, rel=1e-6, abs=1e-8), (method, which, i)


@pytest.mark.parametrize("method", ["dopri5", "tsit5", "dopri8", "bosh3"])
def test_adaptive_gradient_matches_the_exact_derivative(method):
    # y' = -k y: y(T) = y0 exp(-k T), dy/dk = -T y(T), dy/dy0 = exp(-k T)
    k = lucid.tensor(0.7, dtype=F64, requires_grad=True)
    y0 = vec(1.5).requires_grad_(True)
    y = dq.odeint(lambda t, y: -k * y, y0, [0.0, 2.0], method=method, rtol=1e-10, atol=1e-12)
    y[-1].sum().backward()
    assert k.grad.item() == pytest.approx(-2.0 * 1.5 * math.exp(-1.4), rel=1e-7)
    assert y0.grad.item() == pytest.approx(math.exp(-1.4), rel=1e-7)


def test_second_derivative_through_a_fixed_step_solve():
    k = lucid.tensor(0.5, dtype=F64, requires_grad=True)
    y = dq.odeint(lambda t, y: -k * y, vec(1.0), [0.0, 1.0], method="rk4", options={"step_size": 0.01})
    (first,) = lucid.autograd.grad(y[-1].sum(), [k], create_graph=True)
    (second,) = lucid.autograd.grad(first, [k])
    # d2/dk2 exp(-k) = exp(-k)
    assert first.item() == pytest.approx(-math.exp(-0.5), rel=1e-8)
    assert second.item() == pytest.approx(math.exp(-0.5), rel=1e-7)


# -- odeint_adjoint -------------------------------------------------------------------


class Field(nn.Module):
    def __init__(self):
        super().__init__()
        lucid.manual_seed(0)
        self.linear = nn.Linear(2, 2, dtype=F64)

    def forward(self, t, y):
        return lucid.tanh(self.linear(y)) - 0.2 * y


@pytest.mark.parametrize("method,options,tol", [("dopri5", None, 1e-6), ("rk4", {"step_size": 0.01}, 1e-6)])
def test_adjoint_gradients_match_direct_backprop(method, options, tol):
    field = Field()
    y0 = vec(0.5, -1.0).requires_grad_(True)
    times = [0.0, 0.4, 1.0]
    direct = dq.odeint(field, y0, times, method=method, options=options, rtol=1e-10, atol=1e-12)
    expected = lucid.autograd.grad((direct ** 2).sum(), [y0, *field.parameters()])
    adjoint = dq.odeint_adjoint(field, y0, times, method=method, options=options, rtol=1e-10, atol=1e-12)
    assert (adjoint - direct).abs().max().item() < 1e-12
    got = lucid.autograd.grad((adjoint ** 2).sum(), [y0, *field.parameters()])
    for a, b in zip(got, expected):
        assert a.shape == b.shape
        assert (a - b).abs().max().item() < tol * max(1.0, b.abs().max().item())


def test_adjoint_params_for_a_plain_function_and_tuple_state():
    k = lucid.tensor(0.7, dtype=F64, requires_grad=True)
    unused = lucid.tensor(1.0, dtype=F64, requires_grad=True)
    y0 = (vec(1.0).requires_grad_(True), vec(2.0))
    ys = dq.odeint_adjoint(lambda t, s: (-k * s[0], k * s[0]), y0, [0.0, 1.0], rtol=1e-10, atol=1e-12,
                           adjoint_params=[k, unused])
    assert isinstance(ys, tuple) and ys[0].shape == (2, 1)
    (ys[0][-1] + 3.0 * ys[1][-1]).sum().backward()
    # s0 = exp(-k t), s1 = 2 + 1 - exp(-k t): d(s0 + 3 s1)/dk = -2 d exp(-k)/dk = 2 exp(-k)
    assert k.grad.item() == pytest.approx(2.0 * math.exp(-0.7), rel=1e-7)
    assert y0[0].grad.item() == pytest.approx(3.0 - 2.0 * math.exp(-0.7), rel=1e-7)
    assert unused.grad is None or unused.grad.item() == 0.0
    with pytest.raises(TypeError, match="adjoint_params"):
        dq.odeint_adjoint(lambda t, y: -y, vec(1.0), [0.0, 1.0], adjoint_params=[1.0])


def test_adjoint_on_a_matrix_state():
    rate = lucid.tensor([[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]], dtype=F64, requires_grad=True)
    y0 = lucid.tensor([[1.0, -1.0, 2.0], [0.5, 3.0, -2.0]], dtype=F64, requires_grad=True)
    ys = dq.odeint_adjoint(lambda t, y: -rate * y, y0, [0.0, 0.5, 1.0], rtol=1e-10, atol=1e-12,
                           adjoint_params=[rate])
    assert ys.shape == (3, 2, 3)
    ys[-1].sum().backward()
    # y(1) = y0 exp(-rate): d/dy0 = exp(-rate), d/drate = -y0 exp(-rate)
    assert (y0.grad - lucid.exp(-rate.detach())).abs().max().item() < 1e-8
    assert (rate.grad + y0.detach() * lucid.exp(-rate.detach())).abs().max().item() < 1e-8


def test_adjoint_uses_its_own_backward_solver():
    # The adjoint solve with a coarse fixed-step method is visibly less exact than with
    # dopri5: the backward pass really integrates the adjoint equation.
    k = lucid.tensor(0.7, dtype=F64, requires_grad=True)
    exact = -2.0 * math.exp(-1.4)
    errors = []
    for adjoint_method in ("euler", "dopri5"):
        k.grad = None
        y = dq.odeint_adjoint(lambda t, y: -k * y, vec(1.0), [0.0, 2.0], rtol=1e-10, atol=1e-12,
                              adjoint_method=adjoint_method, adjoint_options={"step_size": 0.1}
                              if adjoint_method == "euler" else None, adjoint_params=[k])
        y[-1].sum().backward()
        errors.append(abs(k.grad.item() - exact))
    assert errors[0] > 1e-3 and errors[1] < 1e-8


# -- events ---------------------------------------------------------------------------


def fall(t, y):
    return lucid.stack([y[1], lucid.full_like(y[1], -G)])


@pytest.mark.parametrize("method,options", [("dopri5", None), ("tsit5", None), ("bosh3", None),
                                            ("dopri8", None), ("rk4", {"step_size": 0.1, "interp": "cubic"}),
                                            ("gl4", {"step_size": 0.1, "interp": "cubic"})])
def test_falling_ball_hits_the_ground_on_time(method, options):
    h0 = lucid.tensor(10.0, dtype=F64, requires_grad=True)
    v0 = lucid.tensor(1.5, dtype=F64, requires_grad=True)
    y0 = lucid.stack([h0, v0])
    event_t, solution = dq.odeint_event(fall, y0, 0.0, event_fn=lambda t, y: y[0], method=method, options=options)
    t_hit = (v0.item() + math.sqrt(v0.item() ** 2 + 2 * G * 10.0)) / G
    assert event_t.item() == pytest.approx(t_hit, abs=1e-10)
    assert solution.shape == (2, 2)
    assert solution[0].tolist() == pytest.approx([10.0, 1.5])
    assert solution[1, 0].item() == pytest.approx(0.0, abs=1e-9)
    assert solution[1, 1].item() == pytest.approx(1.5 - G * t_hit, abs=1e-8)
    # d t_hit / d h0 = 1 / sqrt(v0^2 + 2 g h0); d t_hit / d v0 = (1 + v0 / sqrt(...)) / g
    root = math.sqrt(v0.item() ** 2 + 2 * G * 10.0)
    grad_h0, grad_v0 = lucid.autograd.grad(event_t, [h0, v0], retain_graph=True)
    assert grad_h0.item() == pytest.approx(1.0 / root, rel=1e-8)
    assert grad_v0.item() == pytest.approx((1.0 + v0.item() / root) / G, rel=1e-8)
    # the state at the event moves with the event time: the height stays 0, the
    # impact velocity -root has d/dh0 = -g / root
    grad_height, = lucid.autograd.grad(solution[1, 0], [h0], retain_graph=True)
    grad_speed, = lucid.autograd.grad(solution[1, 1], [h0])
    assert abs(grad_height.item()) < 1e-9
    assert grad_speed.item() == pytest.approx(-G / root, rel=1e-8)


def test_event_through_odeint_adjoint_and_odeint():
    h0 = lucid.tensor(10.0, dtype=F64, requires_grad=True)
    y0 = lucid.stack([h0, lucid.zeros_like(h0)])
    event_t, solution = dq.odeint_event(fall, y0, 0.0, event_fn=lambda t, y: y[0], odeint_interface=dq.odeint_adjoint,
                                        adjoint_params=(), rtol=1e-10, atol=1e-12)
    assert event_t.item() == pytest.approx(math.sqrt(20 / G), abs=1e-10)
    (grad,) = lucid.autograd.grad(event_t, [h0])
    assert grad.item() == pytest.approx(1 / math.sqrt(2 * G * 10.0), rel=1e-7)
    # odeint itself takes event_fn; the direction comes from t
    event_t, _ = dq.odeint(fall, y0, [0.0, 1.0], event_fn=lambda t, y: y[0] - 5.0)
    assert event_t.item() == pytest.approx(math.sqrt(10 / G), abs=1e-10)


def test_event_reverse_time_tuple_state_and_immediate_event():
    # backwards from t = 2 on y' = 1, y(2) = 2: y = t, so y - 0.5 crosses at t = 0.5
    event_t, sol = dq.odeint_event(lambda t, y: lucid.ones_like(y), vec(2.0), 2.0,
                                   event_fn=lambda t, y: y[0] - 0.5, reverse_time=True)
    assert event_t.item() == pytest.approx(0.5, abs=1e-12)
    # a time-dependent event on a tuple state
    event_t, sol = dq.odeint_event(lambda t, s: (s[1], -s[0]), (vec(1.0), vec(0.0)), 0.0,
                                   event_fn=lambda t, s: s[0][0], rtol=1e-10, atol=1e-12)
    assert event_t.item() == pytest.approx(math.pi / 2, abs=1e-9)
    assert isinstance(sol, tuple) and sol[1][-1].item() == pytest.approx(-1.0, abs=1e-8)
    # an event function that is already zero fires at once
    event_t, sol = dq.odeint_event(lambda t, y: -y, vec(1.0), 0.0, event_fn=lambda t, y: y[0] - 1.0)
    assert event_t.item() == 0.0 and sol[-1].item() == 1.0


def test_event_errors():
    with pytest.raises(ValueError, match="step_size"):
        dq.odeint_event(fall, vec(10.0, 0.0), 0.0, event_fn=lambda t, y: y[0], method="rk4")
    with pytest.raises(ValueError, match="single-element"):
        dq.odeint_event(fall, vec(10.0, 0.0), 0.0, event_fn=lambda t, y: y)
    with pytest.raises(NotImplementedError, match="Adams"):
        dq.odeint_event(fall, vec(10.0, 0.0), 0.0, event_fn=lambda t, y: y[0], method="explicit_adams",
                        options={"step_size": 0.1})
    with pytest.raises(RuntimeError, match="did not change sign"):
        dq.odeint_event(lambda t, y: lucid.zeros_like(y), vec(1.0), 0.0, event_fn=lambda t, y: y[0], method="euler",
                        options={"step_size": 1.0})


# -- stiff problems -------------------------------------------------------------------


def stiff(t, y):
    # y' = -1000 (y - cos t): the solution follows cos t after a fast transient
    return -1000.0 * (y - lucid.cos(t))


@pytest.mark.parametrize("method", ["implicit_euler", "radauIIA3", "radauIIA5", "sdirk2", "trbdf2"])
def test_l_stable_methods_take_large_steps_on_a_stiff_problem(method):
    times = [0.1 * i for i in range(21)]
    y = dq.odeint(stiff, vec(0.0), times, method=method)
    # quasi-steady solution: cos t + sin t / 1000 to first order in 1/1000
    expected = math.cos(2.0) + math.sin(2.0) / 1000.0
    assert y[-1].item() == pytest.approx(expected, abs=2e-4)


def test_explicit_method_is_unstable_where_implicit_ones_are_not():
    times = [0.1 * i for i in range(11)]
    explicit = dq.odeint(stiff, vec(0.0), times, method="rk4")
    assert not math.isfinite(explicit[-1].item()) or abs(explicit[-1].item()) > 1e6
    # dopri5 copes by shrinking its steps to the stability limit (~ 3 / 1000): many steps
    calls = [0]

    def counted(t, y):
        calls[0] += 1
        return stiff(t, y)

    y = dq.odeint(counted, vec(0.0), [0.0, 1.0], rtol=1e-4, atol=1e-6)
    assert y[-1].item() == pytest.approx(math.cos(1.0) + math.sin(1.0) / 1000.0, abs=1e-4)
    assert calls[0] > 1000


def test_newton_warns_when_it_runs_out_of_iterations():
    with pytest.warns(RuntimeWarning, match="did not converge"):
        dq.odeint(lambda t, y: -(y ** 3), vec(2.0), [0.0, 1.0], method="gl4", options={"max_iters": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = dq.odeint(lambda t, y: -(y ** 3), vec(2.0), [0.0, 1.0], method="gl4", options={"step_size": 0.05})
    # y' = -y^3: y = 1 / sqrt(1/4 + 2 t)
    assert y[-1].item() == pytest.approx(1 / math.sqrt(2.25), abs=1e-5)


def test_implicit_step_without_autograd_graph_records_nothing():
    k = lucid.tensor(0.5, dtype=F64, requires_grad=True)
    with lucid.no_grad():
        y = dq.odeint(lambda t, y: -k * y, vec(1.0), [0.0, 1.0], method="radauIIA5", options={"step_size": 0.1})
    assert not y.requires_grad
    assert y[-1].item() == pytest.approx(math.exp(-0.5), abs=1e-9)
