#include "core/shape.h"

#include <limits>

namespace lucid {

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) {
    LUCID_CHECK(s >= 0, RuntimeError, "negative dimension ", s, " in shape ", shape_str(shape),
                ": sizes must be non-negative");
    if (s != 0 && n > std::numeric_limits<int64_t>::max() / s)
      fail<RuntimeError>("shape ", shape_str(shape), " has more than 2^63 elements");
    n *= s;
  }
  return n;
}

Stride contiguous_strides(const Shape& shape, int64_t itemsize) {
  Stride st(shape.size());
  int64_t acc = itemsize;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = acc;
    acc *= shape[i] > 0 ? shape[i] : 1;
  }
  return st;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t wrap_dim(int64_t dim, int64_t ndim) {
  int64_t n = ndim > 0 ? ndim : 1;  // a 0-d tensor accepts dim 0 and -1, as PyTorch
  LUCID_CHECK(dim >= -n && dim < n, IndexError, "Dimension out of range (expected to be in range of [",
              -n, ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

}  // namespace lucid
