// The kernel table's one error path (Note [The compute seam]): a primitive without a
// kernel for the tensors' device raises NotImplementedError naming the op, from launch.
// Every primitive has kernels on every device of a full build, so the test takes one
// out and puts the backend's back.
#include <gtest/gtest.h>

#include <string>

#include "backend/cpu/register.h"
#include "ops/prims/shape.h"

using namespace lucid;

TEST(Launch, AMissingKernelNamesTheOp) {
  TensorPtr x = TensorImpl::empty({3}, Dtype::F32, Device::cpu());
  TensorPtr out = TensorImpl::empty({3}, Dtype::F32, Device::cpu());
  ops::Flip flip;
  flip.dims = {0};
  ASSERT_TRUE(ops::has_kernel(ops::Prim::Flip, DeviceType::CPU));
  ops::register_kernel(ops::Prim::Flip, DeviceType::CPU, nullptr);
  std::string message;
  try {
    ops::launch(flip, {out.get()}, {x.get()});
  } catch (const NotImplementedError& e) {
    message = e.what();
  }
  cpu::register_kernels();
  EXPECT_NE(message.find("no CPU kernel for flip"), std::string::npos) << message;
  ASSERT_TRUE(ops::has_kernel(ops::Prim::Flip, DeviceType::CPU));
  ops::launch(flip, {out.get()}, {x.get()});  // and the table works again
}
