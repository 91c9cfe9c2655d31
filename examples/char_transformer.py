"""A character-level Transformer language model, trained on the GPL and then sampled.

The text is one that every Debian system ships, /usr/share/common-licenses/GPL-3
(35 KB; --text PATH for another). The model is a small GPT-style decoder built
from PyTorch's modules: a token embedding plus learned position embeddings,
nn.TransformerEncoder (pre-norm layers, GELU) run with a causal mask so position t
sees only positions <= t, a final LayerNorm and an output layer whose weight is
tied to the token embedding (--untied for a separate one). It trains with AdamW
(no weight decay on biases, norms and embeddings) under a linear warm-up then
cosine decay (LinearLR then CosineAnnealingLR in a SequentialLR), reports training
and validation loss in bits per character, and finally samples text from a prompt
with a temperature and top-k filtering.

--device auto trains on the GPU when there is one (and says so). Left to their
defaults, the sizes follow the device: on the CPU a small model (d_model 128, 2
layers, 4 heads, 64-character context, batches of 32); on the GPU, which has the
throughput for it, a larger one (d_model 384, 6 layers, 6 heads, 256-character
context, batches of 64). The size options, when given, hold on either device.

    PYTHONPATH=python python examples/char_transformer.py [--device auto]   # CPU: ~2-3 minutes on 2 cores, ~2.7 bpc
    PYTHONPATH=python python examples/char_transformer.py --steps 100 --prompt "The licensee"
"""

import argparse
import math
import sys
import time

import lucid
from _device import pick_device  # examples/_device.py
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR

DEFAULT_TEXT = "/usr/share/common-licenses/GPL-3"
LN2 = math.log(2.0)

# The size options left out on the command line, per device type (see size_defaults).
SIZES = {
    "cpu": {"batch_size": 32, "block_size": 64, "d_model": 128, "heads": 4, "layers": 2},
    "gpu": {"batch_size": 64, "block_size": 256, "d_model": 384, "heads": 6, "layers": 6},
}


# ---- data ------------------------------------------------------------------------------------------
class CharVocab:
    def __init__(self, text):
        self.chars = sorted(set(text))
        self.stoi = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, s):
        unknown = sorted(set(c for c in s if c not in self.stoi))
        if unknown:
            raise ValueError(f"characters {unknown!r} do not occur in the training text")
        return [self.stoi[c] for c in s]

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)


def read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} not found: pass --text PATH, any plain-text file of a few tens of KB "
                                "(Debian's base-files package installs the default)") from None
    if len(text) < 1000:
        raise ValueError(f"{path}: only {len(text)} characters; give a longer text")
    return text


def get_batch(data, block_size, batch_size):
    """batch_size random windows of data: inputs [B, T] and the next characters [B, T],
    on data's device (the offsets are made there too, so the gather runs there)."""
    starts = lucid.randint(0, len(data) - block_size - 1, (batch_size, 1), device=data.device)
    index = starts + lucid.arange(block_size, device=data.device)  # [B, T] by broadcasting
    return data[index], data[index + 1]


# ---- model -----------------------------------------------------------------------------------------
class CharTransformer(nn.Module):
    def __init__(self, vocab_size, block_size=128, d_model=128, nhead=4, num_layers=4, dropout=0.1, tied=True):
        super().__init__()
        self.block_size = block_size
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.dropout = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=4 * d_model, dropout=dropout,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers, norm=nn.LayerNorm(d_model),
                                             enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.apply(self._init_weights)
        if tied:
            self.head.weight = self.token_embedding.weight  # one parameter shared by both layers
        # -inf above the diagonal: position t attends to positions <= t only
        self.register_buffer("causal_mask", nn.Transformer.generate_square_subsequent_mask(block_size),
                             persistent=False)

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)

    def forward(self, idx):
        T = idx.shape[1]
        if T > self.block_size:
            raise ValueError(f"sequence of {T} characters, longer than block_size {self.block_size}")
        x = self.token_embedding(idx) + self.position_embedding(lucid.arange(T, device=idx.device))
        x = self.encoder(self.dropout(x), mask=self.causal_mask[:T, :T], is_causal=True)
        return self.head(x)  # [B, T, vocab] logits


def configure_optimizer(model, lr, weight_decay):
    """AdamW with weight decay on the matrices of the linear layers only (as in nanoGPT)."""
    decay, no_decay = [], []
    embeddings = {id(model.token_embedding.weight), id(model.position_embedding.weight)}
    for p in model.parameters():  # a tied weight is yielded once
        (decay if p.dim() >= 2 and id(p) not in embeddings else no_decay).append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return lucid.optim.AdamW(groups, lr=lr, betas=(0.9, 0.99))


@lucid.no_grad()
def estimate_loss(model, data, block_size, batch_size, batches):
    """Mean cross-entropy over `batches` random batches, in bits per character."""
    model.eval()
    total = 0.0
    for _ in range(batches):
        x, y = get_batch(data, block_size, batch_size)
        logits = model(x)
        total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)).item()
    model.train()
    return total / batches / LN2


# ---- sampling ----------------------------------------------------------------------------------------
def sample_index(probs):
    """One index drawn from the distribution probs [V]."""
    if hasattr(lucid, "multinomial"):
        return int(lucid.multinomial(probs, num_samples=1))
    # lucid has no multinomial yet: invert the cumulative distribution at a uniform draw.
    cdf = probs.cumsum(dim=0)
    u = lucid.rand(1, dtype=cdf.dtype, device=cdf.device) * cdf[-1]
    return min(int((cdf < u).sum()), probs.shape[0] - 1)


def top_k_filter(logits, k):
    """logits [V] with all but the k largest set to -inf."""
    if k is None or k <= 0 or k >= logits.shape[0]:
        return logits
    if hasattr(lucid, "topk"):
        kth = lucid.topk(logits, k).values[-1]
    else:  # no lucid.topk/sort yet: the k-th largest value from Python's sort of the (small) vocabulary
        kth = sorted(logits.tolist(), reverse=True)[k - 1]
    return logits.masked_fill(logits < kth, float("-inf"))


@lucid.no_grad()
def generate(model, vocab, prompt, length, temperature=0.8, top_k=10):
    """`length` new characters continuing `prompt` (the prompt is not included), computed
    on the model's device."""
    model.eval()
    device = next(model.parameters()).device
    ids = vocab.encode(prompt) or [0]
    out = []
    for _ in range(length):
        context = lucid.tensor([ids[-model.block_size:]], device=device)
        logits = model(context)[0, -1] / max(temperature, 1e-6)
        probs = F.softmax(top_k_filter(logits, top_k), dim=-1)
        nxt = sample_index(probs)
        ids.append(nxt)
        out.append(nxt)
    model.train()
    return vocab.decode(out)


# ---- main ------------------------------------------------------------------------------------------------
def size_defaults(args, device):
    """Fills the size options left at None with the device's defaults (SIZES): a GPU trains
    the larger model in about the time the CPU takes for the small one."""
    for name, value in SIZES[lucid.device(device).type].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--text", default=DEFAULT_TEXT, help="plain-text file to learn")
    p.add_argument("--steps", type=int, default=1000, help="optimizer steps")
    # The sizes default to None: size_defaults fills them per device (SIZES).
    p.add_argument("--batch-size", type=int, default=None, help="default: 32 on the CPU, 64 on the GPU")
    p.add_argument("--block-size", type=int, default=None,
                   help="context length in characters; default: 64 on the CPU, 256 on the GPU")
    p.add_argument("--d-model", type=int, default=None, help="default: 128 on the CPU, 384 on the GPU")
    p.add_argument("--heads", type=int, default=None, help="default: 4 on the CPU, 6 on the GPU")
    p.add_argument("--layers", type=int, default=None, help="default: 2 on the CPU, 6 on the GPU")
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--untied", action="store_true", help="separate output layer instead of the tied embedding")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--min-lr", type=float, default=1e-4)
    p.add_argument("--warmup", type=int, default=100, help="warm-up steps")
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--eval-every", type=int, default=200)
    p.add_argument("--eval-batches", type=int, default=10)
    p.add_argument("--prompt", default="This License ")
    p.add_argument("--sample-chars", type=int, default=400)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--top-k", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="auto, cpu, gpu or cuda[:N]")
    args = p.parse_args(argv)
    lucid.manual_seed(args.seed)
    device = pick_device(args.device)
    size_defaults(args, device)

    text = read_text(args.text)
    vocab = CharVocab(text)
    data = lucid.tensor(vocab.encode(text), device=device)  # all of it on the device: batches are gathered there
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]
    if len(val_data) <= args.block_size + 1:
        raise ValueError(f"{args.text}: too short for --block-size {args.block_size}")

    model = CharTransformer(len(vocab), args.block_size, args.d_model, args.heads, args.layers, args.dropout,
                            tied=not args.untied).to(device)
    optimizer = configure_optimizer(model, args.lr, args.weight_decay)
    warmup = max(1, min(args.warmup, args.steps - 1))
    scheduler = SequentialLR(optimizer, [LinearLR(optimizer, start_factor=1.0 / warmup, total_iters=warmup),
                                         CosineAnnealingLR(optimizer, T_max=max(1, args.steps - warmup),
                                                           eta_min=args.min_lr)],
                             milestones=[warmup])
    print(f"{len(text)} characters, vocabulary {len(vocab)}, "
          f"{sum(p.numel() for p in model.parameters())} parameters (d_model {args.d_model}, layers {args.layers}, "
          f"heads {args.heads}, context {args.block_size}, batch {args.batch_size}) on {device}; uniform guessing = "
          f"{math.log2(len(vocab)):.2f} bits per character")

    def evaluate(step):
        train_bpc = estimate_loss(model, train_data, args.block_size, args.batch_size, args.eval_batches)
        val_bpc = estimate_loss(model, val_data, args.block_size, args.batch_size, args.eval_batches)
        print(f"step {step:5d}: train {train_bpc:.3f} bpc, validation {val_bpc:.3f} bpc, "
              f"lr {scheduler.get_last_lr()[0]:.2e} ({time.perf_counter() - start:.0f} s)")
        return val_bpc

    start = time.perf_counter()
    val_bpc = evaluate(0)
    for step in range(1, args.steps + 1):
        x, y = get_batch(train_data, args.block_size, args.batch_size)
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if step % args.eval_every == 0 or step == args.steps:
            val_bpc = evaluate(step)

    if args.sample_chars > 0:
        sample = generate(model, vocab, args.prompt, args.sample_chars, args.temperature, args.top_k)
        print(f"--- sample (temperature {args.temperature}, top-k {args.top_k}) ---\n{args.prompt}{sample}\n---")
    return val_bpc


if __name__ == "__main__":
    sys.exit(0 if math.isfinite(main()) else 1)
