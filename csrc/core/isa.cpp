// The instruction-set probe (core/isa.h).
#include "core/isa.h"

#include <cstdlib>
#include <string_view>

namespace lucid::cpu {

Isa cpu_isa() {
  static const Isa isa = [] {
    Isa best = Isa::Baseline;
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) best = Isa::Avx2;
    if (best == Isa::Avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
      best = Isa::Avx512;
#endif
    if (const char* env = std::getenv("LUCID_CPU_ISA")) {
      std::string_view v(env);
      Isa cap = v == "baseline" ? Isa::Baseline : v == "avx2" ? Isa::Avx2 : Isa::Avx512;
      if (int(cap) < int(best)) best = cap;
    }
    return best;
  }();
  return isa;
}

}  // namespace lucid::cpu
