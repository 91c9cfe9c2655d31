// CUDA kernels of the float64 arithmetic between batch_norm's and group_norm's unit
// passes (ops/prims/norm.h): Chan's combination of unit moments into channel or group
// statistics, the running statistics, the per-unit affine coefficients, and the fused
// backward's coefficients. The CPU's (backend/cpu/norm_stats.cpp) is the specification.
//
// Each channel (batch norm) or group (group norm) is a segment of units, combined by
// one block of kSegmentThreads: the threads take the segment's units in a fixed stride,
// a deterministic block sum (Note [Deterministic group sums]) meets them, and the
// block then writes the coefficients of every unit of its segment. This is the second,
// fixed-order stage of the per-channel reduction; the first is the unit pass
// (norm_units.cu), so no float atomics anywhere. A block rather than one thread per
// segment: a batch norm over a large batch has few channels of many units each.
//
// Note [Uncontracted differences of products]
// s2 - mean * s1 (the sum of dy * (x - mean)) is often a cancellation, exactly 0 when a
// group has one element. nvcc would contract it into an fma, which keeps the product
// unrounded and leaves the rounding error of s2 behind; the CPU rounds the product
// first and gets the 0. dmul_rounded keeps the CPU's rounding there.
#include <cmath>
#include <cstdint>
#include <algorithm>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/norm.h"
#include "backend/cuda/norm_group_sum.cuh"
#include "backend/cuda/stream.h"
#include "ops/prims/norm.h"

namespace lucid::cuda {

namespace {

constexpr int kSegmentThreads = 128;

const double* f64(const TensorImpl* t) { return reinterpret_cast<const double*>(t->data_ptr()); }
double* f64(TensorImpl* t) { return reinterpret_cast<double*>(t->data_ptr()); }

// Reads the present ones of a primitive's optional inputs in order (null when absent).
class InputCursor {
 public:
  explicit InputCursor(ops::Inputs ins) : ins_(ins) {}
  const double* next(bool present = true) { return present ? f64(ins_[i_++]) : nullptr; }

 private:
  ops::Inputs ins_;
  size_t i_ = 0;
};

// Batch norm's units of channel c: the N rows (n, c), or the L columns (c, l).
struct ChannelUnits {
  bool columns;
  int64_t channels, members;  // members: units per channel
  __device__ int64_t unit(int64_t c, int64_t j) const { return columns ? c * members + j : j * channels + c; }
};

ChannelUnits channel_units(const ops::NormUnits& u, int64_t channels) {
  return {u.columns, channels, channels ? u.count() / channels : 0};
}

__device__ __forceinline__ double dmul_rounded(double a, double b) { return __dmul_rn(a, b); }

// A grid of one block per segment (at most 2^20; the kernels stride over the rest).
unsigned segment_grid(int64_t segments) { return unsigned(std::min<int64_t>(segments, int64_t(1) << 20)); }

struct BatchNormStatsArgs {
  ChannelUnits cu;
  int64_t unit_size, per_channel;  // elements of a unit, of a channel (N * L)
  double eps, momentum;
  bool training;
  const double *unit_mean, *unit_m2, *running_mean, *running_var, *weight, *bias;
  double *mean, *invstd, *scale, *shift, *new_mean, *new_var;
};

__global__ void __launch_bounds__(kSegmentThreads) batch_norm_stats_kernel_dev(BatchNormStatsArgs a) {
  __shared__ double scratch[kSegmentThreads / 32 * 2];
  const int tid = int(threadIdx.x);
  const int64_t J = a.cu.members;
  for (int64_t c = blockIdx.x; c < a.cu.channels; c += gridDim.x) {
    double mu, invstd;
    if (a.training) {
      double s[1] = {0.0};
      for (int64_t j = tid; j < J; j += kSegmentThreads) s[0] += a.unit_mean[a.cu.unit(c, j)];
      group_sum<kSegmentThreads>(s, scratch);
      mu = J ? s[0] / double(J) : 0.0;
      double t[2] = {0.0, 0.0};  // sum of the unit m2s, and of the squared deviations of the unit means
      for (int64_t j = tid; j < J; j += kSegmentThreads) {
        const int64_t u = a.cu.unit(c, j);
        t[0] += a.unit_m2[u];
        const double d = a.unit_mean[u] - mu;
        t[1] += d * d;
      }
      group_sum<kSegmentThreads>(t, scratch);
      const double m2 = t[0] + double(a.unit_size) * t[1];
      const int64_t M = a.per_channel;
      invstd = 1.0 / sqrt(M ? m2 / double(M) + a.eps : a.eps);
      if (tid == 0 && a.new_mean) a.new_mean[c] = (1 - a.momentum) * a.running_mean[c] + a.momentum * mu;
      if (tid == 0 && a.new_var)
        a.new_var[c] = (1 - a.momentum) * a.running_var[c] + a.momentum * (M > 1 ? m2 / double(M - 1) : nan(""));
    } else {
      mu = a.running_mean[c];
      invstd = 1.0 / sqrt(a.running_var[c] + a.eps);
    }
    if (tid == 0) {
      a.mean[c] = mu;
      a.invstd[c] = invstd;
    }
    const double wc = a.weight ? a.weight[c] : 1.0, bc = a.bias ? a.bias[c] : 0.0;
    for (int64_t j = tid; j < J; j += kSegmentThreads) {
      const int64_t u = a.cu.unit(c, j);
      a.scale[u] = invstd * wc;
      a.shift[u] = bc - mu * invstd * wc;
    }
  }
}

struct BatchNormGradArgs {
  ChannelUnits cu;
  double per_channel;
  bool training;
  const double *s1, *s2, *mean, *invstd, *weight;
  double *dweight, *dbias, *A, *B, *D;
};

__global__ void __launch_bounds__(kSegmentThreads) batch_norm_grad_coeffs_kernel_dev(BatchNormGradArgs a) {
  __shared__ double scratch[kSegmentThreads / 32 * 2];
  const int tid = int(threadIdx.x);
  const int64_t J = a.cu.members;
  const double M = a.per_channel;
  for (int64_t c = blockIdx.x; c < a.cu.channels; c += gridDim.x) {
    double s[2] = {0.0, 0.0};  // sum dy, sum dy * x
    for (int64_t j = tid; j < J; j += kSegmentThreads) {
      const int64_t u = a.cu.unit(c, j);
      s[0] += a.s1[u];
      s[1] += a.s2[u];
    }
    group_sum<kSegmentThreads>(s, scratch);
    const double is = a.invstd[c], sdyxc = s[1] - dmul_rounded(a.mean[c], s[0]);  // sum dy * (x - mean)
    if (tid == 0) {
      a.dweight[c] = is * sdyxc;
      a.dbias[c] = s[0];
    }
    const double coef = (a.weight ? a.weight[c] : 1.0) * is;
    double bb = 0, dd = 0;
    if (a.training && M > 0) {
      const double k2 = is * is * sdyxc / M;
      bb = -coef * k2;
      dd = coef * (a.mean[c] * k2 - s[0] / M);
    }
    for (int64_t j = tid; j < J; j += kSegmentThreads) {
      const int64_t u = a.cu.unit(c, j);
      a.A[u] = coef;
      a.B[u] = bb;
      a.D[u] = dd;
    }
  }
}

// Group norm: group q = n * G + g is the Cg consecutive rows q * Cg + j (channel
// g * Cg + j of sample n).
struct GroupShape {
  int64_t batch, channels, groups, per_group, len;  // per_group: Cg
};

struct GroupNormStatsArgs {
  GroupShape gs;
  double eps;
  const double *unit_mean, *unit_m2, *weight, *bias;
  double *mean, *rstd, *scale, *shift;
};

__global__ void __launch_bounds__(kSegmentThreads) group_norm_stats_kernel_dev(GroupNormStatsArgs a) {
  __shared__ double scratch[kSegmentThreads / 32 * 2];
  const int tid = int(threadIdx.x);
  const int64_t Cg = a.gs.per_group, L = a.gs.len, M = Cg * L;
  for (int64_t q = blockIdx.x; q < a.gs.batch * a.gs.groups; q += gridDim.x) {
    const double* m = a.unit_mean + q * Cg;
    const double* m2 = a.unit_m2 + q * Cg;
    double s[1] = {0.0};
    for (int64_t j = tid; j < Cg; j += kSegmentThreads) s[0] += m[j];
    group_sum<kSegmentThreads>(s, scratch);
    const double mu = s[0] / double(Cg);
    double t[2] = {0.0, 0.0};
    for (int64_t j = tid; j < Cg; j += kSegmentThreads) {
      t[0] += m2[j];
      t[1] += (m[j] - mu) * (m[j] - mu);
    }
    group_sum<kSegmentThreads>(t, scratch);
    const double rstd = 1.0 / sqrt(M ? (t[0] + double(L) * t[1]) / double(M) + a.eps : a.eps);
    if (tid == 0) {
      a.mean[q] = mu;
      a.rstd[q] = rstd;
    }
    const int64_t c0 = (q % a.gs.groups) * Cg;
    for (int64_t j = tid; j < Cg; j += kSegmentThreads) {
      const double wc = a.weight ? a.weight[c0 + j] : 1.0, bc = a.bias ? a.bias[c0 + j] : 0.0;
      a.scale[q * Cg + j] = rstd * wc;
      a.shift[q * Cg + j] = bc - mu * rstd * wc;
    }
  }
}

struct GroupNormGradArgs {
  GroupShape gs;
  const double *s1, *s2, *mean, *rstd, *weight;
  double *dweight, *dbias, *A, *B, *D;
};

// The coefficients of the rows of each group.
__global__ void __launch_bounds__(kSegmentThreads) group_norm_grad_coeffs_kernel_dev(GroupNormGradArgs a) {
  __shared__ double scratch[kSegmentThreads / 32 * 2];
  const int tid = int(threadIdx.x);
  const int64_t Cg = a.gs.per_group;
  const double M = double(Cg * a.gs.len);
  for (int64_t q = blockIdx.x; q < a.gs.batch * a.gs.groups; q += gridDim.x) {
    const int64_t c0 = (q % a.gs.groups) * Cg;
    double s[2] = {0.0, 0.0};  // sum of dxhat = dy * w, and of dxhat * x
    for (int64_t j = tid; j < Cg; j += kSegmentThreads) {
      const double wc = a.weight ? a.weight[c0 + j] : 1.0;
      s[0] += wc * a.s1[q * Cg + j];
      s[1] += wc * a.s2[q * Cg + j];
    }
    group_sum<kSegmentThreads>(s, scratch);
    const double is = a.rstd[q], mu = a.mean[q];
    const double sxh = is * (s[1] - dmul_rounded(mu, s[0]));  // sum dxhat * xhat
    const double k2 = M > 0 ? is * is * sxh / M : 0.0;
    const double d = M > 0 ? mu * k2 - is * s[0] / M : 0.0;
    for (int64_t j = tid; j < Cg; j += kSegmentThreads) {
      a.A[q * Cg + j] = is * (a.weight ? a.weight[c0 + j] : 1.0);
      a.B[q * Cg + j] = -k2;
      a.D[q * Cg + j] = d;
    }
  }
}

// d weight and d bias of each channel: sums over the batch.
__global__ void __launch_bounds__(kSegmentThreads) group_norm_param_grads_kernel_dev(GroupNormGradArgs a) {
  __shared__ double scratch[kSegmentThreads / 32 * 2];
  const int tid = int(threadIdx.x);
  const int64_t C = a.gs.channels, G = a.gs.groups, Cg = a.gs.per_group;
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    double s[2] = {0.0, 0.0};
    for (int64_t k = tid; k < a.gs.batch; k += kSegmentThreads) {
      const int64_t q = k * G + c / Cg, row = k * C + c;
      s[0] += a.rstd[q] * (a.s2[row] - dmul_rounded(a.mean[q], a.s1[row]));
      s[1] += a.s1[row];
    }
    group_sum<kSegmentThreads>(s, scratch);
    if (tid == 0) {
      a.dweight[c] = s[0];
      a.dbias[c] = s[1];
    }
  }
}

// Launches kernel(args) over `segments` blocks on the stream of `out`'s device.
template <typename Args>
void launch_segments(void (*kernel)(Args), const Args& args, int64_t segments, const TensorImpl* out) {
  if (segments == 0) return;
  const int device = out->device().index;
  DeviceGuard guard(device);
  kernel<<<segment_grid(segments), kSegmentThreads, 0, stream(device)>>>(args);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void batch_norm_stats_kernel(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<ops::BatchNormStats>(prim);
  const int64_t C = p.channels, units = p.units.count();
  BatchNormStatsArgs a{};
  a.cu = channel_units(p.units, C);
  a.unit_size = p.units.size();
  a.per_channel = C ? p.units.n * p.units.k / C : 0;
  a.eps = p.eps;
  a.momentum = p.momentum;
  a.training = p.training;
  InputCursor in(ins);
  a.unit_mean = in.next(p.training);
  a.unit_m2 = a.unit_mean ? a.unit_mean + units : nullptr;
  a.running_mean = in.next(!p.training || p.update_mean);
  a.running_var = in.next(!p.training || p.update_var);
  a.weight = in.next(p.has_weight);
  a.bias = in.next(p.has_bias);
  a.mean = f64(outs[0]);
  a.invstd = a.mean + C;
  a.scale = f64(outs[1]);
  a.shift = a.scale + units;
  double* running = p.update_mean || p.update_var ? f64(outs[2]) : nullptr;
  a.new_mean = p.update_mean ? running : nullptr;
  a.new_var = p.update_var ? running + C : nullptr;
  launch_segments(batch_norm_stats_kernel_dev, a, C, outs[0]);
}

void batch_norm_grad_coeffs_kernel(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<ops::BatchNormGradCoeffs>(prim);
  const int64_t C = p.channels, units = p.units.count();
  BatchNormGradArgs a{};
  a.cu = channel_units(p.units, C);
  a.per_channel = double(C ? p.units.n * p.units.k / C : 0);
  a.training = p.training;
  InputCursor in(ins);
  a.s1 = in.next();
  a.s2 = a.s1 + units;
  a.mean = in.next();
  a.invstd = a.mean + C;
  a.weight = in.next(p.has_weight);
  a.dweight = f64(outs[0]);
  a.dbias = a.dweight + C;
  a.A = f64(outs[1]);
  a.B = a.A + units;
  a.D = a.B + units;
  launch_segments(batch_norm_grad_coeffs_kernel_dev, a, C, outs[0]);
}

void group_norm_stats_kernel(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<ops::GroupNormStats>(prim);
  const int64_t N = p.batch, C = p.channels, G = p.groups;
  GroupNormStatsArgs a{};
  a.gs = {N, C, G, C / G, p.len};
  a.eps = p.eps;
  InputCursor in(ins);
  a.unit_mean = in.next();
  a.unit_m2 = a.unit_mean + N * C;
  a.weight = in.next(p.has_weight);
  a.bias = in.next(p.has_bias);
  a.mean = f64(outs[0]);
  a.rstd = a.mean + N * G;
  a.scale = f64(outs[1]);
  a.shift = a.scale + N * C;
  launch_segments(group_norm_stats_kernel_dev, a, N * G, outs[0]);
}

void group_norm_grad_coeffs_kernel(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<ops::GroupNormGradCoeffs>(prim);
  const int64_t N = p.batch, C = p.channels, G = p.groups;
  GroupNormGradArgs a{};
  a.gs = {N, C, G, C / G, p.len};
  InputCursor in(ins);
  a.s1 = in.next();
  a.s2 = a.s1 + N * C;
  a.mean = in.next();
  a.rstd = a.mean + N * G;
  a.weight = in.next(p.has_weight);
  a.dweight = f64(outs[0]);
  a.dbias = a.dweight + C;
  a.A = f64(outs[1]);
  a.B = a.A + N * C;
  a.D = a.B + N * C;
  launch_segments(group_norm_grad_coeffs_kernel_dev, a, N * G, outs[0]);
  launch_segments(group_norm_param_grads_kernel_dev, a, C, outs[0]);
}

}  // namespace lucid::cuda
