// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11):
// a counter-based generator. Output block = bijection(counter) keyed by the seed, so
// any element of a random stream can be computed directly from (seed, index) with no
// sequential state. That is what lets the CPU and (later) CUDA kernels split a draw
// among threads in any way and still produce the same values.
//
// Header-only and free of heavy includes so CUDA kernels can include it as is.
#pragma once

#include <cstdint>

#include "core/half.h"  // LUCID_HD

namespace lucid {

struct Philox4 {
  uint32_t x[4];
};

// One Philox4x32 evaluation with 10 rounds; matches the Random123 reference
// (philox4x32_R(10, ctr, key)) bit for bit.
LUCID_HD inline Philox4 philox4x32(const uint32_t counter[4], const uint32_t key[2]) {
  // Constants kept local (not namespace-scope constexpr) so device code needs no
  // relaxed-constexpr flags.
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments
  uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {  // the key schedule bumps before every round but the first
      k0 += kW0;
      k1 += kW1;
    }
    // 32x32->64 products; on the GPU the compiler turns these into mul.hi/mul.lo.
    uint64_t p0 = uint64_t(kM0) * c0;
    uint64_t p1 = uint64_t(kM1) * c2;
    uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    uint32_t n0 = hi1 ^ c1 ^ k0;
    uint32_t n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  return Philox4{{c0, c1, c2, c3}};
}

// The block lucid's generators use: a 64-bit block index in counter words 0..1,
// subsequence 0 in words 2..3, and the 64-bit seed as the key.
LUCID_HD inline Philox4 philox_block(uint64_t seed, uint64_t block) {
  uint32_t ctr[4] = {uint32_t(block), uint32_t(block >> 32), 0u, 0u};
  uint32_t key[2] = {uint32_t(seed), uint32_t(seed >> 32)};
  return philox4x32(ctr, key);
}

// Bits to uniform floats. Multiplying an integer of k bits by 2^-k is exact, so the
// results lie in [0, 1) and never reach 1.
LUCID_HD inline float uniform_f32(uint32_t w) {
  return float(w >> 8) * 5.9604644775390625e-08f;  // 24 bits * 2^-24
}
LUCID_HD inline double uniform_f64(uint32_t hi, uint32_t lo) {
  uint64_t bits = (uint64_t(hi) << 32) | lo;
  return double(bits >> 11) * 1.1102230246251565e-16;  // 53 bits * 2^-53
}

// Maps a uniform 64-bit word to [0, range) by the high half of w * range (Lemire's
// multiply-shift): no division, and the same result on CPU and GPU. Like modulo it is
// biased by at most range / 2^64 (under 1e-9 for ranges below 2^34): far below what
// any statistical test can see, and it keeps one word pair per element, which a
// rejection loop would not (Note [Philox stream layout] in core/generator.h).
LUCID_HD inline uint64_t bounded_u64(uint64_t w, uint64_t range) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(w, range);
#else
  return uint64_t((unsigned __int128)w * range >> 64);
#endif
}

}  // namespace lucid
