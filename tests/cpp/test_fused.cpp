// The fused elementwise program (ops/prims/fused.h, Note [Elementwise fusion]) on the
// CPU, which runs each step with the op's own row kernels (Note [Compiled CPU chains]):
// a program built by hand gives the unfused ops' results bit for bit, for each dtype a
// program may have, transcendental functions included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/elementwise.h"
#include "ops/elementwise_extra.h"
#include "ops/prims/fused.h"

namespace lucid {
namespace {

using ops::BinaryOp;
using ops::FusedKind;
using ops::FusedRead;
using ops::UnaryOp;

// Every operand and step of `p` of dtype `d` (the programs the CPU runs have one dtype).
void one_dtype(ops::FusedProgram& p, Dtype d) {
  p.dtype = d;
  for (Dtype& t : p.in_dtype) t = d;
  for (Dtype& t : p.out_dtype) t = d;
  for (ops::FusedInstr& in : p.instrs) in.dtype = d;
}

TensorPtr filled(Dtype dtype, int64_t n) {
  TensorPtr t = TensorImpl::empty({n}, Dtype::F64, Device::cpu());
  auto* p = reinterpret_cast<double*>(t->host_ptr());
  for (int64_t i = 0; i < n; ++i) p[i] = std::sin(0.37 * double(i)) * 3.0 - 0.1;
  return dtype == Dtype::F64 ? t : t->clone(dtype);
}

ops::Operand num(double v) { return {nullptr, Scalar(v)}; }
ops::Operand ten(const TensorPtr& t) { return {t, Scalar(0.0)}; }

bool same_bytes(const TensorPtr& a, const TensorPtr& b) {
  return a->nbytes() == b->nbytes() && std::memcmp(a->host_ptr(), b->host_ptr(), a->nbytes()) == 0;
}

// y = sigmoid(exp(tanh(sin(x * 1.5 + 0.5) * x) - 0.25)) + 1, with t = sin(...) * x kept.
void check_chain(Dtype dtype) {
  const int64_t n = 1000;
  TensorPtr x = filled(dtype, n);
  TensorPtr t = ops::binary(BinaryOp::Mul,
                            ten(ops::unary(UnaryOp::Sin, ops::binary(BinaryOp::Add, ten(ops::binary(BinaryOp::Mul, ten(x), num(1.5))), num(0.5)))),
                            ten(x));
  TensorPtr y = ops::binary(
      BinaryOp::Add,
      ten(ops::unary(UnaryOp::Sigmoid,
                     ops::unary(UnaryOp::Exp, ops::binary(BinaryOp::Sub, ten(ops::unary(UnaryOp::Tanh, t)), num(0.25))))),
      num(1.0));

  ops::FusedElementwise f;
  ops::FusedProgram& p = f.program;
  p.dtype = dtype;
  p.n_inputs = 1;
  p.in_reg[0] = 0;
  const double consts[] = {1.5, 0.5, 0.25, 1.0};
  for (double c : consts) {
    p.const_reg[p.n_consts] = uint8_t(1 + p.n_consts);
    p.consts[p.n_consts++] = dtype == Dtype::F64 ? c : double(float(c));
  }
  // x in register 0, the constants in 1-4, results in 5-7 (a step may overwrite its operand)
  auto step = [&](bool binary, int op, int a, int b, int dst) {
    p.instrs[p.n_instrs++] = {binary ? FusedKind::Binary : FusedKind::Unary, uint8_t(op), uint8_t(dst), uint8_t(a),
                              uint8_t(b), 0, dtype};
  };
  step(true, int(BinaryOp::Mul), 0, 1, 5);
  step(true, int(BinaryOp::Add), 5, 2, 5);
  step(false, int(UnaryOp::Sin), 5, 5, 5);
  step(true, int(BinaryOp::Mul), 5, 0, 6);  // kept: an output
  step(false, int(UnaryOp::Tanh), 6, 6, 5);
  step(true, int(BinaryOp::Sub), 5, 3, 5);
  step(false, int(UnaryOp::Exp), 5, 5, 5);
  step(false, int(UnaryOp::Sigmoid), 5, 5, 5);
  step(true, int(BinaryOp::Add), 5, 4, 7);
  p.n_outputs = 2;
  p.out_reg[0] = 7;
  p.out_reg[1] = 6;
  one_dtype(p, dtype);
  static_assert(ops::kFusedMaxRegs >= 8);
  TensorPtr fy = TensorImpl::empty({n}, dtype, Device::cpu()), ft = TensorImpl::empty({n}, dtype, Device::cpu());
  ops::launch(f, {fy.get(), ft.get()}, {x.get()});
  EXPECT_TRUE(same_bytes(fy, y)) << dtype_name(dtype);
  EXPECT_TRUE(same_bytes(ft, t)) << dtype_name(dtype);
}

TEST(Fused, AChainGivesTheUnfusedOpsResults) {
  for (Dtype d : {Dtype::F32, Dtype::F64, Dtype::F16, Dtype::BF16}) check_chain(d);
}

// z = maximum((x - 0.25) * x / 3, x) + x, each step rounded to the dtype as stored.
TEST(Fused, ArithmeticIsTheUnfusedOpsBitForBit) {
  for (Dtype dtype : {Dtype::F32, Dtype::F64, Dtype::F16, Dtype::BF16}) {
    TensorPtr x = filled(dtype, 777);
    TensorPtr z = ops::binary(
        BinaryOp::Add,
        ten(ops::binary(BinaryOp::Maximum,
                        ten(ops::binary(BinaryOp::Div, ten(ops::binary(BinaryOp::Mul, ten(ops::binary(BinaryOp::Sub, ten(x), num(0.25))), ten(x))), num(3.0))),
                        ten(x))),
        ten(x));
    ops::FusedElementwise f;
    ops::FusedProgram& p = f.program;
    p.dtype = dtype;
    p.n_inputs = 1;
    p.n_consts = 2;
    p.const_reg[0] = 1;
    p.const_reg[1] = 2;
    p.consts[0] = dtype == Dtype::F64 ? 0.25 : double(float(0.25));
    p.consts[1] = dtype == Dtype::F64 ? 3.0 : double(float(3.0));
    p.instrs[0] = {FusedKind::Binary, uint8_t(BinaryOp::Sub), 3, 0, 1};
    p.instrs[1] = {FusedKind::Binary, uint8_t(BinaryOp::Mul), 4, 3, 0};
    p.instrs[2] = {FusedKind::Binary, uint8_t(BinaryOp::Div), 5, 4, 2};
    p.instrs[3] = {FusedKind::Binary, uint8_t(BinaryOp::Maximum), 6, 5, 0};
    p.instrs[4] = {FusedKind::Binary, uint8_t(BinaryOp::Add), 7, 6, 0};
    p.n_instrs = 5;
    p.n_outputs = 1;
    p.out_reg[0] = 7;
    one_dtype(p, dtype);
    TensorPtr out = TensorImpl::empty({777}, dtype, Device::cpu());
    ops::launch(f, {out.get()}, {x.get()});
    EXPECT_TRUE(same_bytes(out, z)) << dtype_name(dtype);
  }
}

TEST(Fused, ABroadcastInputIsReadForEveryElement) {
  TensorPtr x = filled(Dtype::F32, 300);
  TensorPtr b = TensorImpl::full({1}, Scalar(2.5), Dtype::F32, Device::cpu());
  ops::FusedElementwise f;
  ops::FusedProgram& p = f.program;
  p.n_inputs = 2;
  p.in_reg[0] = 0;
  p.in_reg[1] = 1;
  p.in_read[1] = FusedRead::One;
  p.instrs[0] = {FusedKind::Binary, uint8_t(BinaryOp::Maximum), 2, 0, 1};
  p.n_instrs = 1;
  p.n_outputs = 1;
  p.out_reg[0] = 2;
  one_dtype(p, Dtype::F32);
  TensorPtr out = TensorImpl::empty({300}, Dtype::F32, Device::cpu());
  ops::launch(f, {out.get()}, {x.get(), b.get()});
  EXPECT_TRUE(same_bytes(out, ops::binary(BinaryOp::Maximum, ten(x), ten(b))));
}

// y = where(m, x * 2, -1.5) with m a bool input: the where kernel's bits (its number
// converted to the dtype as a cast converts it), the condition read as 0 or 1.
TEST(Fused, AWhereSelectsAsTheWhereKernel) {
  for (Dtype dtype : {Dtype::F32, Dtype::F64, Dtype::F16, Dtype::BF16}) {
    const int64_t n = 513;
    TensorPtr x = filled(dtype, n);
    TensorPtr m = ops::binary(BinaryOp::Gt, ten(filled(Dtype::F64, n)), num(0.4));
    ASSERT_EQ(m->dtype(), Dtype::Bool);
    TensorPtr twice = ops::binary(BinaryOp::Mul, ten(x), num(2.0));
    TensorPtr y = ops::where(m, ten(twice), num(-1.5));
    ops::FusedElementwise f;
    ops::FusedProgram& p = f.program;
    p.n_inputs = 2, p.in_reg[0] = 0, p.in_reg[1] = 1;
    p.n_consts = 2, p.const_reg[0] = 2, p.const_reg[1] = 3;
    p.consts[0] = 2.0, p.consts[1] = -1.5;  // (exact in every dtype)
    p.instrs[0] = {FusedKind::Binary, uint8_t(BinaryOp::Mul), 4, 0, 2};
    p.instrs[1] = {FusedKind::Where, 0, 5, 1, 4, 3};
    p.n_instrs = 2;
    p.n_outputs = 1, p.out_reg[0] = 5;
    one_dtype(p, dtype);
    p.in_dtype[1] = Dtype::Bool;
    TensorPtr out = TensorImpl::empty({n}, dtype, Device::cpu());
    ops::launch(f, {out.get()}, {x.get(), m.get()});
    EXPECT_TRUE(same_bytes(out, y)) << dtype_name(dtype);
  }
}

TEST(Fused, TheCpuRefusesProgramsOfSeveralDtypes) {
  TensorPtr x = filled(Dtype::F32, 10);
  ops::FusedElementwise f;
  ops::FusedProgram& p = f.program;
  p.n_inputs = 1;
  p.instrs[0] = {FusedKind::Cast, 0, 1, 0, 0, 0, Dtype::F16};
  p.n_instrs = 1;
  p.n_outputs = 1, p.out_reg[0] = 1;
  one_dtype(p, Dtype::F32);
  p.instrs[0].dtype = p.out_dtype[0] = Dtype::F16;
  TensorPtr out = TensorImpl::empty({10}, Dtype::F16, Device::cpu());
  EXPECT_THROW(ops::launch(f, {out.get()}, {x.get()}), RuntimeError);
}

TEST(Fused, TheOpsAProgramMayHold) {
  EXPECT_TRUE(ops::fusable(BinaryOp::Add));
  EXPECT_TRUE(ops::fusable(UnaryOp::Sigmoid));
  EXPECT_FALSE(ops::fusable(BinaryOp::Lt));          // a bool result
  EXPECT_FALSE(ops::fusable(BinaryOp::BitwiseAnd));  // integers only
  EXPECT_FALSE(ops::fusable(UnaryOp::Isnan));
  EXPECT_FALSE(ops::fusable(UnaryOp::BesselJ0));     // the heavy special functions
}

}  // namespace
}  // namespace lucid
