// Which x86 vector instruction set the CPU kernels use: the hot loops are compiled
// several times with GCC `target` attributes (the macros below; the build never assumes
// more than the baseline, no -march=native, so the wheel runs on any x86-64), and
// cpu_isa() picks one of the versions at run time, once, from cpuid.
#pragma once

// GCC/Clang on x86-64 only; elsewhere every loop is the baseline one.
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define LUCID_X86_DISPATCH 1
// avx512f+bw+dq+vl: every AVX-512 CPU since Skylake-SP. FMA is deliberately not
// enabled: fused multiply-adds would change rounding against the baseline loop.
// F16C (the float16 conversions) comes with every AVX2 CPU; cpu_isa() checks it.
#define LUCID_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c")))
#define LUCID_TARGET_AVX2 __attribute__((target("avx2,f16c")))
#else
#define LUCID_X86_DISPATCH 0
#define LUCID_TARGET_AVX512
#define LUCID_TARGET_AVX2
#endif

namespace lucid::cpu {

enum class Isa : int { Baseline = 0, Avx2 = 1, Avx512 = 2 };

// The best level this CPU (and OS) supports; LUCID_CPU_ISA=baseline|avx2|avx512
// caps it (the tests use it to run every version). Cached after the first call.
Isa cpu_isa();

}  // namespace lucid::cpu
