// prod, var/std, logsumexp, norm: kernels over double (int64 / complex) rows, VJPs
// written with differentiable ops.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "core/default_dtype.h"
#include "ops/copy_ops.h"
#include "ops/elementwise.h"
#include "ops/elementwise_extra.h"
#include "ops/linalg.h"
#include "ops/prims/reduce.h"
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

// The real type of a complex type's parts.
Dtype real_of(Dtype d) { return d == Dtype::C128 ? Dtype::F64 : Dtype::F32; }

Dtype accumulate_dtype(Dtype d) {
  return is_complex(d) ? Dtype::C128 : is_floating(d) ? Dtype::F64 : Dtype::I64;
}

RowStat row_stat_params(RowStatKind stat, double correction, double p) {
  RowStat r;
  r.stat = stat, r.correction = correction, r.p = p;
  return r;
}

// The RowStat `p` of a's rows laid out as `rows_dtype` (float64, or complex64 for
// complex inputs), computed in float64 and returned as `out_dtype`, shaped by keepdim.
TensorPtr row_stat(const TensorPtr& a, const ReducePlan& plan, bool keepdim, RowStat p, Dtype rows_dtype,
                   Dtype out_dtype) {
  TensorPtr rows = reduction_rows(a, plan, rows_dtype);
  TensorPtr out = TensorImpl::empty(plan.kept_shape, Dtype::F64, a->device());
  p.outer = plan.outer, p.n = plan.n;
  if (plan.outer > 0) launch(p, {out.get()}, {rows.get()});
  if (out_dtype != Dtype::F64) out = out->clone(out_dtype);
  return keepdim ? view(out, plan.keepdim_shape) : out;
}

// t with its zeros replaced by ones (the gradient formulas divide by it).
TensorPtr nonzero_or_one(const TensorPtr& t) { return add(t, eq(t, Scalar(0.0))); }

// exp(e * log(t)) for t >= 0: t^e, differentiable, 0 at t == 0 for e > 0.
TensorPtr power(const TensorPtr& t, double e) { return exp(mul(log(t), Scalar(e))); }

// Product over plan's dims, in the dtype `out`, keeping the reduced dims.
TensorPtr prod_dims(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim, Dtype out_dtype) {
  ReducePlan plan = plan_reduction(*a, dims);
  const Dtype acc = accumulate_dtype(out_dtype);
  TensorPtr rows = reduction_rows(a, plan, acc);
  TensorPtr out = TensorImpl::empty(plan.kept_shape, acc, a->device());
  if (plan.outer > 0) {
    ProdRows p;
    p.outer = plan.outer, p.n = plan.n;
    launch(p, {out.get()}, {rows.get()});
  }
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
      TensorPtr z = eq(x, Scalar(0.0));
      TensorPtr zeros = sum(z, rdims, true, std::nullopt);
      TensorPtr x1 = add(x, z);
      TensorPtr p1 = prod_dims(x1, rdims, true, x1->dtype());
      TensorPtr others = where(eq(zeros, Scalar(int64_t(0))), Operand{div(p1, x1), {}},
                               Operand{where(logical_and(eq(zeros, Scalar(int64_t(1))), z), Operand{p1, {}},
                                             Operand{nullptr, Scalar(0.0)}), {}});
      // (complex: the product is holomorphic in each element, so torch's g * conj(others))
      return Grads{mul(expand_back(g[0], plan, in_shape), conj(others))};
    });
    node->save(a);
  }
  return out;
}

void check_var_input(const TensorImpl& a) {
  LUCID_CHECK(!is_integral(a.dtype(), true), NotImplementedError,
              "std and var only support floating point and complex dtypes, got ", dtype_name(a.dtype()));
}

// sign(x), or torch's sgn z / |z| (0 at 0) for complex z: the norms' gradients.
TensorPtr sgn_of(const TensorPtr& x) {
  if (!is_complex(x->dtype())) return sign(x);
  TensorPtr r = abs(x);
  return div(x, where(eq(r, Scalar(0.0)), Operand{nullptr, Scalar(1.0)}, Operand{r, {}}));
}

// var/std or 1-/2-norm of a float tensor straight from a's memory when its reduced dims
// form one block (MomentBlock); null otherwise.
TensorPtr fast_moment(const TensorPtr& a, const ReducePlan& plan, bool keepdim, BlockMoment moment,
                      double correction) {
  if (!block_float_dtype(*a)) return nullptr;
  std::optional<DimPlan> b = contiguous_block(*a, plan);
  if (!b) return nullptr;
  TensorPtr out = TensorImpl::empty(plan.kept_shape, a->dtype(), a->device());
  MomentBlock p;
  p.moment = moment;
  p.outer = b->outer, p.n = b->n, p.inner = b->inner;
  p.correction = correction;
  launch(p, {out.get()}, {a.get()});
  return keepdim ? view(out, plan.keepdim_shape) : out;
}

TensorPtr var_std(const TensorPtr& a, const std::vector<int64_t>& dims, double correction, bool keepdim,
                  bool take_sqrt) {
  check_var_input(*a);
  ReducePlan plan = plan_reduction(*a, dims);
  const RowStat stat = row_stat_params(take_sqrt ? RowStatKind::Std : RowStatKind::Var, correction, 2);
  const int64_t n = plan.n;
  // (complex input: |z - mean|^2 over complex128 rows, a real result of the input's precision)
  TensorPtr out = is_complex(a->dtype()) ? row_stat(a, plan, keepdim, stat, Dtype::C128, real_of(a->dtype()))
                                         : fast_moment(a, plan, keepdim, take_sqrt ? BlockMoment::Std : BlockMoment::Var,
                                                       correction);
  if (!out) out = row_stat(a, plan, keepdim, stat, Dtype::F64, a->dtype());
  if (autograd::needs_grad({&a})) {
    // d var / dx = 2 (x - mean) / dof;  d std / dx = (x - mean) / (dof * std); for complex x
    // the same with x - mean complex (torch's var_backward and std_backward).
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
  LUCID_CHECK(!is_complex(a->dtype()), NotImplementedError, "logsumexp(): complex inputs are not supported yet");
  const Dtype out_dtype = is_integral(a->dtype(), true) ? default_dtype() : a->dtype();
  ReducePlan plan = plan_reduction(*a, dims);
  TensorPtr out;
  if (a->dtype() == Dtype::F32 && a->device().is_cpu() && plan.n > 0) {
    // float32 on the CPU: torch's own formula, m + log(sum(exp(x - m))) with m the max
    // (0 where it is infinite, so all -inf gives -inf and a +inf gives inf), from the
    // vectorised ops, in float32 with a double sum. (The float64 row statistic below
    // converted every element and ran a scalar exp: 4x torch's time.)
    autograd::GradModeGuard no_grad(false);  // (the node below is the op's gradient)
    const std::vector<int64_t> rdims = reduced_dims(plan);
    TensorPtr m = amax(a, rdims, true);
    m = where(eq(abs(m), Scalar(std::numeric_limits<double>::infinity())), Operand{nullptr, Scalar(0.0)}, Operand{m, {}});
    out = add(log(sum(exp(sub(a, m)), rdims, true, std::nullopt)), m);
    out = view(out, plan.out_shape(keepdim));
  } else {
    out = row_stat(a, plan, keepdim, row_stat_params(RowStatKind::LogSumExp, 0, 2), Dtype::F64, out_dtype);
  }
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
  const RowStat stat = row_stat_params(RowStatKind::Norm, 0, p);
  // (complex input: the magnitudes' norm over complex128 rows, a real result of the input's precision)
  TensorPtr out = is_complex(a->dtype()) ? row_stat(a, plan, keepdim, stat, Dtype::C128, real_of(a->dtype()))
                  : p == 1 || p == 2     ? fast_moment(a, plan, keepdim, p == 1 ? BlockMoment::Norm1 : BlockMoment::Norm2, 0)
                                         : nullptr;
  if (!out) out = row_stat(a, plan, keepdim, stat, Dtype::F64, a->dtype());
  if (autograd::needs_grad({&a})) {
    Shape in_shape = a->shape();
    std::vector<int64_t> rdims = reduced_dims(plan);
    auto node = autograd::record("LinalgVectorNormBackward0", {a}, {out},
                                 [plan, in_shape, rdims, p](const Node& n, const Grads& g) {
      TensorPtr x = n.saved(0), y = expand_back(n.saved(1), plan, in_shape);
      TensorPtr gk = expand_back(g[0], plan, in_shape);
      if (p == 0) return Grads{mul(gk, Scalar(0.0))};
      if (p == 1) return Grads{mul(gk, sgn_of(x))};
      // (the quotient by the norm on the reduced shape, then one product over x, as torch's
      // x * (g / norm): the norm's test and division over x's expanded shape were 5x the work)
      if (p == 2) return Grads{mul(x, expand_back(div(g[0], nonzero_or_one(n.saved(1))), plan, in_shape))};
      if (std::isinf(p)) {  // like amax of |x|: split evenly among the extreme elements
        TensorPtr hit = eq(abs(x), y);  // none when the norm is NaN: zeros, as torch
        TensorPtr count = sum(hit, rdims, true, std::nullopt);
        return Grads{where(hit, Operand{div(mul(gk, sgn_of(x)), count), {}}, Operand{nullptr, Scalar(0.0)})};
      }
      // sgn(x) |x|^(p-1) / norm^(p-1), 0 at x = 0 (where |x|^(p-1) is inf for p < 1, as
      // torch's); a zero norm means every |x| is 0: gradient 0.
      TensorPtr r = abs(x);
      TensorPtr num = mul(sgn_of(x), power(where(eq(r, Scalar(0.0)), Operand{nullptr, Scalar(1.0)}, Operand{r, {}}),
                                           p - 1));
      return Grads{mul(num, expand_back(div(g[0], power(nonzero_or_one(n.saved(1)), p - 1)), plan, in_shape))};
    });
    node->save(a);
    node->save(out, true);
  }
  return out;
}

}  // namespace lucid::ops
