"""lucid.backends.cuda, as torch.backends.cuda: is_built(), the cuBLAS switches under
`matmul`, and the scaled-dot-product-attention kernel switches.

Every switch keeps what is set, with torch's defaults. matmul.allow_tf32 (TF32 tensor
cores for float32 and complex64 products on the GPU; it is
lucid.set_float32_matmul_precision's state, as in torch) reaches the GPU's products; the
GPU kernels to come consult the others: the fp16/bf16 reduced-precision
reductions (and their split-K part), allow_fp16_accumulation, and which attention kernels
may run.
"""

from .. import _C

__all__ = ["is_built", "matmul", "cuBLASModule", "flash_sdp_enabled", "enable_flash_sdp", "mem_efficient_sdp_enabled",
           "enable_mem_efficient_sdp", "math_sdp_enabled", "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp"]

_PRECISIONS = ("highest", "high", "medium")


def is_built():
    """Whether lucid was built with CUDA (not whether a GPU is present: see lucid.gpu.is_available)."""
    return _C._built_with_cuda


def _check_bool(value, setter):
    if not isinstance(value, bool):
        raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
    return value


def _reduction_setting(value, name):
    """torch's (allow_reduced_precision, allow_splitk) from a bool or a 1-2 tuple/list of bools."""
    def check(obj, which):
        if isinstance(obj, bool):
            return obj
        raise TypeError(f"{name} expects a bool for {which}, but got {type(obj)!r}")

    if isinstance(value, bool):
        return value, True
    if isinstance(value, (list, tuple)):
        if not value:
            raise TypeError(f"{name} expects at least one boolean argument")
        if len(value) > 2:
            raise TypeError(f"{name} expects at most two boolean arguments")
        reduced = check(value[0], "allow_reduced_precision")
        return reduced, check(value[1], "allow_splitk") if len(value) == 2 else True
    raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)!r}")


class cuBLASModule:
    """torch.backends.cuda.matmul's type: these attributes and no others."""

    _REDUCTIONS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self):
        values = {"float32_matmul_precision": "highest", "allow_fp16_accumulation": False}
        for name in self._REDUCTIONS:
            values[name], values[name + "_split_k"] = True, True
        object.__setattr__(self, "_values", values)

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name == "allow_tf32":
            return values["float32_matmul_precision"] != "highest"
        if name in values and name != "float32_matmul_precision":
            return values[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            self._values["float32_matmul_precision"] = "high" if _check_bool(value, "set_allow_tf32_cublas") \
                else "highest"
            _C._set_matmul_allow_tf32(value)
        elif name in self._REDUCTIONS:
            self._values[name], self._values[name + "_split_k"] = _reduction_setting(value, name)
        elif name == "allow_fp16_accumulation":
            self._values[name] = _check_bool(value, "set_allow_fp16_accumulation_cublas")
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()


def _set_precision(precision):
    """lucid.set_float32_matmul_precision's work: "highest" keeps float32 products in float32;
    "high" and "medium" allow TF32 (matmul.allow_tf32 becomes True)."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in _PRECISIONS:
        raise ValueError(f"set_float32_matmul_precision: {precision!r} is not one of 'highest', 'high', or "
                         "'medium'")
    matmul._values["float32_matmul_precision"] = precision
    _C._set_matmul_allow_tf32(precision != "highest")


def _get_precision():
    return matmul._values["float32_matmul_precision"]


# which scaled_dot_product_attention kernels may run on a GPU (torch's defaults: all of them)
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _enable_sdp(kind, enabled):
    _sdp[kind] = _check_bool(enabled, f"set_sdp_use_{kind}")


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_flash_sdp(enabled):
    _enable_sdp("flash", enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    _enable_sdp("mem_efficient", enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_math_sdp(enabled):
    _enable_sdp("math", enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled):
    _enable_sdp("cudnn", enabled)
