// The CustomKernel primitive (ops/prims/custom_kernel.h): a user's compiled CUDA kernel
// launched on the device's stream with its parameters laid out as the generated
// signature declares them (python/lucid/fast.py writes that signature).
#include <cstring>
#include <vector>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/register.h"
#include "backend/cuda/stream.h"
#include "ops/prims/custom_kernel.h"

namespace lucid::cuda {

namespace {

using ops::CustomKernelParam;

// A shape or strides parameter: the source's `struct lucid_dims` (fast.py).
struct Dims {
  long long v[ops::kCustomKernelMaxDims];
};

void custom_kernel(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<ops::CustomKernel>(prim);
  auto tensor = [&](uint8_t i) -> const TensorImpl* {
    LUCID_CHECK(i < ins.size() + outs.size(), RuntimeError, "internal: fast.cuda_kernel parameter of tensor ", int(i),
                " with ", ins.size() + outs.size(), " tensors");
    return i < ins.size() ? ins[i] : outs[i - ins.size()];
  };
  // Each parameter's value, kept in place until the launch has copied them.
  std::vector<void*> pointers(p.params.size());
  std::vector<Dims> dims(p.params.size());
  std::vector<int> ranks(p.params.size());
  std::vector<void*> args(p.params.size());
  for (size_t k = 0; k < p.params.size(); ++k) {
    const TensorImpl* t = tensor(p.params[k].tensor);
    switch (p.params[k].kind) {
      case CustomKernelParam::Pointer:
        pointers[k] = const_cast<void*>(static_cast<const void*>(t->data_ptr()));
        args[k] = &pointers[k];
        break;
      case CustomKernelParam::Shape:
      case CustomKernelParam::Strides: {
        LUCID_CHECK(t->ndim() <= ops::kCustomKernelMaxDims, ValueError, "fast.cuda_kernel: a shape or strides "
                    "parameter holds up to ", ops::kCustomKernelMaxDims, " dims, got a ", t->ndim(), "-d tensor");
        std::memset(&dims[k], 0, sizeof(Dims));
        const int64_t itemsize = int64_t(dtype_size(t->dtype()));  // (lucid's strides are in bytes, MLX's in elements)
        for (int64_t d = 0; d < t->ndim(); ++d)
          dims[k].v[d] = p.params[k].kind == CustomKernelParam::Shape ? t->shape()[d] : t->stride()[d] / itemsize;
        args[k] = &dims[k];
        break;
      }
      case CustomKernelParam::Ndim:
        ranks[k] = int(t->ndim());
        args[k] = &ranks[k];
        break;
    }
  }
  const int device = (outs.empty() ? ins[0] : outs[0])->device().index;
  DeviceGuard guard(device);
  if (p.shared_memory > 48 * 1024)  // beyond the default: the kernel must opt in
    LUCID_CUDA_CHECK(cudaFuncSetAttribute(p.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(p.shared_memory)));
  LUCID_CUDA_CHECK(cudaLaunchKernel(p.kernel, dim3(p.grid[0], p.grid[1], p.grid[2]),
                                    dim3(p.block[0], p.block[1], p.block[2]), args.data(), p.shared_memory,
                                    stream(device)));
}

}  // namespace

void register_custom_kernels() { ops::register_kernel(ops::Prim::CustomKernel, DeviceType::GPU, custom_kernel); }

}  // namespace lucid::cuda
