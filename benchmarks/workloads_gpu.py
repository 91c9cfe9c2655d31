"""GPU rows of the suite (issue 19's targets): the host cost of a tiny op, and the
elementwise kernels at 16M and 256M float32 elements against the device copy ceiling."""

import torch

from common import chain8
from workloads import (ACTIVATIONS, F32, activation_backward, cross_entropy_step, inputs, logits_for_grad, randint,
                       to_lucid, with_grad, workload)


def _tiny_gpu(requires_grad):
    def setup():
        import lucid
        import torch
        return ((lucid.tensor([1.0], device="gpu", requires_grad=requires_grad),),
                (torch.tensor([1.0], device="cuda", requires_grad=requires_grad),))
    return setup


workload("GPU tiny: 1-element add (host time)", "gpu overhead", _tiny_gpu(False), lambda m, a: a + a, device="gpu",
         materialise=False)
workload("GPU tiny: 1-element add * 2, recorded for autograd", "gpu overhead", _tiny_gpu(True),
         lambda m, a: (a + a) * 2.0, ops=2, device="gpu", materialise=False)


def _chain(m, a):
    for _ in range(100):
        a = a + 1.0
    return a


# 100 dependent ops per call: the host cost per op when nothing waits in between (lucid
# records them; issue 22's target is 2 us an op)
workload("GPU tiny: 100 chained 1-element adds (host time per 100 ops)", "gpu overhead", _tiny_gpu(False), _chain,
         ops=100, device="gpu", materialise=False)

for n, label in ((1 << 24, "16M"), (1 << 28, "256M")):
    shape = (n // 4096, 4096)
    nb = n * F32
    workload(f"GPU add {label} float32", "gpu elementwise", inputs(shape, shape, device="gpu"),
             lambda m, a, b: a + b, nbytes=3 * nb, device="gpu", ceiling="gpu_copy")
    workload(f"GPU mul by a number {label} float32", "gpu elementwise", inputs(shape, device="gpu"),
             lambda m, a: a * 1.5, nbytes=2 * nb, device="gpu", ceiling="gpu_copy")
    workload(f"GPU exp {label} float32", "gpu elementwise", inputs(shape, device="gpu"),
             lambda m, a: m.exp(a), nbytes=2 * nb, device="gpu", ceiling="gpu_copy")
    workload(f"GPU sigmoid {label} float32", "gpu elementwise", inputs(shape, device="gpu"),
             lambda m, a: m.sigmoid(a), nbytes=2 * nb, device="gpu", ceiling="gpu_copy")

for op, f in ACTIVATIONS.items():
    workload(f"GPU {op} 16M float32", "gpu elementwise", inputs((4096, 4096), device="gpu"), f,
             nbytes=2 * (1 << 24) * F32, device="gpu", ceiling="gpu_copy")
    workload(f"GPU {op} backward 16M float32 (forward + backward)", "gpu elementwise",
             with_grad(inputs((4096, 4096), (4096, 4096), device="gpu")), activation_backward(f),
             nbytes=5 * (1 << 24) * F32, device="gpu", ceiling="gpu_copy")

# issue 22's fusion row (common.chain8)
workload("GPU chain of 8 elementwise ops 16M float32 (effective bytes)", "gpu elementwise",
         inputs((4096, 4096), device="gpu"), chain8, nbytes=2 * (1 << 24) * F32, ops=8, device="gpu",
         ceiling="gpu_copy")


def _compiled(fn):
    compiled = None

    def run(m, *args):  # torch.compile'd on first use (the suite's warm-up pays the compile)
        nonlocal compiled
        compiled = compiled or torch.compile(lambda *a: fn(torch, *a))
        return compiled(*args)
    return run


# the same row against torch.compile (issue 22: at least 1x its speed; lucid's side is
# plain eager code, fused at its flushes)
workload("GPU chain of 8 elementwise ops 16M float32 against torch.compile (effective bytes)", "gpu elementwise",
         inputs((4096, 4096), device="gpu"), chain8, nbytes=2 * (1 << 24) * F32, ops=8, device="gpu",
         ceiling="gpu_copy", torch_fn=_compiled(chain8))

G = 1 << 24
workload("GPU add of a row (x + bias) [4096, 4096]", "gpu elementwise",
         inputs((4096, 4096), (4096,), device="gpu"), lambda m, a, b: a + b, nbytes=2 * G * F32 + 4096 * F32,
         device="gpu", ceiling="gpu_copy")
workload("GPU add, transposed operand [4096, 4096]", "gpu elementwise",
         inputs((4096, 4096), (4096, 4096), device="gpu", view=lambda a, b: (a, b.t())),
         lambda m, a, b: a + b, nbytes=3 * G * F32, device="gpu", ceiling="gpu_copy")
workload("GPU add bfloat16 16M", "gpu elementwise",
         inputs((4096, 4096), (4096, 4096), device="gpu", view=lambda a, b: (a.bfloat16(), b.bfloat16())),
         lambda m, a, b: a + b, nbytes=3 * G * 2, device="gpu", ceiling="gpu_copy")
workload("GPU cast float32 -> bfloat16 16M", "gpu elementwise", inputs((4096, 4096), device="gpu"),
         lambda m, a: a.bfloat16(), nbytes=G * (F32 + 2), device="gpu", ceiling="gpu_copy")
workload("GPU where [4096, 4096]", "gpu elementwise",
         inputs((4096, 4096), (4096, 4096), device="gpu"), lambda m, a, b: m.where(a > 0, a, b),
         nbytes=G * (4 * F32 + 2), ops=1, device="gpu", ceiling="gpu_copy")



# a chain with operands broadcast over the batch: a bias row and a [B, 1] column, read
# through their views inside one fused kernel (Note [Elementwise fusion], "Operands");
# effective bytes: x read once, the result written once
def _bias_chain(m, x, b, s):
    return m.tanh(x + b) * s + x


_BC_IN = inputs((8192, 4096), (4096,), (8192, 1), device="gpu")
workload("GPU chain with a broadcast row and column [8192, 4096] (effective bytes)", "gpu elementwise", _BC_IN,
         _bias_chain, nbytes=2 * 2 * G * F32, ops=4, device="gpu", ceiling="gpu_copy")
workload("GPU chain with a broadcast row and column [8192, 4096] against torch.compile (effective bytes)",
         "gpu elementwise", _BC_IN, _bias_chain, nbytes=2 * 2 * G * F32, ops=4, device="gpu", ceiling="gpu_copy",
         torch_fn=_compiled(_bias_chain))

# -- reductions and softmax (issue 19's targets) --
R = 8192
RB = R * R * F32
for label, fn in (("sum", lambda m, x: x.sum()), ("sum dim=0", lambda m, x: x.sum(0)),
                  ("sum dim=1", lambda m, x: x.sum(1)), ("mean dim=1", lambda m, x: x.mean(1)),
                  ("max", lambda m, x: x.max()), ("max dim=0", lambda m, x: x.amax(0)),
                  ("max dim=1", lambda m, x: x.amax(1)), ("argmax", lambda m, x: x.argmax()),
                  ("argmax dim=0", lambda m, x: x.argmax(0)), ("argmax dim=1", lambda m, x: x.argmax(1))):
    workload(f"GPU {label} [{R}, {R}]", "gpu reduce", inputs((R, R), device="gpu"), fn, nbytes=RB, device="gpu",
             ceiling="gpu_copy")

for shape in ((4096, 4096), (16384, 1024), (64, 1000)):
    nb = 2 * shape[0] * shape[1] * F32
    workload(f"GPU softmax {list(shape)}", "gpu softmax", inputs(shape, device="gpu"),
             lambda m, x: m.softmax(x, 1), nbytes=nb, device="gpu", ceiling="gpu_copy")
    workload(f"GPU log_softmax {list(shape)}", "gpu softmax", inputs(shape, device="gpu"),
             lambda m, x: m.log_softmax(x, 1), nbytes=nb, device="gpu", ceiling="gpu_copy")


# attention's probabilities under bfloat16 autocast, written out: the scores cast up and
# scaled, the softmax, the cast down for the product with v; one kernel when fused (Note
# [Fused norm rows]), reading 2 bytes an element and writing 2. Against torch eager and
# torch.compile (one Triton kernel). 2 x 16 heads of 1024 x 1024 scores: past 1 GiB of
# recorded intermediates (8 x 16) a flush would split the chain (kMaxPendingBytes).
SM = (2 * 16 * 1024, 1024)


def _scaled_softmax(m, s):
    return m.softmax(s.float() * 0.125, -1).bfloat16()


_SM_IN = inputs(SM, device="gpu", view=lambda s: (s.bfloat16(),))
workload(f"GPU scaled softmax bfloat16 -> float32 -> bfloat16 {list(SM)}", "gpu softmax", _SM_IN, _scaled_softmax,
         nbytes=4 * SM[0] * SM[1], device="gpu", ceiling="gpu_copy")
workload(f"GPU scaled softmax bfloat16 -> float32 -> bfloat16 {list(SM)} against torch.compile", "gpu softmax",
         _SM_IN, _scaled_softmax, nbytes=4 * SM[0] * SM[1], device="gpu", ceiling="gpu_copy",
         torch_fn=_compiled(_scaled_softmax))

# attention's scores scaled and masked by a causal [T, T] mask broadcast over batch and
# heads, then the softmax: one kernel when fused, the mask read through its view (Note
# [Fused norm rows]); effective bytes: the scores read once, the probabilities written once
MS = (2, 16, 1024, 1024)


def _masked_softmax(m, s, mask):
    return m.softmax(s * 0.125 + mask, -1)


_MS_IN = inputs(MS, MS[-2:], device="gpu")
workload(f"GPU masked scaled softmax {list(MS)}, mask {list(MS[-2:])}", "gpu softmax", _MS_IN, _masked_softmax,
         nbytes=2 * 4 * MS[0] * MS[1] * MS[2] * MS[3], device="gpu", ceiling="gpu_copy")
workload(f"GPU masked scaled softmax {list(MS)}, mask {list(MS[-2:])} against torch.compile", "gpu softmax",
         _MS_IN, _masked_softmax, nbytes=2 * 4 * MS[0] * MS[1] * MS[2] * MS[3], device="gpu", ceiling="gpu_copy",
         torch_fn=_compiled(_masked_softmax))

# the hand-written RMS statistic of LLaMA-style code over bfloat16 activations: cast up,
# square, mean over the last dim; one kernel when fused (Note [Fused norm rows], "Row
# reductions"); effective bytes: x read once in 16 bits
RS = (16384, 4096)


def _rms_statistic(m, x):
    return (x.float() ** 2).mean(-1, keepdim=True)


_RS_IN = inputs(RS, device="gpu", view=lambda x: (x.bfloat16(),))
workload(f"GPU RMS statistic (x.float() ** 2).mean(-1) bfloat16 {list(RS)}", "gpu reduce", _RS_IN, _rms_statistic,
         nbytes=2 * RS[0] * RS[1], device="gpu", ceiling="gpu_copy")
workload(f"GPU RMS statistic (x.float() ** 2).mean(-1) bfloat16 {list(RS)} against torch.compile", "gpu reduce",
         _RS_IN, _rms_statistic, nbytes=2 * RS[0] * RS[1], device="gpu", ceiling="gpu_copy",
         torch_fn=_compiled(_rms_statistic))

# -- matrix products through cuBLASLt (issue 19's targets) --
workload("GPU matmul float32 1024", "gpu matmul", inputs((1024, 1024), (1024, 1024), device="gpu"),
         lambda m, a, b: a @ b, flops=2 * 1024 ** 3, device="gpu", ceiling="none")
workload("GPU matmul bfloat16 8192", "gpu matmul",
         inputs((8192, 8192), (8192, 8192), device="gpu", view=lambda a, b: (a.bfloat16(), b.bfloat16())),
         lambda m, a, b: a @ b, flops=2 * 8192 ** 3, device="gpu", ceiling="none")
workload("GPU bmm float32 [64, 128, 128]", "gpu matmul", inputs((64, 128, 128), (64, 128, 128), device="gpu"),
         lambda m, a, b: a @ b, flops=64 * 2 * 128 ** 3, device="gpu", ceiling="none")


# issue 22's activation epilogue (docs/GPU_LAZY.md, Note [Product epilogues]): a float32 linear layer and its relu,
# one cuBLASLt product with the RELU_BIAS epilogue at lucid's flush; torch eager runs two kernels
def _linear_relu(m, x, w, b):
    return m.nn.functional.relu(m.nn.functional.linear(x, w, b))


LR_IN = inputs((8192, 1024), (1024, 1024), (1024,), device="gpu")
workload("GPU linear + relu float32 [8192, 1024] -> 1024", "gpu matmul", LR_IN, _linear_relu,
         flops=2 * 8192 * 1024 ** 2, device="gpu", ceiling="none")
workload("GPU linear + relu float32 [8192, 1024] -> 1024 against torch.compile", "gpu matmul", LR_IN, _linear_relu,
         flops=2 * 8192 * 1024 ** 2, device="gpu", ceiling="none", torch_fn=_compiled(_linear_relu))

# -- indexing (issue 19's targets): rows of a [1M, 64] float32 table by 256K int64 indices --
T, D, K = 1 << 20, 64, 1 << 18
rows = K * D * F32
workload("GPU gather dim=0 [256K, 64] from [1M, 64]", "gpu index",
         inputs((T, D), lambda g: torch.randint(0, T, (K, 1), generator=g).expand(K, D).contiguous(), device="gpu"),
         lambda m, x, i: m.gather(x, 0, i), nbytes=2 * rows + K * D * 8, device="gpu", ceiling="gpu_copy")
workload("GPU index_select 256K rows of [1M, 64]", "gpu index",
         inputs((T, D), randint(T, K), device="gpu"), lambda m, x, i: m.index_select(x, 0, i),
         nbytes=2 * rows + K * 8, device="gpu", ceiling="gpu_copy")
workload("GPU x[idx] 256K rows of [1M, 64]", "gpu index",
         inputs((T, D), randint(T, K), device="gpu"), lambda m, x, i: x[i],
         nbytes=2 * rows + K * 8, device="gpu", ceiling="gpu_copy")
S = 1 << 16  # scatter_add: 256K source rows summed into 64K rows (out of place: a copy of self, then atomics)
workload("GPU scatter_add 256K rows into [64K, 64]", "gpu index",
         inputs((S, D), lambda g: torch.randint(0, S, (K, 1), generator=g).expand(K, D).contiguous(), (K, D),
                device="gpu"),
         lambda m, x, i, s: m.scatter_add(x, 0, i, s), nbytes=2 * S * D * F32 + rows + K * D * 8 + rows,
         device="gpu", ceiling="gpu_copy")

# -- the layers of a training step (cuDNN convolutions, the norm, pool and loss kernels,
# the fused optimizer step): the families issue 20 trains with --
CONV_X, CONV_W = (32, 64, 56, 56), (64, 64, 3, 3)


def _exact(setup):
    """lucid's float32 convolutions are exact unless TF32 is allowed; torch's cuDNN takes
    TF32 by default (torch.backends.cudnn.allow_tf32): both exact here, the same computation."""
    def exact_setup():
        torch.backends.cudnn.allow_tf32 = False
        return setup()
    return exact_setup


conv_flops = 2 * 32 * 64 * 56 * 56 * 64 * 9
workload("GPU conv2d 3x3 [32, 64, 56, 56]", "gpu nn", _exact(inputs(CONV_X, CONV_W, device="gpu")),
         lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1), flops=conv_flops, device="gpu", ceiling="none")


def _conv_train(m, x, w):
    y = m.nn.functional.conv2d(x, w, padding=1)
    y.backward(y)
    return w.grad


workload("GPU conv2d 3x3 [32, 64, 56, 56] forward + backward", "gpu nn",
         _exact(inputs(CONV_X, CONV_W, device="gpu", view=lambda x, w: (x.requires_grad_(), w.requires_grad_()))),
         _conv_train, flops=3 * conv_flops, device="gpu", ceiling="none")
act = 32 * 64 * 56 * 56 * F32
workload("GPU batch_norm training [32, 64, 56, 56]", "gpu nn", inputs(CONV_X, (64,), (64,), device="gpu"),
         lambda m, x, w, b: m.nn.functional.batch_norm(x, None, None, w, b, training=True),
         nbytes=3 * act, device="gpu", ceiling="gpu_copy")
workload("GPU max_pool2d 3x3/2 [32, 64, 56, 56]", "gpu nn", inputs(CONV_X, device="gpu"),
         lambda m, x: m.nn.functional.max_pool2d(x, 3, 2, 1), nbytes=act * 5 // 4, device="gpu", ceiling="gpu_copy")
workload("GPU layer_norm [4096, 1024]", "gpu nn", inputs((4096, 1024), (1024,), (1024,), device="gpu"),
         lambda m, x, w, b: m.nn.functional.layer_norm(x, (1024,), w, b),
         nbytes=2 * 4096 * 1024 * F32, device="gpu", ceiling="gpu_copy")


def _layer_norm_step(m, x, w, b, g):
    y = m.nn.functional.layer_norm(x, (x.shape[-1],), w, b)
    y.backward(g)
    x.grad = w.grad = b.grad = None
    return y


# the rows of the big Transformer encoder's layer norms (16 x 1024 tokens of d 1024): forward
# reads x and writes y; backward reads g and x and writes dx, then reads both again for the
# affine gradients
LN = (16384, 1024)
workload(f"GPU layer_norm {list(LN)}", "gpu nn", inputs(LN, LN[1:], LN[1:], device="gpu"),
         lambda m, x, w, b: m.nn.functional.layer_norm(x, LN[1:], w, b),
         nbytes=2 * LN[0] * LN[1] * F32, device="gpu", ceiling="gpu_copy")
workload(f"GPU layer_norm {list(LN)} forward + backward", "gpu nn",
         inputs(LN, LN[1:], LN[1:], LN, device="gpu",
                view=lambda x, w, b, g: (x.requires_grad_(), w.requires_grad_(), b.requires_grad_(), g)),
         _layer_norm_step, nbytes=7 * LN[0] * LN[1] * F32, device="gpu", ceiling="gpu_copy")
# a pre-norm Transformer block's residual stream under bfloat16 autocast: the residual add
# (bf16), the cast up for the norm, the norm and the cast down for the next product; one
# kernel when fused (Note [Fused norm rows]), reading 4 bytes an element and writing 2
workload(f"GPU residual add + layer_norm + bfloat16 cast {list(LN)}", "gpu nn",
         inputs(LN, LN, LN[1:], LN[1:], device="gpu", view=lambda a, h, w, b: (a.bfloat16(), h.bfloat16(), w, b)),
         lambda m, a, h, w, b: m.nn.functional.layer_norm((a + h).float(), LN[1:], w, b).bfloat16(),
         nbytes=6 * LN[0] * LN[1], device="gpu", ceiling="gpu_copy")
workload("GPU cross_entropy [4096, 1000]", "gpu nn", inputs((4096, 1000), randint(1000, 4096), device="gpu"),
         lambda m, x, t: m.nn.functional.cross_entropy(x, t), nbytes=4096 * 1000 * F32, device="gpu",
         ceiling="gpu_copy")
workload("GPU cross_entropy [4096, 1000] forward + backward", "gpu nn",
         inputs((4096, 1000), randint(1000, 4096), device="gpu", view=logits_for_grad), cross_entropy_step,
         nbytes=3 * 4096 * 1000 * F32, device="gpu", ceiling="gpu_copy")

ADAM_SHAPES = [(4096, 1024)] * 4 + [(1024,)] * 16
ADAM_PARAMS = 4 * 4096 * 1024 + 16 * 1024  # 16.8M in 20 tensors


def _adam_setup():
    import lucid
    gen = torch.Generator().manual_seed(0)
    ts = [torch.randn(*s, generator=gen) for s in ADAM_SHAPES]
    tp = [t.cuda().requires_grad_() for t in ts]
    lp = [to_lucid(t, "gpu").requires_grad_() for t in ts]
    for p in tp + lp:
        p.grad = p.detach() * 0.01
    return (lucid.optim.Adam(lp, lr=1e-3),), (torch.optim.Adam(tp, lr=1e-3),)


# 7 passes over the parameters: p, grad, exp_avg, exp_avg_sq read; p and both moments written
workload("GPU Adam step, 16.8M parameters in 20 tensors", "gpu nn", _adam_setup, lambda m, opt: opt.step(),
         nbytes=ADAM_PARAMS * F32 * 7, device="gpu", ceiling="gpu_copy")
