// The CUDA kernels of the Special unit's binary ops (backend/common/elementwise_units.h):
// the Hurwitz zeta (ops/special_math.h, in double), gcd, lcm and nextafter.
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void binary_special(ops::BinaryOp op, const EwCall& call) {
  run_binary_unit<backend::Unit::Special>("binary_special", op, call);
}

}  // namespace lucid::cuda
