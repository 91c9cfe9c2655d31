"""The fused elementwise kernel under compute-sanitizer (memcheck, racecheck): each dtype,
and a repeated flush that replays as a CUDA graph. Run on a GPU machine:
compute-sanitizer --tool memcheck python3 benchmarks/profiles/sanitize_fused.py"""
import lucid, numpy as np
x = lucid.tensor(np.random.default_rng(0).standard_normal(5000).astype(np.float32), device="gpu")
for dt in (lucid.float32, lucid.float64, lucid.float16, lucid.bfloat16):
    a = x.to(dt)
    y = lucid.sigmoid(lucid.exp(lucid.tanh(lucid.sin(a * 1.5 + 0.5) * a) - 0.25)) + 1.0
    print(dt, float(y.float().sum()), lucid.gpu.pending_stats()["fused_calls"])
for _ in range(3):
    z = (x * 2 + 1).relu() - x
    lucid.eval(z)
print("graph runs", lucid.gpu.pending_stats()["graph_runs"])
