// CPU kernels of the normalisation primitives (ops/prims/norm.h): the unit passes
// adapt to the row and column loops of norm_kernels.h; the float64 arithmetic
// between them is in norm_stats.cpp.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "backend/cpu/norm_kernels.h"
#include "backend/cpu/norm_stats.h"
#include "backend/cpu/register.h"
#include "ops/prims/norm.h"

namespace lucid::cpu {

namespace {

using ops::Inputs;
using ops::NormUnits;
using ops::Outputs;

template <typename T>
T* data(const TensorImpl* t) {
  return reinterpret_cast<T*>(t->host_ptr());
}

// The rows of a float64 table of coefficients [k, units] as T*: float64 loops read
// the table itself, float32 loops a float32 copy of it.
template <typename T>
class Coefficients {
 public:
  explicit Coefficients(const TensorImpl* table)
      : units_(table->shape()[1]), table_(data<double>(table)) {
    if constexpr (!std::is_same_v<T, double>) narrowed_.assign(table_, table_ + table->numel());
  }
  const T* row(int64_t r) const {
    if constexpr (std::is_same_v<T, double>) return table_ + r * units_;
    else return narrowed_.data() + r * units_;
  }

 private:
  int64_t units_;
  const double* table_;
  std::vector<T> narrowed_;
};

void norm_moments_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const NormUnits u = ops::prim_cast<ops::NormMoments>(p).units;
  double *mean = data<double>(outs[0]), *m2 = mean + u.count();
  std::fill_n(mean, 2 * u.count(), 0.0);
  visit_float32_or_64(ins[0]->dtype(), [&](auto z) {
    const auto* x = data<decltype(z)>(ins[0]);
    if (u.columns) norm_col_moments(x, u.n, u.k, mean, m2);
    else norm_row_moments(x, u.n, u.k, mean, m2);
  });
}

void norm_grad_sums_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const NormUnits u = ops::prim_cast<ops::NormGradSums>(p).units;
  double *s1 = data<double>(outs[0]), *s2 = s1 + u.count();
  std::fill_n(s1, 2 * u.count(), 0.0);
  visit_float32_or_64(ins[1]->dtype(), [&](auto z) {
    using T = decltype(z);
    if (u.columns) norm_col_grad_sums(data<T>(ins[0]), data<T>(ins[1]), u.n, u.k, s1, s2);
    else norm_row_grad_sums(data<T>(ins[0]), data<T>(ins[1]), u.n, u.k, s1, s2);
  });
}

void norm_affine_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const NormUnits u = ops::prim_cast<ops::NormAffine>(p).units;
  visit_float32_or_64(ins[0]->dtype(), [&](auto z) {
    using T = decltype(z);
    const Coefficients<T> c(ins[1]);  // scale, shift
    if (u.columns) norm_col_affine(data<T>(ins[0]), data<T>(outs[0]), u.n, u.k, c.row(0), c.row(1));
    else norm_row_affine(data<T>(ins[0]), data<T>(outs[0]), u.n, u.k, c.row(0), c.row(1));
  });
}

void norm_affine2_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const NormUnits u = ops::prim_cast<ops::NormAffine2>(p).units;
  visit_float32_or_64(ins[1]->dtype(), [&](auto z) {
    using T = decltype(z);
    const Coefficients<T> c(ins[2]);  // a, b, d
    const T *dy = data<T>(ins[0]), *x = data<T>(ins[1]);
    T* dx = data<T>(outs[0]);
    if (u.columns) norm_col_affine2(dy, x, dx, u.n, u.k, c.row(0), c.row(1), c.row(2));
    else norm_row_affine2(dy, x, dx, u.n, u.k, c.row(0), c.row(1), c.row(2));
  });
}

}  // namespace

void register_norm_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::NormMoments, DeviceType::CPU, norm_moments_kernel);
  ops::register_kernel(Prim::NormAffine, DeviceType::CPU, norm_affine_kernel);
  ops::register_kernel(Prim::NormGradSums, DeviceType::CPU, norm_grad_sums_kernel);
  ops::register_kernel(Prim::NormAffine2, DeviceType::CPU, norm_affine2_kernel);
  ops::register_kernel(Prim::BatchNormStats, DeviceType::CPU, batch_norm_stats);
  ops::register_kernel(Prim::BatchNormGradCoeffs, DeviceType::CPU, batch_norm_grad_coeffs);
  ops::register_kernel(Prim::GroupNormStats, DeviceType::CPU, group_norm_stats);
  ops::register_kernel(Prim::GroupNormGradCoeffs, DeviceType::CPU, group_norm_grad_coeffs);
}

}  // namespace lucid::cpu
