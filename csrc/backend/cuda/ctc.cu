// CUDA kernels of CTC loss (ops/prims/seq.h: CtcLoss, CtcLossBackward), the CPU's
// recursions (backend/cpu/ctc_kernels.cpp) in log space and in double: one block per
// batch entry, its threads over the positions s of the blank-extended target
// l' = (blank, l1, blank, ..., blank), one __syncthreads per time step. Every value
// is computed by one thread in a fixed order (the CPU's), so results are
// deterministic and no atomics are used.
//
// Note [CTC lengths as kernel arguments]
// The input and target lengths are host numbers of the primitive. They reach the
// kernel by value, kLengthsPerLaunch entries per launch (a batch of more entries is
// several launches), never through an upload that would synchronise the stream.
//
// Note [The CTC gradient's class sums]
// The gradient at (t, c) needs the log-sum over every s whose label is c of
// alpha_t(s) + beta_t(s). Each label's first position in l' owns that sum: it walks
// the label's later positions (a chain precomputed once per block) in ascending order,
// as the CPU's loop over s does, and writes the class's value; classes absent from the
// target stay -inf from the start.
#include <cuda_runtime.h>
#include <math_constants.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_error.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/seq_kernels.h"
#include "backend/cuda/stream.h"
#include "backend/cuda/tensor_data.h"
#include "ops/prims/seq.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

constexpr int kThreads = 256;
constexpr int kLengthsPerLaunch = 128;

// The lengths of entries [first, first + count) (Note [CTC lengths as kernel arguments]).
struct Lengths {
  int64_t first;
  int64_t input[kLengthsPerLaunch], target[kLengthsPerLaunch];
};

// The sizes every launch shares.
struct Dims {
  int64_t Tn, N, C, smax, blank;
};

__device__ inline double neg_inf() { return -CUDART_INF; }

__device__ inline double lse2(double a, double b) {
  if (a == neg_inf()) return b;
  if (b == neg_inf()) return a;
  const double m = fmax(a, b);
  return m + log(exp(a - m) + exp(b - m));
}

__device__ inline int64_t ext_label(const int64_t* tg, int64_t s, int64_t blank) {
  return s % 2 == 0 ? blank : tg[s / 2];
}

__device__ inline bool can_skip(const int64_t* tg, int64_t s) { return s % 2 == 1 && s >= 3 && tg[s / 2] != tg[s / 2 - 1]; }

// Whether every label of the entry is in [0, C); the bad ones reported (forward only).
__device__ bool labels_in_range(const int64_t* tg, int64_t tl, int64_t C, DeviceErrorSlot* error) {
  __shared__ int bad;
  if (threadIdx.x == 0) bad = 0;
  __syncthreads();
  for (int64_t j = threadIdx.x; j < tl; j += blockDim.x) {
    const int64_t label = tg[j];
    if (label < 0 || label >= C) {
      if (error) report_device_error(error, DeviceErrorCode::CtcTargetOutOfRange, 0, label, C);
      bad = 1;
    }
  }
  __syncthreads();
  return bad == 0;
}

// alpha [N, T, 2 smax + 1] and nll [N]; entry first + blockIdx.x.
template <typename T>
__global__ void __launch_bounds__(kThreads) ctc_alpha_kernel(const T* lp, const int64_t* targets, Lengths len_of,
                                                             Dims d, double* alpha, double* nll,
                                                             DeviceErrorSlot* error) {
  const int64_t b = len_of.first + blockIdx.x, Lmax = 2 * d.smax + 1;
  const int64_t len = len_of.input[blockIdx.x], tl = len_of.target[blockIdx.x], L = 2 * tl + 1;
  const int64_t* tg = targets + b * d.smax;
  double* a = alpha + b * d.Tn * Lmax;
  auto at = [&](int64_t t, int64_t c) { return double(lp[(t * d.N + b) * d.C + c]); };
  const bool ok = labels_in_range(tg, tl, d.C, error);
  // Rows the recursion does not reach are -inf (all of them for a bad entry).
  for (int64_t e = (ok ? len : 0) * Lmax + threadIdx.x; e < d.Tn * Lmax; e += blockDim.x) a[e] = neg_inf();
  if (!ok || len == 0) {
    if (threadIdx.x == 0)
      nll[b] = !ok ? CUDART_NAN : tl == 0 ? 0.0 : CUDART_INF;
    return;
  }
  for (int64_t s = threadIdx.x; s < Lmax; s += blockDim.x)
    a[s] = s == 0 ? at(0, d.blank) : s == 1 && L > 1 ? at(0, tg[0]) : neg_inf();
  __syncthreads();
  for (int64_t t = 1; t < len; ++t) {
    const double* prev = a + (t - 1) * Lmax;
    double* cur = a + t * Lmax;
    for (int64_t s = threadIdx.x; s < Lmax; s += blockDim.x) {
      double v = neg_inf();
      if (s < L) {
        v = prev[s];
        if (s >= 1) v = lse2(v, prev[s - 1]);
        if (can_skip(tg, s)) v = lse2(v, prev[s - 2]);
        if (v != neg_inf()) v += at(t, ext_label(tg, s, d.blank));
      }
      cur[s] = v;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const double* last = a + (len - 1) * Lmax;
    nll[b] = -(L > 1 ? lse2(last[L - 1], last[L - 2]) : last[0]);
  }
}

// Per-entry scratch of the backward: two beta rows [2, Lmax], the class sums [C], and
// per position its label's next position (or L) and whether it is the label's first.
struct Scratch {
  double* beta;
  double* class_sum;
  int32_t* next_same;
  int32_t* first;
};

// grad [T, N, C] of sum_b g[b] nll[b] (Note [The CTC gradient's class sums]).
template <typename T>
__global__ void __launch_bounds__(kThreads) ctc_grad_kernel(const T* lp, const int64_t* targets, Lengths len_of,
                                                            Dims d, const double* alpha, const double* nll,
                                                            const T* g, T* grad, Scratch scratch) {
  const int64_t b = len_of.first + blockIdx.x, Lmax = 2 * d.smax + 1, C = d.C;
  const int64_t len = len_of.input[blockIdx.x], tl = len_of.target[blockIdx.x], L = 2 * tl + 1;
  const int64_t* tg = targets + b * d.smax;
  const double* a = alpha + b * d.Tn * Lmax;
  const double gb = double(g[b]), nb = nll[b];
  auto at = [&](int64_t t, int64_t c) { return double(lp[(t * d.N + b) * C + c]); };
  auto grad_at = [&](int64_t t, int64_t c) -> T& { return grad[(t * d.N + b) * C + c]; };
  const bool ok = labels_in_range(tg, tl, C, nullptr);  // the forward reported them
  // zero_infinity's where sends 0 here for an infinite loss; steps past the input get 0
  const bool skip = !ok || len == 0 || gb == 0.0;
  for (int64_t e = (skip ? 0 : len) * C + threadIdx.x; e < d.Tn * C; e += blockDim.x) grad_at(e / C, e % C) = T(0);
  if (skip) return;
  if (isinf(nb)) {
    // No alignment exists: torch's formula gives exp(-inf + inf) = NaN at every step of
    // the input, as the CPU does (zero_infinity is how to get zeros).
    for (int64_t e = threadIdx.x; e < len * C; e += blockDim.x) grad_at(e / C, e % C) = T(CUDART_NAN);
    return;
  }
  double* beta_cur = scratch.beta + b * 2 * Lmax;
  double* beta_prev = beta_cur + Lmax;
  double* class_sum = scratch.class_sum + b * C;
  int32_t* next_same = scratch.next_same + b * Lmax;
  int32_t* first = scratch.first + b * Lmax;
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) class_sum[c] = neg_inf();
  for (int64_t s = threadIdx.x; s < L; s += blockDim.x) {
    const int64_t label = ext_label(tg, s, d.blank);
    int64_t next = s + 1;
    while (next < L && ext_label(tg, next, d.blank) != label) ++next;
    next_same[s] = int32_t(next);
    int64_t before = 0;
    while (before < s && ext_label(tg, before, d.blank) != label) ++before;
    first[s] = before == s;
  }
  __syncthreads();
  for (int64_t t = len - 1; t >= 0; --t) {
    // beta_t(s): log-probability of the rest of the labelling from (t, s), emission at t included
    for (int64_t s = threadIdx.x; s < L; s += blockDim.x) {
      double v;
      if (t == len - 1) {
        v = s >= L - 2 ? 0.0 : neg_inf();
      } else {
        v = beta_prev[s];
        if (s + 1 < L) v = lse2(v, beta_prev[s + 1]);
        if (s + 2 < L && can_skip(tg, s + 2)) v = lse2(v, beta_prev[s + 2]);
      }
      beta_cur[s] = v == neg_inf() ? neg_inf() : v + at(t, ext_label(tg, s, d.blank));
    }
    __syncthreads();
    const double* a_row = a + t * Lmax;
    for (int64_t s = threadIdx.x; s < L; s += blockDim.x) {
      if (!first[s]) continue;
      double sum = neg_inf();
      for (int64_t q = s; q < L; q = next_same[q])
        if (a_row[q] != neg_inf() && beta_cur[q] != neg_inf()) sum = lse2(sum, a_row[q] + beta_cur[q]);
      class_sum[ext_label(tg, s, d.blank)] = sum;
    }
    __syncthreads();
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
      const double l = at(t, c);
      const double post = class_sum[c] == neg_inf() ? 0.0 : exp(class_sum[c] + nb - l);
      grad_at(t, c) = T((exp(l) - post) * gb);
    }
    double* swap = beta_cur;
    beta_cur = beta_prev;
    beta_prev = swap;
  }
}

// f(lengths, count) for each launch's group of entries.
template <typename F>
void per_group(const std::vector<int64_t>& input_lengths, const std::vector<int64_t>& target_lengths, int64_t N,
               F&& f) {
  for (int64_t first = 0; first < N; first += kLengthsPerLaunch) {
    Lengths len_of{};
    len_of.first = first;
    const int64_t count = std::min<int64_t>(kLengthsPerLaunch, N - first);
    for (int64_t i = 0; i < count; ++i) {
      len_of.input[i] = input_lengths[size_t(first + i)];
      len_of.target[i] = target_lengths[size_t(first + i)];
    }
    f(len_of, unsigned(count));
  }
}

Dims dims_of(const TensorImpl* lp, const TensorImpl* tg, int64_t blank) {
  return {lp->shape()[0], lp->shape()[1], lp->shape()[2], tg->shape()[1], blank};
}

void ctc_loss_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::CtcLoss>(prim);
  const TensorImpl *lp = ins[0], *tg = ins[1];
  const Dims d = dims_of(lp, tg, p.blank);
  if (d.N == 0) return;
  const int device = lp->device().index;
  DeviceErrorSlot* error = device_error_slot(device);
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  per_group(p.input_lengths, p.target_lengths, d.N, [&](const Lengths& len_of, unsigned count) {
    if (lp->dtype() == Dtype::F64)
      ctc_alpha_kernel<double><<<count, kThreads, 0, s>>>(cdata<double>(lp), cdata<int64_t>(tg), len_of, d,
                                                          mdata<double>(outs[0]), mdata<double>(outs[1]), error);
    else
      ctc_alpha_kernel<float><<<count, kThreads, 0, s>>>(cdata<float>(lp), cdata<int64_t>(tg), len_of, d,
                                                         mdata<double>(outs[0]), mdata<double>(outs[1]), error);
    LUCID_CUDA_CHECK(cudaGetLastError());
  });
}

void ctc_loss_backward_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::CtcLossBackward>(prim);
  const TensorImpl *lp = ins[0], *tg = ins[1];
  const Dims d = dims_of(lp, tg, p.blank);
  if (d.N == 0) return;
  const int device = lp->device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  const int64_t Lmax = 2 * d.smax + 1;
  const size_t doubles = size_t(d.N * (2 * Lmax + d.C)), ints = size_t(d.N * 2 * Lmax);
  GpuStorage buffer = CachingAllocator::instance().allocate(doubles * sizeof(double) + ints * sizeof(int32_t), device);
  auto* base = reinterpret_cast<double*>(buffer.ptr());
  auto* ints_base = reinterpret_cast<int32_t*>(base + doubles);
  const Scratch scratch{base, base + d.N * 2 * Lmax, ints_base, ints_base + d.N * Lmax};
  per_group(p.input_lengths, p.target_lengths, d.N, [&](const Lengths& len_of, unsigned count) {
    if (lp->dtype() == Dtype::F64)
      ctc_grad_kernel<double><<<count, kThreads, 0, s>>>(cdata<double>(lp), cdata<int64_t>(tg), len_of, d,
                                                         cdata<double>(ins[2]), cdata<double>(ins[3]),
                                                         cdata<double>(ins[4]), mdata<double>(outs[0]), scratch);
    else
      ctc_grad_kernel<float><<<count, kThreads, 0, s>>>(cdata<float>(lp), cdata<int64_t>(tg), len_of, d,
                                                        cdata<double>(ins[2]), cdata<double>(ins[3]),
                                                        cdata<float>(ins[4]), mdata<float>(outs[0]), scratch);
    LUCID_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace

void register_ctc_kernels() {
  ops::register_kernel(ops::Prim::CtcLoss, DeviceType::GPU, ctc_loss_prim);
  ops::register_kernel(ops::Prim::CtcLossBackward, DeviceType::GPU, ctc_loss_backward_prim);
}

}  // namespace lucid::cuda
