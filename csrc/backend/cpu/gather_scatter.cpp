#include "backend/cpu/gather_scatter.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>

#include "core/error.h"

namespace lucid::cpu {

namespace {

// Calls f(p[0], ..., p[K-1]) for every element of `shape`, p[k] walking base[k]
// with byte strides st[k]. A plain odometer: these ops are bound by their index
// loads, not by loop overhead.
template <size_t K, typename F>
void walk(const Shape& shape, const std::array<const Stride*, K>& st, const std::array<std::byte*, K>& base, F f) {
  for (int64_t s : shape)
    if (s == 0) return;
  const size_t nd = shape.size();
  std::vector<int64_t> idx(nd, 0);
  std::array<std::byte*, K> p = base;
  while (true) {
    f(p);
    size_t d = nd;
    while (d > 0) {
      --d;
      if (++idx[d] < shape[d]) {
        for (size_t k = 0; k < K; ++k) p[k] += (*st[k])[d];
        break;
      }
      for (size_t k = 0; k < K; ++k) p[k] -= (*st[k])[d] * (shape[d] - 1);
      idx[d] = 0;
      if (d == 0) return;
    }
    if (nd == 0) return;
  }
}

// The strides of `t` over index's shape with the scattered/gathered dimension
// removed from the walk (stride 0): the index supplies that coordinate.
Stride without_dim(const TensorImpl& t, int64_t dim) {
  Stride s = t.stride();
  s[dim] = 0;
  return s;
}

int64_t checked_index(const std::byte* p, int64_t size, int64_t dim) {
  int64_t i;
  std::memcpy(&i, p, sizeof i);
  LUCID_CHECK(i >= 0 && i < size, RuntimeError, "index ", i, " is out of bounds for dimension ", dim,
              " with size ", size);
  return i;
}

template <typename T>
using opmath_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

}  // namespace

void gather(TensorImpl& out, const TensorImpl& src, const TensorImpl& index, int64_t dim) {
  const size_t item = src.itemsize();
  const int64_t size = src.shape()[dim], step = src.stride()[dim];
  Stride ss = without_dim(src, dim);
  walk<3>(index.shape(), {&out.stride(), &ss, &index.stride()},
          {out.host_ptr(), src.host_ptr(), index.host_ptr()}, [&](const std::array<std::byte*, 3>& p) {
            std::memcpy(p[0], p[1] + checked_index(p[2], size, dim) * step, item);
          });
}

void scatter(TensorImpl& out, int64_t dim, const TensorImpl& index, const TensorImpl& src, ScatterReduce mode) {
  const int64_t size = out.shape()[dim], step = out.stride()[dim];
  Stride os = without_dim(out, dim);
  auto run = [&](auto&& write) {
    walk<3>(index.shape(), {&os, &src.stride(), &index.stride()},
            {out.host_ptr(), src.host_ptr(), index.host_ptr()}, [&](const std::array<std::byte*, 3>& p) {
              write(p[0] + checked_index(p[2], size, dim) * step, p[1]);
            });
  };
  if (mode == ScatterReduce::Assign) {
    const size_t item = out.itemsize();
    run([item](std::byte* o, const std::byte* s) { std::memcpy(o, s, item); });
    return;
  }
  visit_dtype(out.dtype(), [&]<typename T>() {
    using M = opmath_t<T>;
    run([mode](std::byte* o, const std::byte* s) {
      T a, b;
      std::memcpy(&a, o, sizeof a);
      std::memcpy(&b, s, sizeof b);
      T r;
      if constexpr (std::is_same_v<T, bool>)
        r = mode == ScatterReduce::Add ? (a || b) : (a && b);
      else
        r = T(mode == ScatterReduce::Add ? M(a) + M(b) : M(a) * M(b));
      std::memcpy(o, &r, sizeof r);
    });
  });
}

void masked_fill(TensorImpl& out, const TensorImpl& mask, const TensorImpl& value) {
  const size_t item = out.itemsize();
  const std::byte* v = value.host_ptr();
  walk<2>(out.shape(), {&out.stride(), &mask.stride()}, {out.host_ptr(), mask.host_ptr()},
          [&](const std::array<std::byte*, 2>& p) {
            if (*reinterpret_cast<const bool*>(p[1])) std::memcpy(p[0], v, item);
          });
}

void tri_zero(TensorImpl& out, int64_t diagonal, bool lower) {
  const int64_t nd = out.ndim(), rows = out.shape()[nd - 2], cols = out.shape()[nd - 1];
  const int64_t n = out.numel();
  if (n == 0) return;
  const size_t item = out.itemsize();
  const int64_t batches = n / (rows * cols);
  std::byte* base = out.host_ptr();
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      std::byte* row = base + size_t((b * rows + i) * cols) * item;
      // Kept: column j with j - i <= diagonal (tril) or j - i >= diagonal (triu).
      int64_t edge = std::clamp<int64_t>(i + diagonal + (lower ? 1 : 0), 0, cols);
      if (lower) std::memset(row + size_t(edge) * item, 0, size_t(cols - edge) * item);
      else std::memset(row, 0, size_t(edge) * item);
    }
  }
}

}  // namespace lucid::cpu
