// The CUDA kernels of the special functions (unit Special, backend/common/
// elementwise_units.h; ops/special_math.h), computed in double. The binary ops of
// the unit (zeta, gcd, lcm, nextafter) are in special_binary.cu: one unit took ~27 s.
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void unary_special(ops::UnaryOp op, const EwCall& call) {
  run_unary_unit<backend::Unit::Special>("unary_special", op, call);
}

}  // namespace lucid::cuda
