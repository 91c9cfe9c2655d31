#include "core/copy.h"

#include <cstring>
#include <type_traits>

namespace lucid {

namespace {

template <typename T> struct IsComplex : std::false_type {};
template <> struct IsComplex<complex64> : std::true_type {};

// PyTorch's cast rules: to bool is "!= 0"; complex to real keeps the real part;
// 16-bit floats convert through float; float to integer truncates toward zero.
template <typename To, typename From>
inline To cast_value(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (IsComplex<From>::value) return v.real() != 0.f || v.imag() != 0.f;
    else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>)
      return float(v) != 0.f;
    else return v != From(0);
  } else if constexpr (IsComplex<From>::value) {
    return cast_value<To>(v.real());
  } else if constexpr (IsComplex<To>::value || std::is_same_v<To, Half> ||
                       std::is_same_v<To, BFloat16>) {
    return To(float(v));
  } else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) {
    return static_cast<To>(float(v));
  } else {
    return static_cast<To>(v);
  }
}

template <typename To, typename From>
void copy_rows(std::byte* dst, const Stride& ds, const std::byte* src, const Stride& ss,
               const Shape& shape) {
  const size_t nd = shape.size();
  if (nd == 0) {
    From v;
    std::memcpy(&v, src, sizeof v);
    To w = cast_value<To>(v);
    std::memcpy(dst, &w, sizeof w);
    return;
  }
  const int64_t inner = shape[nd - 1];
  const int64_t dstep = ds[nd - 1], sstep = ss[nd - 1];
  int64_t outer = 1;
  for (size_t d = 0; d + 1 < nd; ++d) outer *= shape[d];
  std::vector<int64_t> idx(nd, 0);
  for (int64_t row = 0; row < outer; ++row) {
    int64_t doff = 0, soff = 0;
    for (size_t d = 0; d + 1 < nd; ++d) {
      doff += idx[d] * ds[d];
      soff += idx[d] * ss[d];
    }
    std::byte* dp = dst + doff;
    const std::byte* sp = src + soff;
    if (dstep == sizeof(To) && sstep == sizeof(From)) {
      // Contiguous row: the compiler vectorises this loop.
      To* __restrict d = reinterpret_cast<To*>(dp);
      const From* __restrict s = reinterpret_cast<const From*>(sp);
      if constexpr (std::is_same_v<To, From>) {
        std::memcpy(d, s, size_t(inner) * sizeof(To));
      } else {
        for (int64_t i = 0; i < inner; ++i) d[i] = cast_value<To>(s[i]);
      }
    } else {
      for (int64_t i = 0; i < inner; ++i) {
        From v;
        std::memcpy(&v, sp + i * sstep, sizeof v);
        To w = cast_value<To>(v);
        std::memcpy(dp + i * dstep, &w, sizeof w);
      }
    }
    for (size_t d = nd - 1; d-- > 0;) {  // odometer over the outer dimensions
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
    visit_dtype(src_dtype, [&]<typename From>() { copy_rows<To, From>(dst, ds, src, ss, cs); });
  });
}

}  // namespace lucid
