"""torch.amp.grad_scaler's place for the GradScaler (python/lucid/amp/_grad_scaler.py)."""

from ._grad_scaler import GradScaler  # noqa: F401

__all__ = ["GradScaler"]
