#include "backend/cpu/creation_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace lucid::cpu {

namespace {

// Writes f(i) cast to out's dtype into the contiguous 1-d tensor out.
template <typename F>
void generate(TensorImpl& out, F f) {
  const int64_t n = out.numel();
  visit_dtype(out.dtype(), [&]<typename T>() {
    T* p = reinterpret_cast<T*>(out.host_ptr());
    for (int64_t i = 0; i < n; ++i) {
      auto v = f(i);
      if constexpr (std::is_same_v<T, complex64>) p[i] = complex64(float(v), 0.f);
      else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) p[i] = T(float(v));
      else p[i] = static_cast<T>(v);
    }
  });
}

// linspace's values as PyTorch computes them: in the output type itself (double
// for integer and complex outputs), the first half forward from start and the
// second half backward from end so both endpoints are exact. float16/bfloat16
// arithmetic rounds after every operation, as c10::Half's operators do.
template <typename T>
void linspace_values(TensorImpl& out, double start_d, double end_d, std::optional<double> log_base) {
  constexpr bool kNative = std::is_same_v<T, float> || std::is_same_v<T, double>;
  constexpr bool kReduced = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
  using S = std::conditional_t<kNative, T, std::conditional_t<kReduced, float, double>>;
  auto rd = [](S x) -> S {
    if constexpr (kReduced) return float(T(x));
    else return x;
  };
  const int64_t steps = out.numel();
  S start = rd(S(start_d)), end = rd(S(end_d));
  S step = steps > 1 ? rd(rd(end - start) / rd(S(steps - 1))) : S(0);
  int64_t half = steps > 1 ? steps / 2 : 1;  // a single step is `start`
  // Element by element as the output is written: no second array of the output's size.
  auto value = [=](int64_t i) {
    return i < half ? double(rd(start + rd(step * rd(S(i))))) : double(rd(end - rd(step * rd(S(steps - i - 1)))));
  };
  if (log_base) generate(out, [&](int64_t i) { return std::pow(*log_base, value(i)); });
  else generate(out, value);
}

}  // namespace

void fill_arange(TensorImpl& out, const Scalar& start, const Scalar& step) {
  const int64_t* i0 = std::get_if<int64_t>(&start);
  const int64_t* di = std::get_if<int64_t>(&step);
  if (i0 && di) return generate(out, [s = *i0, d = *di](int64_t i) { return s + i * d; });
  const double s = std::get<double>(start), d = std::get<double>(step);
  generate(out, [s, d](int64_t i) { return s + double(i) * d; });
}

void fill_linspace(TensorImpl& out, double start, double end, std::optional<double> log_base) {
  visit_dtype(out.dtype(), [&]<typename T>() { linspace_values<T>(out, start, end, log_base); });
}

void fill_eye(TensorImpl& out) {
  const int64_t n = out.shape()[0], m = out.shape()[1];
  if (out.numel() == 0) return;
  std::memset(out.host_ptr(), 0, out.nbytes());
  visit_dtype(out.dtype(), [&]<typename T>() {
    T* p = reinterpret_cast<T*>(out.host_ptr());
    for (int64_t i = 0, k = std::min(n, m); i < k; ++i) {
      if constexpr (std::is_same_v<T, complex64>) p[i * (m + 1)] = complex64(1.f, 0.f);
      else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) p[i * (m + 1)] = T(1.f);
      else p[i * (m + 1)] = T(1);
    }
  });
}

}  // namespace lucid::cpu
