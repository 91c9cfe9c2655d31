// The CUDA kernels of the binary ops in unit Logs (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void binary_logs(ops::BinaryOp op, const EwCall& call) { run_binary_unit<backend::Unit::Logs>("binary_logs", op, call); }

}  // namespace lucid::cuda
