// prod, var/std, logsumexp, norm: kernels over double (int64 / complex) rows, VJPs
// written with differentiable ops.
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/record.h"
#include "backend/cpu/reduce.h"
#include "backend/cpu/reduce_fast.h"
#include "core/default_dtype.h"
#include "ops/require_cpu.h"
#include "ops/copy_ops.h"
#include "ops/elementwise.h"
#include "ops/elementwise_extra.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

std::vector<int64_t> reduced_dims(const ReducePlan& plan) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < plan.mask.size(); ++d)
    if (plan.mask[d]) dims.push_back(int64_t(d));
  return dims;
}

Dtype accumulate_dtype(Dtype d) {
  return is_complex(d) ? Dtype::C64 : is_floating(d) ? Dtype::F64 : Dtype::I64;
}

// Runs `kernel(rows_f64, out_f64)` over a's rows in double and returns the result
// as `out_dtype`, shaped by keepdim.
template <typename Kernel>
TensorPtr double_rows(const TensorPtr& a, const ReducePlan& plan, bool keepdim, Dtype out_dtype, Kernel kernel) {
  TensorPtr rows = reduction_rows(a, plan, Dtype::F64);
  TensorPtr out = TensorImpl::empty(plan.kept_shape, Dtype::F64, Device::cpu());
  if (plan.outer > 0)
    kernel(reinterpret_cast<const double*>(rows->host_ptr()), reinterpret_cast<double*>(out->host_ptr()));
  if (out_dtype != Dtype::F64) out = out->clone(out_dtype);
  return keepdim ? view(out, plan.keepdim_shape) : out;
}

// t with its zeros replaced by ones (the gradient formulas divide by it).
TensorPtr nonzero_or_one(const TensorPtr& t) { return add(t, eq(t, Scalar(0.0))); }

// exp(e * log(t)) for t >= 0: t^e, differentiable, 0 at t == 0 for e > 0.
TensorPtr power(const TensorPtr& t, double e) { return exp(mul(log(t), Scalar(e))); }

// Product over plan's dims, in the dtype `out`, keeping the reduced dims.
TensorPtr prod_dims(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim, Dtype out_dtype) {
  require_cpu("prod", *a);
  ReducePlan plan = plan_reduction(*a, dims);
  const Dtype acc = accumulate_dtype(out_dtype);
  TensorPtr rows = reduction_rows(a, plan, acc);
  TensorPtr out = TensorImpl::empty(plan.kept_shape, acc, Device::cpu());
  if (plan.outer > 0) cpu::prod_rows(acc, rows->host_ptr(), plan.outer, plan.n, out->host_ptr());
  if (out_dtype != acc) out = out->clone(out_dtype);
  if (keepdim) out = view(out, plan.keepdim_shape);
  if (autograd::needs_grad({&a}) && autograd::is_differentiable(out_dtype)) {
    // d prod / d x_i = product of the other elements. With z the zeros: no zero in
    // the block -> p1 / x; exactly one -> p1 at the zero, 0 elsewhere; more -> 0,
    // where p1 is the product with zeros replaced by ones. Correct for zeros without
    // dividing by them.
    Shape in_shape = a->shape();
    std::vector<int64_t> rdims = reduced_dims(plan);
    auto node = autograd::record(dims.empty() ? "ProdBackward0" : "ProdBackward1", {a}, {out},
                                 [plan, in_shape, rdims](const Node& n, const Grads& g) {
      TensorPtr x = n.saved(0);
      LUCID_CHECK(!is_complex(x->dtype()), NotImplementedError, "prod(): backward of complex inputs is not "
                  "implemented yet");
      TensorPtr z = eq(x, Scalar(0.0));
      TensorPtr zeros = sum(z, rdims, true, std::nullopt);
      TensorPtr x1 = add(x, z);
      TensorPtr p1 = prod_dims(x1, rdims, true, x1->dtype());
      TensorPtr others = where(eq(zeros, Scalar(int64_t(0))), Operand{div(p1, x1), {}},
                               Operand{where(logical_and(eq(zeros, Scalar(int64_t(1))), z), Operand{p1, {}},
                                             Operand{nullptr, Scalar(0.0)}), {}});
      return Grads{mul(expand_back(g[0], plan, in_shape), others)};
    });
    node->save(a);
  }
  return out;
}

void check_var_input(const char* name, const TensorImpl& a) {
  require_cpu(name, a);
  LUCID_CHECK(!is_integral(a.dtype(), true), NotImplementedError,
              "std and var only support floating point and complex dtypes, got ", dtype_name(a.dtype()));
}

// Complex inputs reduce to a real result (float32 for complex64): magnitudes for
// norms, |z - mean|^2 for variances. Forward only: their VJPs need conj().
TensorPtr complex_rows_to_real(const TensorPtr& a, const ReducePlan& plan, bool keepdim, bool sqrt_result,
                               double correction, bool variance, double p) {
  TensorPtr rows = reduction_rows(a, plan, Dtype::C64);
  auto* z = reinterpret_cast<const complex64*>(rows->host_ptr());
  TensorPtr out = TensorImpl::empty(plan.kept_shape, Dtype::F64, Device::cpu());
  auto* y = reinterpret_cast<double*>(out->host_ptr());
  if (plan.outer > 0) {
    if (variance) {
      cpu::var_rows_complex(z, plan.outer, plan.n, correction, y);
      if (sqrt_result)
        for (int64_t o = 0; o < plan.outer; ++o) y[o] = std::sqrt(y[o]);
    } else {
      std::vector<double> mags(size_t(plan.outer * plan.n));
      cpu::complex_abs(z, plan.outer * plan.n, mags.data());
      cpu::norm_rows(mags.data(), plan.outer, plan.n, p, y);
    }
  }
  out = out->clone(Dtype::F32);
  if (keepdim) out = view(out, plan.keepdim_shape);
  LUCID_CHECK(!autograd::needs_grad({&a}), NotImplementedError, variance ? (sqrt_result ? "std" : "var") : "norm",
              "(): backward of complex inputs is not implemented yet");
  return out;
}

// float32/64 var/std (kind 0) or 1-/2-norm (kind 1, 2) straight from a's memory when
// its reduced dims form one block (reduce_fast.h); null otherwise.
TensorPtr fast_moment(const TensorPtr& a, const ReducePlan& plan, bool keepdim, int kind, double correction,
                      bool take_sqrt) {
  if (!cpu::fast_reduce_dtype(a->dtype())) return nullptr;
  std::optional<DimPlan> b = contiguous_block(*a, plan);
  if (!b) return nullptr;
  const int64_t count = b->outer * b->inner, n = b->n;
  std::vector<double> r(static_cast<size_t>(count));
  const std::byte* x = a->host_ptr();
  if (kind == 0) {
    std::vector<double> mean(static_cast<size_t>(count));
    cpu::moment_reduce(a->dtype(), x, b->outer, n, b->inner, cpu::Moment::Sum, nullptr, mean.data());
    for (double& m : mean) m = n ? m / double(n) : std::numeric_limits<double>::quiet_NaN();
    cpu::moment_reduce(a->dtype(), x, b->outer, n, b->inner, cpu::Moment::SqDev, mean.data(), r.data());
    const double dof = std::max(double(n) - correction, 0.0);
    for (double& v : r) {
      v = n ? v / dof : std::numeric_limits<double>::quiet_NaN();
      if (take_sqrt) v = std::sqrt(v);
    }
  } else {
    cpu::moment_reduce(a->dtype(), x, b->outer, n, b->inner, kind == 1 ? cpu::Moment::Abs : cpu::Moment::Sq,
                       nullptr, r.data());
    if (kind == 2)
      for (double& v : r) v = std::sqrt(v);
  }
  TensorPtr out = TensorImpl::empty(plan.kept_shape, a->dtype(), Device::cpu());
  cpu::store_scaled(a->dtype(), r.data(), count, 1.0, out->host_ptr());
  return keepdim ? view(out, plan.keepdim_shape) : out;
}

TensorPtr var_std(const TensorPtr& a, const std::vector<int64_t>& dims, double correction, bool keepdim,
                  bool take_sqrt) {
  const char* name = take_sqrt ? "std" : "var";
  check_var_input(name, *a);
  ReducePlan plan = plan_reduction(*a, dims);
  if (is_complex(a->dtype())) return complex_rows_to_real(a, plan, keepdim, take_sqrt, correction, true, 0);
  const int64_t n = plan.n;
  TensorPtr out = fast_moment(a, plan, keepdim, 0, correction, take_sqrt);
  if (!out)
    out = double_rows(a, plan, keepdim, a->dtype(), [&](const double* x, double* y) {
      cpu::var_rows(x, plan.outer, n, correction, y, nullptr);
      if (take_sqrt)
        for (int64_t o = 0; o < plan.outer; ++o) y[o] = std::sqrt(y[o]);
    });
  if (autograd::needs_grad({&a})) {
    // d var / dx = 2 (x - mean) / dof;  d std / dx = (x - mean) / (dof * std).
    Shape in_shape = a->shape();
    std::vector<int64_t> rdims = reduced_dims(plan);
    const double dof = std::max(double(n) - correction, 0.0);
    auto node = autograd::record(take_sqrt ? "StdBackward0" : "VarBackward0", {a}, {out},
                                 [=](const Node& nd, const Grads& g) {
      TensorPtr x = nd.saved(0);
      TensorPtr centered = sub(x, mean(x, rdims, true, std::nullopt));
      TensorPtr gk = expand_back(g[0], plan, in_shape);
      if (!take_sqrt) return Grads{mul(gk, mul(centered, Scalar(2.0 / dof)))};
      TensorPtr s = reshape(nd.saved(1), plan.keepdim_shape);
      // std == 0 means every centered value is 0: gradient 0, as PyTorch's masked fill
      return Grads{mul(gk, div(centered, mul(nonzero_or_one(s), Scalar(dof))))};
    });
    node->save(a);
    node->save(out, true);
  }
  return out;
}

}  // namespace

TensorPtr prod(const TensorPtr& a, std::optional<int64_t> dim, bool keepdim, std::optional<Dtype> dtype) {
  Dtype out = dtype.value_or(is_integral(a->dtype(), true) ? Dtype::I64 : a->dtype());
  // dtype= casts the input first (a differentiable cast), as PyTorch does.
  TensorPtr x = dtype && *dtype != a->dtype() ? copy_to(a, *dtype, std::nullopt) : a;
  if (dim) return prod_dims(x, {*dim}, keepdim, out);
  return prod_dims(x, {}, false, out);
}

TensorPtr var(const TensorPtr& a, const std::vector<int64_t>& dims, double correction, bool keepdim) {
  return var_std(a, dims, correction, keepdim, false);
}
TensorPtr std(const TensorPtr& a, const std::vector<int64_t>& dims, double correction, bool keepdim) {
  return var_std(a, dims, correction, keepdim, true);
}

TensorPtr logsumexp(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim) {
  require_cpu("logsumexp", *a);
  LUCID_CHECK(!is_complex(a->dtype()), NotImplementedError, "logsumexp(): complex inputs are not supported yet");
  const Dtype out_dtype = is_integral(a->dtype(), true) ? default_dtype() : a->dtype();
  ReducePlan plan = plan_reduction(*a, dims);
  TensorPtr out = double_rows(a, plan, keepdim, out_dtype, [&](const double* x, double* y) {
    cpu::logsumexp_rows(x, plan.outer, plan.n, y);
  });
  if (autograd::needs_grad({&a}) && autograd::is_differentiable(a->dtype())) {
    Shape in_shape = a->shape();
    auto node = autograd::record("LogsumexpBackward0", {a}, {out}, [plan, in_shape](const Node& n, const Grads& g) {
      TensorPtr w = exp(sub(n.saved(0), expand_back(n.saved(1), plan, in_shape)));
      return Grads{mul(expand_back(g[0], plan, in_shape), w)};
    });
    node->save(a);
    node->save(out, true);
  }
  return out;
}

TensorPtr norm(const TensorPtr& a, double p, const std::vector<int64_t>& dims, bool keepdim,
               std::optional<Dtype> dtype) {
  require_cpu("norm", *a);
  LUCID_CHECK(!is_integral(a->dtype(), true), NotImplementedError, "linalg.vector_norm: Expected a floating "
              "point or complex tensor as input. Got ", dtype_name(a->dtype()));
  if (dtype && *dtype != a->dtype()) {
    LUCID_CHECK(!is_integral(*dtype, true), RuntimeError, "linalg.vector_norm: dtype should be floating, got ",
                dtype_name(*dtype));
    LUCID_CHECK(is_complex(*dtype) == is_complex(a->dtype()), RuntimeError, "linalg.vector_norm: dtype should be ",
                is_complex(a->dtype()) ? "complex for complex" : "real for real", " inputs, but got ",
                dtype_name(*dtype));
    return norm(copy_to(a, *dtype, std::nullopt), p, dims, keepdim, std::nullopt);
  }
  ReducePlan plan = plan_reduction(*a, dims);
  if (std::isinf(p))
    for (int64_t d = 0; d < std::max<int64_t>(a->ndim(), 0); ++d)
      LUCID_CHECK(!(plan.mask[d] && a->shape()[d] == 0), RuntimeError, "linalg.vector_norm cannot compute the ",
                  p > 0 ? "inf" : "-inf", " norm on the dimension ", d, " because it is empty (no identity)");
  if (is_complex(a->dtype())) return complex_rows_to_real(a, plan, keepdim, false, 0, false, p);
  TensorPtr out = p == 1 || p == 2 ? fast_moment(a, plan, keepdim, int(p), 0, false) : nullptr;
  if (!out)
    out = double_rows(a, plan, keepdim, a->dtype(), [&](const double* x, double* y) {
      cpu::norm_rows(x, plan.outer, plan.n, p, y);
    });
  if (autograd::needs_grad({&a})) {
    Shape in_shape = a->shape();
    std::vector<int64_t> rdims = reduced_dims(plan);
    auto node = autograd::record("LinalgVectorNormBackward0", {a}, {out},
                                 [plan, in_shape, rdims, p](const Node& n, const Grads& g) {
      TensorPtr x = n.saved(0), y = expand_back(n.saved(1), plan, in_shape);
      TensorPtr gk = expand_back(g[0], plan, in_shape);
      if (p == 0) return Grads{mul(gk, Scalar(0.0))};
      if (p == 1) return Grads{mul(gk, sign(x))};
      if (p == 2) return Grads{mul(gk, div(x, nonzero_or_one(y)))};
      if (std::isinf(p)) {  // like amax of |x|: split evenly among the extreme elements
        TensorPtr hit = eq(abs(x), y);  // none when the norm is NaN: zeros, as torch
        TensorPtr count = sum(hit, rdims, true, std::nullopt);
        return Grads{where(hit, Operand{div(mul(gk, sign(x)), count), {}}, Operand{nullptr, Scalar(0.0)})};
      }
      // sign(x) |x|^(p-1) / norm^(p-1); a zero norm means every |x| is 0: gradient 0.
      TensorPtr num = mul(sign(x), power(abs(x), p - 1));
      return Grads{mul(gk, div(num, power(nonzero_or_one(y), p - 1)))};
    });
    node->save(a);
    node->save(out, true);
  }
  return out;
}

}  // namespace lucid::ops
