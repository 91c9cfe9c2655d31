"""Issue 22's "first call of a compiled training step" row: the wall time of the first
calls of lucid.compile.fused_step on the MLP 784-512-512-10 Adam step (batch 128), with
an empty kernel cache (every fused kernel compiled by NVRTC in that call) and then with
the cache on disk (a new process), against torch.compile's first calls (mode
reduce-overhead) in the same process. Run: python benchmarks/profiles/compile_first_call.py"""

import os
import subprocess
import sys
import tempfile
import time

LUCID_SIDE = """
import time, lucid
nn, F = lucid.nn, lucid.nn.functional
lucid.manual_seed(0)
model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).to("gpu")
step = lucid.compile.fused_step(model, F.cross_entropy, lucid.optim.Adam(model.parameters(), lr=1e-3))
x, y = lucid.randn(128, 784, device="gpu"), lucid.randint(0, 10, (128,), device="gpu")
lucid.gpu.synchronize()
times = []
for _ in range(3):
    t = time.perf_counter(); step(x, y).item(); times.append(time.perf_counter() - t)
print("lucid", " ".join(f"{t * 1e3:.1f}" for t in times), lucid.gpu.generated_kernel_stats()["compiled"])
"""

TORCH_SIDE = """
import time, torch
torch.manual_seed(0)
nn, F = torch.nn, torch.nn.functional
model = torch.compile(nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                    nn.Linear(512, 10)).cuda(), mode="reduce-overhead")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(128, 784, device="cuda"), torch.randint(0, 10, (128,), device="cuda")
torch.cuda.synchronize()
times = []
for _ in range(3):
    t = time.perf_counter()
    loss = F.cross_entropy(model(x), y); loss.backward(); opt.step(); opt.zero_grad(); loss.item()
    times.append(time.perf_counter() - t)
print("torch", " ".join(f"{t * 1e3:.1f}" for t in times))
"""


def main():
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "LUCID_CACHE_DIR": cache}
        for label in ("empty kernel cache", "kernels on disk"):
            out = subprocess.run([sys.executable, "-c", LUCID_SIDE], env=env, capture_output=True, text=True,
                                 check=True).stdout.split()
            print(f"lucid.compile fused_step, {label}: first calls {out[1]} / {out[2]} / {out[3]} ms "
                  f"({out[4]} kernels compiled by NVRTC)")
    with tempfile.TemporaryDirectory() as inductor:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": inductor}
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", TORCH_SIDE], env=env, capture_output=True, text=True,
                             check=True).stdout.split()
        print(f"torch.compile reduce-overhead, empty cache: first calls {out[1]} / {out[2]} / {out[3]} ms "
              f"(process {time.perf_counter() - t:.1f} s)")


if __name__ == "__main__":
    main()
