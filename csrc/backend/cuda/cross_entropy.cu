// CUDA kernels of the CrossEntropy primitives (ops/prims/reduce.h; Note [The cross
// entropy as one op], ops/cross_entropy.cpp): logits (or log-probabilities: nll_loss)
// in float32, float64 or 16 bits
// (read and written as is, computed in float32 as the softmax kernels), sums in double
// in fixed trees (Note [Deterministic reductions]).
//   forward: one launch over the rows (a warp a row for up to 1024 classes, a block a
//            row beyond, a thread a row when classes are strided: inner > 1); for Sum
//            and Mean its last block sums the rows' partial results in order (Note
//            [The last block's ticket]);
//   backward: one elementwise launch over x.
// A class index out of range is reported on the device (Note [Errors found on the
// device]) and its row counts as ignored.
#include <cmath>
#include <type_traits>

#include "backend/cuda/block_ticket.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_error.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/reduce.cuh"
#include "backend/cuda/register.h"
#include "backend/cuda/stream.h"
#include "backend/cuda/tensor_data.h"
#include "core/half.h"
#include "ops/prims/reduce.h"

namespace lucid::cuda {

namespace {

using ops::CrossEntropyParams;
using ops::Inputs;
using ops::LossReduction;
using ops::Outputs;

// The type elements are computed in (float for float32 and 16 bits) and the type of
// lse and stats.
template <typename T>
using Compute = std::conditional_t<std::is_same_v<T, double>, double, float>;

struct MaxOp {  // NaN wins, as the softmax kernels' max
  __device__ double combine(double a, double b) const { return (a != a || a > b) ? a : b; }
};
struct AddOp {
  __device__ double combine(double a, double b) const { return a + b; }
};

// The combination of one value per thread over a row's group of kThreads threads: a
// warp's butterfly (every lane gets the result) or the block's tree (kThreads == the block).
template <int kThreads, class Op>
__device__ double group_reduce(Op op, double v, double* shared) {
  if constexpr (kThreads == 32) {
    for (int offset = 16; offset > 0; offset /= 2) v = op.combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
  } else {
    return block_tree(op, shared, v, int(threadIdx.x), kThreads);
  }
}

template <typename T>
struct ForwardArgs {
  CrossEntropyParams p;
  const T* x;
  const int64_t* t;
  const T* w;
  T* loss;               // None: each row's loss
  Compute<T>* lse;       // [rows]
  Compute<T>* stats;     // [total, sum of w]
  double* partial;       // Sum, Mean: [rows, 2]
  unsigned* ticket;      // Sum, Mean: the last block sums partial
  DeviceErrorSlot* error;
};

// sum_c w[c] (n without weights) over a block's threads, for label smoothing's term.
template <typename T>
__device__ double weight_sum(const ForwardArgs<T>& a, double* shared) {
  if (!a.w) return double(a.p.n);
  double s = 0;
  for (int64_t c = threadIdx.x; c < a.p.n; c += blockDim.x) s += double(Compute<T>(a.w[c]));
  return block_tree(AddOp(), shared, s, int(threadIdx.x), int(blockDim.x));
}

// Row r's result from its sums (lse; sum_c w[c] x[c] when smoothing), by one thread.
template <typename T>
__device__ void finish_row(const ForwardArgs<T>& a, int64_t r, int64_t tr, bool counts, double lse, double wx,
                           double x_t, double w_sum) {
  double loss = 0, weight = 0;
  if (counts) {
    const double keep = 1 - a.p.label_smoothing;
    weight = a.w ? double(Compute<T>(a.w[tr])) : 1.0;
    loss = keep * weight * (lse - x_t);
    if (a.p.label_smoothing != 0) loss += a.p.label_smoothing / double(a.p.n) * (w_sum * lse - wx);
  }
  a.lse[r] = Compute<T>(counts ? lse : 0.0);
  if (a.partial) {
    a.partial[2 * r] = loss;
    a.partial[2 * r + 1] = weight;
  } else {
    a.loss[r] = T(Compute<T>(loss));
  }
}

// Whether row r's target counts (not ignored, in range); a bad one is reported.
template <typename T>
__device__ bool target_counts(const ForwardArgs<T>& a, int64_t tr, bool report) {
  if (tr == a.p.ignore_index) return false;
  if (tr >= 0 && tr < a.p.n) return true;
  if (report) report_device_error(a.error, DeviceErrorCode::ClassTargetOutOfRange, 0, tr, a.p.n);
  return false;
}

// Every block's start: sum_c w[c] for label smoothing's term, which block 0 also writes
// to stats (with the total: 0 here, the Sum/Mean kernel's sum later).
template <typename T>
__device__ double block_start(const ForwardArgs<T>& a, double* shared) {
  const double w_sum = weight_sum(a, shared);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    a.stats[0] = Compute<T>(0);
    a.stats[1] = Compute<T>(w_sum);
  }
  return w_sum;
}

// Sum and Mean: the last block of the launch adds the rows' losses and weights, each
// thread its rows in order, then the tree. Every thread of every block calls it.
template <typename T>
__device__ void total(const ForwardArgs<T>& a, int64_t rows, double* shared) {
  if (!a.partial || !last_block(a.ticket)) return;
  double l = 0, w = 0;
  for (int64_t r = threadIdx.x; r < rows; r += kReduceThreads)
    l += __ldcg(&a.partial[2 * r]), w += __ldcg(&a.partial[2 * r + 1]);
  l = block_tree(AddOp(), shared, l, int(threadIdx.x), kReduceThreads);
  w = block_tree(AddOp(), shared, w, int(threadIdx.x), kReduceThreads);
  if (threadIdx.x == 0) {
    a.stats[0] = Compute<T>(w);
    a.loss[0] = T(Compute<T>(a.p.reduction == LossReduction::Mean ? l / w : l));
  }
}

// inner == 1: rows of n contiguous classes, kThreads threads a row (256 / kThreads rows a block).
template <typename T, int kThreads>
__global__ void __launch_bounds__(kReduceThreads) rows_kernel(ForwardArgs<T> a) {
  using C = Compute<T>;
  __shared__ double shared[kReduceThreads];
  const bool smoothing = a.p.label_smoothing != 0;
  const double w_sum = block_start(a, shared);
  constexpr int kRowsPerBlock = kReduceThreads / kThreads;
  const int lane = int(threadIdx.x) % kThreads;
  const int64_t n = a.p.n, rows = a.p.outer;
  // every thread of a block runs the same number of iterations (the block tree syncs)
  for (int64_t base = int64_t(blockIdx.x) * kRowsPerBlock; base < rows; base += int64_t(gridDim.x) * kRowsPerBlock) {
    const int64_t r = base + int(threadIdx.x) / kThreads;
    const bool live = r < rows;
    const int64_t tr = live ? a.t[r] : a.p.ignore_index;
    const bool counts = live && target_counts(a, tr, lane == 0);
    const T* row = a.x + r * n;
    double m = -INFINITY;
    if (counts)
      for (int64_t c = lane; c < n; c += kThreads) m = MaxOp().combine(m, double(C(row[c])));
    m = group_reduce<kThreads>(MaxOp(), m, shared);
    if (m == -INFINITY) m = 0;  // every class -inf: lse -inf, the loss nan (torch's log_softmax)
    double sum = 0, wx = 0;
    if (counts)
      for (int64_t c = lane; c < n; c += kThreads) {
        const C v = C(row[c]);
        sum += double(exp(v - C(m)));
        if (smoothing) wx += double(v) * (a.w ? double(C(a.w[c])) : 1.0);
      }
    sum = group_reduce<kThreads>(AddOp(), sum, shared);
    if (smoothing) wx = group_reduce<kThreads>(AddOp(), wx, shared);
    if (live && lane == 0)
      finish_row(a, r, tr, counts, m + ::log(sum), wx, counts ? double(C(row[tr])) : 0.0, w_sum);
  }
  total(a, rows, shared);
}

// inner > 1: a thread a row (o, i), its classes inner apart (coalesced over i).
template <typename T>
__global__ void __launch_bounds__(kReduceThreads) strided_kernel(ForwardArgs<T> a) {
  using C = Compute<T>;
  __shared__ double shared[kReduceThreads];
  const bool smoothing = a.p.label_smoothing != 0;
  const double w_sum = block_start(a, shared);
  const int64_t n = a.p.n, inner = a.p.inner, rows = a.p.outer * inner;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
    const int64_t tr = a.t[r];
    const bool counts = target_counts(a, tr, true);
    const T* row = a.x + (r / inner) * n * inner + r % inner;
    double m = -INFINITY, sum = 0, wx = 0;
    if (a.p.log_probs) {  // nll_loss: lse 0
      m = 0, sum = 1;
    } else if (counts) {
      for (int64_t c = 0; c < n; ++c) m = MaxOp().combine(m, double(C(row[c * inner])));
      if (m == -INFINITY) m = 0;
      for (int64_t c = 0; c < n; ++c) {
        const C v = C(row[c * inner]);
        sum += double(exp(v - C(m)));
        if (smoothing) wx += double(v) * (a.w ? double(C(a.w[c])) : 1.0);
      }
    }
    finish_row(a, r, tr, counts, m + ::log(sum), wx, counts ? double(C(row[tr * inner])) : 0.0, w_sum);
  }
  total(a, rows, shared);
}

unsigned grid_for(int64_t units) { return unsigned(std::clamp<int64_t>(units, 1, 65535)); }

template <typename T>
void forward(const ops::CrossEntropy& p, Outputs outs, Inputs ins) {
  const int device = outs[0]->device().index;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  size_t i = 2;
  const TensorImpl* w = ops::next_tensor(ins, i, p.has_weight);
  const bool summed = outs.size() > 3;
  ForwardArgs<T> a{p, cdata<T>(ins[0]), cdata<int64_t>(ins[1]), cdata<T>(w), mdata<T>(outs[0]),
                   mdata<Compute<T>>(outs[1]), mdata<Compute<T>>(outs[2]),
                   summed ? mdata<double>(outs[3]) : nullptr, summed ? block_ticket(device) : nullptr,
                   device_error_slot(device)};
  const int64_t rows = p.outer * p.inner;
  // (nll_loss reads one element a row: a thread a row)
  if (p.inner > 1 || p.log_probs) strided_kernel<T><<<grid_for((rows + kReduceThreads - 1) / kReduceThreads), kReduceThreads, 0, s>>>(a);
  else if (p.n <= 1024) rows_kernel<T, 32><<<grid_for((rows + 7) / 8), kReduceThreads, 0, s>>>(a);
  else rows_kernel<T, kReduceThreads><<<grid_for(rows), kReduceThreads, 0, s>>>(a);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

// gx for every element e = (o * n + c) * inner + i of row r = o * inner + i.
template <typename T>
__global__ void backward_kernel(CrossEntropyParams p, const T* x, const int64_t* t, const T* w,
                                const Compute<T>* lse, const Compute<T>* stats, const T* g, T* gx, int64_t count) {
  using C = Compute<T>;
  const int64_t n = p.n, inner = p.inner;
  const double keep = 1 - p.label_smoothing, spread = p.label_smoothing / double(n);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < count; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (e / inner) % n, r = (e / (n * inner)) * inner + e % inner;
    const int64_t tr = t[r];
    if (tr == p.ignore_index || tr < 0 || tr >= n) {
      gx[e] = T(C(0));
      continue;
    }
    const double s = p.reduction == LossReduction::None ? double(C(g[r]))
                     : p.reduction == LossReduction::Sum ? double(C(g[0]))
                                                         : double(C(g[0])) / double(stats[0]);
    const double wt = w ? double(C(w[tr])) : 1.0;
    if (p.log_probs) {  // nll_loss: -s w[t] at the target, 0 elsewhere
      gx[e] = T(C(c == tr ? -s * wt : 0.0));
      continue;
    }
    const double a = s * (keep * wt + spread * double(stats[1]));
    double b = s * spread * (w ? double(C(w[c])) : 1.0);
    if (c == tr) b += s * keep * wt;
    gx[e] = T(C(a) * exp(C(x[e]) - lse[r]) - C(b));
  }
}

template <typename T>
void backward(const ops::CrossEntropyBackward& p, Outputs outs, Inputs ins) {
  const int64_t count = outs[0]->numel();
  if (count == 0) return;
  const int device = outs[0]->device().index;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  size_t i = 2;
  const TensorImpl* w = ops::next_tensor(ins, i, p.has_weight);
  backward_kernel<T><<<grid_for((count + kReduceThreads - 1) / kReduceThreads), kReduceThreads, 0, s>>>(
      p, cdata<T>(ins[0]), cdata<int64_t>(ins[1]), cdata<T>(w), cdata<Compute<T>>(ins[i]),
      cdata<Compute<T>>(ins[i + 1]), cdata<T>(ins[i + 2]), mdata<T>(outs[0]), count);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void cross_entropy_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::CrossEntropy>(prim);
  visit_floating(ins[0]->dtype(), [&](auto t) { forward<decltype(t)>(p, outs, ins); });
}

void cross_entropy_backward_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::CrossEntropyBackward>(prim);
  visit_floating(ins[0]->dtype(), [&](auto t) { backward<decltype(t)>(p, outs, ins); });
}

}  // namespace

void register_cross_entropy_kernels() {
  ops::register_kernel(ops::Prim::CrossEntropy, DeviceType::GPU, cross_entropy_kernel);
  ops::register_kernel(ops::Prim::CrossEntropyBackward, DeviceType::GPU, cross_entropy_backward_kernel);
}

}  // namespace lucid::cuda
