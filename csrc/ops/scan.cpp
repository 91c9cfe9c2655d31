// cumsum / cumprod along one dim. Integers and bool accumulate in int64 (and give
// int64, as PyTorch), floats in double, complex in complex64.
#include "autograd/record.h"
#include "ops/copy_ops.h"
#include "ops/elementwise.h"
#include "ops/elementwise_extra.h"
#include "ops/linalg.h"
#include "ops/prims/reduce.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

// sum_{j >= i} v_j along dim (the adjoint of cumsum), from ops that have gradients.
TensorPtr reverse_cumsum(const TensorPtr& v, int64_t dim) {
  return sub(add(sum(v, {dim}, true, std::nullopt), v), cumsum(v, dim, std::nullopt));
}

TensorPtr scan(const TensorPtr& a, int64_t dim, std::optional<Dtype> dtype, bool is_prod) {
  if (dtype && *dtype != a->dtype()) return scan(copy_to(a, *dtype, std::nullopt), dim, dtype, is_prod);
  // An explicit dtype is kept (cumsum(int32, dtype=int32) stays int32).
  const Dtype out_dtype = dtype ? *dtype : is_integral(a->dtype(), true) ? Dtype::I64 : a->dtype();
  const Dtype acc = is_complex(out_dtype) ? Dtype::C128 : is_floating(out_dtype) ? Dtype::F64 : Dtype::I64;
  DimPlan p = plan_dim(*a, dim);
  ScanDim prim;
  prim.outer = p.outer, prim.n = p.n, prim.inner = p.inner, prim.is_prod = is_prod;
  TensorPtr out;
  if (a->dtype() == out_dtype && block_scan_dtype(out_dtype, a->device())) {  // float: no double copy, threaded
    TensorPtr x = contiguous_as(a, out_dtype);
    out = TensorImpl::empty(a->shape(), out_dtype, a->device());
    if (a->numel() > 0) launch(prim, {out.get()}, {x.get()});
  } else {
    TensorPtr buf = a->clone(acc);  // contiguous, and ours to scan in place
    if (a->numel() > 0) launch(prim, {buf.get()}, {buf.get()});
    out = acc == out_dtype ? buf : buf->clone(out_dtype);
  }
  if (autograd::needs_grad({&a}) && autograd::is_differentiable(out_dtype)) {
    const int64_t d = p.dim;
    if (!is_prod) {
      autograd::record("CumsumBackward0", {a}, {out},
                       [d](const Node&, const Grads& g) { return Grads{reverse_cumsum(g[0], d)}; });
    } else {
      // d out_j / d x_i = prod_{k <= j, k != i} x_k for j >= i. Before the first zero
      // of a row that is out_j / x_i; at the first zero it is the cumprod with that
      // zero replaced by one; after it, 0. (Torch's formula differs; this one is
      // simpler and still exact with zeros.)
      auto node = autograd::record("CumprodBackward0", {a}, {out}, [d](const Node& n, const Grads& g) {
        TensorPtr x = n.saved(0), y = n.saved(1);
        // (complex: cumprod is holomorphic in each element; torch's g * conj(d out / d x)
        // is the conjugate of this VJP of conj(g))
        const bool complex = is_complex(x->dtype());
        const TensorPtr gg = complex ? conj(g[0]) : g[0];
        TensorPtr z = eq(x, Scalar(0.0));
        TensorPtr zeros_so_far = cumsum(z, d, std::nullopt);
        TensorPtr before = eq(zeros_so_far, Scalar(int64_t(0)));
        TensorPtr first_zero = mul(z, eq(zeros_so_far, Scalar(int64_t(1))));
        TensorPtr safe_x = add(x, z);
        TensorPtr c1 = cumprod(add(x, first_zero), d, std::nullopt);
        TensorPtr at_first_zero = where(first_zero, Operand{reverse_cumsum(mul(gg, c1), d), {}},
                                        Operand{nullptr, Scalar(0.0)});
        TensorPtr gx = where(before, Operand{div(reverse_cumsum(mul(gg, y), d), safe_x), {}},
                             Operand{at_first_zero, {}});
        return Grads{complex ? conj(gx) : gx};
      });
      node->save(a);
      node->save(out, true);
    }
  }
  return out;
}

}  // namespace

TensorPtr cumsum(const TensorPtr& a, int64_t dim, std::optional<Dtype> dtype) { return scan(a, dim, dtype, false); }
TensorPtr cumprod(const TensorPtr& a, int64_t dim, std::optional<Dtype> dtype) { return scan(a, dim, dtype, true); }

}  // namespace lucid::ops
