"""lucid.fast: MLX's mx.fast operations under their names and signatures, each one
kernel a device with its gradient. rms_norm and layer_norm are the normalisation
kernels of lucid.nn.functional (one row kernel forward, one backward),
scaled_dot_product_attention is lucid.nn.functional's (cuDNN's flash attention for
float16/bfloat16 on the GPU), and rope is its own primitive (csrc/ops/prims/rope.h).
cuda_kernel compiles a user's CUDA source with NVRTC (MLX's mx.fast.cuda_kernel)."""

from __future__ import annotations

import re

from . import _C
from ._device import _resolve as _resolve_device
from ._tensor import Tensor

__all__ = ["rms_norm", "layer_norm", "rope", "scaled_dot_product_attention", "cuda_kernel"]


def rms_norm(x, weight, eps):
    """x / sqrt(mean(x^2, last axis) + eps), times weight (over the last axis; None for none)."""
    from .nn import functional as F
    return F.rms_norm(x, (x.shape[-1],), weight, eps)


def layer_norm(x, weight, bias, eps):
    """(x - mean) / sqrt(var + eps) over the last axis, times weight plus bias (either may be None)."""
    from .nn import functional as F
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def rope(a, dims, *, traditional, base, scale, offset, freqs=None):
    """Rotary positional encoding of a [..., L, D]: the first `dims` features of row l are
    turned in pairs ((2i, 2i + 1) when traditional, else (i, i + dims / 2)) by the angle
    (offset + l) * scale * base^(-2i / dims). `offset` (an int or a one-element tensor) is
    the position of the first row, a KV cache's length. `freqs` is not supported (MLX's
    custom frequencies): pass base."""
    if freqs is not None:
        raise NotImplementedError("fast.rope: custom freqs are not supported; pass base")
    if isinstance(offset, Tensor):
        if offset.numel() != 1:
            raise ValueError(f"fast.rope: offset must be an int or a one-element tensor, got shape {tuple(offset.shape)}")
        offset = int(offset.item())
    if not isinstance(dims, int) or isinstance(dims, bool):
        raise TypeError(f"fast.rope: dims must be an int, got {type(dims).__name__}")
    if base is None:
        raise ValueError("fast.rope: base must be given when freqs is not")
    return _C._rope(a, dims, bool(traditional), float(base), float(scale), int(offset))


def scaled_dot_product_attention(q, k, v, *, scale, mask=None):
    """softmax(q @ k^T * scale + mask) @ v over [B, H, L, D] operands (k and v may have fewer
    heads: grouped-query attention). mask: None, "causal", a boolean tensor (True takes
    part) or an additive one."""
    from .nn import functional as F
    causal = isinstance(mask, str)
    if causal and mask != "causal":
        raise ValueError(f'fast.scaled_dot_product_attention: mask must be None, "causal" or a tensor, got {mask!r}')
    gqa = k.shape[-3] != q.shape[-3] if q.ndim >= 3 and k.ndim >= 3 else False
    return F.scaled_dot_product_attention(q, k, v, attn_mask=None if causal else mask, is_causal=causal,
                                          scale=scale, enable_gqa=gqa)


# ---- custom CUDA kernels ---------------------------------------------------------------

# Each dtype's C type in a kernel's signature (the 16-bit floats are cuda_fp16.h's and
# cuda_bf16.h's, included when a kernel uses them).
_C_TYPES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
            "int64": "long long", "float16": "__half", "bfloat16": "__nv_bfloat16", "float32": "float",
            "float64": "double"}
_MAX_DIMS = 16  # the rank a shape or strides parameter holds (csrc/ops/prims/custom_kernel.h)
# Parameter kinds (ops::CustomKernelParam::Kind)
_POINTER, _SHAPE, _STRIDES, _NDIM = 0, 1, 2, 3
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _c_type(dtype, what):
    name = str(dtype).split(".")[-1]
    if name not in _C_TYPES:
        raise TypeError(f"fast.cuda_kernel: {what} has dtype {name}, which a kernel cannot take "
                        f"(one of {', '.join(_C_TYPES)})")
    return _C_TYPES[name]


class CudaKernel:
    """A kernel from fast.cuda_kernel: call it with inputs, output shapes and dtypes, a grid
    (in threads, as MLX's) and a threadgroup; it returns the outputs."""

    def __init__(self, name, input_names, output_names, source, header, ensure_row_contiguous, shared_memory):
        for n in [name, *input_names, *output_names]:
            if not isinstance(n, str) or not _IDENTIFIER.match(n):
                raise ValueError(f"fast.cuda_kernel: names must be C identifiers, got {n!r}")
        if len(set(input_names) | set(output_names)) != len(input_names) + len(output_names):
            raise ValueError("fast.cuda_kernel: input and output names must be distinct")
        if len(input_names) + len(output_names) > 255:
            raise ValueError("fast.cuda_kernel: a kernel takes at most 255 inputs and outputs together")
        if not isinstance(source, str) or not isinstance(header, str):
            raise TypeError("fast.cuda_kernel: source and header must be strings")
        if not isinstance(shared_memory, int) or shared_memory < 0:
            raise ValueError(f"fast.cuda_kernel: shared_memory must be a byte count >= 0, got {shared_memory!r}")
        self.name, self.input_names, self.output_names = name, list(input_names), list(output_names)
        self.source, self.header = source, header
        self.ensure_row_contiguous, self.shared_memory = bool(ensure_row_contiguous), shared_memory

    def _uses(self, word):
        return re.search(rf"\b{word}\b", self.source) is not None

    def _signature(self, inputs, output_dtypes):
        """The kernel's parameters as C declarations, and as (kind, tensor) for the launch."""
        decls, params = [], []
        for i, (n, x) in enumerate(zip(self.input_names, inputs)):
            decls.append(f"const {_c_type(x.dtype, f'input {n}')}* __restrict__ {n}")
            params.append((_POINTER, i))
            for suffix, kind, decl in (("shape", _SHAPE, "const lucid_dims"), ("strides", _STRIDES, "const lucid_dims"),
                                       ("ndim", _NDIM, "const int")):
                if self._uses(f"{n}_{suffix}"):
                    decls.append(f"{decl} {n}_{suffix}")
                    params.append((kind, i))
        for j, (n, d) in enumerate(zip(self.output_names, output_dtypes)):
            decls.append(f"{_c_type(d, f'output {n}')}* {n}")
            params.append((_POINTER, len(inputs) + j))
        return decls, params

    def source_for(self, inputs, output_dtypes, template=None):
        """The whole CUDA source a call with these inputs, output dtypes and template
        arguments compiles, and its parameters for the launch."""
        lines, c_types = [], []
        for n, v in (template or []):
            if not isinstance(n, str) or not _IDENTIFIER.match(n):
                raise ValueError(f"fast.cuda_kernel: template argument names must be C identifiers, got {n!r}")
            if isinstance(v, bool):
                lines.append(f"constexpr bool {n} = {'true' if v else 'false'};")
            elif isinstance(v, int):
                lines.append(f"constexpr int {n} = {v};")
            elif hasattr(v, "itemsize") and not isinstance(v, (float, str)):
                c_types.append(_c_type(v, f"template argument {n}"))
                lines.append(f"using {n} = {c_types[-1]};")
            else:
                raise TypeError(f"fast.cuda_kernel: template argument {n} must be a dtype, an int or a bool, "
                                f"got {type(v).__name__}")
        decls, params = self._signature(inputs, output_dtypes)
        text = "\n".join([*decls, *lines, self.header, self.source])
        includes = [h for h, used in (("cuda_fp16.h", "__half" in text), ("cuda_bf16.h", "__nv_bfloat16" in text),
                                      ("cooperative_groups.h", "cooperative_groups" in text)) if used]
        source = "\n".join([
            f"// lucid.fast.cuda_kernel {self.name} (signature generated by python/lucid/fast.py)",
            *[f"#include <{h}>" for h in includes],
            f"struct lucid_dims {{ long long v[{_MAX_DIMS}]; "
            "__device__ long long operator[](int i) const { return v[i]; } };",
            *lines, self.header,
            f'extern "C" __global__ void {self.name}({", ".join(decls)}) {{', self.source, "}", ""])
        return source, params, bool(includes)

    def __call__(self, *, inputs, output_shapes, output_dtypes, grid, threadgroup, template=None, init_value=None,
                 verbose=False, stream=None):
        from . import _creation, gpu
        inputs = list(inputs)
        if len(inputs) != len(self.input_names) or not all(isinstance(x, Tensor) for x in inputs):
            raise TypeError(f"fast.cuda_kernel {self.name}: expected {len(self.input_names)} input tensors "
                            f"({', '.join(self.input_names)}), got {[type(x).__name__ for x in inputs]}")
        if len(output_shapes) != len(self.output_names) or len(output_dtypes) != len(self.output_names):
            raise ValueError(f"fast.cuda_kernel {self.name}: expected a shape and a dtype for each of the "
                             f"{len(self.output_names)} outputs ({', '.join(self.output_names)})")
        for what, v in (("grid", grid), ("threadgroup", threadgroup)):
            if len(v) != 3 or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in v):
                raise ValueError(f"fast.cuda_kernel {self.name}: {what} must be 3 positive ints, got {tuple(v)}")
        if threadgroup[0] * threadgroup[1] * threadgroup[2] > 1024:
            raise ValueError(f"fast.cuda_kernel {self.name}: a threadgroup holds at most 1024 threads, got "
                             f"{tuple(threadgroup)}")
        blocks = [(g + t - 1) // t for g, t in zip(grid, threadgroup)]
        if blocks[0] >= 2 ** 31 or blocks[1] > 65535 or blocks[2] > 65535:
            raise ValueError(f"fast.cuda_kernel {self.name}: grid {tuple(grid)} needs {tuple(blocks)} blocks, past "
                             "CUDA's (2^31 - 1, 65535, 65535)")
        devices = {x.device for x in inputs}
        if len(devices) > 1:
            raise RuntimeError(f"fast.cuda_kernel {self.name}: inputs on several devices: {sorted(map(str, devices))}")
        device = devices.pop() if devices else _resolve_device(stream if stream is not None else "gpu")
        if device.type != "gpu":
            raise RuntimeError(f"fast.cuda_kernel {self.name}: a CUDA kernel runs on the GPU; its inputs are on "
                               f"{device} (move them with .to('gpu'))")
        if self.ensure_row_contiguous:
            inputs = [x.contiguous() for x in inputs]
        source, params, needs_headers = self.source_for(inputs, output_dtypes, template)
        if verbose:
            print(source)
        options = ["--std=c++17"]
        if needs_headers:
            dirs = _C.nvrtc_include_dirs()
            if not dirs:
                raise RuntimeError(f"fast.cuda_kernel {self.name}: the source uses the CUDA toolkit's headers, "
                                   "which are not here (set CUDA_HOME)")
            options += [f"-I{d}" for d in dirs]
        # (compiled once: the generated-kernel cache keys it by source and options)
        kernel = _C.gpu_compile_kernel(source, self.name, options, device.index)
        outputs = []
        for shape, dtype in zip(output_shapes, output_dtypes):
            if init_value is None:
                outputs.append(_creation.empty(tuple(shape), dtype=dtype, device=device))
            else:
                outputs.append(_creation.full(tuple(shape), init_value, dtype=dtype, device=device))
        _C.gpu_custom_kernel(kernel, outputs, inputs, params, tuple(blocks), tuple(threadgroup),
                             self.shared_memory)
        return outputs


def cuda_kernel(name, input_names, output_names, source, header="", ensure_row_contiguous=True, shared_memory=0):
    """A custom CUDA kernel from the body of its function (MLX's mx.fast.cuda_kernel): the
    signature is generated, with each input a `const T* name` (plus `name_shape`,
    `name_strides` and `name_ndim` where the body uses them) and each output a `T* name`,
    T the tensor's C type. Template arguments become `using` and `constexpr` declarations.
    Compiled with NVRTC when first called with a new source (its messages in a
    RuntimeError), cached in memory and on disk like lucid's own generated kernels, and run
    like any op: recorded in order with lazy GPU ops. The call's grid is in threads."""
    return CudaKernel(name, list(input_names), list(output_names), source, header, ensure_row_contiguous,
                      shared_memory)
