// Cumulative sums and products along one dim of a contiguous [outer, n, inner]
// block, in place. The inner loop runs over `inner` so it walks memory in order.
#include <complex>

#include "backend/cpu/reduce.h"

namespace lucid::cpu {

namespace {

template <typename T, bool kProd>
void scan(T* data, int64_t outer, int64_t n, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    T* block = data + o * n * inner;
    for (int64_t k = 1; k < n; ++k) {
      const T* prev = block + (k - 1) * inner;
      T* cur = block + k * inner;
      for (int64_t i = 0; i < inner; ++i) {
        if constexpr (kProd) cur[i] = prev[i] * cur[i];
        else cur[i] = prev[i] + cur[i];
      }
    }
  }
}

}  // namespace

void scan_inplace(Dtype d, std::byte* data, int64_t outer, int64_t n, int64_t inner, bool is_prod) {
  switch (d) {
    case Dtype::I64: {
      auto* p = reinterpret_cast<int64_t*>(data);
      return is_prod ? scan<int64_t, true>(p, outer, n, inner) : scan<int64_t, false>(p, outer, n, inner);
    }
    case Dtype::F64: {
      auto* p = reinterpret_cast<double*>(data);
      return is_prod ? scan<double, true>(p, outer, n, inner) : scan<double, false>(p, outer, n, inner);
    }
    case Dtype::C64: {
      auto* p = reinterpret_cast<complex64*>(data);
      return is_prod ? scan<complex64, true>(p, outer, n, inner) : scan<complex64, false>(p, outer, n, inner);
    }
    default: fail<RuntimeError>("internal: scan_inplace on ", dtype_name(d));
  }
}

}  // namespace lucid::cpu
