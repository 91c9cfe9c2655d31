// Run-time choice of the x86 vector instruction set. The build never assumes more
// than the baseline (no -march=native: the wheel must run on any x86-64), so the
// hot loops are compiled several times with GCC `target` attributes and one of
// the versions is picked here, once, from cpuid.
#pragma once

#include <cstdint>

#include "core/isa.h"

namespace lucid::cpu {

// GCC/Clang on x86-64 only; elsewhere every loop is the baseline one.
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define LUCID_X86_DISPATCH 1
// avx512f+bw+dq+vl: every AVX-512 CPU since Skylake-SP. FMA is deliberately not
// enabled: fused multiply-adds would change rounding against the baseline loop.
#define LUCID_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2")))
#define LUCID_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define LUCID_X86_DISPATCH 0
#define LUCID_TARGET_AVX512
#define LUCID_TARGET_AVX2
#endif

}  // namespace lucid::cpu
