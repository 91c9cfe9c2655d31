"""lucid.compile: torch.compile's and upstream Lucid's compilation API.

    model = lucid.compile(model)                 # or @lucid.compile on a function
    step = lucid.compile.fused_step(model, loss_fn, optimizer)
    loss = step(x, y)                            # zero_grad, forward, backward, update

A compiled call runs as one fused, graph-replayed list of GPU kernels (_function.py says
how, and what it keeps of eager semantics: all of them). The module is callable:
lucid.compile(target) is lucid.compile.compile(target).
"""

import sys
import types

from ._diagnose import DiagnosisReport, OpInfo, diagnose
from ._function import CompiledFunction, CompiledModule, compile
from ._persist import load_compiled, save_compiled
from ._steps import CompiledStep, compile_optimizer, compiled_step, fused_step, make_step

__all__ = ["CompiledModule", "CompiledFunction", "CompiledStep", "DiagnosisReport", "OpInfo", "compile",
           "compile_optimizer", "compiled_step", "diagnose", "fused_step", "load_compiled", "make_step",
           "save_compiled"]


class _CallableModule(types.ModuleType):
    def __call__(self, target=None, **kwargs):
        return compile(target, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
