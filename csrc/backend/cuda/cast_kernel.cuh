// The strided cast kernel: dst[i] = cast(src[i]) between any two dtypes, with the
// host's cast rules (core/copy.cpp). One kernel for all 144 dtype pairs: the dtypes
// are run-time arguments, uniform across the grid, so the per-element switch costs
// a predictable branch instead of 144 instantiations' compile time.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "backend/cuda/strided_copy_kernel.cuh"

namespace lucid::cuda {

// Mirrors lucid::Dtype's order (checked by a static_assert in runtime.cpp); the
// kernel header stays free of core's heavier headers.
enum class CastType : int { Bool, U8, I8, I16, I32, I64, F16, BF16, F32, F64, C64, C128 };

// Queues the cast of numel contiguous elements on `stream` with a vectorised kernel of
// the pair and returns true, when the destination is a floating type (16, 32 or 64 bits)
// and the source bool, int32, int64 or another floating type: the casts of mixed
// precision, masks and labels (the strided kernel's per-element switch ran a
// float32 -> bfloat16 cast at a quarter of torch's speed). False for any other pair.
bool launch_contiguous_cast(void* dst, CastType dst_type, const void* src, CastType src_type, int64_t numel,
                            cudaStream_t stream);

// Queues the cast of numel elements on `stream`; returns cudaGetLastError().
cudaError_t launch_strided_cast(void* dst, CastType dst_type, const void* src, CastType src_type,
                                int64_t numel, const StridedCopyParams& params,
                                cudaStream_t stream);

}  // namespace lucid::cuda
