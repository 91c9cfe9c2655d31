// The CUDA kernels of the special functions (unit Special, backend/common/
// elementwise_units.h; ops/special_math.h), computed in double, and of gcd, lcm and
// nextafter.
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void unary_special(ops::UnaryOp op, const EwCall& call) {
  run_unary_unit<backend::Unit::Special>("unary_special", op, call);
}

void binary_special(ops::BinaryOp op, const EwCall& call) {
  run_binary_unit<backend::Unit::Special>("binary_special", op, call);
}

}  // namespace lucid::cuda
