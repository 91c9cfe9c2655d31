"""Rows of the Fourier transforms (lucid.fft against torch.fft): fft of 2^24 complex64,
rfft of 2^24 float32 and fft2 of [4096, 4096] complex64, on the CPU and on the GPU
(issue 21's table). The work is the usual 5 N log2 N flops of a complex transform
(half that for a real one)."""

import math

import torch

from workloads import inputs, workload

N = 1 << 24
S = 4096


def _complex(*shape):
    return lambda gen: torch.complex(torch.randn(*shape, generator=gen), torch.randn(*shape, generator=gen))


ROWS = (
    ("fft", "2^24 complex64", lambda m, x: m.fft.fft(x), _complex(N), 5 * N * math.log2(N)),
    ("rfft", "2^24 float32", lambda m, x: m.fft.rfft(x), (N,), 2.5 * N * math.log2(N)),
    ("fft2", f"[{S}, {S}] complex64", lambda m, x: m.fft.fft2(x), _complex(S, S), 5 * S * S * math.log2(S * S)),
)

for device in ("cpu", "gpu"):
    prefix = "GPU " if device == "gpu" else ""
    for name, label, fn, maker, flops in ROWS:
        workload(f"{prefix}fft.{name} {label}", "fft", inputs(maker, device=device), fn, flops=int(flops),
                 device=device, ceiling="none")
