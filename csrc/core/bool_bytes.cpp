#include "core/bool_bytes.h"

#include <vector>

#include "core/copy.h"

namespace lucid {

int64_t find_non_bool_byte(const std::byte* base, const Shape& shape, const Stride& stride) {
  for (int64_t s : shape)
    if (s == 0) return -1;
  Stride st = stride;
  const Shape cs = collapse_dims(shape, {&st});  // (keeps the row-major order)
  if (cs.empty()) return std::to_integer<unsigned>(*base) <= 1 ? -1 : 0;
  // An odometer over the outer dimensions, a plain loop along the innermost one.
  const size_t outer_dims = cs.size() - 1;
  const int64_t n = cs.back(), step = st.back();
  int64_t rows = 1;
  for (size_t d = 0; d < outer_dims; ++d) rows *= cs[d];
  std::vector<int64_t> idx(outer_dims, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t at = 0;
    for (size_t d = 0; d < outer_dims; ++d) at += idx[d] * st[d];
    for (int64_t i = 0; i < n; ++i, at += step)
      if (std::to_integer<unsigned>(base[at]) > 1) return at;
    for (size_t d = outer_dims; d-- > 0;) {
      if (++idx[d] < cs[d]) break;
      idx[d] = 0;
    }
  }
  return -1;
}

}  // namespace lucid
