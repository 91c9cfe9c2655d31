#include "backend/cpu/index_kernels.h"

#include <cstring>

#include "core/error.h"

namespace lucid::cpu {

namespace {

// Calls f(ptrs) for every element of `shape` in row-major order; ptrs[i] starts at
// base[i] and moves by strides[i] (bytes). The last dimension runs in a tight loop.
template <typename F>
void walk(const Shape& shape, std::vector<std::byte*> cur, const std::vector<const Stride*>& strides, F&& f) {
  int64_t nd = int64_t(shape.size());
  for (int64_t s : shape)
    if (s == 0) return;
  size_t nops = cur.size();
  if (nd == 0) {
    f(cur.data());
    return;
  }
  std::vector<int64_t> counter(nd, 0), inner_stride(nops);
  int64_t inner = shape[nd - 1];
  for (size_t i = 0; i < nops; ++i) inner_stride[i] = (*strides[i])[nd - 1];
  while (true) {
    for (int64_t j = 0; j < inner; ++j) {
      f(cur.data());
      for (size_t i = 0; i < nops; ++i) cur[i] += inner_stride[i];
    }
    for (size_t i = 0; i < nops; ++i) cur[i] -= inner * inner_stride[i];
    int64_t d = nd - 2;
    for (; d >= 0; --d) {
      if (++counter[d] < shape[d]) {
        for (size_t i = 0; i < nops; ++i) cur[i] += (*strides[i])[d];
        break;
      }
      for (size_t i = 0; i < nops; ++i) cur[i] -= (shape[d] - 1) * (*strides[i])[d];
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

// The operands of a plan's loop: [data tensor (out or values), self, idx...].
struct Operands {
  std::vector<std::byte*> ptr;
  std::vector<const Stride*> stride;
};

Operands operands(std::byte* data, const Stride& data_stride, const TensorImpl& self, const IndexPlan& plan) {
  Operands o;
  o.ptr = {data, self.host_ptr()};
  o.stride = {&data_stride, &plan.self_stride};
  for (size_t k = 0; k < plan.idx.size(); ++k) {
    o.ptr.push_back(plan.idx[k]->host_ptr());
    o.stride.push_back(&plan.idx_stride[k]);
  }
  return o;
}

// Byte offset in self contributed by the index tensors at the current element.
inline int64_t index_offset(std::byte* const* p, const IndexPlan& plan) {
  int64_t off = 0;
  for (size_t k = 0; k < plan.idx.size(); ++k) {
    int64_t i;
    std::memcpy(&i, p[2 + k], sizeof i);
    if (i < 0) i += plan.idx_dim_size[k];
    off += i * plan.idx_dim_stride[k];
  }
  return off;
}

// Runs fn.template operator()<U>() with U an unsigned type of the dtype's size: a
// plain gather or overwrite moves bytes and needs no arithmetic.
template <typename Fn>
void visit_size(size_t itemsize, Fn&& fn) {
  switch (itemsize) {
    case 1: return fn.template operator()<uint8_t>();
    case 2: return fn.template operator()<uint16_t>();
    case 4: return fn.template operator()<uint32_t>();
    case 8: return fn.template operator()<uint64_t>();
  }
  fail<RuntimeError>("internal: index kernel for an item size of ", int64_t(itemsize));
}

template <typename T>
inline T add_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(float(a) + float(b));
  } else {
    return T(a + b);
  }
}

}  // namespace

void check_index_bounds(const TensorImpl& idx, int64_t size, int64_t dim) {
  walk(idx.shape(), {idx.host_ptr()}, {&idx.stride()}, [&](std::byte* const* p) {
    int64_t i;
    std::memcpy(&i, p[0], sizeof i);
    LUCID_CHECK(i >= -size && i < size, IndexError, "index ", i, " is out of bounds for dimension ", dim,
                " with size ", size);
  });
}

void index_gather(TensorImpl& out, const TensorImpl& self, const IndexPlan& plan) {
  Operands o = operands(out.host_ptr(), out.stride(), self, plan);
  visit_size(self.itemsize(), [&]<typename U>() {
    walk(plan.shape, o.ptr, o.stride, [&](std::byte* const* p) {
      std::memcpy(p[0], p[1] + index_offset(p, plan), sizeof(U));
    });
  });
}

void index_scatter(TensorImpl& self, const TensorImpl& values, const IndexPlan& plan, bool accumulate) {
  Operands o = operands(values.host_ptr(), values.stride(), self, plan);
  if (!accumulate) {
    visit_size(self.itemsize(), [&]<typename U>() {
      walk(plan.shape, o.ptr, o.stride, [&](std::byte* const* p) {
        std::memcpy(p[1] + index_offset(p, plan), p[0], sizeof(U));
      });
    });
    return;
  }
  visit_dtype(self.dtype(), [&]<typename T>() {
    walk(plan.shape, o.ptr, o.stride, [&](std::byte* const* p) {
      std::byte* dst = p[1] + index_offset(p, plan);
      T a, b;
      std::memcpy(&a, dst, sizeof(T));
      std::memcpy(&b, p[0], sizeof(T));
      a = add_values(a, b);
      std::memcpy(dst, &a, sizeof(T));
    });
  });
}

TensorPtr nonzero(const TensorImpl& t) {
  // The cast to bool (core/copy.cpp) decides what is nonzero for every dtype:
  // NaN is, -0.0 is not, a complex number is when either part is.
  TensorPtr b = t.clone(Dtype::Bool, Device::cpu());
  const auto* flags = reinterpret_cast<const uint8_t*>(b->host_ptr());
  int64_t n = b->numel(), count = 0;
  for (int64_t i = 0; i < n; ++i) count += flags[i] != 0;
  int64_t nd = t.ndim();
  TensorPtr out = TensorImpl::empty({count, nd}, Dtype::I64, Device::cpu());
  auto* rows = reinterpret_cast<int64_t*>(out->host_ptr());
  std::vector<int64_t> coord(nd, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (flags[i]) {
      std::memcpy(rows, coord.data(), nd * sizeof(int64_t));
      rows += nd;
    }
    for (int64_t d = nd - 1; d >= 0; --d) {  // row-major odometer
      if (++coord[d] < t.shape()[d]) break;
      coord[d] = 0;
    }
  }
  return out;
}

}  // namespace lucid::cpu
