// The CUDA kernels of the Bessel unit (backend/common/elementwise_units.h): J0, J1,
// Y0, Y1, K0, K1, the scaled K0 and K1 and Airy's Ai of torch.special (ops/special_math.h),
// computed in double.
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void unary_bessel(ops::UnaryOp op, const EwCall& call) {
  run_unary_unit<backend::Unit::Bessel>("unary_bessel", op, call);
}

}  // namespace lucid::cuda
