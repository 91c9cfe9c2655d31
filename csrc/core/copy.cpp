#include "core/copy.h"

#include <algorithm>
#include <cstring>
#include <vector>
#include <type_traits>

#include "core/half_rows.h"
#include "core/parallel.h"
#include "core/transpose.h"

namespace lucid {

namespace {

template <typename T> struct IsComplex : std::false_type {};
template <> struct IsComplex<complex64> : std::true_type {};
template <> struct IsComplex<complex128> : std::true_type {};

// PyTorch's cast rules: to bool is "!= 0"; complex to real keeps the real part;
// 16-bit floats convert through float; float to integer truncates toward zero.
template <typename To, typename From>
inline To cast_value(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (IsComplex<From>::value) return v.real() != 0 || v.imag() != 0;
    else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>)
      return float(v) != 0.f;
    else return v != From(0);
  } else if constexpr (IsComplex<From>::value && IsComplex<To>::value) {  // complex64 <-> complex128
    using R = typename To::value_type;
    return To(R(v.real()), R(v.imag()));
  } else if constexpr (IsComplex<From>::value) {
    return cast_value<To>(v.real());
  } else if constexpr (IsComplex<To>::value) {  // from a real type: its value, converted as to the part type
    return To(cast_value<typename To::value_type>(v));
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(float(v));
  } else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) {
    return static_cast<To>(float(v));
  } else {
    return static_cast<To>(v);
  }
}

template <typename To, typename From>
inline void copy_one(std::byte* dp, const std::byte* sp) {
  From v;
  std::memcpy(&v, sp, sizeof v);
  To w = cast_value<To>(v);
  std::memcpy(dp, &w, sizeof w);
}


// Note [4K aliasing]
// A core matches a load against the stores before it by the low 12 bits of their
// addresses. A forward copy whose destination lies a few bytes (under 32) past its
// source modulo 4096 therefore stalls each load on the store just issued: 6x slower
// (roll(3, -1) of [4096, 1024] float32, a row copied 3 elements along: 5.0 ms against 0.8).
// Large blocks all start at the same address modulo 4096 (storage.cpp), so copies
// between views of them meet this. Such rows go through a buffer in L1 placed half a page
// from the source, so that neither of the two copies has its destination just past its source.
void copy_bytes(std::byte* __restrict d, const std::byte* __restrict s, size_t n) {
  const size_t ahead = (reinterpret_cast<uintptr_t>(d) - reinterpret_cast<uintptr_t>(s)) & 4095;
  if (ahead == 0 || ahead >= 32 || n < 256) {
    std::memcpy(d, s, n);
    return;
  }
  alignas(64) static thread_local std::byte buffer[8192];
  const size_t at = (reinterpret_cast<uintptr_t>(s) + 2048 - reinterpret_cast<uintptr_t>(buffer)) & 4095;
  for (size_t i = 0; i < n; i += 4096) {
    const size_t piece = std::min<size_t>(n - i, 4096);
    std::memcpy(buffer + at, s + i, piece);
    std::memcpy(d + i, buffer + at, piece);
  }
}

// One row of `n` elements.
template <typename To, typename From>
void copy_row(std::byte* dp, int64_t dstep, const std::byte* sp, int64_t sstep, int64_t n) {
  if (dstep == sizeof(To) && sstep == sizeof(From)) {
    To* __restrict d = reinterpret_cast<To*>(dp);
    const From* __restrict s = reinterpret_cast<const From*>(sp);
    // float <-> float16 / bfloat16: a vector instruction per 8 or 16 elements where the
    // scalar bit manipulation does not vectorise (core/half_rows.h)
    if constexpr (std::is_same_v<From, float> && kIsHalfFloat<To>) return cpu::narrow_rows(d, s, n);
    if constexpr (std::is_same_v<To, float> && kIsHalfFloat<From>) return cpu::widen_rows(d, s, n);
    if constexpr (std::is_same_v<To, From>) copy_bytes(dp, sp, size_t(n) * sizeof(To));
    else for (int64_t i = 0; i < n; ++i) d[i] = cast_value<To>(s[i]);  // vectorised
  } else if (dstep == sizeof(To) && sstep == -int64_t(sizeof(From))) {  // a reversed row: flip(-1)
    To* __restrict d = reinterpret_cast<To*>(dp);
    const From* __restrict s = reinterpret_cast<const From*>(sp);
    for (int64_t i = 0; i < n; ++i) d[i] = cast_value<To>(s[-i]);  // vectorised (a lane permute)
  } else if (dstep == sizeof(To) && sstep == 0) {  // a broadcast value: fill_, expand
    From v;
    std::memcpy(&v, sp, sizeof v);
    std::fill_n(reinterpret_cast<To*>(dp), n, cast_value<To>(v));
  } else {
    for (int64_t i = 0; i < n; ++i) copy_one<To, From>(dp + i * dstep, sp + i * sstep);
  }
}

// A 2-d block where the source is contiguous along the outer dimension and the
// destination along the inner one (a transpose): walking tiles keeps both the rows
// read and the rows written in cache, instead of one cache line per element read.
// 1-, 2- and 4-byte elements into contiguous rows go through transpose_elements
// (AVX-512; 4 bytes on AVX2 too).
template <typename To, typename From>
void copy_tiled(std::byte* dst, int64_t d0, int64_t d1, const std::byte* src, int64_t s0,
                int64_t s1, int64_t n0, int64_t n1, bool stream) {
  if constexpr (std::is_same_v<To, From> && sizeof(To) <= 4) {
    constexpr int64_t e = sizeof(To);
    if (d1 == e && transpose_elements(e, dst, d0, src, s1, n0, n1, stream)) return;
  }
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < n0; i0 += kTile) {
    int64_t e0 = std::min(n0, i0 + kTile);
    for (int64_t j0 = 0; j0 < n1; j0 += kTile) {
      int64_t e1 = std::min(n1, j0 + kTile);
      for (int64_t i = i0; i < e0; ++i)
        for (int64_t j = j0; j < e1; ++j) copy_one<To, From>(dst + i * d0 + j * d1, src + i * s0 + j * s1);
    }
  }
}

template <typename To, typename From>
void copy_nd(std::byte* dst, const Stride& ds, const std::byte* src, const Stride& ss,
             const Shape& shape, bool stream = false) {
  const size_t nd = shape.size();
  if (nd == 0) return copy_one<To, From>(dst, src);
  // The innermost one or two dimensions are handled by a row or tile kernel; an
  // odometer walks the rest.
  const bool tiled = nd >= 2 && ss[nd - 1] != int64_t(sizeof(From)) && ss[nd - 2] == int64_t(sizeof(From));
  const size_t kernel_dims = tiled ? 2 : 1;
  const size_t outer_dims = nd - kernel_dims;
  int64_t outer = 1;
  for (size_t d = 0; d < outer_dims; ++d) outer *= shape[d];
  std::vector<int64_t> idx(outer_dims, 0);
  for (int64_t it = 0; it < outer; ++it) {
    int64_t doff = 0, soff = 0;
    for (size_t d = 0; d < outer_dims; ++d) {
      doff += idx[d] * ds[d];
      soff += idx[d] * ss[d];
    }
    if (tiled)
      copy_tiled<To, From>(dst + doff, ds[nd - 2], ds[nd - 1], src + soff, ss[nd - 2], ss[nd - 1],
                           shape[nd - 2], shape[nd - 1], stream);
    else
      copy_row<To, From>(dst + doff, ds[nd - 1], src + soff, ss[nd - 1], shape[nd - 1]);
    for (size_t d = outer_dims; d-- > 0;) {  // odometer
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

Shape collapse_dims(const Shape& shape, std::initializer_list<Stride*> strides) {
  Shape out;
  std::vector<Stride> outs(strides.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !out.empty();
    size_t k = 0;
    for (Stride* st : strides) {
      if (merge && outs[k].back() != (*st)[d] * shape[d]) merge = false;
      ++k;
    }
    k = 0;
    if (merge) {
      out.back() *= shape[d];
      for (Stride* st : strides) outs[k++].back() = (*st)[d];
    } else {
      out.push_back(shape[d]);
      for (Stride* st : strides) outs[k++].push_back((*st)[d]);
    }
  }
  size_t k = 0;
  for (Stride* st : strides) *st = std::move(outs[k++]);
  return out;
}

void host_strided_copy(std::byte* dst, const Stride& dst_stride, Dtype dst_dtype,
                       const std::byte* src, const Stride& src_stride, Dtype src_dtype,
                       const Shape& shape) {
  for (int64_t s : shape)
    if (s == 0) return;
  Stride ds = dst_stride, ss = src_stride;
  Shape cs = collapse_dims(shape, {&ds, &ss});
  visit_dtype(dst_dtype, [&]<typename To>() {
    visit_dtype(src_dtype, [&]<typename From>() {
      if (cs.empty()) return copy_nd<To, From>(dst, ds, src, ss, cs);
      // Large copies are split along the outermost (collapsed) dimension over the
      // thread pool: one memory stream per core is what saturates the bus.
      int64_t inner = 1;
      for (size_t d = 1; d < cs.size(); ++d) inner *= cs[d];
      const bool stream = cs[0] * inner * int64_t(sizeof(To)) >= kStreamingStoreBytes;
      const int64_t grain = std::max<int64_t>(1, cpu::kParallelGrain / inner);
      cpu::parallel_for(cs[0], grain, [&](int64_t b, int64_t e) {
        Shape part = cs;
        part[0] = e - b;
        copy_nd<To, From>(dst + b * ds[0], ds, src + b * ss[0], ss, part, stream);
      });
    });
  });
}

}  // namespace lucid
