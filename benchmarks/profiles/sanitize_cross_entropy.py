"""The cross entropy's kernels (backend/cuda/cross_entropy.cu) under compute-sanitizer
(memcheck, racecheck): each of the three forward forms (a warp a row up to 1024 classes,
a block a row beyond, a thread a row for [N, C, d...] and for nll_loss), the Sum/Mean
last block and the backward, in each dtype and reduction, with weights, ignored rows, label
smoothing, ragged sizes, an empty batch and a bad target (reported, then the device
keeps working). Run on a GPU machine:
compute-sanitizer --tool memcheck python3 benchmarks/profiles/sanitize_cross_entropy.py
compute-sanitizer --tool racecheck python3 benchmarks/profiles/sanitize_cross_entropy.py"""
import lucid

F = lucid.nn.functional
lucid.manual_seed(0)
# (700, 3) and (2, 3, 300): many blocks, whose last sums the rows (Note [The last block's ticket])
for shape in ((0, 5), (1, 1), (37, 10), (700, 3), (9, 1023), (5, 1025), (3, 5000), (4, 7, 3), (2, 3, 5, 4),
              (2, 3, 300)):
    for dt in (lucid.float32, lucid.float64, lucid.float16, lucid.bfloat16):
        x = lucid.randn(*shape, device="gpu").to(dt).requires_grad_()
        t = lucid.randint(0, shape[1], (shape[0],) + shape[2:], device="gpu")
        if t.numel() > 2:
            t.view(-1)[::3] = -100
        w = lucid.rand(shape[1], device="gpu").to(dt) + 0.5
        for red in ("none", "sum", "mean"):
            for fn, kw in ((F.cross_entropy, {}), (F.cross_entropy, {"weight": w, "label_smoothing": 0.1}),
                           (F.nll_loss, {"weight": w})):
                loss = fn(x, t, reduction=red, **kw)
                loss.float().sum().backward()
        print(shape, dt, float(x.grad.float().abs().sum()))
x = lucid.randn(6, 4, device="gpu")
try:
    F.cross_entropy(x, lucid.tensor([0, 1, 9, 2, 3, 0], device="gpu")).item()
    raise SystemExit("a bad target was not reported")
except IndexError as e:
    print("reported:", e)
print("after the error:", F.cross_entropy(x, lucid.tensor([0, 1, 2, 2, 3, 0], device="gpu")).item())
