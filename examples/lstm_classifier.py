"""An LSTM sequence classifier on variable-length sequences, with packed sequences.

The task is synthetic, drawn with lucid's random number generator: sequences of 8
to 40 tokens among 1..9 (0 is padding), labelled by whether the motif 1 2 3 occurs
in order and adjacent somewhere in the sequence. Half of the
sequences have it planted at a random place, the other half a near miss planted
instead (the same tokens in another order, or with one token changed), so counting
tokens is not enough: the model has to see order. Chance is about 0.5.

The model is what one writes in PyTorch: nn.Embedding(padding_idx=0), a
bidirectional nn.LSTM(batch_first=True) fed a nn.utils.rnn.pack_padded_sequence
(so each direction stops at the true end of each sequence rather than running over
the padding), and a Linear layer on the final hidden states of both directions.
--device auto trains on the GPU when there is one (and says so).

    PYTHONPATH=python python examples/lstm_classifier.py [--device auto]   # test accuracy ~1.0 (~30 s on the CPU)
    PYTHONPATH=python python examples/lstm_classifier.py --train 2000 --epochs 3 --max-len 20
"""

import argparse
import sys
import time

import lucid
from _device import pick_device  # examples/_device.py
import lucid.nn as nn
from lucid.nn.utils.rnn import pack_padded_sequence
from lucid.utils.data import DataLoader, TensorDataset

PAD = 0
MOTIF = [1, 2, 3]


def contains(seq, motif):
    k = len(motif)
    return any(seq[i:i + k] == motif for i in range(len(seq) - k + 1))


def make_dataset(n, vocab, min_len, max_len, generator):
    """TensorDataset(tokens [n, max_len] padded with PAD, lengths [n], labels [n]) drawn from generator."""
    lengths = lucid.randint(min_len, max_len + 1, (n,), generator=generator).tolist()
    noise = lucid.randint(1, vocab, (n, max_len), generator=generator).tolist()
    plant = lucid.rand(n, generator=generator).tolist()
    starts = lucid.rand(n, generator=generator).tolist()
    tokens, labels = [], []
    for i in range(n):
        length = lengths[i]
        seq = noise[i][:length]
        if plant[i] < 0.5:
            insert = list(MOTIF)
        else:  # a near miss: a shuffled motif (not the identity order) or one token replaced
            insert = list(MOTIF)
            while insert == MOTIF:
                if plant[i] < 0.75:
                    insert = [MOTIF[j] for j in lucid.randperm(len(MOTIF), generator=generator).tolist()]
                else:
                    j = int(lucid.randint(0, len(MOTIF), (1,), generator=generator))
                    insert[j] = int(lucid.randint(1, vocab, (1,), generator=generator))
        at = int(starts[i] * (length - len(insert) + 1))
        seq[at:at + len(insert)] = insert
        labels.append(int(contains(seq, MOTIF)))  # noise can complete or contain the motif by chance too
        tokens.append(seq + [PAD] * (max_len - length))
    return TensorDataset(lucid.tensor(tokens), lucid.tensor(lengths), lucid.tensor(labels))


class LSTMClassifier(nn.Module):
    def __init__(self, vocab, embed_dim=32, hidden=64, num_layers=1, bidirectional=True, num_classes=2,
                 pack=True):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed_dim, padding_idx=PAD)
        self.lstm = nn.LSTM(embed_dim, hidden, num_layers=num_layers, batch_first=True,
                            bidirectional=bidirectional)
        self.fc = nn.Linear(hidden * (2 if bidirectional else 1), num_classes)
        self.pack = pack

    def forward(self, tokens, lengths):
        x = self.embedding(tokens)  # [B, T, E]
        if self.pack:
            # enforce_sorted=False: the batch comes in any order; the packing sorts and unsorts it.
            x = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        _, (h_n, _) = self.lstm(x)  # h_n: [num_layers * directions, B, H], in the batch's order
        if self.lstm.bidirectional:
            features = lucid.cat([h_n[-2], h_n[-1]], dim=1)  # last layer, forward and backward
        else:
            features = h_n[-1]
        return self.fc(features)


def run_epoch(model, loader, loss_fn, device, optimizer=None, clip=1.0):
    training = optimizer is not None
    model.train(training)
    total, correct, count = 0.0, 0, 0
    with lucid.set_grad_enabled(training):
        for tokens, lengths, labels in loader:
            # The batch is drawn on the CPU and moved to the device. The lengths stay on the CPU,
            # as PyTorch's pack_padded_sequence requires: they are only read, to plan the packing.
            tokens, labels = tokens.to(device), labels.to(device)
            width = int(lengths.max())  # trim the padding this batch does not need
            logits = model(tokens[:, :width], lengths)
            loss = loss_fn(logits, labels)
            if training:
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), clip)
                optimizer.step()
            total += loss.item() * labels.shape[0]
            correct += (logits.argmax(dim=1) == labels).sum().item()
            count += labels.shape[0]
    return total / count, correct / count


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--train", type=int, default=6000, help="training sequences")
    p.add_argument("--test", type=int, default=2000, help="test sequences")
    p.add_argument("--vocab", type=int, default=10, help="vocabulary size, padding included")
    p.add_argument("--min-len", type=int, default=8)
    p.add_argument("--max-len", type=int, default=40)
    p.add_argument("--embed-dim", type=int, default=32)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--unidirectional", action="store_true", help="a one-direction LSTM")
    p.add_argument("--no-pack", action="store_true", help="feed the padded batch instead of a PackedSequence")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="auto, cpu, gpu or cuda[:N]")
    args = p.parse_args(argv)

    lucid.manual_seed(args.seed)
    device = pick_device(args.device)
    data_rng = lucid.Generator().manual_seed(args.seed + 1)  # the data do not depend on the model's draws
    # The datasets are built on the CPU (they are made from Python lists); run_epoch moves each batch.
    train_set = make_dataset(args.train, args.vocab, args.min_len, args.max_len, data_rng)
    test_set = make_dataset(args.test, args.vocab, args.min_len, args.max_len, data_rng)
    positives = train_set.tensors[2].float().mean().item()
    print(f"{len(train_set)} training / {len(test_set)} test sequences, {positives:.1%} of them positive")
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=256)

    model = LSTMClassifier(args.vocab, args.embed_dim, args.hidden, args.layers,
                           bidirectional=not args.unidirectional, pack=not args.no_pack).to(device)
    print(model)
    optimizer = lucid.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()

    test_acc = 0.0
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        train_loss, train_acc = run_epoch(model, train_loader, loss_fn, device, optimizer)
        test_loss, test_acc = run_epoch(model, test_loader, loss_fn, device)
        print(f"epoch {epoch}: train loss {train_loss:.4f} acc {train_acc:.4f} | test loss {test_loss:.4f} "
              f"acc {test_acc:.4f} ({time.perf_counter() - start:.1f} s)")
    majority = max(positives, 1 - positives)
    print(f"test accuracy {test_acc:.4f} (always guessing the majority class: {majority:.4f})")
    return test_acc


if __name__ == "__main__":
    sys.exit(0 if main() > 0 else 1)
