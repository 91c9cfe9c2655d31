"""lucid.autograd.detect_anomaly against torch's: the NaN check names the same node
and output, a failing node's forward stack is shown, and the mode is restored."""

import warnings

import pytest
import torch

import lucid


def _nan_in_div(M):
    x = M.tensor([0.0, 1.0], requires_grad=True)
    y = (x * 0).sqrt()
    return (y / y).sum()  # DivBackward0: -g*y/y^2 is 0/0 at x=0


def _nan_in_log(M):
    x = M.tensor([0.0, 2.0], requires_grad=True)
    return (x.log() * 0).sum()  # LogBackward0: 0 / 0


def _nan_from_sqrt(M):
    x = M.tensor([0.0, 4.0], requires_grad=True)
    return (x.sqrt() * 0).sum()  # SqrtBackward0: 0 * inf


def _message(M, build, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with M.autograd.detect_anomaly(**kwargs):
            loss = build(M)
            try:
                loss.backward()
            except RuntimeError as e:
                return str(e)
    return None


@pytest.mark.parametrize("build", [_nan_in_div, _nan_in_log, _nan_from_sqrt])
def test_nan_names_the_node_and_output_as_torch(build):
    expected = _message(torch, build)
    assert expected is not None and "returned nan values" in expected
    assert _message(lucid, build) == expected


def test_check_nan_off_and_mode_off_do_not_raise():
    assert _message(lucid, _nan_in_div, check_nan=False) is None
    loss = _nan_in_div(lucid)
    loss.backward()  # no anomaly mode: NaN gradients are not an error
    assert not lucid.is_anomaly_enabled()


def test_failing_node_reports_its_forward_stack():
    class Fails(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("backward of Fails went wrong")

    x = lucid.ones(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lucid.autograd.detect_anomaly():
            y = Fails.apply(x)  # the forward line the report must show: marker_line_42
            with pytest.raises(ValueError, match="went wrong"):
                y.sum().backward()
    reports = [str(w.message) for w in caught if "Error detected in" in str(w.message)]
    assert len(reports) == 1
    assert reports[0].startswith("Error detected in FailsBackward")
    assert "marker_line_42" in reports[0] and "test_anomaly.py" in reports[0]


def test_stack_recorded_only_in_anomaly_mode():
    x = lucid.zeros(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = x.sqrt()  # made outside the mode: no stack to show; its backward is 0 * inf
        with lucid.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="SqrtBackward0' returned nan"):
                (y * 0).sum().backward()
    reports = [str(w.message) for w in caught if "Error detected in" in str(w.message)]
    assert reports == []  # torch too shows nothing for a node recorded outside the mode


def test_mode_state_is_restored():
    assert not lucid.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lucid.autograd.detect_anomaly(check_nan=False):
            assert lucid.is_anomaly_enabled() and not lucid.is_anomaly_check_nan_enabled()
            with lucid.autograd.set_detect_anomaly(False):
                assert not lucid.is_anomaly_enabled()
            assert lucid.is_anomaly_enabled()
        assert not lucid.is_anomaly_enabled() and lucid.is_anomaly_check_nan_enabled()

        @lucid.autograd.detect_anomaly()
        def inside():
            return lucid.is_anomaly_enabled()

        assert inside() and not lucid.is_anomaly_enabled()
    lucid.set_anomaly_enabled(True)
    try:
        assert lucid.is_anomaly_enabled()
    finally:
        lucid.set_anomaly_enabled(False)
    assert not lucid.is_anomaly_enabled()


def test_detect_anomaly_warns_like_torch():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        lucid.autograd.detect_anomaly()
