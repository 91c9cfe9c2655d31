#include "backend/cuda/cast_kernel.cuh"

#include <type_traits>

#include "backend/cuda/elementwise_loop.cuh"
#include "core/half.h"

namespace lucid::cuda {

namespace {

// One element in transit: integers keep their exact 64-bit value (a double holds
// only 53 bits); floats and complex parts travel as doubles.
struct Value {
  bool is_int;
  int64_t i;
  double re, im;
};

template <typename T>
__device__ T load_as(const char* p) {
  return *reinterpret_cast<const T*>(p);
}

__device__ Value load(const char* p, CastType t) {
  switch (t) {
    case CastType::Bool: return {true, load_as<bool>(p) ? 1 : 0, 0, 0};
    case CastType::U8: return {true, load_as<uint8_t>(p), 0, 0};
    case CastType::I8: return {true, load_as<int8_t>(p), 0, 0};
    case CastType::I16: return {true, load_as<int16_t>(p), 0, 0};
    case CastType::I32: return {true, load_as<int32_t>(p), 0, 0};
    case CastType::I64: return {true, load_as<int64_t>(p), 0, 0};
    case CastType::F16: return {false, 0, double(float(load_as<Half>(p))), 0};
    case CastType::BF16: return {false, 0, double(float(load_as<BFloat16>(p))), 0};
    case CastType::F32: return {false, 0, double(load_as<float>(p)), 0};
    case CastType::F64: return {false, 0, load_as<double>(p), 0};
    case CastType::C64: {
      const float* c = reinterpret_cast<const float*>(p);
      return {false, 0, double(c[0]), double(c[1])};
    }
    case CastType::C128: {
      const double* c = reinterpret_cast<const double*>(p);
      return {false, 0, c[0], c[1]};
    }
  }
  return {true, 0, 0, 0};
}

// The host's rules: to bool is "!= 0"; complex to real keeps the real part; 16-bit
// floats convert through float; float to integer truncates toward zero.
template <typename T>
__device__ T to_int(const Value& v) {
  return v.is_int ? T(v.i) : T(v.re);
}
template <typename T>
__device__ T to_float(const Value& v) {
  return v.is_int ? T(v.i) : T(v.re);
}

__device__ void store(char* p, CastType t, const Value& v) {
  switch (t) {
    case CastType::Bool: *reinterpret_cast<bool*>(p) = v.is_int ? v.i != 0 : (v.re != 0 || v.im != 0); break;
    case CastType::U8: *reinterpret_cast<uint8_t*>(p) = to_int<uint8_t>(v); break;
    case CastType::I8: *reinterpret_cast<int8_t*>(p) = to_int<int8_t>(v); break;
    case CastType::I16: *reinterpret_cast<int16_t*>(p) = to_int<int16_t>(v); break;
    case CastType::I32: *reinterpret_cast<int32_t*>(p) = to_int<int32_t>(v); break;
    case CastType::I64: *reinterpret_cast<int64_t*>(p) = to_int<int64_t>(v); break;
    case CastType::F16: *reinterpret_cast<Half*>(p) = Half(to_float<float>(v)); break;
    case CastType::BF16: *reinterpret_cast<BFloat16*>(p) = BFloat16(to_float<float>(v)); break;
    case CastType::F32: *reinterpret_cast<float*>(p) = to_float<float>(v); break;
    case CastType::F64: *reinterpret_cast<double*>(p) = to_float<double>(v); break;
    case CastType::C64: {
      float* c = reinterpret_cast<float*>(p);
      c[0] = to_float<float>(v);
      c[1] = float(v.im);
      break;
    }
    case CastType::C128: {
      double* c = reinterpret_cast<double*>(p);
      c[0] = to_float<double>(v);
      c[1] = v.im;
      break;
    }
  }
}

__global__ void strided_cast_kernel(char* dst, CastType dst_type, const char* src, CastType src_type,
                                    int64_t numel, StridedCopyParams p) {
  for_each_strided(numel, p, [&](int64_t d_off, int64_t s_off) {
    store(dst + d_off, dst_type, load(src + s_off, src_type));
  });
}

// Four neighbours along the innermost dim per thread (its size a multiple of 4): one
// offset computation, a 64-bit division per dim, serves four elements.
__global__ void strided_cast_kernel4(char* dst, CastType dst_type, const char* src, CastType src_type,
                                     int64_t groups, StridedCopyParams p) {
  const int64_t ds = p.dst_strides[p.ndim - 1], ss = p.src_strides[p.ndim - 1];
  const int64_t step = int64_t(blockDim.x) * int64_t(gridDim.x);
  for (int64_t g = int64_t(blockIdx.x) * int64_t(blockDim.x) + int64_t(threadIdx.x); g < groups; g += step) {
    int64_t d_off;
    int64_t s_off;
    strided_offsets(g * 4, p, &d_off, &s_off);
#pragma unroll
    for (int j = 0; j < 4; ++j) store(dst + d_off + j * ds, dst_type, load(src + s_off + j * ss, src_type));
  }
}

// ---- contiguous casts between the common pairs -----------------------------------------

// The strided kernel's rules, for one pair known at compile time: 16-bit floats convert
// through float, everything else directly (C++'s conversions are the host's here:
// float to integer truncates, bool becomes 0 or 1).
template <typename D, typename S>
__device__ __forceinline__ D convert(S v) {
  constexpr bool kHalfS = std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>;
  constexpr bool kHalfD = std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>;
  if constexpr (kHalfS || kHalfD) return D(float(v));
  else return D(v);
}

// Each thread converts 4 neighbouring elements with one load and one store of 4 when
// both sides are aligned for that (kVector), then the grid strides on.
template <typename D, typename S, bool kVector>
__global__ void __launch_bounds__(kCopyThreads) contiguous_cast_kernel(D* dst, const S* src, int64_t n) {
  constexpr int V = 4;
  const int64_t step = int64_t(gridDim.x) * kCopyThreads * V;
  for (int64_t i = (int64_t(blockIdx.x) * kCopyThreads + threadIdx.x) * V; i < n; i += step) {
    if (kVector && i + V <= n) {
      const EwVec<S, V> in = *reinterpret_cast<const EwVec<S, V>*>(src + i);
      EwVec<D, V> out;
#pragma unroll
      for (int k = 0; k < V; ++k) out.v[k] = convert<D>(in.v[k]);
      *reinterpret_cast<EwVec<D, V>*>(dst + i) = out;
    } else {
      for (int64_t k = i; k < n && k < i + V; ++k) dst[k] = convert<D>(src[k]);
    }
  }
}

template <typename D, typename S>
void launch_contiguous(void* dst, const void* src, int64_t n, cudaStream_t stream) {
  const unsigned grid = copy_grid((n + 3) / 4);
  const bool aligned = reinterpret_cast<uintptr_t>(dst) % (sizeof(D) * 4) == 0 &&
                       reinterpret_cast<uintptr_t>(src) % (sizeof(S) * 4) == 0;
  if (aligned)
    contiguous_cast_kernel<D, S, true><<<grid, kCopyThreads, 0, stream>>>(static_cast<D*>(dst), static_cast<const S*>(src), n);
  else
    contiguous_cast_kernel<D, S, false><<<grid, kCopyThreads, 0, stream>>>(static_cast<D*>(dst), static_cast<const S*>(src), n);
}

template <typename S>
bool launch_contiguous_from(void* dst, CastType dst_type, const void* src, int64_t n, cudaStream_t stream) {
  switch (dst_type) {
    case CastType::F16: launch_contiguous<Half, S>(dst, src, n, stream); return true;
    case CastType::BF16: launch_contiguous<BFloat16, S>(dst, src, n, stream); return true;
    case CastType::F32: launch_contiguous<float, S>(dst, src, n, stream); return true;
    case CastType::F64: launch_contiguous<double, S>(dst, src, n, stream); return true;
    default: return false;
  }
}

}  // namespace

bool launch_contiguous_cast(void* dst, CastType dst_type, const void* src, CastType src_type, int64_t numel,
                            cudaStream_t stream) {
  if (numel <= 0 || dst_type == src_type) return false;
  switch (src_type) {
    case CastType::Bool: return launch_contiguous_from<bool>(dst, dst_type, src, numel, stream);
    case CastType::I32: return launch_contiguous_from<int32_t>(dst, dst_type, src, numel, stream);
    case CastType::I64: return launch_contiguous_from<int64_t>(dst, dst_type, src, numel, stream);
    case CastType::F16: return launch_contiguous_from<Half>(dst, dst_type, src, numel, stream);
    case CastType::BF16: return launch_contiguous_from<BFloat16>(dst, dst_type, src, numel, stream);
    case CastType::F32: return launch_contiguous_from<float>(dst, dst_type, src, numel, stream);
    case CastType::F64: return launch_contiguous_from<double>(dst, dst_type, src, numel, stream);
    default: return false;
  }
}

cudaError_t launch_strided_cast(void* dst, CastType dst_type, const void* src, CastType src_type,
                                int64_t numel, const StridedCopyParams& params,
                                cudaStream_t stream) {
  if (numel <= 0) return cudaSuccess;
  if (params.ndim < 1 || params.ndim > kMaxCopyDims) return cudaErrorInvalidValue;
  if (params.sizes[params.ndim - 1] % 4 == 0)
    strided_cast_kernel4<<<copy_grid(numel / 4), kCopyThreads, 0, stream>>>(
        static_cast<char*>(dst), dst_type, static_cast<const char*>(src), src_type, numel / 4, params);
  else
    strided_cast_kernel<<<copy_grid(numel), kCopyThreads, 0, stream>>>(
        static_cast<char*>(dst), dst_type, static_cast<const char*>(src), src_type, numel, params);
  return cudaGetLastError();
}

}  // namespace lucid::cuda
