// The strided cast kernel: dst[i] = cast(src[i]) between any two dtypes, with the
// host's cast rules (core/copy.cpp). One kernel for all 121 dtype pairs: the dtypes
// are run-time arguments, uniform across the grid, so the per-element switch costs
// a predictable branch instead of 121 instantiations' compile time.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "backend/cuda/strided_copy_kernel.cuh"

namespace lucid::cuda {

// Mirrors lucid::Dtype's order (checked by a static_assert in runtime.cpp); the
// kernel header stays free of core's heavier headers.
enum class CastType : int { Bool, U8, I8, I16, I32, I64, F16, BF16, F32, F64, C64 };

// Queues the cast of numel elements on `stream`; returns cudaGetLastError().
cudaError_t launch_strided_cast(void* dst, CastType dst_type, const void* src, CastType src_type,
                                int64_t numel, const StridedCopyParams& params,
                                cudaStream_t stream);

}  // namespace lucid::cuda
