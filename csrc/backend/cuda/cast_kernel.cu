#include "backend/cuda/cast_kernel.cuh"

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
  }
}

__global__ void strided_cast_kernel(char* dst, CastType dst_type, const char* src, CastType src_type,
                                    int64_t numel, StridedCopyParams p) {
  for_each_strided(numel, p, [&](int64_t d_off, int64_t s_off) {
    store(dst + d_off, dst_type, load(src + s_off, src_type));
  });
}

}  // namespace

cudaError_t launch_strided_cast(void* dst, CastType dst_type, const void* src, CastType src_type,
                                int64_t numel, const StridedCopyParams& params,
                                cudaStream_t stream) {
  if (numel <= 0) return cudaSuccess;
  if (params.ndim < 1 || params.ndim > kMaxCopyDims) return cudaErrorInvalidValue;
  strided_cast_kernel<<<copy_grid(numel), kCopyThreads, 0, stream>>>(
      static_cast<char*>(dst), dst_type, static_cast<const char*>(src), src_type, numel, params);
  return cudaGetLastError();
}

}  // namespace lucid::cuda
