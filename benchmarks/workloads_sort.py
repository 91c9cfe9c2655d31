"""Rows of sorting and counting (issue 21's table): sort, argsort and topk(k=100) of 16M
float32 values and along the last dim of [4096, 4096], and unique of 16M int64 (values
drawn from 0 to 2^20, so about 1M distinct), on the CPU and on the GPU."""

import torch

from workloads import inputs, randint, workload

N = 1 << 24
S = 4096

ROWS = (
    ("sort", lambda m, x: m.sort(x)),
    ("argsort", lambda m, x: m.argsort(x)),
    ("topk(k=100)", lambda m, x: m.topk(x, 100)),
)

for device in ("cpu", "gpu"):
    prefix = "GPU " if device == "gpu" else ""
    for name, fn in ROWS:
        workload(f"{prefix}{name} 16M float32", "sort", inputs((N,), device=device), fn, device=device,
                 ceiling="none")
        workload(f"{prefix}{name} [{S}, {S}] float32 last dim", "sort", inputs((S, S), device=device), fn,
                 device=device, ceiling="none")
    workload(f"{prefix}unique 16M int64", "sort", inputs(randint(1 << 20, N), device=device),
             lambda m, x: m.unique(x), device=device, ceiling="none")
