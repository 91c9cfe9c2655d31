// A chain of elementwise ops run as one kernel: the program a flush makes of recorded
// unary, binary and where calls and copies (casts) (ops/fusion.cpp, Note [Elementwise fusion]). The GPU runs it
// with the table's own functors (fused_apply, below), the CPU with the ops' own row
// kernels (Note [Compiled CPU chains]): either way a fused chain's results are the
// unfused ops' results bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "core/half.h"  // (LUCID_HD)
#include "ops/elementwise_table.h"
#include "ops/primitive.h"

namespace lucid::ops {

inline constexpr int kFusedMaxInstrs = 24;
inline constexpr int kFusedMaxInputs = 6;
inline constexpr int kFusedMaxOutputs = 4;
inline constexpr int kFusedMaxConsts = 8;
inline constexpr int kFusedMaxRegs = 8;  // values live at once: inputs, constants, results
inline constexpr int kFusedMaxTerms = 3;  // a View input's terms (FusedView)

// What a step computes. Each result is rounded to the step's dtype, as the unfused
// call stores it.
enum class FusedKind : uint8_t {
  Unary,   // regs[dst] = op(regs[a])
  Binary,  // regs[dst] = op(regs[a], regs[b])
  Where,   // regs[dst] = regs[a] != 0 ? regs[b] : regs[c] (a: the condition, 0 or 1)
  Cast,    // regs[dst] = regs[a] as `dtype` (a recorded copy_: to a dtype of the program's
           // compute type, from one or from bool; the same dtype is a plain copy)
};

// dst may be any of its operands' registers.
struct FusedInstr {
  FusedKind kind = FusedKind::Unary;
  uint8_t op = 0;  // the UnaryOp or BinaryOp
  uint8_t dst = 0, a = 0, b = 0, c = 0;
  Dtype dtype = Dtype::F32;  // the result's dtype
};

// The dtype registers hold values in: float64 for float64, float for the other floats
// (each value exactly one of its dtype's). A program's dtypes share one compute type;
// bool (a where's condition, a cast's source) loads as 0 or 1 into either.
constexpr Dtype fused_compute(Dtype d) { return d == Dtype::F64 ? Dtype::F64 : Dtype::F32; }

// How a program reads input k for the chain's element i (element i of each call's
// result: the calls' results are contiguous, of one element count).
enum class FusedRead : uint8_t {
  Elements,  // its element i: a contiguous tensor of the chain's element count
  One,       // its element 0 for every i: a one-element tensor, or one expanded
  View,      // a view of a call's shape (a bias or mask expanded over a batch, a
             // transposed or sliced tensor): its element fused_view_offset(in_view[k], i)
};

// A View input's elements as a sum of terms, one per run of the view's dimensions that
// steps through memory evenly (dimensions of size 1 and merged runs aside; runs of
// stride 0, its broadcast dimensions, make no term but divide the ones outside them):
// term t adds (i / div[t] % size[t]) * stride[t], in elements.
struct FusedView {
  uint8_t terms = 0;
  int64_t div[kFusedMaxTerms] = {}, size[kFusedMaxTerms] = {}, stride[kFusedMaxTerms] = {};
};

LUCID_HD inline int64_t fused_view_offset(const FusedView& v, int64_t i) {
  int64_t at = 0;
  for (int t = 0; t < v.terms && t < kFusedMaxTerms; ++t) at += i / v.div[t] % v.size[t] * v.stride[t];
  return at;
}

// The program runs per element: load the inputs (each of its dtype, read as in_read
// says) and constants into their registers, run the instructions, store the outputs
// (each of its dtype, contiguous). `dtype`: the first call's; the program's compute
// type is fused_compute(dtype). The CPU runs only programs of one dtype (bool inputs
// aside) and no casts (its calls never record copies), whose View inputs repeat a
// contiguous row (one term of div 1 and stride 1: a bias added to a batch).
struct FusedProgram {
  Dtype dtype = Dtype::F32;
  uint8_t n_inputs = 0, n_outputs = 0, n_consts = 0, n_instrs = 0;
  uint8_t in_reg[kFusedMaxInputs] = {};
  FusedRead in_read[kFusedMaxInputs] = {};
  FusedView in_view[kFusedMaxInputs] = {};  // (View inputs)
  Dtype in_dtype[kFusedMaxInputs] = {};
  uint8_t const_reg[kFusedMaxConsts] = {};
  double consts[kFusedMaxConsts] = {};  // each exactly a value of the compute type
  uint8_t out_reg[kFusedMaxOutputs] = {};
  Dtype out_dtype[kFusedMaxOutputs] = {};
  FusedInstr instrs[kFusedMaxInstrs];
};

// The limits the kernels rely on (programs come from ops/fusion.cpp; a kernel checks
// this before indexing its registers with the program's numbers).
inline bool fused_program_valid(const FusedProgram& p) {
  bool ok = p.n_inputs <= kFusedMaxInputs && p.n_outputs <= kFusedMaxOutputs && p.n_consts <= kFusedMaxConsts &&
            p.n_instrs <= kFusedMaxInstrs;
  for (int k = 0; ok && k < p.n_inputs; ++k) {
    const FusedView& v = p.in_view[k];
    ok = p.in_reg[k] < kFusedMaxRegs && (p.in_read[k] != FusedRead::View || v.terms <= kFusedMaxTerms);
    for (int t = 0; ok && p.in_read[k] == FusedRead::View && t < v.terms; ++t) ok = v.div[t] > 0 && v.size[t] > 0;
  }
  for (int c = 0; ok && c < p.n_consts; ++c) ok = p.const_reg[c] < kFusedMaxRegs;
  for (int o = 0; ok && o < p.n_outputs; ++o) ok = p.out_reg[o] < kFusedMaxRegs;
  for (int s = 0; ok && s < p.n_instrs; ++s)
    ok = p.instrs[s].dst < kFusedMaxRegs && p.instrs[s].a < kFusedMaxRegs && p.instrs[s].b < kFusedMaxRegs &&
         p.instrs[s].c < kFusedMaxRegs;
  return ok;
}

// What decides a program's kernel: everything but its constants' values and its views'
// sizes and strides (which a kernel takes as parameters, so that a new learning rate or
// batch size is not a new kernel).
inline std::string fused_structure(const FusedProgram& p) {
  std::string k;
  auto put = [&](int v) { k.push_back(char(v)); };
  put(int(p.dtype)), put(p.n_inputs), put(p.n_outputs), put(p.n_consts), put(p.n_instrs);
  for (int i = 0; i < p.n_inputs; ++i) put(p.in_reg[i]), put(int(p.in_read[i])), put(p.in_view[i].terms), put(int(p.in_dtype[i]));
  for (int c = 0; c < p.n_consts; ++c) put(p.const_reg[c]);
  for (int o = 0; o < p.n_outputs; ++o) put(p.out_reg[o]), put(int(p.out_dtype[o]));
  for (int s = 0; s < p.n_instrs; ++s) {
    const FusedInstr& in = p.instrs[s];
    put(int(in.kind)), put(in.op), put(in.dst), put(in.a), put(in.b), put(in.c), put(int(in.dtype));
  }
  return k;
}

// A backend's choice among its kernels for a program, made once a fused call when the
// fusion pass builds it (the CUDA backend: its generated kernel's handle once compiled,
// 0 to interpret the program). The call runs that choice, and its flush signature names
// it, so that a flush whose fused calls change kernel is a new CUDA graph rather than a
// failed update of the old one.
using FusedVariant = uint64_t (*)(const FusedProgram& p, int64_t numel, int device);

// outs: the program's outputs in order; ins: its inputs in order.
struct FusedElementwise : PrimitiveOf<Prim::FusedElementwise, FusedElementwise> {
  FusedProgram program;
  uint64_t variant = 0;  // the backend's FusedVariant for this call (0: interpret)
  const char* name() const override { return "fused elementwise"; }
  uint64_t signature() const override {
    uint64_t h = 1469598103934665603ull ^ variant;
    for (char c : fused_structure(program)) h = (h ^ uint8_t(c)) * 1099511628211ull;
    return h;
  }
};

// Which table ops a program may hold: float math whose result has its operands' dtype
// (no comparisons, logic, bits, nor the special functions' heavy kernels).
constexpr bool fusable(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: case BinaryOp::Sub: case BinaryOp::Mul: case BinaryOp::Div:
    case BinaryOp::Maximum: case BinaryOp::Minimum: case BinaryOp::FloorDivide: case BinaryOp::DivTrunc:
    case BinaryOp::Remainder: case BinaryOp::Fmod: case BinaryOp::Pow: case BinaryOp::Fmax: case BinaryOp::Fmin:
    case BinaryOp::Atan2: case BinaryOp::Hypot: case BinaryOp::Xlogy: case BinaryOp::Logaddexp:
    case BinaryOp::Logaddexp2: case BinaryOp::ThresholdBackward: case BinaryOp::GeluBackward:
    case BinaryOp::GeluTanhBackward: case BinaryOp::SiluBackward: case BinaryOp::HardsigmoidBackward:
    case BinaryOp::HardswishBackward: case BinaryOp::SoftplusBackward: case BinaryOp::LogSigmoidBackward:
    case BinaryOp::MishBackward: case BinaryOp::LeakyRelu: case BinaryOp::LeakyReluSlope: case BinaryOp::Softshrink:
    case BinaryOp::Hardshrink: case BinaryOp::ShrinkBackward:
      return true;
    default:
      return false;
  }
}
constexpr bool fusable(UnaryOp op) {
  switch (op) {
    case UnaryOp::Lgamma: case UnaryOp::Digamma: case UnaryOp::I0: case UnaryOp::I0e: case UnaryOp::I1:
    case UnaryOp::I1e: case UnaryOp::Erfcx: case UnaryOp::BesselJ0: case UnaryOp::BesselJ1: case UnaryOp::BesselY0:
    case UnaryOp::BesselY1: case UnaryOp::BesselK0: case UnaryOp::BesselK1: case UnaryOp::BesselK0e:
    case UnaryOp::BesselK1e: case UnaryOp::AiryAi: case UnaryOp::BitwiseNot:
      return false;
    default:
      return rule_of(op) != DtypeRule::Predicate;
  }
}

// `v` rounded to `d` and back, as the unfused op stores its result (a no-op for the
// compute type's own dtype).
template <typename C>
LUCID_HD inline C fused_round(Dtype d, C v) {
  if constexpr (std::is_same_v<C, float>) {
    if (d == Dtype::F16) return float(Half(v));
    if (d == Dtype::BF16) return float(BFloat16(v));
  }
  return v;
}

// One instruction over kCount elements of its registers' rows (element j of a row at
// row[j * kStride]), computed in C (float, or double for float64) and rounded to the
// step's dtype. The switch is taken once for the kCount elements.
template <typename C, int kCount, int kStride>
LUCID_HD inline void fused_apply(const FusedInstr& in, const C* a, const C* b, const C* c, C* out) {
  switch (in.kind) {
    case FusedKind::Where: {
      C x[kCount];  // (all loads first: out may be an operand's row for all we know)
      for (int j = 0; j < kCount; ++j) x[j] = a[j * kStride] != C(0) ? b[j * kStride] : c[j * kStride];
      for (int j = 0; j < kCount; ++j) out[j * kStride] = x[j];
      return;
    }
    case FusedKind::Cast:
      for (int j = 0; j < kCount; ++j) out[j * kStride] = fused_round(in.dtype, a[j * kStride]);
      return;
    case FusedKind::Binary:
      switch (BinaryOp(in.op)) {
#define LUCID_CASE(name, Fn, rule, operands)                                                   \
  case BinaryOp::Fn:                                                                           \
    if constexpr (fusable(BinaryOp::Fn) && fn::Fn::template supports<C>) {                     \
      C x[kCount], y[kCount];                                                                  \
      for (int j = 0; j < kCount; ++j) x[j] = a[j * kStride], y[j] = b[j * kStride];            \
      for (int j = 0; j < kCount; ++j) out[j * kStride] = fused_round(in.dtype, C(fn::Fn()(x[j], y[j]))); \
      return;                                                                                  \
    }                                                                                          \
    break;
        LUCID_BINARY_OPS(LUCID_CASE)
#undef LUCID_CASE
      }
      return;
    case FusedKind::Unary:
      switch (UnaryOp(in.op)) {
#define LUCID_CASE(name, Fn, rule)                                                              \
  case UnaryOp::Fn:                                                                             \
    if constexpr (fusable(UnaryOp::Fn) && fn::Fn::template supports<C>) {                       \
      C x[kCount];                                                                              \
      for (int j = 0; j < kCount; ++j) x[j] = a[j * kStride];                                   \
      for (int j = 0; j < kCount; ++j) out[j * kStride] = fused_round(in.dtype, C(fn::Fn()(x[j]))); \
      return;                                                                                   \
    }                                                                                           \
    break;
        LUCID_UNARY_OPS(LUCID_CASE)
#undef LUCID_CASE
      }
      return;
  }
  // not reached: ops/fusion.cpp puts only fusable ops in a program
}

}  // namespace lucid::ops
