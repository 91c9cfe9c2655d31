"""The fused elementwise kernels under compute-sanitizer (memcheck, racecheck): the
interpreter and the generated kernels (LUCID_KERNEL_COMPILE=off, then sync), each dtype,
ragged sizes, a broadcast input, in-place steps, where with a bool condition, casts between
the float dtypes (programs of several dtypes), inputs read through views (a bias row, a
column, a mask over batch and heads, a key mask of two terms, a transposed tensor, a
strided slice), and a repeated flush that replays as a CUDA graph. Run on a GPU machine:
compute-sanitizer --tool memcheck python3 benchmarks/profiles/sanitize_fused.py"""
import lucid, numpy as np
for mode in ("off", "sync"):
    lucid.gpu.set_kernel_compile(mode)
    for dt in (lucid.float32, lucid.float64, lucid.float16, lucid.bfloat16):
        for n in (1, 7, 5000, 65537):
            a = lucid.tensor(np.random.default_rng(n).standard_normal(n).astype(np.float32), device="gpu").to(dt)
            b = lucid.tensor([0.5], device="gpu").to(dt)
            y = lucid.sigmoid(lucid.exp(lucid.tanh(lucid.sin(a * 1.5 + b) * a) - 0.25)) + 1.0
            a.mul_(2.0).add_(1.0)
            keep = a > 0.5
            w = lucid.where(keep, a * 3, -1.0) + a
            c = (w.float() * 0.5).to(lucid.bfloat16 if dt != lucid.float64 else dt) + 1 if dt != lucid.float64 else w * 2
            print(mode, dt, n, float(y.float().sum()), float(a.float().sum()), float(c.float().sum()))
        for shape in ((37, 37), (3, 5, 11, 11)):
            rng = np.random.default_rng(len(shape))
            x = lucid.tensor(rng.standard_normal(shape).astype(np.float32), device="gpu").to(dt)
            row = lucid.tensor(rng.standard_normal(shape[-1:]).astype(np.float32), device="gpu").to(dt)
            col = lucid.tensor(rng.standard_normal(shape[:1] + (1,) * (len(shape) - 1)).astype(np.float32),
                               device="gpu").to(dt)
            mask = lucid.tensor(rng.standard_normal(shape[-2:]).astype(np.float32), device="gpu").to(dt)
            v = ((x + row) * col - mask).tanh() + x.transpose(-1, -2) * 0.5
            print(mode, dt, shape, float(v.float().sum()))
        z64 = lucid.tensor(np.random.default_rng(1).standard_normal((70, 600)), device="gpu")
        s = (z64[:, ::2].to(dt) * 2.0 + 1.0).exp()
        print(mode, dt, "slice", float(s.float().sum()))
    x = lucid.tensor(np.random.default_rng(0).standard_normal(5000).astype(np.float32), device="gpu")
    for _ in range(3):
        z = (x * 2 + 1).relu() - x
        lucid.eval(z)
print("graph runs", lucid.gpu.pending_stats()["graph_runs"], lucid.gpu.generated_kernel_stats())
assert lucid.gpu.generated_kernel_stats()["fused_launches"] > 0
