"""Constructor checks shared by the optimizers, worded as torch.optim words them."""


def check_lr(lr):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_eps(eps):
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")


def check_weight_decay(weight_decay):
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def check_betas(betas):
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def check_no_capturable(name, capturable=False, differentiable=False):
    """CUDA-graph capture and differentiating through the step have no meaning in lucid.
    (`foreach` and `fused` are accepted and ignored: every lucid step is one fused pass.)"""
    if capturable:
        raise ValueError(f"{name}: capturable=True is not supported by lucid (no CUDA graph capture)")
    if differentiable:
        raise ValueError(f"{name}: differentiable=True is not supported by lucid")
