// The compute seam between ops and kernels (Note [The compute seam], docs/ENGINE.md).
//
// An op function checks its arguments, decides the output's shape, dtype and device,
// allocates the outputs on its inputs' device and calls launch(primitive, outs, ins).
// A primitive is an op id plus parameters held by value (no pointers, no references
// to the caller's stack), so it can run now or, on a lazy device, be recorded and run
// later. Each backend fills the (primitive, device) kernel table at import; a missing
// entry is the one place that raises "no CUDA kernel for <op> on gpu:N".
//
// Ops and autograd include this header, never a backend header.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor_impl.h"

namespace lucid::ops {

// Every kernel-level computation, listed once: the enum, the names, the coverage list
// of lucid._C._kernels(). One block per family; the parameter structs are in
// ops/prims/<family>.h.
#define LUCID_ELEMENTWISE_PRIMITIVES(X) X(Unary) X(Binary) X(ComplexAbs) X(Where) X(Pointwise) X(FusedElementwise)
#define LUCID_REDUCE_PRIMITIVES(X) X(SumLastDims) X(MomentBlock) X(ExtremumBlock) X(ExtremumRows) \
  X(AllAnyRows) X(ProdRows) X(RowStat) X(ScanDim) X(SoftmaxDim) X(SoftmaxBackwardDim) \
  X(CrossEntropy) X(CrossEntropyBackward) X(SortRows) X(SearchSorted)
#define LUCID_LINALG_PRIMITIVES(X) X(Gemm) X(Conj) X(LuFactor) X(LuSolve) X(Cholesky) X(TriangularSolve) \
  X(QrFactor) X(HouseholderProduct) X(Eigh) X(Eig) X(Svd) X(LdlFactor) X(LdlSolve)
#define LUCID_FFT_PRIMITIVES(X) X(Fft)
#define LUCID_SPARSE_PRIMITIVES(X) X(CsrMatmul)
#define LUCID_SPATIAL_PRIMITIVES(X) X(ConvForward) X(ConvTranspose) X(ConvWeightGrad) X(Im2Col) X(Col2Im) \
  X(MaxPool) X(AvgPool) X(ResampleTaps) X(GridSample) X(GridSampleBackward)
#define LUCID_INDEX_PRIMITIVES(X) X(Gather) X(Scatter) X(IndexSelect) X(IndexAdd) X(MaskedFill) \
  X(Index) X(IndexPut) X(CountNonzero) X(Nonzero)
#define LUCID_SHAPE_PRIMITIVES(X) X(Flip) X(Tri)
#define LUCID_CREATION_PRIMITIVES(X) X(Arange) X(Linspace) X(Eye)

#define LUCID_NORM_PRIMITIVES(X)                                                                       \
  X(NormMoments) X(NormAffine) X(NormGradSums) X(NormAffine2) X(BatchNormStats) X(BatchNormGradCoeffs) \
  X(GroupNormStats) X(GroupNormGradCoeffs)

#define LUCID_SEQ_PRIMITIVES(X)                                                                        \
  X(NormRows) X(NormRowsBackward) X(FusedNormRows) X(FusedNormRowsBackward) X(FusedSoftmaxRows)        \
  X(FusedReduceRows) X(LstmCell) X(LstmCellBackward) X(GruCell) X(GruCellBackward)                     \
  X(LstmLayer) X(LstmLayerBackward) X(GruLayer) X(GruLayerBackward) X(CtcLoss) X(CtcLossBackward)       \
  X(AttentionForward) X(AttentionBackward) X(Rope) X(CustomKernel)

#define LUCID_OPTIM_PRIMITIVES(X) X(OptimStep)

#define LUCID_RANDOM_PRIMITIVES(X)                                                                         \
  X(RandomUniform) X(RandomNormal) X(RandomIntegers) X(RandomBernoulli) X(RandomPermutation) X(RandomCheck) \
  X(RandomPerElement) X(ReparamGrad)

#define LUCID_PRIMITIVES(X) \
  LUCID_ELEMENTWISE_PRIMITIVES(X) \
  LUCID_REDUCE_PRIMITIVES(X) \
  LUCID_LINALG_PRIMITIVES(X) \
  LUCID_FFT_PRIMITIVES(X) \
  LUCID_SPARSE_PRIMITIVES(X) \
  LUCID_SPATIAL_PRIMITIVES(X) \
  LUCID_INDEX_PRIMITIVES(X) \
  LUCID_SHAPE_PRIMITIVES(X) \
  LUCID_CREATION_PRIMITIVES(X) \
  LUCID_NORM_PRIMITIVES(X) \
  LUCID_SEQ_PRIMITIVES(X) \
  LUCID_OPTIM_PRIMITIVES(X) \
  LUCID_RANDOM_PRIMITIVES(X)

enum class Prim : uint16_t {
#define LUCID_PRIM_ENUM(name) name,
  LUCID_PRIMITIVES(LUCID_PRIM_ENUM)
#undef LUCID_PRIM_ENUM
};
inline constexpr size_t kPrimCount = 0
#define LUCID_PRIM_COUNT(name) +1
    LUCID_PRIMITIVES(LUCID_PRIM_COUNT)
#undef LUCID_PRIM_COUNT
    ;

const char* prim_name(Prim p);  // "Unary", "Binary", ...

struct Primitive {
  virtual ~Primitive() = default;
  virtual Prim kind() const = 0;
  // The name a user knows (torch's op name, "exp", "add"), for errors and profiles.
  virtual const char* name() const { return prim_name(kind()); }
  // A copy that outlives the caller's stack: what a lazy device records.
  virtual std::unique_ptr<Primitive> clone() const = 0;
  // What of the parameters, beyond the operands' sizes and dtypes, decides which kernels
  // a call launches (a fused program's ops), hashed into the flush's signature (Note
  // [Flush graphs]); 0 where the kernel alone decides.
  virtual uint64_t signature() const { return 0; }
};

// Base of every parameter struct: `struct Gather : PrimitiveOf<Prim::Gather, Gather> {...}`.
template <Prim K, class Self>
struct PrimitiveOf : Primitive {
  static constexpr Prim kKind = K;
  Prim kind() const final { return K; }
  std::unique_ptr<Primitive> clone() const final {
    return std::make_unique<Self>(static_cast<const Self&>(*this));
  }
};

using Outputs = std::span<TensorImpl* const>;
using Inputs = std::span<const TensorImpl* const>;

// The next of a kernel's tensors, for primitives whose optional tensors (a weight, a
// bias) are present or not by a flag: s[i++] when `present`, else null.
template <class Span>
auto next_tensor(const Span& s, size_t& i, bool present = true) {
  return present ? s[i++] : nullptr;
}

// A kernel: runs `p` (its dynamic type is the struct registered for p.kind()) on
// tensors that all live on the kernel's device. Outputs are allocated by the op;
// kernels write bytes only (the op bumps versions).
using Kernel = void (*)(const Primitive& p, Outputs outs, Inputs ins);

// A kernel's own conditions on its operands that need no data (the GPU's limit on
// index tensors, a cuDNN plan for these shapes). launch runs it when the op is called,
// before the kernel runs or is recorded, so that a lazy GPU still raises such errors
// from the call (Note [Lazy GPU execution]). The kernel may then assume them.
using Check = void (*)(const Primitive& p, Outputs outs, Inputs ins);

void register_kernel(Prim p, DeviceType device, Kernel kernel, Check check = nullptr);
bool has_kernel(Prim p, DeviceType device);
// The name of the primitive whose kernel this thread is running (the innermost, when a
// kernel launches others), or null: for errors a kernel leaves to be found later
// (backend/cuda/device_error.h).
const char* running_kernel_name();
Kernel kernel_of(Prim p, DeviceType device);  // null when none is registered
// The registered (primitive name, device name) pairs, in enum order.
std::vector<std::pair<std::string, std::string>> registered_kernels();

// Runs p on the device of its outputs (of its first input when it has none). Every
// tensor given must be on that device: ops move 0-d CPU operands into parameters
// first. NotImplementedError when that device has no kernel for p.
void launch(const Primitive& p, std::initializer_list<TensorImpl*> outs,
            std::initializer_list<const TensorImpl*> ins);
void launch(const Primitive& p, Outputs outs, Inputs ins);

// The typed view of a primitive inside a kernel: `const auto& g = prim_cast<Gather>(p);`.
template <class P>
const P& prim_cast(const Primitive& p) {
  return static_cast<const P&>(p);
}

}  // namespace lucid::ops
