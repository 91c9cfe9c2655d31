// Which x86 vector instruction set the CPU kernels use, chosen once at run time
// (backend/cpu/simd.h has the compile-side half: the target attributes).
#pragma once

namespace lucid::cpu {

enum class Isa : int { Baseline = 0, Avx2 = 1, Avx512 = 2 };

// The best level this CPU (and OS) supports; LUCID_CPU_ISA=baseline|avx2|avx512
// caps it (the tests use it to run every version). Cached after the first call.
Isa cpu_isa();

}  // namespace lucid::cpu
