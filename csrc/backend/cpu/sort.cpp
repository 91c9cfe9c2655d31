// SortRows on the CPU (ops/prims/reduce.h): each row's positions, stably sorted by
// value, as an LSD radix sort of (order key, position) pairs, 8 bits a pass
// (ops/prims/search.h's order_key: NaN above everything, -0.0 equal to 0.0, as PyTorch's
// sort). A radix sort is stable by construction and linear: 16M float32 values in four
// passes, where the comparison sort it replaced took 1.8x torch's time. A pass whose
// digit is the same for the whole row is skipped (int64 values of a small range sort in
// as few passes as their range needs). Rows go one per task; a row too long to share
// out that way (fewer rows than threads) is sorted by every thread together, each pass
// a per-chunk histogram, one prefix over (digit, chunk), and a per-chunk scatter. topk's
// first k of a row, k a small part of it, are selected instead (select_first: per row, or
// per thread's chunk of one long row, then merged). When the values are asked for too
// (torch.sort's), they are read back from the sorted keys (order_value), which spares a
// gather by position, unless the row holds a value the keys merge (-0.0, a NaN): such a
// row's values are gathered, so they keep their bits.
#include <algorithm>
#include <atomic>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "backend/cpu/reduce.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/half.h"
#include "core/parallel.h"
#include "ops/prims/search.h"

namespace lucid::cpu {

namespace {

constexpr int kRadix = 256;
using Histogram = std::array<int64_t, kRadix>;

template <typename K>
int digit(K key, int pass) {
  return int((key >> (8 * pass)) & (kRadix - 1));
}

// Keys and positions of one row, and the buffers a pass scatters them into.
template <typename K, typename I>
struct RowBuffers {
  using Key = K;
  std::vector<K> keys, keys_out;
  std::vector<I> pos, pos_out;
  explicit RowBuffers(int64_t n) : keys(size_t(n)), keys_out(size_t(n)), pos(size_t(n)), pos_out(size_t(n)) {}
  void swap_out() {
    keys.swap(keys_out);
    pos.swap(pos_out);
  }
};

// Whether v is one of the values order_key merges with another (-0.0, a NaN), so that
// the sorted values cannot be read back from the keys.
template <typename T>
bool merged_by_key(T v) {
  if constexpr (std::is_floating_point_v<ops::SearchType<T>>) {
    const auto c = ops::SearchType<T>(v);
    return c != c || (c == 0 && std::signbit(c));
  } else {
    return false;
  }
}

// Keys and positions of [begin, end) of a row; whether any value is merged_by_key.
template <typename T, typename B>
bool load_row(const T* row, int64_t begin, int64_t end, bool descending, B& b) {
  using K = typename B::Key;
  bool merged = false;
  for (int64_t i = begin; i < end; ++i) {
    const K k = ops::order_key(row[i]);
    b.keys[size_t(i)] = descending ? K(~k) : k;
    b.pos[size_t(i)] = typename decltype(b.pos)::value_type(i);
    merged |= merged_by_key(row[i]);
  }
  return merged;
}

// The sorted positions of [begin, end) of the row into its row of `out`, and its values
// into `values` (unless null): read back from the keys, or where the row has values the
// keys merge, gathered from the row.
template <typename T, typename B>
void store_row(const B& b, int64_t begin, int64_t end, const T* row, int64_t* out, T* values, bool descending,
               bool merged) {
  using K = typename B::Key;
  std::copy(b.pos.begin() + begin, b.pos.begin() + end, out + begin);
  if (!values) return;
  for (int64_t i = begin; i < end; ++i)
    values[i] = merged ? row[b.pos[size_t(i)]]
                       : ops::order_value<T>(descending ? K(~b.keys[size_t(i)]) : b.keys[size_t(i)]);
}

// Whether every key has the same digit in this pass (the pass would move nothing).
inline bool trivial_pass(const Histogram& counts, int64_t n) {
  return std::any_of(counts.begin(), counts.end(), [n](int64_t c) { return c == n; });
}

// Pass p's scatter of positions [begin, end): each entry to its digit's next slot.
template <typename B>
void scatter(B& b, int64_t begin, int64_t end, int p, Histogram& next) {
  for (int64_t i = begin; i < end; ++i) {
    const size_t to = size_t(next[size_t(digit(b.keys[size_t(i)], p))]++);
    b.keys_out[to] = b.keys[size_t(i)];
    b.pos_out[to] = b.pos[size_t(i)];
  }
}

template <typename B>
void sort_one_row(B& b, int64_t n) {
  constexpr int kPasses = int(sizeof(typename B::Key));
  std::array<Histogram, kPasses> counts{};
  for (int64_t i = 0; i < n; ++i)
    for (int p = 0; p < kPasses; ++p) ++counts[size_t(p)][size_t(digit(b.keys[size_t(i)], p))];
  for (int p = 0; p < kPasses; ++p) {
    if (trivial_pass(counts[size_t(p)], n)) continue;
    Histogram next;
    std::exclusive_scan(counts[size_t(p)].begin(), counts[size_t(p)].end(), next.begin(), int64_t(0));
    scatter(b, 0, n, p, next);
    b.swap_out();
  }
}

// One long row by every thread: chunk c of the row is thread c's in every pass.
template <typename B>
void sort_shared_row(B& b, int64_t n) {
  constexpr int kPasses = int(sizeof(typename B::Key));
  const int64_t chunks = std::max(1, pool_threads()), size = (n + chunks - 1) / chunks;
  auto chunk_range = [&](int64_t c) { return std::pair{std::min(n, c * size), std::min(n, (c + 1) * size)}; };
  std::vector<Histogram> chunk_counts(static_cast<size_t>(chunks));
  std::array<Histogram, kPasses> totals{};
  {  // the whole row's digit counts, for the passes to skip (they do not depend on the order)
    std::vector<std::array<Histogram, kPasses>> partial(static_cast<size_t>(chunks));
    parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        auto& h = partial[size_t(c)];
        h = {};
        const auto [begin, end] = chunk_range(c);
        for (int64_t i = begin; i < end; ++i)
          for (int p = 0; p < kPasses; ++p) ++h[size_t(p)][size_t(digit(b.keys[size_t(i)], p))];
      }
    });
    for (const auto& h : partial)
      for (int p = 0; p < kPasses; ++p)
        for (int d = 0; d < kRadix; ++d) totals[size_t(p)][size_t(d)] += h[size_t(p)][size_t(d)];
  }
  for (int p = 0; p < kPasses; ++p) {
    if (trivial_pass(totals[size_t(p)], n)) continue;
    parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        Histogram& h = chunk_counts[size_t(c)];
        h.fill(0);
        const auto [begin, end] = chunk_range(c);
        for (int64_t i = begin; i < end; ++i) ++h[size_t(digit(b.keys[size_t(i)], p))];
      }
    });
    int64_t offset = 0;  // digit-major, chunk-minor: each chunk's first slot for each digit
    for (int d = 0; d < kRadix; ++d)
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t count = chunk_counts[size_t(c)][size_t(d)];
        chunk_counts[size_t(c)][size_t(d)] = offset;
        offset += count;
      }
    parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        const auto [begin, end] = chunk_range(c);
        scatter(b, begin, end, p, chunk_counts[size_t(c)]);
      }
    });
    b.swap_out();
  }
}

template <typename T, typename I>
void sort_rows_as(const T* x, int64_t* out, T* values, int64_t rows, int64_t n, int64_t k, bool descending) {
  using B = RowBuffers<ops::OrderKey<T>, I>;
  if (rows < pool_threads() && n >= (int64_t(1) << 16)) {
    B b(n);
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * n;
      std::atomic<bool> merged{false};
      parallel_for(n, 1 << 16, [&](int64_t i0, int64_t i1) {
        if (load_row(row, i0, i1, descending, b)) merged.store(true, std::memory_order_relaxed);
      });
      sort_shared_row(b, n);
      parallel_for(k, 1 << 16, [&](int64_t i0, int64_t i1) {
        store_row(b, i0, i1, row, out + r * k, values ? values + r * k : nullptr, descending, merged.load());
      });
    }
    return;
  }
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t r0, int64_t r1) {
    B b(n);
    for (int64_t r = r0; r < r1; ++r) {
      const T* row = x + r * n;
      const bool merged = load_row(row, 0, n, descending, b);
      sort_one_row(b, n);
      store_row(b, 0, k, row, out + r * k, values ? values + r * k : nullptr, descending, merged);
    }
  });
}

// ---- the first k of a row's order without sorting it (topk) ----

// A row entry in the order's terms: its key, then its position (equal keys in position order).
template <typename K>
struct Entry {
  K key;
  int64_t pos;
  bool operator<(const Entry& o) const { return key < o.key || (key == o.key && pos < o.pos); }
};

// The k first entries of [begin, end) of a row (in no order). Candidates are appended
// to a buffer of 2k, which is cut back to its k first (nth_element) when full; past the
// first cut an entry is a candidate only when it comes before the k-th (an equal one
// comes after, being later), tested a block of 16 values at a time, so most entries
// cost a vector compare and the buffer is cut a few times per row.
// Whether a block of values holds one that comes before `bound` in the order (ascending,
// or descending): less_nan_last written per case, so that the loop is vector compares.
template <typename C>
[[gnu::always_inline]] inline bool any_before(const C* values, int64_t count, C bound, bool descending) {
  bool any = false;
  if constexpr (std::is_floating_point_v<C>) {
    if (descending && bound != bound) return false;  // (nothing comes before a NaN)
    if (descending)
      for (int64_t j = 0; j < count; ++j) any |= !(values[j] <= bound);  // (NaN too)
    else if (bound != bound)
      for (int64_t j = 0; j < count; ++j) any |= values[j] == values[j];
    else
      for (int64_t j = 0; j < count; ++j) any |= values[j] < bound;
  } else {
    if (descending)
      for (int64_t j = 0; j < count; ++j) any |= bound < values[j];
    else
      for (int64_t j = 0; j < count; ++j) any |= values[j] < bound;
  }
  return any;
}

template <typename T>
void select_first(const T* row, int64_t begin, int64_t end, int64_t k, bool descending,
                  std::vector<Entry<ops::OrderKey<T>>>& buffer) {
  using K = ops::OrderKey<T>;
  using C = ops::SearchType<T>;
  buffer.clear();
  buffer.reserve(size_t(2 * k));
  bool cut_once = false;
  C bound{};  // past the first cut: the k-th entry's value (its key's, -0.0 and NaN merged)
  auto before = [&](C c) {
    return descending ? ops::less_nan_last(bound, c) : ops::less_nan_last(c, bound);
  };
  auto add = [&](int64_t i) {
    const K kk = descending ? K(~ops::order_key(row[i])) : ops::order_key(row[i]);
    buffer.push_back({kk, i});
    if (int64_t(buffer.size()) < 2 * k) return;
    std::nth_element(buffer.begin(), buffer.begin() + (k - 1), buffer.end());
    buffer.resize(size_t(k));
    const K bound_key = buffer[size_t(k - 1)].key;
    bound = C(ops::order_value<T>(descending ? K(~bound_key) : bound_key));
    cut_once = true;
  };
  constexpr int64_t kBlock = 16;
  C block[kBlock];
  for (int64_t i = begin; i < end;) {
    const int64_t count = std::min(kBlock, end - i);
    if (cut_once) {
      // The row's own values where they are of the compared type (a copy of a variable
      // count had become a `rep movs`, whose start-up cost most of the scan), and whole
      // blocks with a constant count, so that the test is a few vector compares.
      const C* values = block;
      if constexpr (std::is_same_v<T, C>) {
        values = row + i;
      } else {
        for (int64_t j = 0; j < count; ++j) block[j] = C(row[i + j]);
      }
      const bool any = count == kBlock ? any_before(values, kBlock, bound, descending)
                                       : any_before(values, count, bound, descending);
      if (!any) {
        i += count;
        continue;
      }
    }
    for (const int64_t block_end = i + count; i < block_end; ++i)
      if (!cut_once || before(C(row[i]))) add(i);
  }
  if (int64_t(buffer.size()) > k) {
    std::nth_element(buffer.begin(), buffer.begin() + (k - 1), buffer.end());
    buffer.resize(size_t(k));
  }
}

// The positions (and values) of the first k entries, which are in order.
template <typename T>
void store_first(const std::vector<Entry<ops::OrderKey<T>>>& entries, int64_t k, const T* row, int64_t* out,
                 T* values) {
  for (int64_t j = 0; j < k; ++j) {
    out[j] = entries[size_t(j)].pos;
    if (values) values[j] = row[entries[size_t(j)].pos];
  }
}

template <typename T>
void store_selected(std::vector<Entry<ops::OrderKey<T>>>& entries, int64_t k, const T* row, int64_t* out,
                    T* values) {
  std::partial_sort(entries.begin(), entries.begin() + k, entries.end());
  store_first(entries, k, row, out, values);
}

// Rows one per task; a long row with fewer rows than threads in a chunk per thread,
// whose k first entries each are then merged.
template <typename T>
void select_rows(const T* x, int64_t* out, T* values, int64_t rows, int64_t n, int64_t k, bool descending) {
  using E = Entry<ops::OrderKey<T>>;
  if (rows < pool_threads() && n >= (int64_t(1) << 16)) {
    const int64_t chunks = pool_threads(), size = (n + chunks - 1) / chunks;
    std::vector<std::vector<E>> heaps(static_cast<size_t>(chunks));
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * n;
      parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c)
          select_first(row, std::min(n, c * size), std::min(n, (c + 1) * size), k, descending, heaps[size_t(c)]);
      });
      std::vector<E> all;
      for (const auto& h : heaps) all.insert(all.end(), h.begin(), h.end());
      store_selected(all, k, row, out + r * k, values ? values + r * k : nullptr);
    }
    return;
  }
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t r0, int64_t r1) {
    std::vector<E> heap;
    for (int64_t r = r0; r < r1; ++r) {
      select_first(x + r * n, 0, n, k, descending, heap);
      store_selected(heap, k, x + r * n, out + r * k, values ? values + r * k : nullptr);
    }
  });
}

// The k first of rows where k is a larger part of the row: each row's entries split
// at the k-th (nth_element, linear in the row), then those k sorted.
template <typename T>
void partition_rows(const T* x, int64_t* out, T* values, int64_t rows, int64_t n, int64_t k, bool descending) {
  using K = ops::OrderKey<T>;
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t r0, int64_t r1) {
    std::vector<Entry<K>> entries(static_cast<size_t>(n));
    for (int64_t r = r0; r < r1; ++r) {
      const T* row = x + r * n;
      for (int64_t i = 0; i < n; ++i)
        entries[size_t(i)] = {descending ? K(~ops::order_key(row[i])) : ops::order_key(row[i]), i};
      std::nth_element(entries.begin(), entries.begin() + (k - 1), entries.end());
      std::sort(entries.begin(), entries.begin() + k);  // (not partial_sort: its pass over the rest cost 10-15%)
      store_first(entries, k, row, out + r * k, values ? values + r * k : nullptr);
    }
  });
}

// Selection while k is a small part of the row (a heap of k entries, most entries one
// comparison); partition up to a quarter of the row (half of a short one), where it
// costs less than the radix sort, whose cost does not grow with k (measured on rows of
// 64 to 8192 float32: at k = n / 4 the two cost the same from 1024 on; at n / 2 the
// partition is 1.4x the sort on rows of 1024, 0.75x on rows of 64).
bool selects(int64_t n, int64_t k) { return k < n && k * 32 <= n; }
bool partitions(int64_t n, int64_t k) { return k < n && k * (n <= 128 ? 2 : 4) <= n && n <= (int64_t(1) << 16); }

}  // namespace

void sort_rows(Dtype dtype, const std::byte* x, int64_t* out, std::byte* values, int64_t rows, int64_t n, int64_t k,
               bool descending) {
  if (rows == 0 || k == 0) return;
  visit_dtype(dtype, [&]<typename T>() {
    if constexpr (kIsComplexValue<T>) {
      fail<RuntimeError>("sort: complex values have no order");
    } else {
      const T* xs = reinterpret_cast<const T*>(x);
      T* vs = reinterpret_cast<T*>(values);
      if (selects(n, k)) select_rows(xs, out, vs, rows, n, k, descending);
      else if (partitions(n, k)) partition_rows(xs, out, vs, rows, n, k, descending);
      else if (n <= int64_t(UINT32_MAX)) sort_rows_as<T, uint32_t>(xs, out, vs, rows, n, k, descending);
      else sort_rows_as<T, int64_t>(xs, out, vs, rows, n, k, descending);  // (positions past 4 bytes)
    }
  });
}

void search_sorted(Dtype dtype, const std::byte* boundaries, const std::byte* values, int64_t* out, int64_t rows,
                   int64_t n, int64_t m, bool right, bool shared) {
  visit_dtype(dtype, [&]<typename T>() {
    if constexpr (kIsComplexValue<T>) {
      fail<RuntimeError>("searchsorted: complex values have no order");
    } else {
      const T* b = reinterpret_cast<const T*>(boundaries);
      const T* v = reinterpret_cast<const T*>(values);
      parallel_for(rows * m, 4096, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          out[i] = ops::sorted_position(b + (shared ? 0 : (i / m) * n), n, ops::SearchType<T>(v[i]), right);
      });
    }
  });
}

}  // namespace lucid::cpu
