#include "backend/cpu/reduce.h"

#include <complex>
#include <cstring>
#include <vector>

#include "core/copy.h"

namespace lucid::cpu {

namespace {

template <typename T>
using acc_t = std::conditional_t<kIsComplexValue<T>, std::complex<double>,
                                 std::conditional_t<std::is_integral_v<T>, int64_t, double>>;

template <typename T>
acc_t<T> widen(T v) {
  if constexpr (kIsComplexValue<T>) return {v.real(), v.imag()};
  else if constexpr (std::is_integral_v<T>) return int64_t(v);
  else return double(v);
}

template <typename T>
T narrow(acc_t<T> v, double scale) {
  if constexpr (kIsComplexValue<T>) return T(v * scale);
  else if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_integral_v<T>) return T(v);
  else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(float(v * scale));
  else return T(v * scale);
}

}  // namespace

void sum_last_dims(TensorImpl& out, const TensorImpl& a, size_t reduced, double scale) {
  const Shape& shape = a.shape();
  const size_t kept = shape.size() - reduced;
  // The reduced block of one output element, its dims merged where contiguous.
  Shape block(shape.begin() + kept, shape.end());
  Stride block_stride(a.stride().begin() + kept, a.stride().end());
  Shape inner = collapse_dims(block, {&block_stride});
  int64_t block_n = 1;
  for (int64_t s : block) block_n *= s;
  visit_dtype(a.dtype(), [&]<typename T>() {
    std::byte* o = out.host_ptr();
    const int64_t n_out = out.numel();
    std::vector<int64_t> oidx(kept, 0), bidx(inner.size(), 0);
    for (int64_t i = 0; i < n_out; ++i) {
      const std::byte* base = a.host_ptr();
      int64_t ooff = 0;
      for (size_t d = 0; d < kept; ++d) {
        base += oidx[d] * a.stride()[d];
        ooff += oidx[d] * out.stride()[d];
      }
      acc_t<T> acc{};
      if (block_n > 0) {
        if (inner.empty()) {
          acc = widen(*reinterpret_cast<const T*>(base));
        } else {
          const int64_t row = inner.back(), step = block_stride.back();
          std::fill(bidx.begin(), bidx.end(), 0);
          for (int64_t r = 0, rows = block_n / row; r < rows; ++r) {
            const std::byte* p = base;
            for (size_t d = 0; d + 1 < inner.size(); ++d) p += bidx[d] * block_stride[d];
            if (step == int64_t(sizeof(T))) {
              const T* q = reinterpret_cast<const T*>(p);
              for (int64_t k = 0; k < row; ++k) acc += widen(q[k]);
            } else {
              for (int64_t k = 0; k < row; ++k) acc += widen(*reinterpret_cast<const T*>(p + k * step));
            }
            for (size_t d = inner.size() - 1; d-- > 0;) {
              if (++bidx[d] < inner[d]) break;
              bidx[d] = 0;
            }
          }
        }
      }
      T v = narrow<T>(acc, scale);
      std::memcpy(o + ooff, &v, sizeof v);
      for (size_t d = kept; d-- > 0;) {  // odometer over the kept dims
        if (++oidx[d] < shape[d]) break;
        oidx[d] = 0;
      }
    }
  });
}

}  // namespace lucid::cpu
