// The C++ tests' main: fills the kernel table as `import lucid` does, then runs the tests.
#include <gtest/gtest.h>

#include "backend/cpu/register.h"
#ifdef LUCID_WITH_CUDA
#include "backend/cuda/register.h"
#endif

int main(int argc, char** argv) {
  lucid::cpu::register_kernels();
#ifdef LUCID_WITH_CUDA
  lucid::cuda::register_runtime();
  lucid::cuda::register_kernels();
#endif
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
