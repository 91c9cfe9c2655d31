#include "ops/creation.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

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

namespace {

// linspace's values as PyTorch computes them: in the output type itself (double
// for integer and complex outputs), the first half forward from start and the
// second half backward from end so both endpoints are exact. float16/bfloat16
// arithmetic rounds after every operation, as c10::Half's operators do.
template <typename T>
std::function<double(int64_t)> linspace_values(double start_d, double end_d, int64_t steps) {
  constexpr bool kNative = std::is_same_v<T, float> || std::is_same_v<T, double>;
  constexpr bool kReduced = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
  using S = std::conditional_t<kNative, T, std::conditional_t<kReduced, float, double>>;
  auto rd = [](S x) -> S {
    if constexpr (kReduced) return float(T(x));
    else return x;
  };
  S start = rd(S(start_d)), end = rd(S(end_d));
  S step = steps > 1 ? rd(rd(end - start) / rd(S(steps - 1))) : S(0);
  int64_t half = steps > 1 ? steps / 2 : 1;  // a single step is `start`
  // Element by element as the output is written: no second array of the output's size.
  return [=](int64_t i) {
    return i < half ? double(rd(start + rd(step * rd(S(i))))) : double(rd(end - rd(step * rd(S(steps - i - 1)))));
  };
}

std::function<double(int64_t)> linspace_for(double start, double end, int64_t steps, Dtype dtype) {
  return visit_dtype(dtype, [&]<typename T>() { return linspace_values<T>(start, end, steps); });
}

}  // namespace

TensorPtr linspace(double start, double end, int64_t steps, Dtype dtype, Device device) {
  check_steps(steps, "linspace");
  return generate(steps, dtype, device, linspace_for(start, end, steps, dtype));
}

TensorPtr logspace(double start, double end, int64_t steps, double base, Dtype dtype, Device device) {
  check_steps(steps, "logspace");
  const std::function<double(int64_t)> exponent = linspace_for(start, end, steps, dtype);
  return generate(steps, dtype, device, [&](int64_t i) { return std::pow(base, exponent(i)); });
}

TensorPtr eye(int64_t n, int64_t m, Dtype dtype, Device device) {
  LUCID_CHECK(n >= 0, RuntimeError, "n must be greater or equal to 0, got ", n);
  LUCID_CHECK(m >= 0, RuntimeError, "m must be greater or equal to 0, got ", m);
  TensorPtr t = TensorImpl::full({n, m}, Scalar(false), dtype, Device::cpu());
  visit_dtype(dtype, [&]<typename T>() {
    T* p = reinterpret_cast<T*>(t->host_ptr());
    for (int64_t i = 0, k = std::min(n, m); i < k; ++i) {
      if constexpr (std::is_same_v<T, complex64>) p[i * (m + 1)] = complex64(1.f, 0.f);
      else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) p[i * (m + 1)] = T(1.f);
      else p[i * (m + 1)] = T(1);
    }
  });
  return device.is_cpu() ? t : t->transfer_to_device(device);
}

}  // namespace lucid::ops
