"""GPU training rows (issue 20's targets): convolutions forward + backward, whole
training steps of an MLP, the main job's CNN, an LSTM and two Transformer encoders
(one in bfloat16 autocast), scaled_dot_product_attention, and the Adam step against torch's fused
one. Each side runs the same code (m = lucid or torch) on the same weights: the torch
model is built, then its state_dict is loaded into lucid's twin. A step is forward,
loss, backward and the optimizer's step (torch's default implementation, which on CUDA
is its multi-tensor "foreach" step), gradients set to None.

The peak GPU memory of the big Transformer step is measured by bench_gpu_memory.py."""

import os
import sys

import torch

import lucid

from workloads import F32, inputs, to_lucid, workload
from workloads_gpu import _exact  # float32 convolutions exact on both sides

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import train_fashion_mnist as main_job  # noqa: E402


# -- conv2d 3x3 64 -> 64 on 56x56, forward + both gradients --
C, HW = 64, 56


def _conv_step(m, x, w):
    y = m.nn.functional.conv2d(x, w, padding=1)
    y.backward(y)
    x.grad = w.grad = None
    return y


def _as(t, dtype):
    """`t` (lucid or torch) cast to the dtype named `dtype` of its own framework."""
    return t.to(getattr(torch if isinstance(t, torch.Tensor) else lucid, dtype))


for n in (8, 64):
    for dtype in ("float32", "bfloat16"):
        setup = inputs((n, C, HW, HW), (C, C, 3, 3), device="gpu", view=lambda x, w, dtype=dtype: (
            _as(x, dtype).requires_grad_(), _as(w, dtype).requires_grad_()))
        workload(f"GPU conv2d 3x3 {C}->{C} {HW}x{HW} batch {n} {dtype} forward + backward", "gpu train",
                 _exact(setup) if dtype == "float32" else setup, _conv_step,
                 flops=3 * 2 * n * C * C * 9 * HW * HW, device="gpu", ceiling="none")


# the same in channels-last memory (input and weight), where cuDNN's tensor-core kernels
# work without transposing
for n in (8, 64):
    setup = inputs((n, C, HW, HW), (C, C, 3, 3), device="gpu", view=lambda x, w: tuple(
        _as(t, "bfloat16").contiguous(memory_format=(torch if isinstance(t, torch.Tensor) else lucid).channels_last)
        .requires_grad_() for t in (x, w)))
    workload(f"GPU conv2d 3x3 {C}->{C} {HW}x{HW} batch {n} bfloat16 channels_last forward + backward", "gpu train",
             setup, _conv_step, flops=3 * 2 * n * C * C * 9 * HW * HW, device="gpu", ceiling="none")


# -- whole training steps --

def _model_setup(build, *shapes, opt="Adam", lr=1e-3, make_inputs=None, torch_compile=None):
    """A setup: torch's model from build(torch) on the GPU, lucid's from build(lucid) with
    torch's weights, each with its optimizer; inputs from `make_inputs(gen)` (torch
    tensors) or float32 randn of `shapes`. torch_compile: a torch.compile mode for
    torch's model (its optimizer stays eager)."""
    def setup():
        torch.manual_seed(0)
        tm = build(torch).cuda()
        lm = build(lucid)
        lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
        lm = lm.to("gpu")
        gen = torch.Generator().manual_seed(0)
        xs = make_inputs(gen) if make_inputs else [torch.randn(*s, generator=gen) for s in shapes]
        topt = getattr(torch.optim, opt)(tm.parameters(), lr=lr)
        lopt = getattr(lucid.optim, opt)(lm.parameters(), lr=lr)
        if torch_compile:
            tm = torch.compile(tm, mode=torch_compile)
        return (lm, lopt, *[to_lucid(x, "gpu") for x in xs]), (tm, topt, *[x.cuda() for x in xs])
    return setup


def _classifier_step(m, model, opt, x, target):
    loss = m.nn.functional.cross_entropy(model(x), target)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def _squares_step(m, model, opt, x):
    """A sequence model's step: the mean square of its output as the loss."""
    out = model(x)
    out = out[0] if isinstance(out, tuple) else out
    loss = (out * out).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def _mlp(m):
    nn = m.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def _labels(batch, classes, *shape):
    return lambda gen: [torch.randn(batch, *shape, generator=gen), torch.randint(0, classes, (batch,), generator=gen)]


workload("GPU MLP 784-512-512-10 batch 128 training step (Adam)", "gpu train",
         _model_setup(_mlp, make_inputs=_labels(128, 10, 784)), _classifier_step,
         flops=3 * 2 * 128 * (784 * 512 + 512 * 512 + 512 * 10), device="gpu", ceiling="none")


# issue 22's anchor: torch.compile with CUDA graphs ("reduce-overhead"); lucid's side is
# the same plain eager code as the row above
workload("GPU MLP 784-512-512-10 batch 128 training step (Adam) against torch.compile", "gpu train",
         _model_setup(_mlp, make_inputs=_labels(128, 10, 784), torch_compile="reduce-overhead"), _classifier_step,
         flops=3 * 2 * 128 * (784 * 512 + 512 * 512 + 512 * 10), device="gpu", ceiling="none")


def _compiled_setup(build, make_inputs, torch_compile="reduce-overhead", loss_fn=None):
    """_model_setup's, with lucid's step compiled by lucid.compile.fused_step (forward,
    loss, backward and update as one compiled call) and torch's model by torch.compile."""
    plain = _model_setup(build, make_inputs=make_inputs, torch_compile=torch_compile)

    def setup():
        (lm, lopt, *lx), torch_side = plain()
        loss = loss_fn or (lucid.nn.functional.cross_entropy if len(lx) == 2 else _mean_square)
        return (lucid.compile.fused_step(lm, loss, lopt), *lx), torch_side
    return setup


def _mean_square(out):
    out = out[0] if isinstance(out, tuple) else out
    return (out * out).mean()


def _compiled_classifier_step(m, *args):
    if m is lucid:
        step, x, target = args
        return step(x, target)
    return _classifier_step(m, *args)


def _compiled_squares_step(m, *args):
    if m is lucid:
        step, x = args
        return step(x)
    return _squares_step(m, *args)


# issue 22: lucid.compile's step against torch.compile's (CUDA graphs, "reduce-overhead")
workload("GPU MLP 784-512-512-10 batch 128 training step (Adam) lucid.compile against torch.compile", "gpu train",
         _compiled_setup(_mlp, _labels(128, 10, 784)), _compiled_classifier_step,
         flops=3 * 2 * 128 * (784 * 512 + 512 * 512 + 512 * 10), device="gpu", ceiling="none")
workload("GPU MLP 784-512-512-10 batch 8192 training step (Adam) lucid.compile against torch.compile", "gpu train",
         _compiled_setup(_mlp, _labels(8192, 10, 784)), _compiled_classifier_step,
         flops=3 * 2 * 8192 * (784 * 512 + 512 * 512 + 512 * 10), device="gpu", ceiling="none")


def _cnn(m):
    """The main job's model, its dropout off: both sides compute the same step."""
    model = main_job.build_model(m)
    model[11].p = 0.0
    return model


workload("GPU main job's CNN batch 64 training step (AdamW)", "gpu train",
         _model_setup(_cnn, opt="AdamW", make_inputs=_labels(64, 10, 1, 28, 28)),
         _classifier_step, flops=3 * 2 * 64 * (32 * 9 * 28 * 28 + 64 * 32 * 9 * 14 * 14 + 3136 * 128 + 1280),
         device="gpu", ceiling="none")

T, B, HID = 64, 32, 256
workload(f"GPU LSTM 2x{HID} seq {T} batch {B} training step (Adam)", "gpu train",
         _model_setup(lambda m: m.nn.LSTM(HID, HID, num_layers=2), (T, B, HID)), _squares_step,
         flops=3 * 2 * T * 2 * B * 4 * HID * (HID + HID), device="gpu", ceiling="none")


def _encoder(layers, d, heads, ff):
    def build(m):
        layer = m.nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
        kw = {"enable_nested_tensor": False} if m is torch else {}
        return m.nn.TransformerEncoder(layer, layers, **kw)
    return build


def _encoder_flops(layers, batch, seq, d, ff):
    return 3 * 2 * layers * batch * seq * (4 * d * d + 2 * d * ff + 2 * seq * d)


workload("GPU Transformer encoder 2 layers d256 seq 128 batch 8 training step (Adam)", "gpu train",
         _model_setup(_encoder(2, 256, 4, 1024), (8, 128, 256)), _squares_step,
         flops=_encoder_flops(2, 8, 128, 256, 1024), device="gpu", ceiling="none")


workload("GPU Transformer encoder 2 layers d256 seq 128 batch 8 training step (Adam) lucid.compile against "
         "torch.compile", "gpu train",
         _compiled_setup(_encoder(2, 256, 4, 1024), lambda gen: [torch.randn(8, 128, 256, generator=gen)]),
         _compiled_squares_step, flops=_encoder_flops(2, 8, 128, 256, 1024), device="gpu", ceiling="none")


def _autocast_step(m, model, opt, x):
    with m.autocast("cuda" if m is torch else "gpu", dtype=m.bfloat16):
        out = model(x)
        loss = (out.float() * out.float()).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


BIG = dict(layers=4, d=1024, heads=16, ff=4096, seq=1024, batch=16)
workload("GPU Transformer encoder 4 layers d1024 seq 1024 batch 16 bfloat16 autocast training step (Adam)",
         "gpu train", _model_setup(_encoder(BIG["layers"], BIG["d"], BIG["heads"], BIG["ff"]),
                                   (BIG["batch"], BIG["seq"], BIG["d"])),
         _autocast_step, flops=_encoder_flops(BIG["layers"], BIG["batch"], BIG["seq"], BIG["d"], BIG["ff"]),
         device="gpu", ceiling="none")


def _float_mean_square(out):
    return (out.float() * out.float()).mean()


def _compiled_autocast_step(m, *args):
    if m is lucid:
        step, x = args
        with lucid.autocast("gpu", dtype=lucid.bfloat16):
            return step(x)
    return _autocast_step(m, *args)


# issue 22: the big bfloat16 encoder under lucid.compile against torch.compile
workload("GPU Transformer encoder 4 layers d1024 seq 1024 batch 16 bfloat16 autocast training step (Adam) "
         "lucid.compile against torch.compile", "gpu train",
         _compiled_setup(_encoder(BIG["layers"], BIG["d"], BIG["heads"], BIG["ff"]),
                         lambda gen: [torch.randn(BIG["batch"], BIG["seq"], BIG["d"], generator=gen)],
                         loss_fn=_float_mean_square),
         _compiled_autocast_step, flops=_encoder_flops(BIG["layers"], BIG["batch"], BIG["seq"], BIG["d"], BIG["ff"]),
         device="gpu", ceiling="none")


# -- fused attention, bfloat16, forward + backward --
AB, AH, AS, AD = 8, 16, 4096, 128


def _attention(is_causal, dropout_p=0.0):
    def step(m, q, k, v):
        out = m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=is_causal, dropout_p=dropout_p)
        out.backward(out)
        q.grad = k.grad = v.grad = None
        return out
    return step


# forward: 2 products of 2*S*S*D each per head; backward: 5 of them (half of it all when causal);
# dropout inside the kernel (torch: its flash attention's)
for causal, dropout_p in ((False, 0.0), (True, 0.0), (False, 0.1)):
    workload(f"GPU scaled_dot_product_attention bfloat16 [{AB}, {AH}, {AS}, {AD}]"
             f"{' causal' if causal else ''}{f' dropout {dropout_p}' if dropout_p else ''} forward + backward",
             "gpu train",
             inputs(*[(AB, AH, AS, AD)] * 3, device="gpu",
                    view=lambda *qkv: tuple(_as(t, "bfloat16").requires_grad_() for t in qkv)),
             _attention(causal, dropout_p), flops=7 * 2 * AB * AH * AS * AS * AD // (2 if causal else 1),
             device="gpu", ceiling="none")


# -- the Adam step against torch's fastest (fused=True) --

def _adam_setup(shapes):
    def setup():
        gen = torch.Generator().manual_seed(0)
        tp = [torch.randn(*s, generator=gen, device="cpu").cuda().requires_grad_() for s in shapes]
        lp = [to_lucid(t, "gpu").requires_grad_() for t in tp]
        for p in tp + lp:
            p.grad = p.detach() * 0.01
        return (lucid.optim.Adam(lp, lr=1e-3),), (torch.optim.Adam(tp, lr=1e-3, fused=True),)
    return setup


for label, shapes in (("10M", [(2048, 1024)] * 4 + [(1024, 1024)] * 2 + [(1024,)] * 64),
                      ("1B", [(16384, 8192)] * 7 + [(8192, 8192)] + [(8192,)] * 64)):
    numel = sum(torch.Size(s).numel() for s in shapes)
    # 7 passes over the parameters: p, grad, exp_avg, exp_avg_sq read; p and both moments written
    workload(f"GPU Adam step {label} ({numel / 1e6:.0f}M) parameters in {len(shapes)} tensors, torch fused",
             "gpu train", _adam_setup(shapes), lambda m, opt: opt.step(), nbytes=numel * F32 * 7, device="gpu",
             ceiling="gpu_copy")
