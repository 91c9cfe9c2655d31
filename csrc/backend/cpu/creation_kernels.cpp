#include "backend/cpu/creation_kernels.h"

#include "backend/common/creation_values.h"
#include "core/parallel.h"

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
    for (int64_t i = 0; i < n; ++i) p[i] = backend::store_as<T>(f(i));
  });
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
  visit_dtype(out.dtype(), [&]<typename T>() {
    const int64_t n = out.numel();
    const backend::LinspaceValues<T> values(start, end, n, log_base.has_value(), log_base.value_or(0));
    T* p = reinterpret_cast<T*>(out.host_ptr());
    // (each value depends only on its index: the pieces may run in any order; with
    // start == end every value is the first: one pow, not 2^31 of them)
    const bool constant = n > 1 && start == end;
    const T first = n > 0 ? backend::store_as<T>(values(0)) : T{};
    parallel_for(n, int64_t(1) << 15, [&](int64_t lo, int64_t hi) {
      if (constant) return void(std::fill(p + lo, p + hi, first));
      for (int64_t i = lo; i < hi; ++i) p[i] = backend::store_as<T>(values(i));
    });
  });
}

void fill_eye(TensorImpl& out) {
  const int64_t n = out.shape()[0], m = out.shape()[1];
  if (out.numel() == 0) return;
  std::memset(out.host_ptr(), 0, out.nbytes());
  visit_dtype(out.dtype(), [&]<typename T>() {
    T* p = reinterpret_cast<T*>(out.host_ptr());
    for (int64_t i = 0, k = std::min(n, m); i < k; ++i) {
      p[i * (m + 1)] = backend::store_as<T>(int64_t(1));
    }
  });
}

}  // namespace lucid::cpu
