"""The fused norm and softmax kernels (Note [Fused norm rows]) under compute-sanitizer: a
residual add, layer_norm and cast forward and a scaled dx backward, both row layouts; a
scaled softmax / log_softmax with a cast down, rows in registers, staged and read again;
a softmax whose prologue reads a causal mask and a key mask through their views and
whose epilogue reads a per-head gate; row sums, means, sums of magnitudes, maxima and
minima of a chain, in 16-byte groups and single elements, over fewer rows than blocks
and more; fused and compiled at once.
compute-sanitizer --tool memcheck python3 benchmarks/profiles/sanitize_fused_norm.py"""
import lucid
import lucid.nn.functional as F

lucid.gpu.set_kernel_compile("sync")
lucid.gpu.set_norm_fusion(True)
for n in (1000, 2048):
    a = lucid.randn(33, n, device="gpu").requires_grad_()
    r = lucid.randn(33, n, device="gpu")
    w = lucid.randn(n, device="gpu").requires_grad_()
    for _ in range(2):
        y = F.layer_norm(a * 2.0 + r, (n,), w, None).to(lucid.bfloat16)
        y.float().square().sum().backward()
        lucid.gpu.synchronize()
for n in (1000, 3000, 20000):
    s = lucid.randn(7, n, device="gpu").to(lucid.bfloat16)
    for f in (lucid.softmax, lucid.log_softmax):
        y = f(s.float() * 0.5, -1).to(lucid.bfloat16)
        lucid.gpu.synchronize()
for t in (37, 1000):
    x = lucid.randn(2, 3, t, t, device="gpu")
    causal = lucid.triu(lucid.full((t, t), float("-inf"), device="gpu"), 1)
    keys = lucid.zeros(2, 1, 1, t, device="gpu")
    gate = lucid.randn(1, 3, 1, 1, device="gpu")
    y = F.softmax(x * 0.125 + causal + keys, -1) * gate
    lucid.gpu.synchronize()
for rows, n in ((3, 1000), (3, 1001), (70000, 8), (5, 4096)):
    for dtype in (lucid.float32, lucid.float64):
        x = lucid.randn(rows, n, device="gpu").to(dtype)
        sums = ((x * 2.0).sum(-1), (x - 1.0).mean(-1), lucid.linalg.vector_norm(x * 3.0, 1, dim=-1),
                (x + 0.5).amax(-1), (x * -1.0).amin(-1))
        lucid.gpu.synchronize()
print(lucid.gpu.generated_kernel_stats())
