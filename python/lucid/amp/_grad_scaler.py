"""lucid.amp.GradScaler: loss scaling for float16 training, as torch.amp.GradScaler.

The scale and the growth tracker live on the device of the first loss scaled, and every
update of them is a device op: unscale_ checks the gradients for inf/NaN into one flag
on the device, update() grows or backs off the scale there. The one host wait of a step
is step()'s read of that flag, to decide whether to call optimizer.step(), as in torch.
"""

from __future__ import annotations

import enum

from .. import _C


class _State(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        from ._autocast import _is_gpu
        self._device_type = device
        gpu = _is_gpu(device)
        if enabled and gpu and not _C.gpu_device_count():
            import warnings
            warnings.warn("lucid.amp.GradScaler is enabled, but a GPU is not available. Disabling.")
            enabled = False
        if growth_factor <= 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        self._enabled = enabled
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._scale = None           # float32 [1] on the device
        self._growth_tracker = None  # int32 [1]
        self._per_optimizer = {}     # id(optimizer) -> {"stage": _State, "found_inf": tensor}

    # ---- scaling -------------------------------------------------------------------------

    def _lazy_init(self, device):
        from .. import full
        self._scale = full((1,), self._init_scale, dtype=_f32(), device=device)
        self._growth_tracker = full((1,), self._init_growth_tracker, dtype=_i32(), device=device)

    def scale(self, outputs):
        """outputs (a tensor, or an iterable of them, nested) multiplied by the scale."""
        if not self._enabled:
            return outputs
        from .._tensor import Tensor
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(outputs.device)
        if isinstance(outputs, (list, tuple)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled)
        if hasattr(outputs, "__iter__"):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _State.READY, "found_inf": None})

    def unscale_(self, optimizer):
        """Divides optimizer's gradients by the scale in place, and records on the device
        whether any of them is inf or NaN (no host wait)."""
        if not self._enabled:
            return
        if self._scale is None:
            raise RuntimeError("Attempted unscale_ but _scale is None.  This may indicate your script did not use "
                               "scaler.scale(loss or outputs) earlier in the iteration.")
        state = self._state(optimizer)
        if state["stage"] is _State.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is _State.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        from .. import stack, zeros
        inv_scale = self._scale.double().reciprocal().float()
        inv_by_place = {}  # (device, dtype) -> inv_scale there: one cast per kind of gradient
        finite = []
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g.dtype == _f16():  # torch: the master weights of AMP are float32
                    raise ValueError("Attempting to unscale FP16 gradients.")
                place = (str(g.device), g.dtype)
                if place not in inv_by_place:
                    inv_by_place[place] = inv_scale.to(g.device, g.dtype)
                g.mul_(inv_by_place[place])
                finite.append(g.isfinite().all().to(self._scale.device))
        found = (~stack(finite).all()).float().reshape(1) if finite else zeros(1, device=self._scale.device)
        state["found_inf"] = found
        state["stage"] = _State.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(*args, **kwargs) unless the unscaled gradients hold inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] is _State.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _State.READY:
            self.unscale_(optimizer)
        result = None
        if not state["found_inf"].item():  # the step's one host wait, as torch's
            result = optimizer.step(*args, **kwargs)
        state["stage"] = _State.STEPPED
        return result

    def update(self, new_scale=None):
        """Backs the scale off by backoff_factor if any step found inf/NaN, else grows it by
        growth_factor after growth_interval clean steps in a row: on the device."""
        if not self._enabled:
            return
        if self._scale is None:
            return
        if new_scale is not None:
            from .._tensor import Tensor
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise ValueError("new_scale should be a single-element tensor")
                self._scale.copy_(new_scale.reshape(1).to(self._scale.device, _f32()))
            else:
                self._scale.fill_(float(new_scale))
        else:
            founds = [s["found_inf"] for s in self._per_optimizer.values() if s["found_inf"] is not None]
            if not founds:
                raise RuntimeError("No inf checks were recorded prior to update.")
            self._update_scale(sum(founds[1:], founds[0]))
        self._per_optimizer = {}

    def _update_scale(self, found_inf):
        from .. import where, zeros_like
        found = found_inf > 0
        tracker = self._growth_tracker + 1
        grow = tracker >= self._growth_interval
        grown = self._scale * self._growth_factor
        grown = where(grown.isfinite(), grown, self._scale)  # torch keeps a scale that would overflow
        scale = where(found, self._scale * self._backoff_factor, where(grow, grown, self._scale))
        tracker = where(found | grow, zeros_like(tracker), tracker)
        self._scale.copy_(scale)
        self._growth_tracker.copy_(tracker)

    # ---- accessors and checkpoints --------------------------------------------------------

    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """torch's keys: scale, growth_factor, backoff_factor, growth_interval, _growth_tracker."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(self._init_growth_tracker)


def _f32():
    from .._dtype import float32
    return float32


def _f16():
    from .._dtype import float16
    return float16


def _i32():
    from .._dtype import int32
    return int32
