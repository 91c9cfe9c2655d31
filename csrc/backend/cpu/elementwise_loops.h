// The CPU loops behind every elementwise op: an N-d walk over broadcast operands
// (byte strides, 0 for a broadcast dimension) after merging dimensions that are
// contiguous in every operand, with a typed fast path for the dense inner row that
// the compiler vectorises. Included only by the kernel files that instantiate it.
#pragma once

#include <cstring>
#include <type_traits>
#include <vector>

#include "backend/cpu/bytes.h"
#include "core/copy.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace lucid::cpu {

// Arithmetic on float16/bfloat16 happens in float.
template <typename T>
using opmath_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;


// out[i] = f(in[i]...) for N inputs of type TIn, over `shape`; strides[0] is the
// output's, strides[1..] the inputs'.
template <typename TOut, typename TIn, size_t N, typename F>
void elementwise_loop(std::byte* out, const std::byte* const (&in)[N], std::vector<Stride> strides,
                      const Shape& shape, F f) {
  for (int64_t s : shape)
    if (s == 0) return;
  Shape dims;
  if constexpr (N == 1) dims = collapse_dims(shape, {&strides[0], &strides[1]});
  else dims = collapse_dims(shape, {&strides[0], &strides[1], &strides[2]});
  const size_t nd = dims.size();
  const int64_t inner = nd ? dims[nd - 1] : 1;
  int64_t outer = 1;
  for (size_t d = 0; d + 1 < nd; ++d) outer *= dims[d];
  auto step = [&](size_t k) { return nd ? strides[k][nd - 1] : 0; };
  const bool out_dense = step(0) == int64_t(sizeof(TOut));
  bool dense = out_dense;
  for (size_t k = 1; k <= N; ++k) dense = dense && step(k) == int64_t(sizeof(TIn));
  // A tensor combined with a broadcast value (t + 1.5): the value is loaded once.
  const bool scalar_b = N == 2 && out_dense && step(1) == int64_t(sizeof(TIn)) && step(N) == 0;
  const bool scalar_a = N == 2 && out_dense && step(1) == 0 && step(N) == int64_t(sizeof(TIn));
  std::vector<int64_t> idx(nd ? nd - 1 : 0, 0);
  for (int64_t row = 0; row < outer; ++row) {
    std::byte* o = out;
    const std::byte* p[N];
    for (size_t k = 0; k < N; ++k) p[k] = in[k];
    for (size_t d = 0; d + 1 < nd; ++d) {
      o += idx[d] * strides[0][d];
      for (size_t k = 0; k < N; ++k) p[k] += idx[d] * strides[k + 1][d];
    }
    TOut* __restrict od = reinterpret_cast<TOut*>(o);
    if (dense) {
      if constexpr (N == 1) {
        const TIn* __restrict a = reinterpret_cast<const TIn*>(p[0]);
        for (int64_t i = 0; i < inner; ++i) od[i] = static_cast<TOut>(f(a[i]));
      } else {
        const TIn* __restrict a = reinterpret_cast<const TIn*>(p[0]);
        const TIn* __restrict b = reinterpret_cast<const TIn*>(p[1]);
        for (int64_t i = 0; i < inner; ++i) od[i] = static_cast<TOut>(f(a[i], b[i]));
      }
    } else if (scalar_b) {
      if constexpr (N == 2) {
        const TIn* __restrict a = reinterpret_cast<const TIn*>(p[0]);
        const TIn b = load<TIn>(p[1]);
        for (int64_t i = 0; i < inner; ++i) od[i] = static_cast<TOut>(f(a[i], b));
      }
    } else if (scalar_a) {
      if constexpr (N == 2) {
        const TIn a = load<TIn>(p[0]);
        const TIn* __restrict b = reinterpret_cast<const TIn*>(p[1]);
        for (int64_t i = 0; i < inner; ++i) od[i] = static_cast<TOut>(f(a, b[i]));
      }
    } else {
      const int64_t os = step(0);
      for (int64_t i = 0; i < inner; ++i) {
        if constexpr (N == 1) {
          store<TOut>(o + i * os, static_cast<TOut>(f(load<TIn>(p[0] + i * step(1)))));
        } else {
          store<TOut>(o + i * os,
                      static_cast<TOut>(f(load<TIn>(p[0] + i * step(1)), load<TIn>(p[1] + i * step(2)))));
        }
      }
    }
    for (size_t d = idx.size(); d-- > 0;) {  // odometer over the outer dimensions
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace lucid::cpu

#include "core/tensor_impl.h"

namespace lucid::cpu {

// Runs a binary functor over host operands that share one dtype; `out` is bool for
// comparisons and that dtype otherwise. a and b are already broadcast to out's shape.
template <typename Op>
void run_binary(const char* name, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  visit_dtype(a.dtype(), [&]<typename T>() {
    using C = opmath_t<T>;
    if constexpr (!Op::template supports<C>) {
      fail<NotImplementedError>(name, " is not implemented for dtype ", dtype_name(a.dtype()));
    } else {
      using R = decltype(Op()(C(), C()));
      using TOut = std::conditional_t<std::is_same_v<R, bool>, bool, T>;
      if (out.is_contiguous() && a.is_contiguous() && b.is_contiguous()) {
        // Same shapes, dense: one flat loop, no stride bookkeeping (small tensors
        // are dominated by it).
        TOut* __restrict o = reinterpret_cast<TOut*>(out.host_ptr());
        const T* __restrict x = reinterpret_cast<const T*>(a.host_ptr());
        const T* __restrict y = reinterpret_cast<const T*>(b.host_ptr());
        for (int64_t i = 0, n = out.numel(); i < n; ++i) o[i] = static_cast<TOut>(Op()(C(x[i]), C(y[i])));
        return;
      }
      const std::byte* const in[2] = {a.host_ptr(), b.host_ptr()};
      elementwise_loop<TOut, T, 2>(out.host_ptr(), in, {out.stride(), a.stride(), b.stride()}, out.shape(),
                                   [](T x, T y) { return Op()(C(x), C(y)); });
    }
  });
}

template <typename Op>
void run_unary(const char* name, TensorImpl& out, const TensorImpl& a) {
  visit_dtype(a.dtype(), [&]<typename T>() {
    using C = opmath_t<T>;
    if constexpr (!Op::template supports<C>) {
      fail<NotImplementedError>(name, " is not implemented for dtype ", dtype_name(a.dtype()));
    } else {
      using R = decltype(Op()(C()));
      using TOut = std::conditional_t<std::is_same_v<R, bool>, bool, T>;  // predicates write bool
      if (out.is_contiguous() && a.is_contiguous()) {
        TOut* __restrict o = reinterpret_cast<TOut*>(out.host_ptr());
        const T* __restrict x = reinterpret_cast<const T*>(a.host_ptr());
        for (int64_t i = 0, n = out.numel(); i < n; ++i) o[i] = static_cast<TOut>(Op()(C(x[i])));
        return;
      }
      const std::byte* const in[1] = {a.host_ptr()};
      elementwise_loop<TOut, T, 1>(out.host_ptr(), in, {out.stride(), a.stride()}, out.shape(),
                                   [](T x) { return Op()(C(x)); });
    }
  });
}

}  // namespace lucid::cpu
