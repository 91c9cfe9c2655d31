"""lucid.backends.mps, as torch.backends.mps: lucid has no Metal (Apple GPU) backend, so it is
neither built nor available."""

__all__ = ["is_available", "is_built"]


def is_available():
    """Whether the MPS device can be used: never in lucid."""
    return False


def is_built():
    """Whether lucid was built with MPS support: it was not."""
    return False
