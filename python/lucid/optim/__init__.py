"""lucid.optim: torch.optim's optimizers. Every first-order step is one fused C++ pass
per parameter (csrc/ops/optim.cpp); LBFGS, SparseAdam, Adafactor and Muon use tensor ops.
Weight averaging (SWA, EMA) is in lucid.optim.swa_utils, as torch's. The learning-rate
schedulers live in lucid.optim.lr_scheduler, as torch's, and also here, where upstream
Lucid keeps them (lucid.optim.StepLR, lucid.optim.NoamScheduler)."""

from . import lr_scheduler  # noqa: F401
from . import swa_utils  # noqa: F401  (cheap: lucid.nn is imported before lucid.optim)
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
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

__all__ = ["Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "ASGD", "LBFGS", "Muon", "NAdam",
           "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam", "lr_scheduler", "swa_utils"]
