"""lucid.optim: torch.optim's optimizers. Every first-order step is one fused C++ pass
per parameter (csrc/ops/optim.cpp); LBFGS and SparseAdam use tensor ops. The learning-rate
schedulers live in lucid.optim.lr_scheduler, as torch's, and also here, where upstream
Lucid keeps them (lucid.optim.StepLR, lucid.optim.NoamScheduler)."""

from . import lr_scheduler  # noqa: F401
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam
from .lr_scheduler import (ChainedScheduler, ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts,  # noqa: F401
                           CyclicLR, ExponentialLR, LambdaLR, LinearLR, LRScheduler, MultiplicativeLR, MultiStepLR,
                           NoamLR, NoamScheduler, OneCycleLR, PolynomialLR, ReduceLROnPlateau, SequentialLR, StepLR)

__all__ = ["Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "ASGD", "LBFGS", "NAdam", "Optimizer", "RAdam",
           "RMSprop", "Rprop", "SGD", "SparseAdam", "lr_scheduler"]
