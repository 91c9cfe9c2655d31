"""lucid.nn.attention (torch.nn.attention): SDPBackend and sdpa_kernel, and
scaled_dot_product_attention honouring the kernel switches on the GPU."""

import pytest
import torch

import lucid
from lucid.nn.attention import SDPBackend, sdpa_kernel
from conftest import assert_close, to_lucid

needs_gpu = pytest.mark.skipif(not lucid.cuda.is_available(), reason="needs a GPU")
F = lucid.nn.functional


def _switches(m):
    b = m.backends.cuda
    return (b.flash_sdp_enabled(), b.mem_efficient_sdp_enabled(), b.math_sdp_enabled(), b.cudnn_sdp_enabled())


def test_backend_names_and_values_are_torch_s():
    ours = {b.name: int(b) for b in SDPBackend}
    theirs = {name: int(v) for name, v in torch.nn.attention.SDPBackend.__members__.items()}
    assert ours == theirs


@pytest.mark.parametrize("chosen", [
    [SDPBackend.MATH], [SDPBackend.FLASH_ATTENTION], [SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH],
    [SDPBackend.CUDNN_ATTENTION], SDPBackend.FLASH_ATTENTION, [],
])
def test_sdpa_kernel_sets_and_restores_the_switches_as_torch(chosen):
    as_torch = ([getattr(torch.nn.attention.SDPBackend, b.name) for b in chosen] if isinstance(chosen, list)
                else getattr(torch.nn.attention.SDPBackend, chosen.name))
    before = _switches(lucid)
    with sdpa_kernel(chosen), torch.nn.attention.sdpa_kernel(as_torch):
        assert _switches(lucid) == _switches(torch)
    assert _switches(lucid) == before == _switches(torch)


def test_sdpa_kernel_restores_after_an_error():
    with pytest.raises(ValueError):
        with sdpa_kernel([SDPBackend.MATH]):
            raise ValueError("inside")
    assert _switches(lucid) == (True, True, True, True)


def test_sdpa_kernel_rejects_what_is_not_a_backend():
    with pytest.raises(TypeError, match="SDPBackend"):
        with sdpa_kernel(["math"]):
            pass


@pytest.mark.usefixtures("cpu_default")
def test_the_cpu_runs_its_one_form_whatever_is_allowed():
    q = torch.randn(2, 3, 5, 8, dtype=torch.float64)
    want = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    for chosen in ([SDPBackend.MATH], [SDPBackend.FLASH_ATTENTION], []):
        with sdpa_kernel(chosen):
            got = F.scaled_dot_product_attention(to_lucid(q), to_lucid(q), to_lucid(q), is_causal=True)
        assert_close(got, want, rtol=1e-12, atol=1e-12)


@needs_gpu
def test_gpu_math_only_and_fused_only():
    torch.manual_seed(0)
    q = torch.randn(2, 4, 64, 32)
    lq = to_lucid(q, "gpu").to(lucid.bfloat16)
    with sdpa_kernel([SDPBackend.MATH]):
        math_out = F.scaled_dot_product_attention(lq, lq, lq, is_causal=True)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        fused_out = F.scaled_dot_product_attention(lq, lq, lq, is_causal=True)
        # float32 is not the fused kernel's: with MATH off there is no kernel, as in torch
        with pytest.raises(RuntimeError, match="No available kernel"):
            F.scaled_dot_product_attention(lq.float(), lq.float(), lq.float())
    # the fused kernel and the composite agree to bfloat16's rounding
    torch.testing.assert_close(torch.from_numpy(fused_out.float().cpu().numpy()),
                               torch.from_numpy(math_out.float().cpu().numpy()), rtol=2e-2, atol=2e-2)
    with sdpa_kernel([]):
        with pytest.raises(RuntimeError, match="switched off too"):
            F.scaled_dot_product_attention(lq, lq, lq)
