// Vector helpers for the reduction and softmax kernels (internal to those TUs).
// GCC vector extensions give fixed-width lanes whose arithmetic is the same on
// every instruction set; LUCID_CLONES compiles a hot function once per ISA and
// picks the best at load time (ifunc), so no -march flag is needed. The same
// arithmetic in the same order means the same bits on every clone (sums only:
// a clone with FMA may contract a*b+c).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define LUCID_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define LUCID_CLONES
#endif
#define LUCID_INLINE inline __attribute__((always_inline))

// Vector arguments in always-inlined helpers never cross a real call boundary.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace lucid::cpu::simd {

typedef float vf4 __attribute__((vector_size(16)));
typedef double vd4 __attribute__((vector_size(32)));
typedef float vf8 __attribute__((vector_size(32)));
typedef int32_t vi8 __attribute__((vector_size(32)));
typedef float vf16 __attribute__((vector_size(64)));
typedef double vd8 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));
typedef int64_t vl8 __attribute__((vector_size(64)));

template <typename V, typename T>
LUCID_INLINE V load(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename V, typename T>
LUCID_INLINE void store(T* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// Lane-wise `a > b ? x : y` (for 64-byte vectors; 32-byte ones pass through). Never write
// ?: on 64-byte vectors directly:
// GCC 12 compiles it lane by lane, in scalar code with spills, in a clone without
// AVX-512 (the x86-64-v3 clone that AVX2 machines run: softmax took 3x torch's time
// there). On 32-byte halves it is vcmpps + vblendvps (vmaxps for a maximum) on AVX2 and
// AVX-512 alike, with the same lanes' results.
template <typename V>
LUCID_INLINE V select_gt(V a, V b, V x, V y) {
  if constexpr (sizeof(V) == 32) return a > b ? x : y;  // (32-byte vectors: as they are)
  typedef std::remove_reference_t<decltype(a[0])> E;
  typedef E H __attribute__((vector_size(32)));
  constexpr int kHalf = int(sizeof(H) / sizeof(E));
  V r;
  for (int h = 0; h < 2; ++h) {
    H ah, bh, xh, yh;
    std::memcpy(&ah, reinterpret_cast<const char*>(&a) + h * 32, 32);
    std::memcpy(&bh, reinterpret_cast<const char*>(&b) + h * 32, 32);
    std::memcpy(&xh, reinterpret_cast<const char*>(&x) + h * 32, 32);
    std::memcpy(&yh, reinterpret_cast<const char*>(&y) + h * 32, 32);
    const H rh = ah > bh ? xh : yh;
    std::memcpy(reinterpret_cast<char*>(&r) + h * 32, &rh, 32);
  }
  static_assert(sizeof(V) == 32 || sizeof(V) == 2 * kHalf * sizeof(E), "select_gt takes 32- and 64-byte vectors");
  return r;
}
// a > b ? a : b, lane-wise (a NaN in a loses, as the scalar form).
template <typename V>
LUCID_INLINE V max_gt(V a, V b) {
  return select_gt(a, b, a, b);
}

// 8 elements of a float or double array as 8 doubles.
LUCID_INLINE vd8 load_d8(const float* p) { return __builtin_convertvector(load<vf8>(p), vd8); }
LUCID_INLINE vd8 load_d8(const double* p) { return load<vd8>(p); }

// Lane sum in a fixed (tree) order.
LUCID_INLINE double hsum(vd8 v) {
  return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
}

}  // namespace lucid::cpu::simd
