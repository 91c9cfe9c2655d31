"""lucid.nn: neural-network building blocks (so far only lucid.nn.functional.linear)."""

from . import functional  # noqa: F401
