"""Train a CNN on Fashion-MNIST: the README's main job.

    .venv/bin/python examples/train_fashion_mnist.py [--epochs 5] [--batch-size 128] [--lr 0.003]
        [--device auto] [--amp] [--seed 0] [--workers 2] [--checkpoint-dir runs/fashion_mnist] [--resume]
        [--stop-after K]

Reads the gzipped IDX files of Debian's dataset-fashion-mnist package
(/usr/share/datasets/fashion-mnist; nothing is downloaded), feeds a small CNN through
a DataLoader with worker processes, trains with AdamW and a one-cycle schedule, and
reports the test accuracy after every epoch (about 91% after the default 5 epochs).
--device auto trains on the GPU when there is one (and says so); --amp runs the
forward passes and losses in bfloat16 autocast (lucid.autocast, products in bfloat16).

After each epoch it writes to --checkpoint-dir:
  model.safetensors    the weights, in the safetensors format other frameworks read
  training_state.pt    optimizer, scheduler, RNG state and the history so far (lucid.save)
  curves.png           loss and accuracy per epoch (matplotlib)
--resume continues from there, and a resumed run repeats the uninterrupted one exactly.

The loop is written once for any framework with PyTorch's API (`m` is the module:
lucid, or torch for the side-by-side timing in benchmarks/bench_train.py).
"""

import argparse
import os
import sys
import time

import lucid
from _device import pick_device  # examples/_device.py

MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST's training-set pixel statistics


def build_model(m):
    nn = m.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),   # 32 x 14 x 14
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),  # 64 x 7 x 7
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10))


class Images:
    """A uint8 [N, 28, 28] image tensor and its labels as a dataset of normalised
    float [1, 28, 28] images, randomly mirrored when training (runs in the workers)."""

    def __init__(self, m, images, labels, train):
        self.m, self.images, self.labels, self.train = m, images, labels, train

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        x = ((self.images[i].float() / 255.0 - MEAN) / STD).unsqueeze(0)
        if self.train and self.m.rand(()).item() < 0.5:
            x = self.m.flip(x, [-1])
        return x, int(self.labels[i])


def make_loader(m, images, labels, train, args, generator, device="cpu"):
    """Workers are started per epoch (not persistent) and seeded, like the shuffle, from
    `generator`, which main reseeds per epoch: an epoch's batches and random flips then
    depend on its number only, so a resumed run sees what the uninterrupted one saw.
    Batches for a GPU come in pinned memory, so that their copy can overlap the step."""
    return m.utils.data.DataLoader(Images(m, images, labels, train), batch_size=args.batch_size, shuffle=train,
                                   num_workers=args.workers, drop_last=train, generator=generator,
                                   pin_memory=device != "cpu")


def autocast_type(device):
    """The autocast device_type of a device string ("cuda" names the GPU in both frameworks)."""
    return "cpu" if str(device).startswith("cpu") else "cuda"


def train_epoch(m, model, loader, opt, sched, device, progress=None, amp=False):
    """One pass over `loader`: (mean loss, samples per second). The loss is summed on the
    device and read once at the end (and for the progress bar every 20 steps): a read
    per step would make the host wait for the GPU at every step."""
    model.train()
    total, count, steps, start = 0.0, 0, 0, time.perf_counter()
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        opt.zero_grad()
        with m.autocast(autocast_type(device), dtype=m.bfloat16, enabled=amp):
            loss = m.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        total = total + loss.detach() * len(y)
        count += len(y)
        steps += 1
        if progress is not None:
            progress.update(1)
            if steps % 20 == 0:
                progress.set_postfix(loss=f"{float(total) / count:.4f}",
                                     samples_s=f"{count / (time.perf_counter() - start):.0f}")
    return float(total) / count, count / (time.perf_counter() - start)


def evaluate(m, model, loader, device, amp=False):
    """(mean loss, accuracy) over `loader`."""
    model.eval()
    total, correct, count = 0.0, 0, 0
    with m.no_grad(), m.autocast(autocast_type(device), dtype=m.bfloat16, enabled=amp):
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            logits = model(x)
            total = total + m.nn.functional.cross_entropy(logits, y, reduction="sum")
            correct = correct + (logits.argmax(1) == y).sum()
            count += len(y)
    return float(total) / count, int(correct) / count


def save_checkpoint(directory, model, opt, sched, history):
    os.makedirs(directory, exist_ok=True)
    lucid.save_safetensors(dict(model.state_dict()), os.path.join(directory, "model.safetensors"),
                           metadata={"model": "fashion-mnist cnn", "epochs": str(len(history))})
    lucid.save({"optimizer": opt.state_dict(), "scheduler": sched.state_dict(), "rng": lucid.get_rng_state(),
                "history": history}, os.path.join(directory, "training_state.pt"))


def load_checkpoint(directory, model, opt, sched, device):
    weights = os.path.join(directory, "model.safetensors")
    state_path = os.path.join(directory, "training_state.pt")
    for path in (weights, state_path):
        if not os.path.exists(path):
            raise FileNotFoundError(f"--resume: {path} not found (train once with --checkpoint-dir {directory})")
    model.load_state_dict(lucid.load_safetensors(weights, device=device))
    state = lucid.load(state_path)
    opt.load_state_dict(state["optimizer"])
    sched.load_state_dict(state["scheduler"])
    lucid.set_rng_state(state["rng"])
    return state["history"]


def plot(history, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = [h["epoch"] for h in history]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(epochs, [h["train_loss"] for h in history], "o-", label="train")
    left.plot(epochs, [h["test_loss"] for h in history], "o-", label="test")
    left.set(xlabel="epoch", ylabel="cross-entropy", title="loss")
    left.legend()
    right.plot(epochs, [100 * h["test_acc"] for h in history], "o-", color="tab:green")
    right.set(xlabel="epoch", ylabel="%", title="test accuracy")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def parse(argv):
    ap = argparse.ArgumentParser(description="Train a CNN on Fashion-MNIST with lucid.")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3, help="peak learning rate of the one-cycle schedule")
    ap.add_argument("--device", default="auto", help="auto, cpu, gpu or cuda[:N]")
    ap.add_argument("--amp", action="store_true", help="bfloat16 autocast for the forward passes and losses")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    ap.add_argument("--checkpoint-dir", default=os.path.join("runs", "fashion_mnist"))
    ap.add_argument("--resume", action="store_true", help="continue from --checkpoint-dir")
    ap.add_argument("--stop-after", type=int, default=None, metavar="K",
                    help="train at most K epochs in this run (a long run in parts, with --resume)")
    ap.add_argument("--data", default=lucid.utils.datasets.FashionMNIST.default_root)
    ap.add_argument("--limit", type=int, default=None, help="use only the first N training images (quick runs)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar (logs, CI)")
    args = ap.parse_args(argv)
    if args.epochs < 1 or args.batch_size < 1 or args.lr <= 0 or args.workers < 0:
        ap.error("--epochs and --batch-size must be positive, --lr above 0, --workers not negative")
    return args


def main(argv=None):
    args = parse(argv)
    lucid.manual_seed(args.seed)
    device = pick_device(args.device)
    train_set = lucid.utils.datasets.FashionMNIST(args.data, train=True)
    test_set = lucid.utils.datasets.FashionMNIST(args.data, train=False)
    images, labels = train_set.data, train_set.targets
    if args.limit:
        images, labels = images[:args.limit], labels[:args.limit]
    loader_gen = lucid.Generator()
    train_loader = make_loader(lucid, images, labels, True, args, loader_gen, device)
    test_loader = make_loader(lucid, test_set.data, test_set.targets, False, args, lucid.Generator(), device)

    model = build_model(lucid).to(device)
    opt = lucid.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = lucid.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, epochs=args.epochs,
                                                steps_per_epoch=len(train_loader))
    history = load_checkpoint(args.checkpoint_dir, model, opt, sched, device) if args.resume else []
    if history:
        print(f"resumed after epoch {len(history)} from {args.checkpoint_dir}")
    if len(history) >= args.epochs:
        print(f"the checkpoint already has {len(history)} epochs (--epochs {args.epochs}): nothing to train")
        return history[-1]["test_acc"]

    progress_bar = None
    if not args.no_progress:
        from tqdm import tqdm  # installed by scripts/setup.sh (requirements-dev.txt)

        progress_bar = tqdm
    print(f"Fashion-MNIST: {len(images)} training and {len(test_set)} test images; {device}"
          f"{' (bfloat16 autocast)' if args.amp else ''}, {lucid.get_num_threads()} threads, "
          f"{args.workers} loader workers")
    start = time.perf_counter()
    last = args.epochs if args.stop_after is None else min(args.epochs, len(history) + args.stop_after)
    for epoch in range(len(history) + 1, last + 1):
        loader_gen.manual_seed(args.seed + epoch - 1)
        bar = progress_bar(total=len(train_loader), desc=f"epoch {epoch}/{args.epochs}", file=sys.stdout,
                           leave=False) if progress_bar else None
        t0 = time.perf_counter()
        train_loss, rate = train_epoch(lucid, model, train_loader, opt, sched, device, bar, args.amp)
        if bar is not None:
            bar.close()
        test_loss, test_acc = evaluate(lucid, model, test_loader, device, args.amp)
        history.append({"epoch": epoch, "train_loss": train_loss, "test_loss": test_loss, "test_acc": test_acc,
                        "seconds": time.perf_counter() - t0, "samples_per_s": rate})
        print(f"epoch {epoch}: train loss {train_loss:.4f}, test loss {test_loss:.4f}, "
              f"test accuracy {100 * test_acc:.2f}%, {history[-1]['seconds']:.1f} s ({rate:.0f} samples/s)")
        save_checkpoint(args.checkpoint_dir, model, opt, sched, history)
        plot(history, os.path.join(args.checkpoint_dir, "curves.png"))
    best = max(history, key=lambda h: h["test_acc"])
    print(f"done in {time.perf_counter() - start:.1f} s: final test accuracy {100 * history[-1]['test_acc']:.2f}% "
          f"(best {100 * best['test_acc']:.2f}% after epoch {best['epoch']}); checkpoint, weights and curves in "
          f"{args.checkpoint_dir}")
    return history[-1]["test_acc"]


if __name__ == "__main__":
    main()
