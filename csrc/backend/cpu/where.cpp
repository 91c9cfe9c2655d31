// where(cond, a, b): a selection, so the kernel copies bytes (one loop for every
// dtype) over the broadcast operands' byte strides.
#include <cstring>

#include "backend/cpu/elementwise.h"
#include "core/copy.h"

namespace lucid::cpu {

void where(TensorImpl& out, const TensorImpl& cond, const TensorImpl& a, const TensorImpl& b) {
  if (out.numel() == 0) return;
  Stride so = out.stride(), sc = cond.stride(), sa = a.stride(), sb = b.stride();
  Shape dims = collapse_dims(out.shape(), {&so, &sc, &sa, &sb});
  const size_t nd = dims.size(), item = out.itemsize();
  std::vector<int64_t> idx(nd, 0);
  std::byte* o = out.host_ptr();
  const std::byte *c = cond.host_ptr(), *x = a.host_ptr(), *y = b.host_ptr();
  for (int64_t i = 0, n = out.numel(); i < n; ++i) {
    std::memcpy(o, *c != std::byte{0} ? x : y, item);
    for (size_t d = nd; d-- > 0;) {  // odometer, innermost first
      o += so[d]; c += sc[d]; x += sa[d]; y += sb[d];
      if (++idx[d] < dims[d]) break;
      o -= so[d] * dims[d]; c -= sc[d] * dims[d]; x -= sa[d] * dims[d]; y -= sb[d] * dims[d];
      idx[d] = 0;
    }
  }
}

}  // namespace lucid::cpu
