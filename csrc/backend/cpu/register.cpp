#include "backend/cpu/register.h"

namespace lucid::cpu {

void register_kernels() {
  register_elementwise_kernels();
  register_norm_kernels();
  register_seq_kernels();
  register_optim_kernels();
  register_random_kernels();
}

}  // namespace lucid::cpu
