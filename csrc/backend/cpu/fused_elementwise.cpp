// The CPU kernel of a fused elementwise chain (ops/prims/fused.h): blocks of elements in
// parallel, each register a row of the block, each instruction a loop over the block. The GPU runs the programs the lazy lists
// make (ops/fusion.cpp); this kernel is their reference on the CPU.
#include <algorithm>
#include <array>
#include <type_traits>

#include "backend/cpu/register.h"
#include "core/error.h"
#include "core/parallel.h"
#include "ops/prims/fused.h"

namespace lucid::cpu {

namespace {

constexpr int64_t kBlock = 256;

template <typename T>
void run_program(const ops::FusedProgram& p, const T* const* in, T* const* out, int64_t n) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  parallel_for(n, 4 * kBlock, [&](int64_t begin, int64_t end) {
    std::array<std::array<C, kBlock>, ops::kFusedMaxRegs> regs{};
    for (int64_t b0 = begin; b0 < end; b0 += kBlock) {
      const int64_t m = std::min(kBlock, end - b0);
      for (int c = 0; c < p.n_consts; ++c) std::fill_n(regs[p.const_reg[c]].begin(), m, C(p.consts[c]));
      for (int k = 0; k < p.n_inputs; ++k)
        for (int64_t j = 0; j < m; ++j) regs[p.in_reg[k]][j] = C(in[k][p.in_broadcast[k] ? 0 : b0 + j]);
      for (int s = 0; s < p.n_instrs; ++s) {
        const ops::FusedInstr& ins = p.instrs[s];  // (the whole block: the rows' tails are unused)
        ops::fused_apply<T, int(kBlock), 1>(ins, regs[ins.a].data(), regs[ins.b].data(), regs[ins.dst].data());
      }
      for (int o = 0; o < p.n_outputs; ++o)
        for (int64_t j = 0; j < m; ++j) out[o][b0 + j] = T(regs[p.out_reg[o]][j]);
    }
  });
}

void fused_elementwise_kernel(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const ops::FusedProgram& p = ops::prim_cast<ops::FusedElementwise>(prim).program;
  LUCID_CHECK(ops::fused_program_valid(p) && outs.size() == p.n_outputs && ins.size() == p.n_inputs && !outs.empty(),
              RuntimeError,
              "internal: a fused elementwise program given ", outs.size(), " outputs and ", ins.size(), " inputs");
  auto run = [&]<typename T>() {
    const T* in[ops::kFusedMaxInputs] = {};
    T* out[ops::kFusedMaxOutputs] = {};
    for (size_t k = 0; k < ins.size(); ++k) in[k] = reinterpret_cast<const T*>(ins[k]->host_ptr());
    for (size_t o = 0; o < outs.size(); ++o) out[o] = reinterpret_cast<T*>(outs[o]->host_ptr());
    run_program<T>(p, in, out, outs[0]->numel());
  };
  switch (p.dtype) {
    case Dtype::F16: return run.operator()<Half>();
    case Dtype::BF16: return run.operator()<BFloat16>();
    case Dtype::F32: return run.operator()<float>();
    case Dtype::F64: return run.operator()<double>();
    default: fail<RuntimeError>("internal: a fused elementwise program of ", dtype_name(p.dtype));
  }
}

}  // namespace

void register_fused_kernels() {
  ops::register_kernel(ops::Prim::FusedElementwise, DeviceType::CPU, fused_elementwise_kernel);
}

}  // namespace lucid::cpu
