#include "backend/cpu/gather_scatter.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>

#include "backend/cpu/bytes.h"
#include "backend/cpu/elementwise.h"
#include "backend/cpu/row_walk.h"
#include "core/copy.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/transpose.h"

namespace lucid::cpu {

namespace {

// An unsigned integer as wide as an element: moving elements needs no more.
template <typename Fn>
void visit_width(size_t itemsize, Fn&& fn) {
  switch (itemsize) {
    case 1: return fn.template operator()<uint8_t>();
    case 2: return fn.template operator()<uint16_t>();
    case 4: return fn.template operator()<uint32_t>();
    case 8: return fn.template operator()<uint64_t>();
    case 16: return fn.template operator()<complex128>();  // (its 16 bytes, moved whole)
  }
  fail<RuntimeError>("internal: no element width ", itemsize);
}


// The strides of `t` over index's shape with the scattered/gathered dimension
// removed from the walk (stride 0): the index supplies that coordinate.
Stride without_dim(const TensorImpl& t, int64_t dim) {
  Stride s = t.stride();
  s[dim] = 0;
  return s;
}

[[noreturn, gnu::noinline, gnu::cold]] void index_error(int64_t i, int64_t size, int64_t dim) {
  fail<RuntimeError>("index ", i, " is out of bounds for dimension ", dim, " with size ", size);
}

// Inlined into every inner loop: one unsigned compare per index (negatives wrap
// to huge values), the error path out of line.
[[gnu::always_inline]] inline int64_t checked_index(const std::byte* p, int64_t size, int64_t dim) {
  int64_t i = load<int64_t>(p);
  if (uint64_t(i) >= uint64_t(size)) [[unlikely]] index_error(i, size, dim);
  return i;
}

template <typename T>
using opmath_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

}  // namespace

void gather(TensorImpl& out, const TensorImpl& src, const TensorImpl& index, int64_t dim) {
  const int64_t size = src.shape()[dim], at = src.stride()[dim];
  Stride ss = without_dim(src, dim);
  visit_width(src.itemsize(), [&]<typename U>() {
    walk_rows_parallel(index.shape(), {out.host_ptr(), src.host_ptr(), index.host_ptr()},
                       {&out.stride(), &ss, &index.stride()},
                       [size, at, dim](std::byte* const* p, int64_t n, const int64_t* st) {
                         // Locals: the byte stores below may alias anything reached
                         // through a pointer, so the compiler would reload those.
                         std::byte* o = p[0];
                         const std::byte* s = p[1];
                         const std::byte* i = p[2];
                         const int64_t so = st[0], ssrc = st[1], si = st[2];
                         for (int64_t j = 0; j < n; ++j)
                           store<U>(o + j * so, load<U>(s + j * ssrc + checked_index(i + j * si, size, dim) * at));
                       });
  });
}

void scatter(TensorImpl& out, int64_t dim, const TensorImpl& index, const TensorImpl& src, ScatterReduce mode) {
  const int64_t size = out.shape()[dim], at = out.stride()[dim];
  Stride os = without_dim(out, dim);
  // Elements are visited in index order, so with repeated indices the last write
  // wins (Assign) and sums accumulate in a fixed order: results are deterministic.
  auto run = [&](auto&& write) {
    walk_rows(index.shape(), {out.host_ptr(), src.host_ptr(), index.host_ptr()}, {&os, &src.stride(), &index.stride()},
                 [&](std::byte* const* p, int64_t n, const int64_t* st) {
                   for (int64_t j = 0; j < n; ++j)
                     write(p[0] + j * st[0] + checked_index(p[2] + j * st[2], size, dim) * at, p[1] + j * st[1]);
                 });
  };
  if (mode == ScatterReduce::Assign) {
    visit_width(out.itemsize(), [&]<typename U>() {
      run([](std::byte* o, const std::byte* s) { store<U>(o, load<U>(s)); });
    });
    return;
  }
  visit_dtype(out.dtype(), [&]<typename T>() {
    using M = opmath_t<T>;
    run([mode](std::byte* o, const std::byte* s) {
      T a = load<T>(o), b = load<T>(s);
      T r;
      if constexpr (std::is_same_v<T, bool>) {
        r = mode == ScatterReduce::Add || mode == ScatterReduce::Maximum ? (a || b) : (a && b);
      } else if (mode == ScatterReduce::Add) {
        r = T(M(a) + M(b));
      } else if (mode == ScatterReduce::Multiply) {
        r = T(M(a) * M(b));
      } else if constexpr (!kIsComplexValue<T>) {  // (the op refuses complex extrema)
        const M x = M(a), y = M(b);
        if (y != y) r = b;  // a NaN in src wins; one in out stays (std::max's order)
        else r = mode == ScatterReduce::Maximum ? (x < y ? b : a) : (y < x ? b : a);
      } else {
        r = a;
      }
      store<T>(o, r);
    });
  });
}

void index_select_slices(TensorImpl& out, const TensorImpl& src, const int64_t* index, int64_t dim) {
  Shape shape = src.shape();
  Stride os = out.stride(), ss = src.stride();
  const int64_t ostep = os[dim], sstep = ss[dim], k = out.shape()[dim];
  shape.erase(shape.begin() + dim);
  os.erase(os.begin() + dim);
  ss.erase(ss.begin() + dim);
  int64_t slice = 1;
  for (int64_t s : shape) slice *= s;
  // Dense slices of a large output (rows of a matrix, embeddings) are plain copies,
  // streamed past the caches: the output would not be read back from them, and the
  // write-allocate reads of its lines cost as much as the copy (index_select of 2048
  // rows of [4096, 4096]: 2.9 -> 1.2 ms).
  const int64_t slice_bytes = slice * int64_t(out.itemsize());
  const bool dense = out.dtype() == src.dtype() && ostep == slice_bytes &&
                     contiguous_strides(shape, int64_t(out.itemsize())) == os && os == ss;
  const bool stream = dense && k * slice_bytes >= kStreamingStoreBytes;
  // Slices are disjoint in out: split them over the pool (each copy of a large slice
  // then runs inline, as the pool does not nest).
  parallel_for(k, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(slice, 1)), [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {  // indices were checked by the caller
      if (stream) {
        copy_streaming(out.host_ptr() + j * ostep, src.host_ptr() + index[j] * sstep, slice_bytes);
        continue;
      }
      if (dense) {  // (the strided copy's set-up cost 4x the copy of a 1 KiB embedding row)
        std::memcpy(out.host_ptr() + j * ostep, src.host_ptr() + index[j] * sstep, size_t(slice_bytes));
        continue;
      }
      host_strided_copy(out.host_ptr() + j * ostep, os, out.dtype(), src.host_ptr() + index[j] * sstep, ss,
                        src.dtype(), shape);
    }
    if (stream) store_fence();
  });
}

bool index_add_slices(TensorImpl& out, const TensorImpl& src, const int64_t* index, int64_t dim) {
  constexpr int64_t kSliceMin = 16;  // below, the add's call per slice costs more than an element loop
  const RowKernels add = binary_rows(ops::BinaryOp::Add, out.dtype());
  if (!add.rows || src.dtype() != out.dtype() || !out.is_contiguous() || !src.is_contiguous()) return false;
  int64_t inner = 1, outer = 1;
  for (int64_t d = dim + 1; d < out.ndim(); ++d) inner *= out.shape()[d];
  for (int64_t d = 0; d < dim; ++d) outer *= out.shape()[d];
  const int64_t size = out.shape()[dim], k = src.shape()[dim], item = out.itemsize();
  if (inner < kSliceMin) {
    // Short slices (the last dim: a pad's gradient): scatter's element arithmetic, without
    // its walker's per-element strides and checks, outer positions split over the pool.
    bool done = false;
    visit_dtype(out.dtype(), [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        using M = opmath_t<T>;
        T* o = reinterpret_cast<T*>(out.host_ptr());
        const T* from = reinterpret_cast<const T*>(src.host_ptr());
        parallel_for(outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(k * inner, 1)), [&](int64_t o0, int64_t o1) {
          for (int64_t r = o0; r < o1; ++r) {
            T* dst = o + r * size * inner;
            const T* row = from + r * k * inner;
            for (int64_t j = 0; j < k; ++j)
              for (int64_t c = 0; c < inner; ++c) {
                T& e = dst[index[j] * inner + c];
                e = T(M(e) + M(row[j * inner + c]));
              }
          }
        });
        done = true;
      }
    });
    return done;
  }
  // The tasks are (outer position, a stretch of the slice): disjoint in out, each adding
  // every j in order, so an element's sum never depends on the pool. A stretch is long
  // enough for the add's loop to pay (512 elements), or a thread's share of one slice.
  const int64_t threads = pool_threads();
  const int64_t stretch = std::min(inner, std::max<int64_t>(512, (inner + threads - 1) / threads));
  const int64_t stretches = (inner + stretch - 1) / stretch;
  parallel_for(outer * stretches, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / stretches, at = (t % stretches) * stretch, m = std::min(stretch, inner - at);
      std::byte* dst = out.host_ptr() + ((o * size) * inner + at) * item;
      const std::byte* from = src.host_ptr() + ((o * k) * inner + at) * item;
      for (int64_t j = 0; j < k; ++j) {
        std::byte* row = dst + index[j] * inner * item;
        add.rows(row, row, from + j * inner * item, m);
      }
    }
  });
  return true;
}

void masked_fill(TensorImpl& out, const TensorImpl& mask, const TensorImpl& value) {
  visit_width(out.itemsize(), [&]<typename U>() {
    const U v = load<U>(value.host_ptr());
    walk_rows_parallel(out.shape(), {out.host_ptr(), mask.host_ptr()}, {&out.stride(), &mask.stride()},
                 [&](std::byte* const* p, int64_t n, const int64_t* st) {
                   if (std::is_integral_v<U> && st[0] == int64_t(sizeof(U)) && st[1] == 1) {
                     // Dense rows: a select of bits under a mask made from the bool,
                     // which vectorises. (The `?:` below compiled to a branch, and a
                     // random mask mispredicted it every other element: 19 ms for 4M.)
                     U* __restrict o = reinterpret_cast<U*>(p[0]);
                     const uint8_t* __restrict m = reinterpret_cast<const uint8_t*>(p[1]);
                     if constexpr (std::is_integral_v<U>)
                       for (int64_t j = 0; j < n; ++j) {
                         const U keep = U(U(m[j]) - U(1));  // all ones where the mask is false (a bool is 0 or 1)
                         o[j] = U((o[j] & keep) | (v & ~keep));
                       }
                     return;
                   }
                   for (int64_t j = 0; j < n; ++j) {
                     std::byte* o = p[0] + j * st[0];
                     store<U>(o, load<bool>(p[1] + j * st[1]) ? v : load<U>(o));
                   }
                 });
  });
}

void flip(TensorImpl& out, const TensorImpl& src, const std::vector<int64_t>& dims) {
  if (src.numel() == 0) return;
  // Read src backwards along the flipped dims: start at their last element and walk
  // with negated strides (the copy takes signed byte strides).
  Stride src_stride = src.stride();
  const std::byte* from = src.host_ptr();
  for (int64_t d : dims) {
    from += (src.shape()[d] - 1) * src_stride[d];
    src_stride[d] = -src_stride[d];
  }
  host_strided_copy(out.host_ptr(), out.stride(), out.dtype(), from, src_stride, src.dtype(), src.shape());
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
