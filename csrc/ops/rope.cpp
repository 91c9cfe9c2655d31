// lucid.fast.rope through the Rope primitive (ops/prims/rope.h).
#include <cmath>

#include "autograd/record.h"
#include "ops/prims/rope.h"
#include "ops/reduce_plan.h"
#include "ops/seq_ops.h"

namespace lucid::ops {

namespace {

TensorPtr run_rope(const TensorPtr& x, const RopeParams& p) {
  TensorPtr in = contiguous_as(x, x->dtype());
  TensorPtr out = TensorImpl::empty(x->shape(), x->dtype(), x->device());
  Rope prim;
  prim.p = p;
  if (out->numel() > 0) launch(prim, {out.get()}, {in.get()});
  if (autograd::needs_grad({&x})) {
    RopeParams back = p;
    back.inverse = !p.inverse;
    autograd::record("RopeBackward", {x}, {out},
                     [back](const Node&, const autograd::Grads& g) { return autograd::Grads{run_rope(g[0], back)}; });
  }
  return out;
}

}  // namespace

TensorPtr rope(const TensorPtr& x, int64_t dims, bool traditional, double base, double scale, int64_t offset) {
  LUCID_CHECK(x->ndim() >= 2, ValueError, "fast.rope: expected an input of at least 2 dims [..., L, D], got shape ",
              shape_str(x->shape()));
  const Dtype d = x->dtype();
  LUCID_CHECK(d == Dtype::F16 || d == Dtype::BF16 || d == Dtype::F32 || d == Dtype::F64, TypeError,
              "fast.rope: expected a float16, bfloat16, float32 or float64 input, got ", dtype_name(d));
  const int64_t features = x->shape().back();
  LUCID_CHECK(dims > 0 && dims % 2 == 0 && dims <= features, ValueError, "fast.rope: dims must be even and in [2, ",
              features, "] (the size of the last dim), got ", dims);
  LUCID_CHECK(base > 0 && std::isfinite(base), ValueError, "fast.rope: base must be positive and finite, got ", base);
  LUCID_CHECK(std::isfinite(scale), ValueError, "fast.rope: scale must be finite, got ", scale);
  LUCID_CHECK(offset >= 0, ValueError, "fast.rope: offset must be >= 0, got ", offset);
  return run_rope(x, RopeParams{dims, traditional, std::log(base), scale, offset, false});
}

}  // namespace lucid::ops
