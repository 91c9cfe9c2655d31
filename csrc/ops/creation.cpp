#include "ops/creation.h"

#include <cmath>

#include "ops/prims/creation.h"

namespace lucid::ops {

namespace {

int64_t arange_length(double start, double end, double step) {
  LUCID_CHECK(step != 0, RuntimeError, "step must be nonzero");
  LUCID_CHECK(std::isfinite(start) && std::isfinite(end), RuntimeError,
              "unsupported range: ", start, " -> ", end);
  LUCID_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), RuntimeError,
              "upper bound and larger bound inconsistent with step sign");
  double n = std::ceil((end - start) / step);
  LUCID_CHECK(n < 9.2e18, RuntimeError, "arange: too many elements (", n, ")");
  return int64_t(n);
}

void check_steps(int64_t steps, const char* op) {
  LUCID_CHECK(steps >= 0, RuntimeError, op, "(): number of steps must be non-negative");
}

// A fresh 1-d tensor of n elements filled by p on `device`.
TensorPtr generated(const Primitive& p, int64_t n, Dtype dtype, Device device) {
  TensorPtr out = TensorImpl::empty({n}, dtype, device);
  launch(p, {out.get()}, {});
  return out;
}

}  // namespace

TensorPtr arange(double start, double end, double step, Dtype dtype, Device device) {
  LUCID_CHECK(dtype != Dtype::Bool, RuntimeError, "arange is not implemented for dtype bool");
  int64_t n = arange_length(start, end, step);
  Arange p;
  p.start = start;
  p.step = step;
  return generated(p, n, dtype, device);
}

TensorPtr arange_int(int64_t start, int64_t end, int64_t step, Dtype dtype, Device device) {
  LUCID_CHECK(dtype != Dtype::Bool, RuntimeError, "arange is not implemented for dtype bool");
  LUCID_CHECK(step != 0, RuntimeError, "step must be nonzero");
  LUCID_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), RuntimeError,
              "upper bound and larger bound inconsistent with step sign");
  // ceil((end - start) / step) in integers, without overflow for ordinary ranges.
  __int128 span = __int128(end) - start;
  int64_t n = int64_t((span + (step > 0 ? step - 1 : step + 1)) / step);
  Arange p;
  p.start = start;
  p.step = step;
  return generated(p, n, dtype, device);
}

TensorPtr linspace(double start, double end, int64_t steps, Dtype dtype, Device device) {
  check_steps(steps, "linspace");
  Linspace p;
  p.start = start;
  p.end = end;
  return generated(p, steps, dtype, device);
}

TensorPtr logspace(double start, double end, int64_t steps, double base, Dtype dtype, Device device) {
  check_steps(steps, "logspace");
  Linspace p;
  p.start = start;
  p.end = end;
  p.log_base = base;
  return generated(p, steps, dtype, device);
}

TensorPtr eye(int64_t n, int64_t m, Dtype dtype, Device device) {
  LUCID_CHECK(n >= 0, RuntimeError, "n must be greater or equal to 0, got ", n);
  LUCID_CHECK(m >= 0, RuntimeError, "m must be greater or equal to 0, got ", m);
  TensorPtr out = TensorImpl::empty({n, m}, dtype, device);
  launch(Eye{}, {out.get()}, {});
  return out;
}

}  // namespace lucid::ops
