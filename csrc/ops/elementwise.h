// The elementwise ops: dtype promotion, broadcasting and device checks around the
// backend kernels. One entry point per arity; the op comes from elementwise_table.h.
#pragma once

#include <functional>
#include <optional>

#include "core/tensor_impl.h"
#include "ops/elementwise_table.h"

namespace lucid::ops {

// An operand: a tensor, or a Python number (a "wrapped number" in promotion).
struct Operand {
  TensorPtr tensor;  // null for a number
  Scalar number;
};

// The device an op runs on: that of its tensors (null entries are skipped). 0-d CPU
// tensors may join tensors of another device, as in PyTorch; any other mix raises
// PyTorch's "Expected all tensors to be on the same device" naming both devices.
Device op_device(const char* name, std::initializer_list<const TensorImpl*> ts);

// The number an operand stands for, as a kernel parameter in `dtype` (converted as
// torch converts wrapped numbers): a Python number always; a 0-d CPU tensor when the op
// runs on another device (PyTorch lets it join, and a GPU kernel takes it by value, not
// as a one-element upload), or on the CPU when `dtype` is wider than the op's (torch's
// CPU kernels read such a tensor's own value, Note [Numbers in opmath]); nullopt for a
// tensor the kernel reads.
std::optional<Scalar> number_param(const Operand& o, Dtype dtype, const Device& device, Dtype compute);

Shape broadcast_shapes(const Shape& a, const Shape& b);  // RuntimeError when incompatible

TensorPtr binary(BinaryOp op, const Operand& a, const Operand& b);
TensorPtr unary(UnaryOp op, const TensorPtr& a);
// self.<op>_(other): the result is written into self (cast to its dtype, which the
// result type must be castable to; broadcast to its shape, which must not grow).
void binary_inplace(BinaryOp op, const TensorPtr& self, const Operand& other);
void unary_inplace(UnaryOp op, const TensorPtr& self);

// Records the autograd node of an elementwise op (elementwise_grad.cpp), when its
// inputs require grad.
void record_binary(BinaryOp op, const Operand& a, const Operand& b, const TensorPtr& out);
void record_unary(UnaryOp op, const TensorPtr& a, const TensorPtr& out);

// Shorthands for writing VJPs and compositions: ops::mul(a, b), ops::mul(a, 2.0), ops::exp(a).
#define LUCID_SHORTHAND(name, Fn, rule, operands)                                                         \
  inline TensorPtr name(const TensorPtr& a, const TensorPtr& b) { return binary(BinaryOp::Fn, {a, {}}, {b, {}}); } \
  inline TensorPtr name(const TensorPtr& a, const Scalar& b) { return binary(BinaryOp::Fn, {a, {}}, {nullptr, b}); }
LUCID_BINARY_OPS(LUCID_SHORTHAND)
#undef LUCID_SHORTHAND
#define LUCID_SHORTHAND(name, Fn, rule) \
  inline TensorPtr name(const TensorPtr& a) { return unary(UnaryOp::Fn, a); }
LUCID_UNARY_OPS(LUCID_SHORTHAND)
#undef LUCID_SHORTHAND

// The tensor an in-place op on self reads for `other`: other, or a copy of it when it
// shares self's bytes in another arrangement (a += a.t() must read the old values, not
// ones the loop already wrote).
TensorPtr read_apart(const TensorPtr& self, const TensorPtr& other);

// An in-place op made from an out-of-place one: self = f(self), checked (shape,
// dtype cast) and recorded like the table's in-place ops. `source` is the other
// tensor read (for the in-place checks); may be null.
void inplace_via(const char* name, const TensorPtr& self, const TensorPtr& source,
                 const std::function<TensorPtr(const TensorPtr&)>& f);
// The out= argument: `result` copied into `out`, which is resized when its shape
// differs; RuntimeError when the dtype cannot hold the result or autograd is involved.
// exact: out must have the result's dtype (torch's where, clamp, round(decimals=)).
void write_out(const char* name, const TensorPtr& out, const TensorPtr& result, bool exact = false);

const char* op_name(BinaryOp op);
const char* op_name(UnaryOp op);
// NotImplementedError "<op> is not implemented for dtype <d>" unless the op's functor
// computes in `compute` (elementwise_support.cpp): raised by the op, before its launch.
void check_supported(BinaryOp op, Dtype compute);
void check_supported(UnaryOp op, Dtype compute);

}  // namespace lucid::ops
