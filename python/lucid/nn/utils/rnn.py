"""torch.nn.utils.rnn: PackedSequence and the pack / pad helpers.

A PackedSequence keeps the time-major rows of a batch of sequences sorted by length
(longest first): data[(sum of batch_sizes before t) + b] is step t of sequence b.
Packing and unpacking are one index_select each (their backward is index_add), so
gradients flow through them."""

from collections import namedtuple

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence", "unpad_sequence",
           "pack_sequence", "unpack_sequence", "invert_permutation"]


def _lucid():
    import lucid
    return lucid


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                         self.unsorted_indices)

    def float(self):
        return self.to(_lucid().float32)

    def double(self):
        return self.to(_lucid().float64)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    if permutation is None:
        return None
    lucid = _lucid()
    perm = [int(i) for i in permutation.tolist()]
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return lucid.tensor(inv, dtype=lucid.int64, device=permutation.device)


def _lengths_list(lengths):
    lucid = _lucid()
    if isinstance(lengths, lucid.Tensor):
        if lengths.ndim != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D tensor, got {lengths.ndim}D")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _batch_sizes(lengths):
    T = max(lengths) if lengths else 0
    return [sum(1 for n in lengths if n > t) for t in range(T)]


def _pack_index(batch_sizes, B):
    """Rows of a (T * B, ...) time-major tensor that make up the packed data."""
    return [t * B + b for t, bs in enumerate(batch_sizes) for b in range(bs)]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    lucid = _lucid()
    lengths = _lengths_list(lengths)
    if enforce_sorted:
        if any(lengths[i] < lengths[i + 1] for i in range(len(lengths) - 1)):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        sorted_indices = lucid.tensor(order, dtype=lucid.int64, device=input.device)
        lengths = [lengths[i] for i in order]
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if len(lengths) != input.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={input.shape[1]})")
    if lengths and lengths[-1] <= 0 or any(n <= 0 for n in lengths):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if max(lengths) > input.shape[0]:
        raise RuntimeError(f"a length ({max(lengths)}) exceeds the padded sequence length ({input.shape[0]})")
    T, B = input.shape[0], input.shape[1]
    bs = _batch_sizes(lengths)
    flat = input.reshape(T * B, *input.shape[2:])
    data = flat.index_select(0, lucid.tensor(_pack_index(bs, B), dtype=lucid.int64, device=flat.device))
    return PackedSequence(data, lucid.tensor(bs, dtype=lucid.int64, device="cpu"), sorted_indices, None)


def _padded_from_packed(data, batch_sizes, padding_value, total_length):
    """(T, B, ...) time-major padded tensor in the packed (sorted) batch order, and lengths."""
    lucid = _lucid()
    bs = [int(v) for v in batch_sizes.tolist()]
    B = bs[0] if bs else 0
    T = len(bs) if total_length is None else total_length
    lengths = [sum(1 for s in bs if s > b) for b in range(B)]
    n = data.shape[0]
    src = [n] * (T * B)
    offset = 0
    for t, s in enumerate(bs):
        for b in range(s):
            src[t * B + b] = offset + b
        offset += s
    pad_row = lucid.full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    full = lucid.cat([data, pad_row]).index_select(0, lucid.tensor(src, dtype=lucid.int64, device=data.device))
    return full.reshape(T, B, *data.shape[1:]), lengths


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    lucid = _lucid()
    max_len = int(sequence.batch_sizes.shape[0])
    if total_length is not None and total_length < max_len:
        raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                         f"got total_length={total_length} and max sequence length being {max_len}")
    padded, lengths = _padded_from_packed(sequence.data, sequence.batch_sizes, padding_value, total_length)
    lengths = lucid.tensor(lengths, dtype=lucid.int64, device="cpu")  # (torch's lengths are on the CPU)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices.cpu())  # lengths stay on the CPU, as torch's
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    lucid = _lucid()
    from .. import functional as F
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, lucid.Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    T = max(s.shape[0] for s in sequences)
    out = []
    for s in sequences:
        k = T - s.shape[0]
        pads = [0, 0] * (s.ndim - 1) + ([0, k] if padding_side == "right" else [k, 0])
        out.append(F.pad(s, pads, value=padding_value) if k else s)
    return lucid.stack(out, dim=0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
