"""lucid.optim.swa_utils: torch.optim.swa_utils for lucid models and optimizers.

Stochastic Weight Averaging (Izmailov et al., 2018) and exponential moving averages of
a model's weights: AveragedModel keeps the running average in a copy of the model,
SWALR anneals the learning rate to a constant for the averaging phase, and update_bn
recomputes the BatchNorm statistics of the averaged weights, which no training step
ever saw. The averaging functions take and return lucid tensors, as torch's take torch's.
"""

from __future__ import annotations

import itertools
import math
from copy import deepcopy

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ._working_copies import as_float32, float32_working_copies
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _lerps(tensor):
    """Whether `tensor` can be lerped in place: torch's foreach lerp takes only floating
    and complex tensors; integer buffers (num_batches_tracked) take the plain formula."""
    return tensor.is_floating_point() or tensor.is_complex()


# The list updates lerp 16-bit tensors in float32 working copies: one rounding, as torch's
# foreach lerp (lucid's 16-bit lerp_ rounds its weight to 16 bits first).


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place update of a list of averages: ema <- decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if _lerps(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                with float32_working_copies(p_ema) as (p_ema,):
                    p_ema.lerp_(as_float32(p_model), 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place update of a list of equal-weight averages of num_averaged + 1 models."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if _lerps(averaged_param_list[0]):
            # As torch: 1 / (n + 1) of a count tensor is a float32 tensor, so the weight is
            # that float32 value (an int count gives the exact Python float).
            weight = 1 / (num_averaged + 1)
            if isinstance(weight, Tensor):
                weight = weight.item()
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                with float32_working_copies(p_avg) as (p_avg,):
                    p_avg.lerp_(as_float32(p_model), weight)
        else:
            # torch fails here (its foreach addcdiv refuses integer tensors); lucid gives the
            # integer buffers what get_swa_avg_fn gives them, truncated into their dtype.
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.copy_(p_avg + (p_model - p_avg) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The new value of one average: decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The new value of one equal-weight average of num_averaged + 1 models."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _by_device_and_dtype(averaged, current):
    """The pairs (averaged, current) grouped by the averaged tensor's device and dtype, in
    order of first appearance: a multi_avg_fn sees one homogeneous list at a time."""
    groups = {}
    for p_avg, p_model in zip(averaged, current):
        key = (str(p_avg.device), p_avg.dtype)
        lists = groups.setdefault(key, (p_avg.device, [], []))
        lists[1].append(p_avg)
        lists[2].append(p_model)
    return list(groups.values())


class AveragedModel(Module):
    """A copy of `model` (on `device` if given) whose parameters, and its buffers with
    use_buffers=True, are running averages of the model's: update_parameters(model)
    folds in the model's current values. The first update copies them; later ones apply
    avg_fn(averaged, current, n_averaged) per tensor, or multi_avg_fn(averaged_list,
    current_list, n_averaged) per device and dtype, or (neither given) the equal-weight
    SWA average. With use_buffers=False the buffers are copied from the model each time.
    The state_dict holds the copy's entries under "module." and the count "n_averaged";
    avg_fn and multi_avg_fn are not saved."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        import lucid

        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", lucid.tensor(0, dtype=D.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _averaged_tensors(self, model):
        """(the copy's tensors, the model's) that update_parameters averages."""
        if self.use_buffers:
            return (itertools.chain(self.module.parameters(), self.module.buffers()),
                    itertools.chain(model.parameters(), model.buffers()))
        return self.parameters(), model.parameters()

    def update_parameters(self, model):
        with no_grad():
            averaged, current = [], []
            first = bool(self.n_averaged == 0)
            for p_avg, p_model in zip(*self._averaged_tensors(model)):
                p_avg = p_avg.detach()
                p_model = p_model.detach().to(p_avg.device)
                averaged.append(p_avg)
                current.append(p_model)
                if first:
                    p_avg.copy_(p_model)
            if not first:
                self._average(averaged, current)
            if not self.use_buffers:  # buffers follow the model rather than being averaged
                for b_avg, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_avg.detach().copy_(b_model.detach().to(b_avg.device))
            self.n_averaged.add_(1)

    def _average(self, averaged, current):
        if self.avg_fn is not None:
            for p_avg, p_model in zip(averaged, current, strict=True):
                p_avg.copy_(self.avg_fn(p_avg, p_model, self.n_averaged.to(p_avg.device)))
            return
        for device, group_avg, group_model in _by_device_and_dtype(averaged, current):
            n_averaged = self.n_averaged.to(device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(group_avg, group_model, n_averaged)
            else:
                # The exact average, tensor by tensor: torch's CPU path. (On CUDA torch uses
                # the foreach lerp of get_swa_multi_avg_fn, whose weight is float32-rounded.)
                swa = get_swa_avg_fn()
                for p_avg, p_model in zip(group_avg, group_model, strict=True):
                    p_avg.copy_(swa(p_avg, p_model, n_averaged))


def update_bn(loader, model, device=None):
    """Recomputes the running mean and variance of every BatchNorm in `model` with one pass
    over `loader` (batches that are tensors, or lists/tuples whose first item is the
    input), as cumulative averages over the batches (momentum None for the pass). The
    momenta and the model's training mode are restored afterwards."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate from its current value to swa_lr (one value, or
    one per group) over anneal_epochs steps, "cos" or "linear", then holds it there.

    Each step recovers the learning rate the annealing started from out of the current
    one (so other schedulers may have moved it meanwhile), as torch does."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The lr annealing started from, given that `lr` is alpha of the way to swa_lr."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self):
        self._warn_if_called_outside_step()
        step = self._step_count - 1  # the constructor's step is step 0
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        start_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                     for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, start_lrs, strict=True)]

    def state_dict(self):
        """Every attribute but the optimizer and the annealing function (restored from its name)."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
