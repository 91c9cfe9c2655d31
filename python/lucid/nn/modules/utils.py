"""torch.nn.modules.utils: the argument-expanding helpers layers written for torch import
from here (`_pair(3) == (3, 3)`), and the state-dict prefix remover used to load what a
DataParallel or DistributedDataParallel wrapper saved (keys under `module.`)."""

import collections.abc
from itertools import repeat

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    """A parser that passes an iterable on as a tuple and repeats anything else n times."""

    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """Each element of t, last first, n times: conv's padding per side for F.pad,
    (1, 2) -> (2, 2, 1, 1)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pooling output size whose None entries take the input's sizes (defaults)."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strips `prefix` from every key of state_dict that has it, in place (as torch: the
    order of the renamed keys moves to the end, and `_metadata`, where present, follows)."""
    if not isinstance(prefix, str):
        raise TypeError(f"consume_prefix_in_state_dict_if_present(): prefix must be a str, got "
                        f"{type(prefix).__name__}")
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            # the wrapper's own entry is the prefix without its dot ("module" for "module.")
            if len(key) == 0:
                continue
            if key == prefix.replace(".", "") or key.startswith(prefix):
                metadata[key[len(prefix):]] = metadata.pop(key)
