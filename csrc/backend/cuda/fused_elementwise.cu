// The CUDA kernel of a fused elementwise chain (ops/prims/fused.h, Note [Elementwise
// fusion]): the program's generated kernel once NVRTC has compiled it (fused_codegen.h),
// and until then (or for ops with no generated form) this interpreter. A block takes
// tiles of kThreads * V elements; the program's registers are rows of a tile in shared
// memory (in the compute type; each operand loaded and stored as its own dtype), and
// each instruction is taken once for a thread's V elements of the tile
// (element t + j * kThreads of each row: coalesced loads, no barrier between
// instructions, V independent computations to overlap). The switch that picks the op
// is the same for every thread: no divergence. Constant rows are filled once per
// block, which stays for many tiles.
#include <algorithm>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/fused_codegen.h"
#include "backend/cuda/register.h"
#include "backend/cuda/stream.h"
#include "ops/prims/fused.h"

namespace lucid::cuda {

namespace {

using ops::FusedProgram;
using ops::Inputs;
using ops::Outputs;

constexpr int kFusedThreads = 128;
// Elements a thread handles per instruction: a tile's rows take 32 KiB of shared memory.
template <typename C>
constexpr int fused_width() {
  return std::is_same_v<C, double> ? 2 : 4;
}

// The program and its operands' addresses, copied into shared memory by each block
// (indexed by the instruction and operand numbers, which are only known at run time).
struct FusedArgs {
  FusedProgram program;
  const void* in[ops::kFusedMaxInputs];
  void* out[ops::kFusedMaxOutputs];
};

// Element i of a `d` operand as C (bool: 0 or 1), and C stored as `d`. The dtype is the
// same for every thread: a uniform branch.
template <typename C>
__device__ __forceinline__ C load_as(const void* p, int64_t i, Dtype d) {
  switch (d) {
    case Dtype::Bool: return static_cast<const bool*>(p)[i] ? C(1) : C(0);
    case Dtype::F16: return C(float(static_cast<const Half*>(p)[i]));
    case Dtype::BF16: return C(float(static_cast<const BFloat16*>(p)[i]));
    case Dtype::F32: return C(static_cast<const float*>(p)[i]);
    default: return C(static_cast<const double*>(p)[i]);
  }
}
template <typename C>
__device__ __forceinline__ void store_as(void* p, int64_t i, Dtype d, C v) {
  switch (d) {
    case Dtype::F16: static_cast<Half*>(p)[i] = Half(float(v)); return;
    case Dtype::BF16: static_cast<BFloat16*>(p)[i] = BFloat16(float(v)); return;
    case Dtype::F32: static_cast<float*>(p)[i] = float(v); return;
    default: static_cast<double*>(p)[i] = double(v); return;
  }
}

// The element of input k that the chain's element i reads (ops::FusedRead).
__device__ __forceinline__ int64_t element_of(const FusedProgram& p, int k, int64_t i) {
  switch (p.in_read[k]) {
    case ops::FusedRead::Elements: return i;
    case ops::FusedRead::One: return 0;
    default: return ops::fused_view_offset(p.in_view[k], i);
  }
}

// C: the program's compute type (float, or double for float64 programs).
template <typename C>
__global__ void __launch_bounds__(kFusedThreads) fused_kernel(FusedArgs args, int64_t n) {
  constexpr int V = fused_width<C>(), kTile = kFusedThreads * V;
  __shared__ FusedArgs a;
  __shared__ C regs[ops::kFusedMaxRegs][kTile];
  static_assert(sizeof(FusedArgs) % sizeof(uint32_t) == 0);
  constexpr int kWords = int(sizeof(FusedArgs) / sizeof(uint32_t));
  for (int w = threadIdx.x; w < kWords; w += kFusedThreads)
    reinterpret_cast<uint32_t*>(&a)[w] = reinterpret_cast<const uint32_t*>(&args)[w];
  __syncthreads();
  const FusedProgram& p = a.program;
  const int t = threadIdx.x;
  for (int c = 0; c < p.n_consts; ++c)
    for (int j = 0; j < V; ++j) regs[p.const_reg[c]][t + j * kFusedThreads] = C(p.consts[c]);
  for (int64_t base = int64_t(blockIdx.x) * kTile; base < n; base += int64_t(gridDim.x) * kTile) {
    for (int k = 0; k < p.n_inputs; ++k)
      for (int j = 0; j < V; ++j) {
        const int64_t i = base + t + j * kFusedThreads;
        regs[p.in_reg[k]][t + j * kFusedThreads] =
            i < n ? load_as<C>(a.in[k], element_of(p, k, i), p.in_dtype[k]) : C(0);
      }
    for (int s = 0; s < p.n_instrs; ++s) {
      const ops::FusedInstr in = p.instrs[s];
      ops::fused_apply<C, V, kFusedThreads>(in, &regs[in.a][t], &regs[in.b][t], &regs[in.c][t], &regs[in.dst][t]);
    }
    for (int o = 0; o < p.n_outputs; ++o)
      for (int j = 0; j < V; ++j) {
        const int64_t i = base + t + j * kFusedThreads;
        if (i < n) store_as<C>(a.out[o], i, p.out_dtype[o], regs[p.out_reg[o]][t + j * kFusedThreads]);
      }
  }
}

// Enough blocks to fill every SM (16 blocks of 128 threads are an SM's 64 warps; a
// block's 16 KiB of shared memory allows 13 of them) and no more: they then loop over the
// tiles, filling their constant rows once. (Six a SM held occupancy to 37%.)
unsigned fused_grid(int64_t tiles, int device) {
  const int64_t fill = int64_t(multiprocessor_count(device)) * 16;
  return unsigned(std::max<int64_t>(1, std::min(tiles, fill)));
}

void fused_elementwise_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& fused = ops::prim_cast<ops::FusedElementwise>(prim);
  const FusedProgram& p = fused.program;
  LUCID_CHECK(ops::fused_program_valid(p) && outs.size() == p.n_outputs && ins.size() == p.n_inputs && !outs.empty(),
              RuntimeError,
              "internal: a fused elementwise program given ", outs.size(), " outputs and ", ins.size(), " inputs");
  const int64_t n = outs[0]->numel();
  if (n == 0) return;
  const int device = outs[0]->device().index;
  DeviceGuard guard(device);
  if (fused.variant) {  // the program's generated kernel (fused_variant, Note [Generated kernels])
    launch_generated_fused(p, reinterpret_cast<const void*>(fused.variant), outs, ins, n, stream(device));
    return;
  }
  FusedArgs args{};
  args.program = p;
  for (size_t k = 0; k < ins.size(); ++k) args.in[k] = ins[k]->data_ptr();
  for (size_t o = 0; o < outs.size(); ++o) args.out[o] = outs[o]->data_ptr();
  auto run = [&]<typename C>() {
    constexpr int64_t kTile = kFusedThreads * fused_width<C>();
    fused_kernel<C><<<fused_grid((n + kTile - 1) / kTile, device), kFusedThreads, 0, stream(device)>>>(args, n);
  };
  if (ops::fused_compute(p.dtype) == Dtype::F64) run.operator()<double>();
  else run.operator()<float>();
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void register_fused_kernels() {
  ops::register_kernel(ops::Prim::FusedElementwise, DeviceType::GPU, fused_elementwise_kernel);
}

}  // namespace lucid::cuda
