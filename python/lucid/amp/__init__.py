"""lucid.amp: automatic mixed precision, as torch.amp.

    with lucid.autocast("cuda", dtype=lucid.bfloat16):   # "gpu" / "cuda" / "metal" / "cpu"
        loss = loss_fn(model(x), y)                        # products in bfloat16, losses in float32
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

What runs in which dtype is PyTorch's policy per device type (Note [Autocast] in
csrc/ops/autocast.h): products and convolutions in the low dtype; softmax, norms and
losses in float32; everything else in its inputs' dtypes.
"""

from ._autocast import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled
from . import _autocast as autocast_mode  # (torch.amp.autocast_mode: autocast, is_autocast_available)
from ._custom import custom_bwd, custom_fwd
from ._grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype",
           "custom_fwd", "custom_bwd"]
