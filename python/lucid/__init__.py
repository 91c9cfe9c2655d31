"""lucid: a deep-learning framework with a C++ engine and a PyTorch-style API.

`import lucid` loads the engine and nothing else: NumPy is imported only when a
NumPy conversion is asked for.
"""

import sys as _sys

from . import _blas_env  # noqa: F401  (before _C: it picks OpenBLAS's kernels)
from . import _C
_mkl = _blas_env.mkl_library()
if _mkl:  # (the CPU's FFT and, when there, its LAPACK: backend/cpu/mkl.h)
    _C._set_mkl_library(_mkl)
del _mkl
from ._dtype import (  # noqa: F401  (names re-exported as lucid.*)
    dtype, bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
    complex64, complex128, half, float, double, short, int, long, cfloat, cdouble, set_default_dtype,
    get_default_dtype, finfo, iinfo, promote_types,
)
from ._device import device, get_default_device, set_default_device  # noqa: F401
from ._size import Size
from ._tensor import Tensor
from ._storage import TypedStorage, UntypedStorage  # noqa: F401
from ._memory_format import (channels_last, channels_last_3d, contiguous_format, memory_format,  # noqa: F401
                             preserve_format)
from ._legacy import *  # noqa: F401,F403  (FloatTensor, LongTensor, ...; Tensor(...), type, type_as)
from ._creation import *  # noqa: F401,F403
from ._random import *  # noqa: F401,F403
from ._random import Generator, default_generator, manual_seed  # noqa: F401
from ._multinomial import multinomial  # noqa: F401
from ._scatter_reduce import index_reduce, scatter_reduce  # noqa: F401
from ._sort import (argsort, bucketize, isin, kthvalue, median, msort, nanmedian, searchsorted, sort,  # noqa: F401
                    topk, unique, unique_consecutive)
from ._counting import bincount, histc, histogram, histogramdd, nanmean, nansum  # noqa: F401
from ._stats import corrcoef, cov, mode, nanquantile, quantile  # noqa: F401
from ._scans import cummax, cummin, logcumsumexp  # noqa: F401
from ._shape_more import (atleast_3d, block_diag, broadcast_shapes, broadcast_tensors, cartesian_prod, column_stack, combinations, diff,  # noqa: F401
                          dsplit, dstack, hsplit, kron, meshgrid, ravel, repeat_interleave, rot90, row_stack, take,
                          tril_indices, triu_indices, vsplit)
from ._printing import set_printoptions  # noqa: F401
from ._elementwise import result_type, can_cast  # noqa: F401
from . import gpu
from .gpu import OutOfMemoryError  # noqa: F401  (torch.OutOfMemoryError)
from ._shape import *  # noqa: F401,F403
from . import autograd
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode  # noqa: F401
from .autograd.grad_mode import is_grad_enabled, is_inference_mode_enabled  # noqa: F401
from .autograd.anomaly_mode import (  # noqa: F401
    is_anomaly_enabled, is_anomaly_check_nan_enabled, set_anomaly_enabled,
)
from . import amp  # noqa: F401
from .amp import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled  # noqa: F401
from . import nn  # noqa: F401
from . import distributions  # noqa: F401
from . import optim  # noqa: F401
from . import accelerator, backends, distributed  # noqa: F401
from .backends._global import *  # noqa: F401,F403  (use_deterministic_algorithms, ...)
from .serialization import load, load_safetensors, load_sharded, save, save_safetensors, save_sharded  # noqa: F401

cuda = gpu
_sys.modules[__name__ + ".cuda"] = gpu
# torch.cuda.amp / torch.cpu.amp (deprecated there, common in scripts): lucid.amp's, warning alike
from .amp import _legacy as _amp_legacy  # noqa: E402
cpu = _amp_legacy.install(_sys.modules[__name__])

from . import version  # noqa: E402  (torch.version: lucid.version.cuda, ...)
from .version import __version__  # noqa: E402


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def _view_fn(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = name
    fn.__doc__ = f"lucid.{name}(input, ...) is input.{name}(...)."
    return fn


# The elementwise ops are engine functions (csrc/ops/elementwise_table.h); the
# special_* ones are lucid.special's (torch.special.zeta, not torch.special_zeta).
for _name in _C._elementwise_ops + _C._elementwise_extra_ops:
    if not _name.startswith("special_"):
        globals()[_name] = getattr(_C, _name)

# Reductions, scans and softmax (csrc/bindings/reduce.cpp). lucid.max/min/all/any
# shadow the builtins inside this module from here on, as in torch.
from . import return_types  # noqa: E402
for _name in _C._reduction_ops:
    globals()[_name] = getattr(_C, _name)

# Matrix products and the BLAS thread count (csrc/ops/linalg.h).
for _name in ("matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "ger", "addmm", "addmv", "baddbmm",
              "einsum", "tensordot", "get_num_threads", "set_num_threads"):
    globals()[_name] = getattr(_C, _name)

for _name in ("reshape", "permute", "transpose", "swapaxes", "swapdims", "t", "squeeze",
              "unsqueeze", "flatten", "unflatten", "narrow", "select", "as_strided", "clone",
              "broadcast_to", "unbind", "contiguous", "detach", "expand", "repeat", "view", "is_conj", "is_neg",
              "index_put", "index_put_"):
    globals()[_name] = _view_fn(_name)
del _name

# Advanced indexing (csrc/ops/index_ops.h).
nonzero = _view_fn("nonzero")
argwhere = _view_fn("argwhere")
masked_select = _C.masked_select

# out= for the functions whose bindings have none (python/lucid/_out.py).
from . import _out  # noqa: E402
_out.install(globals())

# numpy's spellings of the ops, torch's constants and predicates (python/lucid/_aliases.py).
from . import _aliases  # noqa: E402
from ._aliases import e, inf, nan, newaxis, pi  # noqa: F401
_aliases.install(globals())
from . import _math_more  # noqa: E402  (heaviside, copysign, index_fill, Tensor.unfold, ...)
_math_more.install(globals())
from . import _ops_more  # noqa: E402  (deg2rad, cross, dist, renorm, trapezoid, Tensor.exponential_, ...)
_ops_more.install(globals())
from . import _gamma  # noqa: E402  (polygamma, mvlgamma)
_gamma.install(globals())
from ._gamma_samplers import (_dirichlet_grad, _sample_dirichlet, _standard_gamma,  # noqa: F401
                              _standard_gamma_grad)
from . import special  # noqa: F401
from ._complex import *  # noqa: E402,F401,F403
from . import linalg  # noqa: F401
for _name, _fn, _method in linalg._TOP_LEVEL:  # torch.det, Tensor.inverse, ...
    globals()[_name] = _fn
    if _method:
        setattr(Tensor, _name, _fn)
del _name, _fn, _method
from ._decompositions import lu, lu_solve, lu_unpack, pca_lowrank, svd_lowrank  # noqa: E402,F401
from . import _foreach  # noqa: E402  (torch._foreach_<op> and torch.foreach: list ops)
_foreach.install(globals())
Tensor.lu, Tensor.lu_solve = lu, lu_solve
from . import signal  # noqa: F401
from . import fft  # noqa: F401
from . import fast  # noqa: E402,F401  (MLX's mx.fast: rms_norm, layer_norm, rope, sdpa)
from . import compile  # noqa: E402,F401  (torch.compile; a callable module, as upstream's lucid.compile)
from . import onnx  # noqa: E402,F401  (torch.onnx.export; writing files needs the onnx package)
from . import compiler  # noqa: E402,F401  (torch.compiler: reset, is_compiling, disable)
from . import func  # noqa: E402  (torch.func / upstream's lucid.func: grad, vjp, jvp, jacrev, vmap, ...)
vmap = func.vmap  # (torch.vmap)
from . import _sparse  # noqa: E402  (sparse tensors: sparse_coo_tensor, Tensor.to_sparse, layouts)
_sparse.install(globals())
from . import sparse  # noqa: F401
spmm = sparse.spmm
from ._stft import istft, stft  # noqa: F401
Tensor.stft, Tensor.istft = stft, istft
from . import _upstream  # noqa: E402  (isreal, Tensor.mH / H, histogram2d, pad, expand_dims, ...)
_upstream.install(globals())
from . import _typing  # noqa: E402  (upstream's typing names: TensorLike, DTypeLike, HasShape, ...)
_typing.install(globals())
from . import dtypes  # noqa: E402,F401  (upstream's module of the dtype objects)
from . import einops  # noqa: E402,F401  (upstream's lucid.einops: rearrange, reduce, repeat, einsum)
from ._windows import bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window  # noqa: F401
del _out
# torch's other top-level names (conv2d, batch_norm, ..., the *_copy functions, sin_, ...,
# gradient, range, cond) and Tensor methods (new, apply_, dim_order, ...). lucid.range
# shadows the builtin inside this module from here on, as lucid.max does.
from . import _toplevel_nn, _toplevel_copies, _toplevel_misc, _tensor_extras  # noqa: E402
for _m in (_toplevel_nn, _toplevel_copies, _toplevel_misc, _tensor_extras):
    _m.install(globals())
del _m

# Data loading and datasets (python/lucid/utils/); `lucid.data` is lucid.utils.data.
from . import utils  # noqa: E402
from .utils import data  # noqa: F401


def __getattr__(name):
    # upstream's lucid.diffeq (ODE solvers), lucid.profiler, lucid.quantization and
    # lucid.metal, and torch's jit, multiprocessing, random, testing and hub, load on first
    # use: most programs use none of them, and they would add to every `import lucid`
    # (random and testing, loaded, would also let `from lucid import *` replace the
    # standard library's random in a script).
    if name in ("diffeq", "profiler", "jit", "multiprocessing", "quantization", "metal", "random", "testing",
                "hub"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
