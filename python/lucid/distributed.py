"""torch.distributed's availability checks. lucid has no process groups yet (one process drives its devices), so
`is_available()` is False, as in a torch built without distributed support, and scripts that guard their
distributed code with `dist.is_available() and dist.is_initialized()` run on one process."""

__all__ = ["is_available", "is_initialized"]


def is_available():
    """False: lucid has no process-group backend."""
    return False


def is_initialized():
    """False: no default process group exists."""
    return False
