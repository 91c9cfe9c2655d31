"""Rows of the matrix decompositions (lucid.linalg against torch.linalg): one [1024, 1024]
float32 matrix and a batch of [4096, 8, 8], on the CPU and on the GPU (issue 21's table),
and LDL of symmetric float32 and Hermitian complex64 matrices."""

import torch

from workloads import inputs, workload


def _spd(n, batch=()):
    def make(gen):
        a = torch.randn(*batch, n, n, generator=gen)
        return a @ a.mT / n + torch.eye(n)
    return make


def _sym(n, batch=()):
    def make(gen):
        a = torch.randn(*batch, n, n, generator=gen)
        return a + a.mT
    return make


def _hermitian(n, batch=()):
    def make(gen):
        a = torch.randn(*batch, n, n, generator=gen, dtype=torch.complex64)
        return a + a.mH
    return make


OPS = {
    "solve": (lambda m, a, b: m.linalg.solve(a, b), lambda n, batch: inputs(_spd(n, batch), (*batch, n, 1))),
    "cholesky": (lambda m, a: m.linalg.cholesky(a), lambda n, batch: inputs(_spd(n, batch))),
    "qr": (lambda m, a: m.linalg.qr(a), lambda n, batch: inputs((*batch, n, n))),
    "svd": (lambda m, a: m.linalg.svd(a, full_matrices=False), lambda n, batch: inputs((*batch, n, n))),
    "eigh": (lambda m, a: m.linalg.eigh(a), lambda n, batch: inputs(_sym(n, batch))),
    "ldl_factor": (lambda m, a: m.linalg.ldl_factor(a), lambda n, batch: inputs(_sym(n, batch))),
    "ldl_factor hermitian": (lambda m, a: m.linalg.ldl_factor(a, hermitian=True),
                             lambda n, batch: inputs(_hermitian(n, batch))),
}

for device in ("cpu", "gpu"):
    for label, n, batch in (("[1024, 1024]", 1024, ()), ("[4096, 8, 8]", 8, (4096,))):
        for name, (fn, setup) in OPS.items():
            made = setup(n, batch)

            def on_device(made=made, device=device):
                def run():
                    ls, ts = made()
                    if device == "gpu":
                        ls = tuple(t.to("gpu") for t in ls)
                        ts = tuple(t.cuda() for t in ts)
                    return ls, ts
                return run

            prefix = "GPU " if device == "gpu" else ""
            dtype = "complex64" if "hermitian" in name else "float32"
            workload(f"{prefix}linalg.{name} {label} {dtype}", "linalg", on_device(), fn,
                     flops=n ** 3 * max(1, batch[0] if batch else 1), device=device, ceiling="none")
