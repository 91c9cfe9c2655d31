#include "ops/creation.h"

#include <cmath>
#include <cstring>

namespace lucid::ops {

namespace {

// Writes f(i) cast to the tensor's dtype into a contiguous CPU tensor.
template <typename F>
TensorPtr generate(int64_t n, Dtype dtype, Device device, F f) {
  TensorPtr t = TensorImpl::empty({n}, dtype, Device::cpu());
  std::byte* p = t->host_ptr();
  visit_dtype(dtype, [&]<typename T>() {
    T* out = reinterpret_cast<T*>(p);
    for (int64_t i = 0; i < n; ++i) {
      auto v = f(i);
      if constexpr (std::is_same_v<T, complex64>) out[i] = complex64(float(v), 0.f);
      else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) out[i] = T(float(v));
      else out[i] = static_cast<T>(v);
    }
  });
  return device.is_cpu() ? t : t->transfer_to_device(device);
}

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

}  // namespace

TensorPtr arange(double start, double end, double step, Dtype dtype, Device device) {
  LUCID_CHECK(dtype != Dtype::Bool, RuntimeError, "arange is not implemented for dtype bool");
  int64_t n = arange_length(start, end, step);
  return generate(n, dtype, device, [&](int64_t i) { return start + double(i) * step; });
}

TensorPtr arange_int(int64_t start, int64_t end, int64_t step, Dtype dtype, Device device) {
  LUCID_CHECK(dtype != Dtype::Bool, RuntimeError, "arange is not implemented for dtype bool");
  LUCID_CHECK(step != 0, RuntimeError, "step must be nonzero");
  LUCID_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), RuntimeError,
              "upper bound and larger bound inconsistent with step sign");
  // ceil((end - start) / step) in integers, without overflow for ordinary ranges.
  __int128 span = __int128(end) - start;
  int64_t n = int64_t((span + (step > 0 ? step - 1 : step + 1)) / step);
  return generate(n, dtype, device, [&](int64_t i) { return start + i * step; });
}

TensorPtr linspace(double start, double end, int64_t steps, Dtype dtype, Device device) {
  check_steps(steps, "linspace");
  // PyTorch fills the first half forward from start and the second half backward
  // from end, so both endpoints are exact.
  double step = steps > 1 ? (end - start) / double(steps - 1) : 0.0;
  int64_t half = steps / 2;
  return generate(steps, dtype, device, [&](int64_t i) {
    return i < half ? start + step * double(i) : end - step * double(steps - i - 1);
  });
}

TensorPtr logspace(double start, double end, int64_t steps, double base, Dtype dtype, Device device) {
  check_steps(steps, "logspace");
  double step = steps > 1 ? (end - start) / double(steps - 1) : 0.0;
  int64_t half = steps / 2;
  return generate(steps, dtype, device, [&](int64_t i) {
    double e = i < half ? start + step * double(i) : end - step * double(steps - i - 1);
    return std::pow(base, e);
  });
}

TensorPtr eye(int64_t n, int64_t m, Dtype dtype, Device device) {
  LUCID_CHECK(n >= 0, RuntimeError, "n must be greater or equal to 0, got ", n);
  LUCID_CHECK(m >= 0, RuntimeError, "m must be greater or equal to 0, got ", m);
  TensorPtr t = TensorImpl::empty({n, m}, dtype, Device::cpu());
  std::memset(t->host_ptr(), 0, t->nbytes());
  TensorPtr one = TensorImpl::empty({}, Dtype::Bool, Device::cpu());
  *reinterpret_cast<bool*>(one->host_ptr()) = true;
  int64_t k = std::min(n, m);
  // The diagonal is a strided view with stride (m + 1) elements.
  TensorPtr diag = TensorImpl::view_of(*t, {k}, {(m + 1) * int64_t(t->itemsize())}, 0);
  diag->copy_from(*one);
  return device.is_cpu() ? t : t->transfer_to_device(device);
}

}  // namespace lucid::ops
