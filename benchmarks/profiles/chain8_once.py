"""issue 22's chain of 8 elementwise ops, flushed three times: the fused kernel for ncu
(ncu --clock-control none -k regex:fused_kernel -c 1 python3 benchmarks/profiles/chain8_once.py)."""
import lucid
x = lucid.randn(4096, 4096, device="gpu")
for _ in range(3):
    y = lucid.sin(x * 1.5 + 0.5) * x
    z = lucid.sigmoid(lucid.exp(lucid.tanh(y) - 0.25)) + 1.0
    lucid.eval(z)
lucid.gpu.synchronize()
print(lucid.gpu.pending_stats())
