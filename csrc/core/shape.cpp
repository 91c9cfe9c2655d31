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

Stride dense_strides_like(const Shape& shape, const Stride& stride, int64_t itemsize) {
  const size_t nd = shape.size();
  // perm[0] will be the fastest-varying dimension. Insertion sort by stride; a 0
  // stride is ambiguous and leaves the order as it is; equal strides put the larger
  // size outside.
  std::vector<size_t> perm(nd);
  for (size_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  auto should_swap = [&](size_t a, size_t b) {
    if (stride[a] == 0 || stride[b] == 0) return 0;
    if (stride[a] != stride[b]) return stride[a] < stride[b] ? -1 : 1;
    return shape[a] > shape[b] ? 1 : 0;
  };
  for (size_t i = 1; i < nd; ++i) {
    size_t d1 = i;
    for (size_t d0 = i; d0-- > 0;) {
      int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  Stride out(nd);
  int64_t cur = itemsize;
  for (size_t i = 0; i < nd; ++i) {
    out[perm[i]] = cur;
    LUCID_CHECK(shape[perm[i]] <= 1 || !__builtin_mul_overflow(cur, shape[perm[i]], &cur), RuntimeError,
                "tensor of shape ", shape_str(shape), " is too large to allocate");
  }
  return out;
}

int64_t repeated_block_len(const Shape& shape, const Stride& stride, int64_t itemsize) {
  int64_t expect = itemsize, block = 1;
  size_t d = shape.size();
  for (; d > 0 && (shape[d - 1] == 1 || stride[d - 1] == expect); --d) {
    expect *= shape[d - 1];
    block *= shape[d - 1];
  }
  for (; d > 0; --d)
    if (shape[d - 1] != 1 && stride[d - 1] != 0) return 0;
  return block;
}

int64_t wrap_dim(int64_t dim, int64_t ndim) {
  int64_t n = ndim > 0 ? ndim : 1;  // a 0-d tensor accepts dim 0 and -1, as PyTorch
  LUCID_CHECK(dim >= -n && dim < n, IndexError, "Dimension out of range (expected to be in range of [",
              -n, ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

}  // namespace lucid
