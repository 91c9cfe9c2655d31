// CPU kernels of the reduction, scan, softmax and cross entropy primitives (ops/prims/reduce.h):
// adapters from the primitive to the loops of backend/cpu/reduce.h and reduce_fast.h.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/reduce.h"
#include "backend/cpu/reduce_fast.h"
#include "backend/cpu/register.h"
#include "ops/prims/reduce.h"

namespace lucid::cpu {

namespace {

using ops::Inputs;
using ops::Outputs;

template <typename T>
T* data(TensorImpl* t) {
  return reinterpret_cast<T*>(t->host_ptr());
}
template <typename T>
const T* data(const TensorImpl* t) {
  return reinterpret_cast<const T*>(t->host_ptr());
}

double mean_scale(int64_t count) { return count ? 1.0 / double(count) : std::numeric_limits<double>::quiet_NaN(); }

void sum_last_dims_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::SumLastDims>(prim);
  const TensorImpl& x = *ins[0];
  int64_t count = 1;
  for (size_t d = x.shape().size() - size_t(p.reduced); d < x.shape().size(); ++d) count *= x.shape()[d];
  sum_last_dims(*outs[0], x, size_t(p.reduced), p.mean ? mean_scale(count) : 1.0);
}

void moment_block_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  using M = ops::BlockMoment;
  const auto& p = ops::prim_cast<ops::MomentBlock>(prim);
  const Dtype d = ins[0]->dtype();
  const std::byte* x = ins[0]->host_ptr();
  const int64_t n = p.n;
  std::vector<double> r(size_t(p.outer * p.inner));
  double scale = 1.0;
  switch (p.moment) {
    case M::Sum:
    case M::Mean:
      moment_reduce(d, x, p.outer, n, p.inner, Moment::Sum, nullptr, r.data());
      if (p.moment == M::Mean) scale = mean_scale(n);
      break;
    case M::Var:
    case M::Std: {
      std::vector<double> mean(r.size());
      moment_reduce(d, x, p.outer, n, p.inner, Moment::Sum, nullptr, mean.data());
      for (double& m : mean) m = n ? m / double(n) : std::numeric_limits<double>::quiet_NaN();
      moment_reduce(d, x, p.outer, n, p.inner, Moment::SqDev, mean.data(), r.data());
      const double dof = std::max(double(n) - p.correction, 0.0);
      for (double& v : r) {
        v = n ? v / dof : std::numeric_limits<double>::quiet_NaN();
        if (p.moment == M::Std) v = std::sqrt(v);
      }
      break;
    }
    case M::Norm1:
      moment_reduce(d, x, p.outer, n, p.inner, Moment::Abs, nullptr, r.data());
      break;
    case M::Norm2:
      moment_reduce(d, x, p.outer, n, p.inner, Moment::Sq, nullptr, r.data());
      for (double& v : r) v = std::sqrt(v);
      break;
  }
  store_scaled(d, r.data(), int64_t(r.size()), scale, outs[0]->host_ptr());
}

// The values and indices outputs of an extremum primitive, null when not asked for.
struct ExtremumOuts {
  std::byte* values;
  int64_t* indices;
};
ExtremumOuts extremum_outs(Outputs outs, bool values, bool indices) {
  return {values ? outs[0]->host_ptr() : nullptr, indices ? data<int64_t>(outs[values ? 1 : 0]) : nullptr};
}

void extremum_block_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::ExtremumBlock>(prim);
  ExtremumOuts o = extremum_outs(outs, p.values, p.indices);
  extremum_reduce(ins[0]->dtype(), ins[0]->host_ptr(), p.outer, p.n, p.inner, p.is_max, o.values, o.indices);
}

void extremum_rows_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::ExtremumRows>(prim);
  ExtremumOuts o = extremum_outs(outs, p.values, p.indices);
  minmax_rows(ins[0]->dtype(), ins[0]->host_ptr(), p.outer, p.n, p.is_max, o.values, o.indices);
}

void all_any_rows_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::AllAnyRows>(prim);
  all_any_rows(data<bool>(ins[0]), p.outer, p.n, p.is_all, data<bool>(outs[0]));
}

void prod_rows_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::ProdRows>(prim);
  prod_rows(ins[0]->dtype(), ins[0]->host_ptr(), p.outer, p.n, outs[0]->host_ptr());
}

void row_stat_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  using S = ops::RowStatKind;
  const auto& p = ops::prim_cast<ops::RowStat>(prim);
  double* y = data<double>(outs[0]);
  if (ins[0]->dtype() == Dtype::C128) {  // complex rows: real variances, norms of the magnitudes
    const complex128* z = data<complex128>(ins[0]);
    if (p.stat == S::Norm) {
      std::vector<double> mags(size_t(p.outer * p.n));
      complex_abs(z, p.outer * p.n, mags.data());
      norm_rows(mags.data(), p.outer, p.n, p.p, y);
      return;
    }
    var_rows_complex(z, p.outer, p.n, p.correction, y);
  } else {
    const double* x = data<double>(ins[0]);
    switch (p.stat) {
      case S::LogSumExp: return logsumexp_rows(x, p.outer, p.n, y);
      case S::Norm: return norm_rows(x, p.outer, p.n, p.p, y);
      default: var_rows(x, p.outer, p.n, p.correction, y, nullptr);
    }
  }
  if (p.stat == S::Std)
    for (int64_t o = 0; o < p.outer; ++o) y[o] = std::sqrt(y[o]);
}

void scan_dim_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::ScanDim>(prim);
  TensorImpl& out = *outs[0];
  if (&out == ins[0]) scan_inplace(out.dtype(), out.host_ptr(), p.outer, p.n, p.inner, p.is_prod);
  else scan_float(out.dtype(), ins[0]->host_ptr(), out.host_ptr(), p.outer, p.n, p.inner, p.is_prod);
}

void softmax_dim_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::SoftmaxDim>(prim);
  switch (ins[0]->dtype()) {  // float lanes, vectorised exp (16-bit: Note [16-bit softmax on the CPU])
    case Dtype::F32: return softmax_dim_f32(data<float>(ins[0]), data<float>(outs[0]), p.outer, p.n, p.inner, p.log);
    case Dtype::F16: return softmax_dim_f32(data<Half>(ins[0]), data<Half>(outs[0]), p.outer, p.n, p.inner, p.log);
    case Dtype::BF16:
      return softmax_dim_f32(data<BFloat16>(ins[0]), data<BFloat16>(outs[0]), p.outer, p.n, p.inner, p.log);
    default: softmax_dim(data<double>(ins[0]), data<double>(outs[0]), p.outer, p.n, p.inner, p.log);
  }
}

void softmax_backward_dim_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::SoftmaxBackwardDim>(prim);
  visit_dtype(ins[0]->dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || kIsHalfFloat<T>)
      softmax_backward_dim(data<T>(ins[0]), data<T>(ins[1]), data<T>(outs[0]), p.outer, p.n, p.inner, p.log);
    else
      fail<RuntimeError>("internal: softmax backward on ", dtype_name(ins[0]->dtype()));
  });
}

template <typename T>
void cross_entropy_typed(const ops::CrossEntropy& p, Outputs outs, Inputs ins) {
  size_t i = 2;
  const TensorImpl* w = ops::next_tensor(ins, i, p.has_weight);
  cross_entropy_forward<T>(p, data<T>(ins[0]), data<int64_t>(ins[1]), w ? data<T>(w) : nullptr, data<T>(outs[0]),
                           data<T>(outs[1]), data<T>(outs[2]), outs.size() > 3 ? data<double>(outs[3]) : nullptr);
}

void cross_entropy_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::CrossEntropy>(prim);
  if (ins[0]->dtype() == Dtype::F32) cross_entropy_typed<float>(p, outs, ins);
  else cross_entropy_typed<double>(p, outs, ins);
}

template <typename T>
void cross_entropy_backward_typed(const ops::CrossEntropyBackward& p, Outputs outs, Inputs ins) {
  size_t i = 2;
  const TensorImpl* w = ops::next_tensor(ins, i, p.has_weight);
  const TensorImpl *lse = ins[i], *stats = ins[i + 1], *g = ins[i + 2];
  cross_entropy_backward<T>(p, data<T>(ins[0]), data<int64_t>(ins[1]), w ? data<T>(w) : nullptr, data<T>(lse),
                            data<T>(stats), data<T>(g), data<T>(outs[0]));
}

void cross_entropy_backward_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::CrossEntropyBackward>(prim);
  if (ins[0]->dtype() == Dtype::F32) cross_entropy_backward_typed<float>(p, outs, ins);
  else cross_entropy_backward_typed<double>(p, outs, ins);
}

void sort_rows_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::SortRows>(prim);
  sort_rows(ins[0]->dtype(), ins[0]->host_ptr(), data<int64_t>(outs[0]), p.values ? outs[1]->host_ptr() : nullptr,
            p.rows, p.n, p.k, p.descending);
}

void search_sorted_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::SearchSorted>(prim);
  search_sorted(ins[0]->dtype(), ins[0]->host_ptr(), ins[1]->host_ptr(), data<int64_t>(outs[0]), p.rows, p.n, p.m,
                p.right, p.shared);
}

}  // namespace

void register_reduce_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::SumLastDims, DeviceType::CPU, sum_last_dims_kernel);
  ops::register_kernel(Prim::MomentBlock, DeviceType::CPU, moment_block_kernel);
  ops::register_kernel(Prim::ExtremumBlock, DeviceType::CPU, extremum_block_kernel);
  ops::register_kernel(Prim::ExtremumRows, DeviceType::CPU, extremum_rows_kernel);
  ops::register_kernel(Prim::AllAnyRows, DeviceType::CPU, all_any_rows_kernel);
  ops::register_kernel(Prim::ProdRows, DeviceType::CPU, prod_rows_kernel);
  ops::register_kernel(Prim::RowStat, DeviceType::CPU, row_stat_kernel);
  ops::register_kernel(Prim::ScanDim, DeviceType::CPU, scan_dim_kernel);
  ops::register_kernel(Prim::SoftmaxDim, DeviceType::CPU, softmax_dim_kernel);
  ops::register_kernel(Prim::SoftmaxBackwardDim, DeviceType::CPU, softmax_backward_dim_kernel);
  ops::register_kernel(Prim::CrossEntropy, DeviceType::CPU, cross_entropy_kernel);
  ops::register_kernel(Prim::CrossEntropyBackward, DeviceType::CPU, cross_entropy_backward_kernel);
  ops::register_kernel(Prim::SortRows, DeviceType::CPU, sort_rows_kernel);
  ops::register_kernel(Prim::SearchSorted, DeviceType::CPU, search_sorted_kernel);
}

}  // namespace lucid::cpu
