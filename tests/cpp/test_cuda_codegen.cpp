// The generated kernels of fused elementwise programs (backend/cuda/fused_codegen.h):
// every fusable op's generated form compiles with NVRTC in every float dtype. NVRTC
// compiles without a GPU, so this runs on CI too; it skips where NVRTC cannot be loaded.
// (That a generated kernel gives the unfused ops' bits is tested on the GPU, in
// tests/python/test_gpu_fusion.py.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/cuda/fused_codegen.h"
#include "backend/cuda/fused_rows.h"
#include "backend/cuda/norm.h"
#include "backend/cuda/nvrtc.h"
#include "core/error.h"

namespace {

using lucid::Dtype;
using lucid::ops::BinaryOp;
using lucid::ops::FusedInstr;
using lucid::ops::FusedKind;
using lucid::ops::FusedProgram;
using lucid::ops::FusedRead;
using lucid::ops::UnaryOp;

bool nvrtc_loads() {
  try {
    lucid::cuda::nvrtc::version();
    return true;
  } catch (const lucid::RuntimeError&) {
    return false;
  }
}

// Every fusable op, as an instruction reading registers 0 and 1.
std::vector<FusedInstr> fusable_instrs() {
  std::vector<FusedInstr> all;
#define LUCID_B(name, Fn, rule, operands) \
  if (lucid::ops::fusable(BinaryOp::Fn)) all.push_back({FusedKind::Binary, uint8_t(BinaryOp::Fn), 0, 0, 1});
  LUCID_BINARY_OPS(LUCID_B)
#undef LUCID_B
#define LUCID_U(name, Fn, rule) \
  if (lucid::ops::fusable(UnaryOp::Fn)) all.push_back({FusedKind::Unary, uint8_t(UnaryOp::Fn), 0, 0, 0});
  LUCID_UNARY_OPS(LUCID_U)
#undef LUCID_U
  return all;
}

// A program of `instrs` chained through registers 2..7: two inputs (the second one
// element, broadcast), a constant, two outputs.
FusedProgram program_of(Dtype dtype, const std::vector<FusedInstr>& instrs) {
  FusedProgram p;
  p.dtype = dtype;
  p.n_inputs = 2, p.in_reg[0] = 0, p.in_reg[1] = 1, p.in_read[1] = FusedRead::One;
  p.in_dtype[0] = p.in_dtype[1] = p.out_dtype[0] = p.out_dtype[1] = dtype;
  p.n_consts = 1, p.const_reg[0] = 7, p.consts[0] = 0.5;
  int last = 0;
  for (const FusedInstr& in : instrs) {
    FusedInstr s = in;
    s.dtype = dtype;
    s.a = uint8_t(last), s.b = uint8_t(p.n_instrs % 2 ? 7 : 1), s.dst = uint8_t(2 + p.n_instrs % 5);
    last = s.dst;
    p.instrs[p.n_instrs++] = s;
  }
  p.n_outputs = 2, p.out_reg[0] = uint8_t(last), p.out_reg[1] = 0;
  return p;
}

TEST(CudaCodegen, EveryGeneratedOpCompilesInEveryFloatDtype) {
  if (!nvrtc_loads()) GTEST_SKIP() << "NVRTC cannot be loaded here";
  std::vector<FusedInstr> generated;
  for (const FusedInstr& in : fusable_instrs()) {
    const bool erfinv = in.kind == FusedKind::Unary && UnaryOp(in.op) == UnaryOp::Erfinv;
    const std::string source = lucid::cuda::fused_kernel_source(program_of(Dtype::F32, {in}), true);
    EXPECT_EQ(source.empty(), erfinv) << "op " << int(in.kind) << "/" << int(in.op);
    if (!source.empty()) generated.push_back(in);
  }
  ASSERT_GT(generated.size(), 40u);
  for (Dtype dtype : {Dtype::F32, Dtype::F64, Dtype::F16, Dtype::BF16}) {
    for (size_t at = 0; at < generated.size(); at += lucid::ops::kFusedMaxInstrs) {
      const std::vector<FusedInstr> chunk(generated.begin() + at,
                                          generated.begin() + std::min(generated.size(), at + lucid::ops::kFusedMaxInstrs));
      for (bool index32 : {true, false}) {
        if (!index32 && dtype != Dtype::F32) continue;  // (the index type is the same text in every dtype)
        const std::string source = lucid::cuda::fused_kernel_source(program_of(dtype, chunk), index32);
        ASSERT_FALSE(source.empty());
        std::string cubin;
        EXPECT_NO_THROW(cubin = lucid::cuda::nvrtc::compile(source, "lucid_fused", 90, {"--fmad=false", "--std=c++17"}))
            << source;
        EXPECT_GT(cubin.size(), 0u);
      }
    }
  }
}

TEST(CudaCodegen, ProgramsWithoutAGeneratedFormAreLeftToTheInterpreter) {
  FusedInstr erfinv{FusedKind::Unary, uint8_t(UnaryOp::Erfinv), 0, 0, 0},
      add{FusedKind::Binary, uint8_t(BinaryOp::Add), 0, 0, 1};
  EXPECT_TRUE(lucid::cuda::fused_kernel_source(program_of(Dtype::F32, {add, erfinv, add}), true).empty());
  EXPECT_FALSE(lucid::cuda::fused_kernel_source(program_of(Dtype::F32, {add, add}), true).empty());
  FusedProgram ints = program_of(Dtype::I32, {add});  // (fusion makes no such program)
  EXPECT_TRUE(lucid::cuda::fused_kernel_source(ints, true).empty());
}

// Inputs read through views (ops::FusedView): a bias row (one term), a [B, 1] column
// (one term divided by the row length) and a key mask [B, 1, 1, T] over [B, H, T, T]
// (two terms), in both index widths; a view's sizes are parameters, not the source's.
TEST(CudaCodegen, ViewInputsCompileAndTheirSizesAreParameters) {
  if (!nvrtc_loads()) GTEST_SKIP() << "NVRTC cannot be loaded here";
  FusedInstr add{FusedKind::Binary, uint8_t(BinaryOp::Add), 0, 0, 1};
  FusedProgram p = program_of(Dtype::F32, {add, add});
  p.n_inputs = 3, p.in_reg[2] = 6, p.in_dtype[2] = Dtype::BF16;
  p.in_read[0] = FusedRead::View, p.in_view[0].terms = 2;
  p.in_view[0].div[0] = 1, p.in_view[0].size[0] = 16, p.in_view[0].stride[0] = 1;
  p.in_view[0].div[1] = 4096, p.in_view[0].size[1] = 8, p.in_view[0].stride[1] = 16;
  p.in_read[1] = FusedRead::Elements;
  p.in_read[2] = FusedRead::View, p.in_view[2].terms = 1;
  p.in_view[2].div[0] = 64, p.in_view[2].size[0] = 512, p.in_view[2].stride[0] = 1;
  p.instrs[1].b = 6;
  for (bool index32 : {true, false}) {
    const std::string source = lucid::cuda::fused_kernel_source(p, index32);
    ASSERT_NE(source.find("view_term(p.view[0][1], i)"), std::string::npos) << source;
    ASSERT_NE(source.find("view_term(p.view[2][0], i)"), std::string::npos) << source;
    std::string cubin;
    EXPECT_NO_THROW(cubin = lucid::cuda::nvrtc::compile(source, "lucid_fused", 90, {"--fmad=false", "--std=c++17"}))
        << source;
    EXPECT_GT(cubin.size(), 0u);
    FusedProgram other = p;
    other.in_view[0].size[0] = 32, other.in_view[2].div[0] = 3;
    EXPECT_EQ(lucid::cuda::fused_kernel_source(other, index32), source);
    EXPECT_EQ(lucid::ops::fused_structure(other), lucid::ops::fused_structure(p));
  }
  FusedProgram fewer = p;
  fewer.in_view[0].terms = 1;
  EXPECT_NE(lucid::ops::fused_structure(fewer), lucid::ops::fused_structure(p));
}

// A program of several dtypes: a bfloat16 input cast to float32, scaled, selected by a
// bool condition against a float16 input cast up, and stored as float16 and float32.
TEST(CudaCodegen, WhereAndCastsCompileAcrossTheFloatDtypes) {
  if (!nvrtc_loads()) GTEST_SKIP() << "NVRTC cannot be loaded here";
  FusedProgram p;
  p.dtype = Dtype::F32;
  p.n_inputs = 3;
  p.in_reg[0] = 0, p.in_dtype[0] = Dtype::BF16;
  p.in_reg[1] = 1, p.in_dtype[1] = Dtype::Bool;
  p.in_reg[2] = 2, p.in_dtype[2] = Dtype::F16, p.in_read[2] = FusedRead::One;
  p.n_consts = 1, p.const_reg[0] = 3, p.consts[0] = 0.5;
  p.instrs[0] = {FusedKind::Cast, 0, 4, 0, 0, 0, Dtype::F32};
  p.instrs[1] = {FusedKind::Binary, uint8_t(BinaryOp::Mul), 4, 4, 3, 0, Dtype::F32};
  p.instrs[2] = {FusedKind::Cast, 0, 5, 2, 0, 0, Dtype::F32};
  p.instrs[3] = {FusedKind::Where, 0, 6, 1, 4, 5, Dtype::F32};
  p.instrs[4] = {FusedKind::Cast, 0, 7, 6, 0, 0, Dtype::F16};
  p.n_instrs = 5;
  p.n_outputs = 2, p.out_reg[0] = 7, p.out_dtype[0] = Dtype::F16, p.out_reg[1] = 6, p.out_dtype[1] = Dtype::F32;
  const std::string source = lucid::cuda::fused_kernel_source(p, true);
  ASSERT_FALSE(source.empty());
  EXPECT_NE(source.find("f16_store"), std::string::npos) << source;
  EXPECT_NE(source.find("? C(1) : C(0)"), std::string::npos) << source;
  EXPECT_NO_THROW(lucid::cuda::nvrtc::compile(source, "lucid_fused", 90, {"--fmad=false", "--std=c++17"})) << source;
  // float64 with a float32 operand: no program mixes compute types
  FusedProgram mixed = p;
  mixed.dtype = Dtype::F64;
  EXPECT_TRUE(lucid::cuda::fused_kernel_source(mixed, true).empty());
}

// A fused norm (Note [Fused norm rows]): a bfloat16 residual add cast up to float32 as the
// prologue (x held elsewhere, so stored, or not), the cast of y to bfloat16 and a scale
// as the epilogue (y stored, or not), or a side left as the identity; layer and rms
// norm, with and without the affine operands, in both row layouts and both dtypes.
FusedProgram residual_prologue(Dtype t) {
  FusedProgram p;
  p.dtype = Dtype::BF16;
  p.n_inputs = 2;
  p.in_reg[0] = 0, p.in_dtype[0] = Dtype::BF16;
  p.in_reg[1] = 1, p.in_dtype[1] = Dtype::BF16;
  p.instrs[0] = {FusedKind::Binary, uint8_t(BinaryOp::Add), 2, 0, 1, 0, Dtype::BF16};
  p.instrs[1] = {FusedKind::Cast, 0, 3, 2, 0, 0, t};
  p.n_instrs = 2;
  p.n_outputs = 2, p.out_reg[0] = 2, p.out_dtype[0] = Dtype::BF16, p.out_reg[1] = 3, p.out_dtype[1] = t;
  if (t == Dtype::F64) {  // (a float64 program has one compute type: a scaled input instead)
    p = FusedProgram{};
    p.dtype = t;
    p.n_inputs = 1, p.in_dtype[0] = t;
    p.n_consts = 1, p.const_reg[0] = 1, p.consts[0] = 2.0;
    p.instrs[0] = {FusedKind::Binary, uint8_t(BinaryOp::Mul), 2, 0, 1, 0, t};
    p.n_instrs = 1;
    p.n_outputs = 2, p.out_reg[0] = 0, p.out_dtype[0] = t, p.out_reg[1] = 2, p.out_dtype[1] = t;
  }
  return p;
}

FusedProgram cast_epilogue(Dtype t) {
  FusedProgram p;
  p.dtype = t;
  p.n_inputs = 2;
  p.in_reg[0] = 0, p.in_dtype[0] = Dtype::F16, p.in_read[0] = FusedRead::One;
  p.in_reg[1] = 1, p.in_dtype[1] = t;
  p.n_consts = 1, p.const_reg[0] = 2, p.consts[0] = 0.5;
  p.instrs[0] = {FusedKind::Binary, uint8_t(BinaryOp::Mul), 3, 1, 2, 0, t};
  p.instrs[1] = {FusedKind::Unary, uint8_t(UnaryOp::Gelu), 3, 3, 0, 0, t};
  p.n_instrs = 2;
  p.n_outputs = 1, p.out_reg[0] = 3, p.out_dtype[0] = t;
  if (t == Dtype::F32) {
    p.instrs[2] = {FusedKind::Cast, 0, 4, 3, 0, 0, Dtype::BF16};
    p.n_instrs = 3;
    p.out_reg[0] = 4, p.out_dtype[0] = Dtype::BF16;
  } else {
    p.in_dtype[0] = t;
  }
  return p;
}

FusedProgram identity_of(Dtype t) {
  FusedProgram p;
  p.dtype = t;
  p.n_inputs = p.n_outputs = 1;
  p.in_dtype[0] = p.out_dtype[0] = t;
  return p;
}

TEST(CudaCodegen, FusedNormKernelsCompile) {
  if (!nvrtc_loads()) GTEST_SKIP() << "NVRTC cannot be loaded here";
  using lucid::ops::FusedNormRows;
  int compiled = 0;
  auto compile = [&](Dtype t, int side, bool rms, int64_t n) {
    FusedNormRows p;
    p.norm.n = n;
    p.norm.rms = rms, p.norm.has_weight = true, p.norm.has_bias = !rms;
    p.prologue = side == 2 ? identity_of(t) : residual_prologue(t);
    p.x_output = side == 2 ? 0 : 1;
    p.x_stored = side == 0;
    p.epilogue = side == 1 ? identity_of(t) : cast_epilogue(t);
    p.y_input = side == 1 ? 0 : 1;
    p.y_stored = side == 0 && !rms;
    const auto layout = lucid::cuda::norm_forward_layout(n, int64_t(lucid::dtype_size(t)));
    const std::string source = lucid::cuda::fused_rows_source(p);
    ASSERT_FALSE(source.empty());
    EXPECT_NE(source.find("norm_rows_forward<T, " + std::to_string(layout.threads) + ", " + std::to_string(layout.kept) +
                          ">"),
              std::string::npos);
    std::string cubin;
    EXPECT_NO_THROW(cubin = lucid::cuda::nvrtc::compile(source, "lucid_fused_norm", 90, {"--fmad=false", "--std=c++17"}))
        << source;
    EXPECT_GT(cubin.size(), 0u);
    ++compiled;
  };
  // both chains, the prologue alone, the epilogue alone; then every layout
  for (Dtype t : {Dtype::F32, Dtype::F64})
    for (int side = 0; side < 3; ++side)
      for (bool rms : {false, true}) compile(t, side, rms, 1024);
  for (Dtype t : {Dtype::F32, Dtype::F64})
    for (int64_t n : {100, 2048, 4000, 6000}) compile(t, 0, false, n);
  EXPECT_EQ(compiled, 20);
  // rows too long to stage are read again at each pass, and never fused
  FusedNormRows long_rows;
  long_rows.norm.n = 100000;
  long_rows.prologue = residual_prologue(Dtype::F32);
  long_rows.x_output = 1;
  long_rows.epilogue = cast_epilogue(Dtype::F32);
  long_rows.y_input = 1;
  EXPECT_EQ(lucid::cuda::norm_forward_layout(100000, 4).kept, lucid::cuda::kNormReread);
  EXPECT_TRUE(lucid::cuda::fused_rows_source(long_rows).empty());
  // a chain of another compute type than x's is not a fused norm this kernel runs
  FusedNormRows mixed;
  mixed.norm.n = 64;
  mixed.prologue = residual_prologue(Dtype::F32);
  mixed.x_output = 1;
  mixed.epilogue = identity_of(Dtype::F64);
  EXPECT_TRUE(lucid::cuda::fused_rows_source(mixed).empty());
}

// A softmax / log_softmax with its chains (a prologue that adds and scales, an
// epilogue that casts to bfloat16), in every forward layout and both dtypes.
TEST(CudaCodegen, FusedSoftmaxKernelsCompile) {
  if (!nvrtc_loads()) GTEST_SKIP() << "NVRTC cannot be loaded here";
  using lucid::ops::FusedSoftmaxRows;
  int compiled = 0;
  auto compile = [&](Dtype t, int side, bool log, int64_t n) {
    FusedSoftmaxRows p;
    p.softmax.outer = 16, p.softmax.n = n, p.softmax.log = log;
    p.prologue = side == 2 ? identity_of(t) : residual_prologue(t);
    p.x_output = side == 2 ? 0 : 1;
    p.x_stored = side == 0;
    p.epilogue = side == 1 ? identity_of(t) : cast_epilogue(t);
    p.y_input = side == 1 ? 0 : 1;
    p.y_stored = side == 0;
    const auto layout = lucid::cuda::softmax_forward_layout(n, int64_t(lucid::dtype_size(t)));
    const std::string source = lucid::cuda::fused_softmax_source(p);
    ASSERT_FALSE(source.empty());
    EXPECT_NE(source.find("softmax_rows_forward<T, " + std::to_string(layout.threads) + ", " +
                          std::to_string(layout.kept) + ">"),
              std::string::npos);
    std::string cubin;
    EXPECT_NO_THROW(cubin = lucid::cuda::nvrtc::compile(source, "lucid_fused_softmax", 90,
                                                        {"--fmad=false", "--std=c++17"}))
        << source;
    EXPECT_GT(cubin.size(), 0u);
    ++compiled;
  };
  for (Dtype t : {Dtype::F32, Dtype::F64})
    for (int side = 0; side < 3; ++side)
      for (bool log : {false, true}) compile(t, side, log, 1024);
  for (Dtype t : {Dtype::F32, Dtype::F64})
    for (int64_t n : {100, 2048, 4000, 6000}) compile(t, 0, false, n);
  EXPECT_EQ(compiled, 20);
  FusedSoftmaxRows long_rows;  // (read again at each pass: never fused)
  long_rows.softmax.n = 100000;
  long_rows.prologue = residual_prologue(Dtype::F32);
  long_rows.x_output = 1;
  long_rows.epilogue = identity_of(Dtype::F32);
  EXPECT_TRUE(lucid::cuda::fused_softmax_source(long_rows).empty());
}

// A row reduction (sum, mean, sum of magnitudes, max, min) with the chain computing its
// input, x stored or not, in both dtypes and both walks (16-byte groups where the
// unfused reduction's loads take them, single elements where n is not a multiple of
// the group); reductions the unfused kernel would split over several blocks have no
// fused kernel, nor has one with an epilogue.
TEST(CudaCodegen, FusedRowReductionKernelsCompile) {
  if (!nvrtc_loads()) GTEST_SKIP() << "NVRTC cannot be loaded here";
  using lucid::ops::FusedReduceRows;
  using lucid::ops::RowReduce;
  int compiled = 0;
  for (Dtype t : {Dtype::F32, Dtype::F64})
    for (RowReduce r : {RowReduce::Sum, RowReduce::Mean, RowReduce::AbsSum, RowReduce::Max, RowReduce::Min})
      for (int64_t n : {1024, 1001}) {
        FusedReduceRows p;
        p.reduce = r, p.outer = 4096, p.n = n;
        p.prologue = residual_prologue(t);
        p.x_output = 1;
        p.x_stored = n == 1024;
        p.epilogue = identity_of(t);
        const std::string source = lucid::cuda::fused_reduce_source(p);
        ASSERT_FALSE(source.empty());
        const int group = n % (t == Dtype::F32 ? 4 : 2) == 0 ? (t == Dtype::F32 ? 4 : 2) : 1;
        EXPECT_NE(source.find("reduce_rows_fused<T, " + std::to_string(group) + ", lucid::cuda::Row"),
                  std::string::npos)
            << source;
        std::string cubin;
        EXPECT_NO_THROW(cubin = lucid::cuda::nvrtc::compile(source, "lucid_fused_reduce", 90,
                                                            {"--fmad=false", "--std=c++17"}))
            << source;
        EXPECT_GT(cubin.size(), 0u);
        ++compiled;
      }
  EXPECT_EQ(compiled, 20);
  FusedReduceRows split;  // 16 rows of 100,000: the unfused reduction splits each row
  split.outer = 16, split.n = 100000;
  split.prologue = residual_prologue(Dtype::F32);
  split.x_output = 1;
  split.epilogue = identity_of(Dtype::F32);
  EXPECT_TRUE(lucid::cuda::fused_reduce_source(split).empty());
  split.outer = 528;  // enough rows for the memory: one block a row
  EXPECT_FALSE(lucid::cuda::fused_reduce_source(split).empty());
  FusedReduceRows with_epilogue = split;  // (a row reduction takes no epilogue)
  with_epilogue.epilogue = cast_epilogue(Dtype::F32);
  with_epilogue.y_input = 1;
  EXPECT_TRUE(lucid::cuda::fused_reduce_source(with_epilogue).empty());
}

// A masked softmax: the prologue adds a mask broadcast over batch and heads (a view of
// one term), the epilogue reads a view of two terms; views are indexed in 32 bits, so
// such chains over more than 2^30 elements have no kernel, nor do views in a backward's.
TEST(CudaCodegen, FusedSoftmaxKernelsReadViews) {
  if (!nvrtc_loads()) GTEST_SKIP() << "NVRTC cannot be loaded here";
  using lucid::ops::FusedSoftmaxRows;
  FusedSoftmaxRows p;
  p.softmax.outer = 4 * 8 * 128, p.softmax.n = 128;
  p.elements = p.softmax.outer * p.softmax.n;
  FusedProgram& pro = p.prologue;
  pro.dtype = Dtype::F32;
  pro.n_inputs = 2;
  pro.in_reg[0] = 0, pro.in_dtype[0] = Dtype::F32;
  pro.in_reg[1] = 1, pro.in_dtype[1] = Dtype::F32, pro.in_read[1] = FusedRead::View;
  pro.in_view[1].terms = 1, pro.in_view[1].div[0] = 1, pro.in_view[1].size[0] = 128 * 128, pro.in_view[1].stride[0] = 1;
  pro.n_consts = 1, pro.const_reg[0] = 2, pro.consts[0] = 0.125;
  pro.instrs[0] = {FusedKind::Binary, uint8_t(BinaryOp::Mul), 3, 0, 2, 0, Dtype::F32};
  pro.instrs[1] = {FusedKind::Binary, uint8_t(BinaryOp::Add), 3, 3, 1, 0, Dtype::F32};
  pro.n_instrs = 2;
  pro.n_outputs = 1, pro.out_reg[0] = 3, pro.out_dtype[0] = Dtype::F32;
  p.epilogue = cast_epilogue(Dtype::F32);
  p.epilogue.in_reg[0] = 0, p.epilogue.in_read[0] = FusedRead::View, p.epilogue.in_view[0].terms = 2;
  for (int t = 0; t < 2; ++t)
    p.epilogue.in_view[0].div[t] = t ? 8 * 128 * 128 : 1, p.epilogue.in_view[0].size[t] = t ? 4 : 128,
    p.epilogue.in_view[0].stride[t] = t ? 128 : 1;
  p.y_input = 1;
  const std::string source = lucid::cuda::fused_softmax_source(p);
  ASSERT_FALSE(source.empty());
  EXPECT_NE(source.find("p.view[1][0], unsigned(e)"), std::string::npos) << source;  // (the prologue's mask)
  EXPECT_NE(source.find("p.view[2][1], unsigned(e)"), std::string::npos) << source;  // (the epilogue's, after x's)
  std::string cubin;
  EXPECT_NO_THROW(cubin = lucid::cuda::nvrtc::compile(source, "lucid_fused_softmax", 90, {"--fmad=false", "--std=c++17"}))
      << source;
  EXPECT_GT(cubin.size(), 0u);
  FusedSoftmaxRows huge = p;
  huge.elements = (int64_t(1) << 30) + 128;
  EXPECT_TRUE(lucid::cuda::fused_softmax_source(huge).empty());
}

// A norm's backward with the chain taking dx: the residual gradient's add (dx stored or
// not), or the cast of dx to bfloat16 with a scale, in both row layouts, both register
// caches and both dtypes.
TEST(CudaCodegen, FusedNormBackwardKernelsCompile) {
  if (!nvrtc_loads()) GTEST_SKIP() << "NVRTC cannot be loaded here";
  using lucid::ops::FusedNormRowsBackward;
  int compiled = 0;
  for (Dtype t : {Dtype::F32, Dtype::F64})
    for (bool residual : {false, true})
      for (int threads : {32, 256})
        for (int cached : {8, 32}) {
          if (t == Dtype::F64 && cached == 32) continue;  // (never chosen: norm_backward_cached)
          FusedNormRowsBackward p;
          p.norm.n = threads == 32 ? 1024 : 4096;
          p.norm.rms = residual, p.norm.has_weight = true, p.norm.has_bias = !residual;
          if (residual) {
            FusedProgram add;
            add.dtype = t;
            add.n_inputs = 2;
            add.in_reg[0] = 0, add.in_dtype[0] = t;
            add.in_reg[1] = 1, add.in_dtype[1] = t;
            add.instrs[0] = {FusedKind::Binary, uint8_t(BinaryOp::Add), 2, 0, 1, 0, t};
            add.n_instrs = 1;
            add.n_outputs = 1, add.out_reg[0] = 2, add.out_dtype[0] = t;
            p.epilogue = add;
            p.dx_input = 1;
          } else {
            p.epilogue = cast_epilogue(t);
            p.dx_input = 1;
            p.dx_stored = true;
          }
          const std::string source = lucid::cuda::fused_rows_backward_source(p, threads, cached);
          ASSERT_FALSE(source.empty());
          EXPECT_NE(source.find("norm_rows_backward<T, " + std::to_string(threads) + ", " + std::to_string(cached) + ">"),
                    std::string::npos);
          std::string cubin;
          EXPECT_NO_THROW(cubin = lucid::cuda::nvrtc::compile(source, "lucid_fused_norm_backward", 90,
                                                              {"--fmad=false", "--std=c++17"}))
              << source;
          EXPECT_GT(cubin.size(), 0u);
          ++compiled;
        }
  EXPECT_EQ(compiled, 12);
}

TEST(CudaCodegen, ACompileErrorRaisesTheCompilersMessage) {
  if (!nvrtc_loads()) GTEST_SKIP() << "NVRTC cannot be loaded here";
  try {
    lucid::cuda::nvrtc::compile("extern \"C\" __global__ void k() { undeclared_name(); }", "broken", 90, {});
    FAIL() << "a source that does not compile was compiled";
  } catch (const lucid::RuntimeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("NVRTC could not compile broken for sm_90"), std::string::npos) << what;
    EXPECT_NE(what.find("undeclared_name"), std::string::npos) << what;
  }
}

}  // namespace
