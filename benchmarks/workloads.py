"""The benchmark suite's workloads: one registry, read by benchmarks/suite.py.

A workload is a name, a `setup` that builds its inputs (the same values for lucid and
torch), one function `fn(m, *inputs)` run with m = lucid and with m = torch (or a
separate `torch_fn` where the APIs differ), and the work it does: `nbytes` (the least
memory traffic: every input read once, the output written once) or `flops`. The suite
turns those into GB/s or GFLOP/s and a fraction of the machine's measured ceiling.
Inputs are built lazily, one workload at a time, so the suite never holds them all.
"""

from dataclasses import dataclass
from typing import Callable, Optional

import torch

import lucid

from common import CHAIN, chain, chain8, chain_backward

F32 = 4  # bytes


@dataclass
class Workload:
    name: str
    group: str
    setup: Callable  # () -> (lucid inputs, torch inputs), two tuples
    fn: Callable  # fn(m, *inputs), m the module (lucid or torch)
    nbytes: Optional[int] = None
    flops: Optional[int] = None
    ops: int = 1  # times are divided by this (per-op rows)
    device: str = "cpu"  # "gpu": the suite synchronises and adds the row only when both see a GPU
    torch_fn: Optional[Callable] = None
    ceiling: Optional[str] = None  # which measured ceiling; by default "copy" for bytes, "sgemm" for flops
    # waits for the other side's work (default: torch.cuda.synchronize on GPU rows); a row
    # whose other side is JAX blocks on JAX's last result instead (workloads_jax.py)
    other_sync: Optional[Callable] = None
    # GPU rows: each call's work is queued (lucid.gpu.flush) while its results are held. A
    # lazy GPU drops recorded calls whose results nobody holds (Note [Elementwise fusion]),
    # so a batch of calls whose results are thrown away would time their recording only.
    # False for rows that time the host's recording itself.
    materialise: bool = True


REGISTRY = []


def workload(*args, **kwargs):
    REGISTRY.append(Workload(*args, **kwargs))


def to_lucid(t, device="cpu"):
    """A lucid copy of torch tensor `t` (through NumPy, so lucid owns its memory)."""
    out = lucid.from_numpy(t.detach().cpu().contiguous().numpy()).clone()
    return out.to(device) if device != "cpu" else out


def inputs(*makers, view=None, device="cpu"):
    """A setup: each maker is a shape (float32 randn) or a function returning a torch tensor;
    `view(*tensors)` (e.g. a transpose) is applied to both sides after the copy."""
    def setup():
        gen = torch.Generator().manual_seed(0)
        ts = [torch.randn(*m, generator=gen) if isinstance(m, tuple) else m(gen) for m in makers]
        ls = [to_lucid(t, device) for t in ts]
        if device != "cpu":
            ts = [t.cuda() for t in ts]
        if view:
            ts, ls = view(*ts), view(*ls)
        return tuple(ls), tuple(ts)
    return setup


def randint(high, *shape):
    return lambda gen: torch.randint(0, high, shape, generator=gen)


# -- tiny ops: the framework's own per-op cost -------------------------------------------------

def _one(requires_grad):
    def setup():
        return (lucid.tensor([1.0], requires_grad=requires_grad),), (torch.tensor([1.0], requires_grad=requires_grad),)
    return setup


workload("tiny: 1-element add, no autograd", "overhead", _one(False), lambda m, a: a + a)
workload("tiny: 1-element add, recorded for autograd", "overhead", _one(True), lambda m, a: a + a)
workload(f"tiny: {CHAIN} recorded ops + sum + backward, per op", "overhead", _one(True), chain_backward,
         ops=CHAIN + 1)
workload(f"tiny: {CHAIN} recorded ops, forward only, per op", "overhead", _one(True), chain, ops=CHAIN)

# -- elementwise ---------------------------------------------------------------------------------

SIZES = {"1K": (32, 32), "64K": (256, 256), "16M": (4096, 4096)}
BINARY = {"add": lambda m, a, b: a + b, "mul": lambda m, a, b: a * b}
UNARY = {"exp": lambda m, a: m.exp(a), "tanh": lambda m, a: m.tanh(a), "sigmoid": lambda m, a: m.sigmoid(a)}

for label, (r, c) in SIZES.items():
    n = r * c
    for op, f in BINARY.items():
        workload(f"{op} {label} contiguous", "elementwise", inputs((r, c), (r, c)), f, nbytes=3 * n * F32)
        workload(f"{op} {label} broadcast row [1,{c}]", "elementwise", inputs((r, c), (1, c)), f,
                 nbytes=(2 * n + c) * F32)
        workload(f"{op} {label} transposed view + contiguous", "elementwise",
                 inputs((c, r), (r, c), view=lambda a, b: (a.t(), b)), f, nbytes=3 * n * F32)
    for op, f in UNARY.items():
        workload(f"{op} {label} contiguous", "elementwise", inputs((r, c)), f, nbytes=2 * n * F32)
        workload(f"{op} {label} transposed view", "elementwise", inputs((c, r), view=lambda a: (a.t(),)), f,
                 nbytes=2 * n * F32)

# The fused activations (ops/activation_functors.h): one pass forward, one backward (the
# backward reads g and x, writes dx).
ACTIVATIONS = {"gelu": lambda m, x: m.nn.functional.gelu(x),
               "gelu tanh": lambda m, x: m.nn.functional.gelu(x, approximate="tanh"),
               "silu": lambda m, x: m.nn.functional.silu(x),
               "hardswish": lambda m, x: m.nn.functional.hardswish(x),
               "softplus": lambda m, x: m.nn.functional.softplus(x),
               "logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x),
               "mish": lambda m, x: m.nn.functional.mish(x)}


def with_grad(setup):
    """`setup`, its first input requiring grad on both sides."""
    def grad_setup():
        ls, ts = setup()
        return (ls[0].requires_grad_(),) + ls[1:], (ts[0].requires_grad_(),) + ts[1:]
    return grad_setup


def activation_backward(act):
    return lambda m, x, g: m.autograd.grad(act(m, x), x, g)[0]


for op, f in ACTIVATIONS.items():
    workload(f"{op} 16M float32", "activation", inputs((4096, 4096)), f, nbytes=2 * (1 << 24) * F32)
    workload(f"{op} backward 16M float32 (forward + backward)", "activation",
             with_grad(inputs((4096, 4096), (4096, 4096))), activation_backward(f), nbytes=5 * (1 << 24) * F32)

# issue 22's CPU row: the chain of 8 (common.chain8) under lucid.compile, whose chains run
# block by block in cache (Note [Compiled CPU chains]), against lucid's own eager code (the
# row's other side: the same tensor) and against torch eager.
def _compiled_chain8():
    compiled = lucid.compile(lambda x: chain8(lucid, x))
    return lambda m, x: compiled(x) if m is lucid else chain8(m, x)  # (torch's side: eager)


def _same_lucid_input():
    (x,), _ = inputs((4096, 4096))()
    return (x,), (x,)


workload("chain of 8 elementwise ops 16M float32, lucid.compile against lucid eager (effective bytes)",
         "elementwise", _same_lucid_input, _compiled_chain8(), torch_fn=lambda m, x: chain8(lucid, x),
         nbytes=2 * (1 << 24) * F32, ops=8)
workload("chain of 8 elementwise ops 16M float32, lucid.compile (effective bytes)", "elementwise",
         inputs((4096, 4096)), _compiled_chain8(), nbytes=2 * (1 << 24) * F32, ops=8)
workload("chain of 8 elementwise ops 16M float32, eager (effective bytes)", "elementwise",
         inputs((4096, 4096)), chain8, nbytes=2 * (1 << 24) * F32, ops=8)

# -- reductions on [4096, 4096] -------------------------------------------------------------------

N = 4096
BIG = N * N
REDUCE = {
    "sum": lambda m, x, **k: m.sum(x, **k),
    "mean": lambda m, x, **k: m.mean(x, **k),
    "max": lambda m, x, **k: m.max(x, **k),
    "argmax": lambda m, x, **k: m.argmax(x, **k),
    "var": lambda m, x, **k: m.var(x, **k),
}
for op, f in REDUCE.items():
    workload(f"{op} [4096,4096] full", "reduction", inputs((N, N)), f, nbytes=BIG * F32)
    for d in (0, 1):
        workload(f"{op} [4096,4096] dim={d}", "reduction", inputs((N, N)),
                 lambda m, x, f=f, d=d: f(m, x, dim=d), nbytes=(BIG + N) * F32)

# -- softmax ----------------------------------------------------------------------------------------

for shape in ((N, N), (64, 1000)):
    n, dims = shape[0] * shape[1], f"[{shape[0]},{shape[1]}]"
    workload(f"softmax {dims} dim=-1", "softmax", inputs(shape), lambda m, x: m.softmax(x, dim=-1),
             nbytes=2 * n * F32)
    workload(f"log_softmax {dims} dim=-1", "softmax", inputs(shape),
             lambda m, x: m.log_softmax(x, dim=-1), nbytes=2 * n * F32)

# -- matrix products (float32) --------------------------------------------------------------------------

for n in (256, 512, 1024, 2048):
    workload(f"matmul {n}x{n} @ {n}x{n}", "matmul", inputs((n, n), (n, n)), lambda m, a, b: a @ b,
             flops=2 * n ** 3)
workload("matmul skinny [8192,64] @ [64,8192]", "matmul", inputs((8192, 64), (64, 8192)), lambda m, a, b: a @ b,
         flops=2 * 8192 * 64 * 8192)
workload("matmul skinny [64,8192] @ [8192,64]", "matmul", inputs((64, 8192), (8192, 64)), lambda m, a, b: a @ b,
         flops=2 * 64 * 8192 * 64)
workload("matmul batched [64,128,128] @ [64,128,128]", "matmul", inputs((64, 128, 128), (64, 128, 128)),
         lambda m, a, b: a @ b, flops=2 * 64 * 128 ** 3)

# -- cat and indexing -------------------------------------------------------------------------------------

H = N // 2
workload("cat 2x[2048,4096] dim=0", "index", inputs((H, N), (H, N)), lambda m, a, b: m.cat([a, b], dim=0),
         nbytes=2 * BIG * F32)
workload("cat 2x[4096,2048] dim=1", "index", inputs((N, H), (N, H)), lambda m, a, b: m.cat([a, b], dim=1),
         nbytes=2 * BIG * F32)
workload("gather [4096,4096] dim=1, index [4096,1024]", "index", inputs((N, N), randint(N, N, 1024)),
         lambda m, x, i: m.gather(x, 1, i), nbytes=N * 1024 * (8 + 2 * F32))
workload("index_select [4096,4096] dim=0, 2048 rows", "index", inputs((N, N), randint(N, H)),
         lambda m, x, i: m.index_select(x, 0, i), nbytes=H * 8 + 2 * H * N * F32)
workload("x[idx] [4096,4096], idx 2048 rows", "index", inputs((N, N), randint(N, H)),
         lambda m, x, i: x[i], nbytes=H * 8 + 2 * H * N * F32)

# -- an MLP training step: 784 -> 1024 -> relu -> 10, log_softmax + NLL, manual SGD --------------------------

B, D, HID, K = 256, 784, 1024, 10


def _mlp_setup():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(B, D, generator=gen)
    onehot = torch.nn.functional.one_hot(torch.randint(0, K, (B,), generator=gen), K).float()
    params = [torch.randn(D, HID, generator=gen) * D ** -0.5, torch.zeros(HID),
              torch.randn(HID, K, generator=gen) * HID ** -0.5, torch.zeros(K)]
    ls = [to_lucid(t) for t in [x, onehot] + params]
    ts = [x, onehot] + [p.clone() for p in params]
    for p in ls[2:]:
        p.requires_grad_(True)
    for p in ts[2:]:
        p.requires_grad_(True)
    return tuple(ls), tuple(ts)


def mlp_step(m, x, onehot, w1, b1, w2, b2, lr=0.01):
    """One SGD step; the same code for lucid and torch (no nn modules: lucid has none yet)."""
    h = m.relu(m.matmul(x, w1) + b1)
    logits = m.matmul(h, w2) + b2
    loss = -(m.log_softmax(logits, dim=1) * onehot).sum() / x.shape[0]
    loss.backward()
    with m.no_grad():
        for p in (w1, b1, w2, b2):
            p.sub_(p.grad * lr)
            p.grad = None
    return loss


# forward 2*B*(D*HID + HID*K); backward: both weight gradients and the hidden layer's input gradient
workload(f"MLP training step [{B},{D}] -> {HID} -> {K}", "training", _mlp_setup, mlp_step,
         flops=2 * B * (2 * D * HID + 3 * HID * K))



def cross_entropy_step(m, x, t):
    """A classifier's loss and its gradient (one engine op each way in lucid)."""
    loss = m.nn.functional.cross_entropy(x, t)
    loss.backward()
    x.grad = None
    return loss


def logits_for_grad(x, t):
    return x.requires_grad_(), t


# reads the logits forward and backward, writes their gradient
workload("cross_entropy [4096, 1000] forward + backward", "training",
         inputs((4096, 1000), randint(1000, 4096), view=logits_for_grad), cross_entropy_step,
         nbytes=3 * 4096 * 1000 * F32)

# -- GPU copies (the ops are in workloads_gpu.py) ---------------------------------------------------------------

G = 8192  # 256 MiB of float32
GB = G * G * F32
workload(f"GPU clone() {G}x{G}", "gpu", inputs((G, G), device="gpu"), lambda m, x: x.clone(), nbytes=2 * GB,
         device="gpu", ceiling="gpu_copy")
workload(f"GPU contiguous() of transposed {G}x{G}", "gpu", inputs((G, G), device="gpu", view=lambda x: (x.t(),)),
         lambda m, x: x.contiguous(), nbytes=2 * GB, device="gpu", ceiling="gpu_copy")
workload(f"H2D {GB >> 20} MiB pageable", "gpu", inputs((G, G)), lambda m, x: x.to("gpu"), nbytes=GB,
         device="gpu", torch_fn=lambda m, x: x.to("cuda"), ceiling="h2d")
workload(f"D2H {GB >> 20} MiB pageable", "gpu", inputs((G, G), device="gpu"), lambda m, x: x.cpu(), nbytes=GB,
         device="gpu", ceiling="h2d")
import workloads_norm  # noqa: E402,F401
import workloads_seq  # noqa
import workloads_resample  # noqa
import workloads_conv  # noqa
import workloads_conv_small  # noqa
import workloads_optim  # noqa
import workloads_gpu  # noqa
import workloads_train_gpu  # noqa
import workloads_linalg  # noqa
import workloads_fft  # noqa
import workloads_sort  # noqa
import workloads_sparse  # noqa
import workloads_jax  # noqa
