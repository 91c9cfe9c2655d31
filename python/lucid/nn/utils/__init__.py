"""lucid.nn.utils, as torch.nn.utils."""

from . import rnn  # noqa: F401
