#include "backend/cpu/index_kernels.h"

#include <algorithm>
#include <cstring>

#include "backend/cpu/row_walk.h"
#include "core/error.h"

namespace lucid::cpu {

namespace {

// Element by element, on top of walk_rows.
template <typename F>
void walk(const Shape& shape, std::vector<std::byte*> cur, const std::vector<const Stride*>& strides, F&& f) {
  size_t nops = cur.size();
  std::vector<std::byte*> p(nops);
  walk_rows(shape, std::move(cur), strides, [&](std::byte* const* row, int64_t n, const int64_t* inner) {
    for (size_t i = 0; i < nops; ++i) p[i] = row[i];
    for (int64_t j = 0; j < n; ++j) {
      f(p.data());
      for (size_t i = 0; i < nops; ++i) p[i] += inner[i];
    }
  });
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
    case 16: return fn.template operator()<complex128>();  // (its 16 bytes, moved whole)
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

// Runs a plan one row at a time. When no index
// tensor varies along the row (the innermost dimension is not an indexed one, as in
// x[idx] on rows), the index offset is computed once per row; otherwise per element.
// elem(data, self_elem) gets the data operand's element and self's element. Reads
// (`parallel`) split the rows over the pool; writes keep their order, which decides
// the result when indices repeat.
template <typename Elem>
void run_plan(std::byte* data, const Stride& data_stride, const TensorImpl& self, const IndexPlan& plan,
              bool parallel, Elem&& elem) {
  Operands o = operands(data, data_stride, self, plan);
  const size_t nops = o.ptr.size();
  auto row = [&](std::byte* const* row, int64_t n, const int64_t* inner) {
    bool row_constant = true;
    for (size_t i = 2; i < nops; ++i) row_constant = row_constant && inner[i] == 0;
    if (row_constant) {
      std::byte* s = row[1] + index_offset(row, plan);
      std::byte* d = row[0];
      for (int64_t j = 0; j < n; ++j, d += inner[0], s += inner[1]) elem(d, s);
      return;
    }
    std::vector<std::byte*> p(row, row + nops);
    for (int64_t j = 0; j < n; ++j) {
      elem(p[0], p[1] + index_offset(p.data(), plan));
      for (size_t i = 0; i < nops; ++i) p[i] += inner[i];
    }
  };
  if (parallel) walk_rows_parallel(plan.shape, o.ptr, o.stride, row);
  else walk_rows(plan.shape, o.ptr, o.stride, row);
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
  visit_size(self.itemsize(), [&]<typename U>() {
    run_plan(out.host_ptr(), out.stride(), self, plan, /*parallel=*/true,
             [](std::byte* d, const std::byte* s) { std::memcpy(d, s, sizeof(U)); });
  });
}

void index_scatter(TensorImpl& self, const TensorImpl& values, const IndexPlan& plan, bool accumulate) {
  if (!accumulate) {
    visit_size(self.itemsize(), [&]<typename U>() {
      run_plan(values.host_ptr(), values.stride(), self, plan, /*parallel=*/false,
               [](const std::byte* v, std::byte* dst) { std::memcpy(dst, v, sizeof(U)); });
    });
    return;
  }
  visit_dtype(self.dtype(), [&]<typename T>() {
    run_plan(values.host_ptr(), values.stride(), self, plan, /*parallel=*/false, [](const std::byte* v, std::byte* dst) {
      T a, b;
      std::memcpy(&a, dst, sizeof(T));
      std::memcpy(&b, v, sizeof(T));
      a = add_values(a, b);
      std::memcpy(dst, &a, sizeof(T));
    });
  });
}

int64_t count_true(const TensorImpl& flags) {
  const auto* f = reinterpret_cast<const uint8_t*>(flags.host_ptr());
  int64_t count = 0;
  for (int64_t i = 0, n = flags.numel(); i < n; ++i) count += f[i] != 0;
  return count;
}

void nonzero(TensorImpl& out, const TensorImpl& flags) {
  const auto* f = reinterpret_cast<const uint8_t*>(flags.host_ptr());
  const int64_t n = flags.numel(), nd = flags.ndim();
  auto* rows = reinterpret_cast<int64_t*>(out.host_ptr());
  std::vector<int64_t> coord(nd, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (f[i]) {
      std::copy(coord.begin(), coord.end(), rows);  // (memcpy from an empty vector's null data is UB)
      rows += nd;
    }
    for (int64_t d = nd - 1; d >= 0; --d) {  // row-major odometer
      if (++coord[d] < flags.shape()[d]) break;
      coord[d] = 0;
    }
  }
}

}  // namespace lucid::cpu
