// Elementwise ops beyond the table's one-functor ops: where, clamp, lerp,
// addcmul/addcdiv, add/sub with alpha, div with rounding_mode, round(decimals),
// logit(eps), nan_to_num, isclose/allclose/equal, result_type. Mostly
// compositions of table ops (so autograd comes with them); where and clamp have
// their own kernel / VJP (elementwise_extra.cpp).
#pragma once

#include <optional>
#include <string>

#include "ops/elementwise.h"

namespace lucid::ops {

// torch.where(cond, a, b): a and b tensors or numbers, promoted together; cond bool.
TensorPtr where(const TensorPtr& cond, const Operand& a, const Operand& b);
// torch.clamp: min/max tensors or numbers, at least one given; promotes like torch.
// one_sided: called as clamp_min / clamp_max (the node is named after them).
TensorPtr clamp(const TensorPtr& x, const std::optional<Operand>& min, const std::optional<Operand>& max,
                bool one_sided = false);
// F.hardtanh: clamp(x, min, max) whose gradient passes strictly inside the bounds and
// at a NaN (torch's hardtanh_backward; clamp's stops at a NaN).
TensorPtr hardtanh(const TensorPtr& x, const Scalar& min, const Scalar& max);
// add(a, b, alpha=) / sub(a, b, alpha=): a + alpha * b (op is Add or Sub).
TensorPtr add_alpha(BinaryOp op, const Operand& a, const Operand& b, const Scalar& alpha);
// self.add_(other, alpha=) / self.sub_(other, alpha=).
void add_alpha_inplace(BinaryOp op, const TensorPtr& self, const Operand& other, const Scalar& alpha);
// alpha * b, after torch's checks: what add_alpha adds to (or takes from) a.
Operand alpha_operand(BinaryOp op, const Operand& a, const Operand& b, const Scalar& alpha);
// Checks alpha against the result dtype of a and b (torch's alpha_check).
void check_alpha(const Operand& a, const Operand& b, const Scalar& alpha);
// div(a, b, rounding_mode=None|"trunc"|"floor"): the table op to use.
BinaryOp div_op(const std::optional<std::string>& rounding_mode);
TensorPtr lerp(const TensorPtr& start, const TensorPtr& end, const Operand& weight);
TensorPtr addcmul(const TensorPtr& input, const TensorPtr& t1, const TensorPtr& t2, const Scalar& value);
TensorPtr addcdiv(const TensorPtr& input, const TensorPtr& t1, const TensorPtr& t2, const Scalar& value);
TensorPtr round_decimals(const TensorPtr& x, int64_t decimals);
TensorPtr logit(const TensorPtr& x, std::optional<double> eps);
TensorPtr nan_to_num(const TensorPtr& x, std::optional<double> nan, std::optional<double> posinf,
                     std::optional<double> neginf);
TensorPtr isclose(const TensorPtr& a, const TensorPtr& b, double rtol, double atol, bool equal_nan);
bool allclose(const TensorPtr& a, const TensorPtr& b, double rtol, double atol, bool equal_nan);
bool equal(const TensorPtr& a, const TensorPtr& b);
// a * b for Python numbers, in the higher of their kinds (bool < int < float < complex).
Scalar scalar_mul(const Scalar& a, const Scalar& b);
// torch.result_type over tensors and numbers.
Dtype result_type(std::initializer_list<const Operand*> operands);

}  // namespace lucid::ops
