#include "ops/promotion.h"

namespace lucid::ops {

namespace {

void merge(std::optional<Dtype>& slot, Dtype d) { slot = slot ? promote_types(*slot, d) : d; }

// c10's toComplexType: the complex type of a float type's precision (float16 and
// bfloat16, which have none in lucid, take complex64's).
Dtype complex_of(Dtype d) { return d == Dtype::F64 ? Dtype::C128 : Dtype::C64; }

// c10's combine_categories: `higher` is the dtype of the higher priority class.
std::optional<Dtype> combine(std::optional<Dtype> higher, std::optional<Dtype> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_complex(*higher)) return higher;
  if (is_complex(*lower)) return is_floating(*higher) ? complex_of(*higher) : *lower;
  if (is_floating(*higher)) return higher;
  if (*higher == Dtype::Bool || is_floating(*lower)) return promote_types(*higher, *lower);
  return higher;
}

}  // namespace

void ResultType::add_tensor(Dtype d, bool zero_dim) { merge(zero_dim ? zero_ : dim_, d); }

void ResultType::add_scalar(DtypeKind kind) {
  switch (kind) {
    case DtypeKind::Bool: merge(wrapped_, Dtype::Bool); break;
    case DtypeKind::Integer: merge(wrapped_, Dtype::I64); break;
    case DtypeKind::Floating: merge(wrapped_, default_float_); break;
    case DtypeKind::Complex: merge(wrapped_, complex_of(default_float_)); break;
  }
}

Dtype ResultType::result() const {
  return combine(dim_, combine(zero_, wrapped_)).value_or(default_float_);
}

}  // namespace lucid::ops

namespace lucid::ops {

bool can_cast(Dtype from, Dtype to) {
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating(from) && is_integral(to, true)) return false;
  if (from != Dtype::Bool && to == Dtype::Bool) return false;
  return true;
}

}  // namespace lucid::ops
