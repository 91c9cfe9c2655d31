// CUDA kernels of the reduction and softmax primitives (ops/prims/reduce.h) on the
// engine of reduce.cuh; max/min and their indices are reduce_extremum.cu. Accumulators follow the CPU's: double for floating types,
// int64 for integers, double pairs for complex64.
#include <cmath>
#include <limits>

#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/norm.h"
#include "backend/cuda/reduce.cuh"
#include "backend/cuda/register.h"
#include "backend/cuda/tensor_data.h"
#include "core/half.h"
#include "ops/prims/reduce.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

double mean_scale(int64_t count) { return count ? 1.0 / double(count) : std::numeric_limits<double>::quiet_NaN(); }

// ---- sums and moments ------------------------------------------------------------

struct Cplx {
  double re, im;
};

// The CPU's accumulate type of T and the conversions in and out of it.
template <typename T>
struct SumTraits {
  using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
  __device__ static Acc in(T x) { return Acc(opmath_t<T>(x)); }
  __device__ static Acc add(Acc a, Acc b) { return a + b; }
  __device__ static T out(Acc a, double scale) {
    if constexpr (std::is_integral_v<T>) return T(a);
    else return T(opmath_t<T>(a * scale));
  }
};
template <typename R>
struct SumTraits<::cuda::std::complex<R>> {
  using Acc = Cplx;
  using T = ::cuda::std::complex<R>;
  __device__ static Acc in(T x) { return {double(x.real()), double(x.imag())}; }
  __device__ static Acc add(Acc a, Acc b) { return {a.re + b.re, a.im + b.im}; }
  __device__ static T out(Acc a, double scale) { return T(R(a.re * scale), R(a.im * scale)); }
};

template <typename T>
struct SumReducer {
  using Traits = SumTraits<T>;
  using Acc = typename Traits::Acc;
  const T* x;
  T* y;
  double scale;
  __device__ Acc init() const { return Acc{}; }
  __device__ Acc lift(T v, int64_t, int64_t) const { return Traits::in(v); }
  __device__ Acc load(int64_t e, int64_t j) const { return lift(x[e], e, j); }
  __device__ Acc combine(Acc a, Acc b) const { return Traits::add(a, b); }
  __device__ void store(int64_t o, Acc a) const { y[o] = Traits::out(a, scale); }
};

void sum_last_dims_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::SumLastDims>(prim);
  TensorImpl& out = *outs[0];
  // The rows [out.numel(), n] of a contiguous copy when x is a view of another layout.
  TensorPtr dense = ins[0]->is_contiguous() ? nullptr : ins[0]->clone();
  const TensorImpl& x = dense ? *dense : *ins[0];
  int64_t n = 1;
  for (size_t d = x.shape().size() - size_t(p.reduced); d < x.shape().size(); ++d) n *= x.shape()[d];
  const double scale = p.mean ? mean_scale(n) : 1.0;
  visit_dtype(x.dtype(), [&]<typename T>() {
    using D = device_t<T>;
    reduce_block(SumReducer<D>{cdata<D>(&x), mdata<D>(&out), scale}, out.numel(), n, 1, out.device().index);
  });
}

// Sum, |x|, x^2 or (x - mean)^2 of a block of a float dtype (ops::block_float_dtype),
// in double.
enum class Term : uint8_t { Value, Abs, Square, SqDev };

template <typename T, Term kTerm>
struct MomentReducer {
  using Acc = double;
  const T* x;
  int64_t n, inner;
  const double* mean;  // SqDev: per output
  // The result: stored as double (a mean for the second pass) or as T.
  double* scratch;
  T* y;
  double scale, dof;
  bool count_nonzero, root;  // Var/Std's division; Std's and Norm2's square root
  __device__ Acc init() const { return 0.0; }
  __device__ Acc load(int64_t e, int64_t j) const { return lift(x[e], e, j); }
  __device__ Acc lift(T xe, int64_t e, int64_t) const {
    const double v = double(opmath_t<T>(xe));
    if constexpr (kTerm == Term::Abs) return fabs(v);
    else if constexpr (kTerm == Term::Square) return v * v;
    else if constexpr (kTerm == Term::SqDev) {
      const double d = v - mean[(e / (n * inner)) * inner + e % inner];
      return d * d;
    } else return v;
  }
  __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ void store(int64_t o, Acc a) const {
    double v = a * scale;
    if (count_nonzero) v = n ? v / dof : nan("");
    if (root) v = sqrt(v);
    if (scratch) scratch[o] = v;
    else y[o] = T(opmath_t<T>(v));
  }
};

template <typename T>
void moment_block(const ops::MomentBlock& p, const TensorImpl& xin, TensorImpl& out) {
  using M = ops::BlockMoment;
  const T* x = cdata<T>(&xin);
  T* y = mdata<T>(&out);
  const int dev = out.device().index;
  auto run = [&]<Term kTerm>(const double* mean, double* scratch, double scale, bool divide, bool root) {
    const double dof = std::max(double(p.n) - p.correction, 0.0);
    reduce_block(MomentReducer<T, kTerm>{x, p.n, p.inner, mean, scratch, y, scale, dof, divide, root}, p.outer, p.n,
                 p.inner, dev);
  };
  switch (p.moment) {
    case M::Sum: return run.template operator()<Term::Value>(nullptr, nullptr, 1.0, false, false);
    case M::Mean: return run.template operator()<Term::Value>(nullptr, nullptr, mean_scale(p.n), false, false);
    case M::Norm1: return run.template operator()<Term::Abs>(nullptr, nullptr, 1.0, false, false);
    case M::Norm2: return run.template operator()<Term::Square>(nullptr, nullptr, 1.0, false, true);
    case M::Var:
    case M::Std: {
      // Two passes, as the CPU: the mean of each output, then the squared deviations.
      TensorPtr mean = TensorImpl::empty({p.outer * p.inner}, Dtype::F64, out.device());
      run.template operator()<Term::Value>(nullptr, mdata<double>(mean.get()), mean_scale(p.n), false, false);
      run.template operator()<Term::SqDev>(cdata<double>(mean.get()), nullptr, 1.0, true, p.moment == M::Std);
      return;
    }
  }
}

void moment_block_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::MomentBlock>(prim);
  switch (ins[0]->dtype()) {
    case Dtype::F32: return moment_block<float>(p, *ins[0], *outs[0]);
    case Dtype::F16: return moment_block<Half>(p, *ins[0], *outs[0]);
    case Dtype::BF16: return moment_block<BFloat16>(p, *ins[0], *outs[0]);
    default: return moment_block<double>(p, *ins[0], *outs[0]);
  }
}

// ---- all / any ------------------------------------------------------------------

struct AllAnyReducer {
  using Acc = int;
  const bool* x;
  bool* y;
  bool is_all;
  __device__ Acc init() const { return is_all ? 1 : 0; }
  __device__ Acc lift(bool v, int64_t, int64_t) const { return v ? 1 : 0; }
  __device__ Acc load(int64_t e, int64_t j) const { return lift(x[e], e, j); }
  __device__ Acc combine(Acc a, Acc b) const { return is_all ? (a & b) : (a | b); }
  __device__ void store(int64_t o, Acc a) const { y[o] = a != 0; }
};

void all_any_rows_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::AllAnyRows>(prim);
  reduce_block(AllAnyReducer{cdata<bool>(ins[0]), mdata<bool>(outs[0]), p.is_all}, p.outer, p.n, 1,
               outs[0]->device().index);
}

// ---- softmax ----------------------------------------------------------------------

// Rows (inner == 1) are softmax_rows.cu's kernel, which a fused softmax shares;
// blocks here.
struct MaxOp {  // NaN wins
  __device__ double combine(double a, double b) const { return (a != a || a > b) ? a : b; }
};
struct AddOp {
  __device__ double combine(double a, double b) const { return a + b; }
};

// Elements computed in C: float for float32 and the 16-bit floats (read and written in
// 16 bits, computed as float32 and rounded once, the CPU's result on a float32 copy),
// double for float64.
template <typename T>
struct ComputeOf {
  using type = float;
};
template <>
struct ComputeOf<double> {
  using type = double;
};

// inner > 1: one thread per (o, i), walking n with stride inner (coalesced over i).
template <typename T>
__global__ void softmax_cols_kernel(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool log) {
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < outer * inner;
       c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (c / inner) * n * inner + c % inner;
    double m = -INFINITY, sum = 0;
    for (int64_t j = 0; j < n; ++j) m = MaxOp().combine(m, double(x[base + j * inner]));
    for (int64_t j = 0; j < n; ++j) sum += exp(double(x[base + j * inner]) - m);
    const double lse = ::log(sum);
    for (int64_t j = 0; j < n; ++j) {
      const double d = double(x[base + j * inner]) - m;
      y[base + j * inner] = T(typename ComputeOf<T>::type(log ? d - lse : exp(d) / sum));
    }
  }
}

template <typename T>
void softmax(const ops::SoftmaxDim& p, const TensorImpl& x, TensorImpl& y) {
  if (p.outer * p.n * p.inner == 0) return;
  const int dev = y.device().index;
  DeviceGuard guard(dev);
  cudaStream_t s = stream(dev);
  if (p.inner == 1) {
    softmax_rows(x, y, p.outer, p.n, p.log);
  } else {
    const int64_t cols = p.outer * p.inner;
    softmax_cols_kernel<T><<<unsigned(std::min<int64_t>((cols + 255) / 256, 65535)), 256, 0, s>>>(
        cdata<T>(&x), mdata<T>(&y), p.outer, p.n, p.inner, p.log);
  }
  LUCID_CUDA_CHECK(cudaGetLastError());
}

// SoftmaxBackwardDim: gx = y * (g - sum(g * y)) or g - exp(y) * sum(g). Rows (inner
// == 1): one block a row, the sum a block tree in double, then one pass writing gx;
// columns: one thread a column. Elements in ComputeOf<T> (16-bit read and written
// as is, computed in float32).
template <typename T>
__global__ void __launch_bounds__(kReduceThreads) softmax_backward_rows_kernel(const T* y, const T* g, T* gx,
                                                                               int64_t outer, int64_t n, bool log) {
  using C = typename ComputeOf<T>::type;
  __shared__ double s[kReduceThreads];
  const int tid = threadIdx.x;
  for (int64_t o = blockIdx.x; o < outer; o += gridDim.x) {
    const T *yr = y + o * n, *gr = g + o * n;
    T* out = gx + o * n;
    double dot = 0;
    for (int64_t j = tid; j < n; j += kReduceThreads) dot += double(C(gr[j])) * (log ? 1.0 : double(C(yr[j])));
    const C d = C(block_tree(AddOp(), s, dot, tid, kReduceThreads));
    for (int64_t j = tid; j < n; j += kReduceThreads) {
      const C yj = C(yr[j]), gj = C(gr[j]);
      out[j] = T(log ? gj - exp(yj) * d : yj * (gj - d));
    }
  }
}

template <typename T>
__global__ void softmax_backward_cols_kernel(const T* y, const T* g, T* gx, int64_t outer, int64_t n, int64_t inner,
                                             bool log) {
  using C = typename ComputeOf<T>::type;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < outer * inner;
       c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (c / inner) * n * inner + c % inner;
    double dot = 0;
    for (int64_t j = 0; j < n; ++j)
      dot += double(C(g[base + j * inner])) * (log ? 1.0 : double(C(y[base + j * inner])));
    const C d = C(dot);
    for (int64_t j = 0; j < n; ++j) {
      const C yj = C(y[base + j * inner]), gj = C(g[base + j * inner]);
      gx[base + j * inner] = T(log ? gj - exp(yj) * d : yj * (gj - d));
    }
  }
}

template <typename T>
void softmax_backward(const ops::SoftmaxBackwardDim& p, const TensorImpl& y, const TensorImpl& g, TensorImpl& gx) {
  if (p.outer * p.n * p.inner == 0) return;
  const int dev = gx.device().index;
  DeviceGuard guard(dev);
  cudaStream_t s = stream(dev);
  if (p.inner == 1) {
    softmax_backward_rows_kernel<T><<<unsigned(std::min<int64_t>(p.outer, 65535)), kReduceThreads, 0, s>>>(
        cdata<T>(&y), cdata<T>(&g), mdata<T>(&gx), p.outer, p.n, p.log);
  } else {
    const int64_t cols = p.outer * p.inner;
    softmax_backward_cols_kernel<T><<<unsigned(std::min<int64_t>((cols + 255) / 256, 65535)), 256, 0, s>>>(
        cdata<T>(&y), cdata<T>(&g), mdata<T>(&gx), p.outer, p.n, p.inner, p.log);
  }
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void softmax_backward_dim_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::SoftmaxBackwardDim>(prim);
  visit_floating(ins[0]->dtype(), [&](auto t) {
    softmax_backward<decltype(t)>(p, *ins[0], *ins[1], *outs[0]);
  });
}

void softmax_dim_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::SoftmaxDim>(prim);
  visit_floating(ins[0]->dtype(), [&](auto t) { softmax<decltype(t)>(p, *ins[0], *outs[0]); });
}

}  // namespace

void register_reduce_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::SumLastDims, DeviceType::GPU, sum_last_dims_kernel);
  ops::register_kernel(Prim::MomentBlock, DeviceType::GPU, moment_block_kernel);
  ops::register_kernel(Prim::AllAnyRows, DeviceType::GPU, all_any_rows_kernel);
  ops::register_kernel(Prim::SoftmaxDim, DeviceType::GPU, softmax_dim_kernel);
  ops::register_kernel(Prim::SoftmaxBackwardDim, DeviceType::GPU, softmax_backward_dim_kernel);
}

}  // namespace lucid::cuda
