"""A linear layer's products with cuBLASLt's epilogues (backend/cuda/gemm.cpp: BIAS in
the forward, BGRADB for the bias's gradient in the backward) under compute-sanitizer,
in each dtype the epilogues take, over ragged shapes, a [1, n] bias, alpha != 1 and
an empty batch; then checks the GPU's values against the CPU's. Run on a GPU machine:
compute-sanitizer --tool memcheck python3 benchmarks/profiles/sanitize_linear_bias.py"""
import lucid

F = lucid.nn.functional
lucid.manual_seed(0)
worst = 0.0
for m, k, n in ((1, 1, 1), (7, 3, 5), (33, 17, 1), (128, 784, 512), (3, 1000, 130), (0, 4, 3)):
    for dt in (lucid.float32, lucid.float16, lucid.bfloat16):
        x, w, b = lucid.randn(m, k).to(dt), (lucid.randn(n, k) / k**0.5).to(dt), lucid.randn(n).to(dt)
        grads = {}
        for dev in ("cpu", "gpu"):
            xs, ws, bs = (t.detach().to(dev).requires_grad_() for t in (x, w, b))
            out = F.linear(xs, ws, bs) + lucid.addmm(bs.view(1, n), xs, ws.T, alpha=2.0)
            out.backward(lucid.ones_like(out))
            grads[dev] = [out.detach(), xs.grad, ws.grad, bs.grad]
        for c, g in zip(grads["cpu"], grads["gpu"]):
            if c.numel():
                err = ((c.float() - g.cpu().float()).abs().max() / (c.float().abs().max() + 1)).item()
                worst = max(worst, err if dt == lucid.float32 else err / 100)
lucid.gpu.synchronize()
print(f"worst relative difference from the CPU (16-bit ones / 100): {worst:.2e}")
assert worst < 1e-4, worst
