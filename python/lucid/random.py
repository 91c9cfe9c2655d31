"""lucid.random: torch.random's seeding and state functions, and fork_rng.

lucid has one default generator (lucid._random: counter-based Philox on the host), and
a GPU tensor's random values are drawn from it too (see lucid.gpu's manual_seed), so
its state is the whole random state of the process: saving and restoring it forks the
random numbers of every device. The functions are lucid's top-level ones (as
torch.manual_seed is torch.random.manual_seed).
"""

import contextlib
import warnings

from ._random import default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng",
           "thread_safe_generator", "default_generator"]

_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """Restores the random state on leaving the block to what it was on entering it.

    devices: the GPUs whose state to fork (checked; lucid's GPUs draw from the one default
    generator, so its state is what is saved). Left as None with several GPUs present, a
    warning says that every one is forked, as torch's. enabled=False forks nothing.
    device_type: "cuda" / "gpu" (the default) or "cpu"; "meta" forks nothing, as torch.
    _caller and _devices_kw name the calling function and its devices argument in that
    warning."""
    global _fork_rng_warned_already
    if device_type == "meta":
        yield
        return
    from ._device import device as _device
    device_type = _device(device_type or "cuda").type  # RuntimeError for a type lucid does not have
    if not enabled:
        yield
        return
    from . import gpu
    if device_type == "gpu":
        if devices is None:
            count = gpu.device_count()
            if count > 1 and not _fork_rng_warned_already:
                kind = "GPU"
                warnings.warn(
                    f"{kind} reports that you have {count} available devices, and you have used {_caller} without "
                    f"explicitly specifying which devices are being used. For safety, we initialize *every* {kind} "
                    f"device by default, which can be quite slow if you have a lot of {kind}s. If you know that you "
                    f"are only making use of a few {kind} devices, set the environment variable "
                    f"CUDA_VISIBLE_DEVICES or the '{_devices_kw}' keyword argument of {_caller} with the set of "
                    f"devices you are actually using. For example, if you are using CPU only, set "
                    f"CUDA_VISIBLE_DEVICES= or devices=[]; if you are using device 0 only, set "
                    f"CUDA_VISIBLE_DEVICES=0 or devices=[0].  To initialize all devices and suppress this warning, "
                    f"set the '{_devices_kw}' keyword argument to `range(lucid.cuda.device_count())`.", stacklevel=3)
                _fork_rng_warned_already = True
        else:
            for d in list(devices):  # (a generator is read once, as torch's list(devices))
                gpu.get_rng_state(d)  # checks each device as torch's per-device get_rng_state does
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def thread_safe_generator():
    """The generator of the DataLoader thread worker this runs in, else None (use the
    default generator). lucid's DataLoader workers are processes, each with its own
    default generator, so this is always None."""
    return None
