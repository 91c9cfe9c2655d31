// Automatic mixed precision: lucid.autocast(device_type, dtype), as torch.autocast.
//
// Note [Autocast]
// The state is per thread and per device type (CPU, GPU): enabled, and the low dtype
// (float16 or bfloat16). Only the Python-facing entry points consult it (the bindings
// of the ops below, and lucid.nn.functional's losses and norms through
// _C._autocast_cast), never the op functions themselves: a backward pass, or an op
// built from other ops, is not cast a second time. Each op name has a policy per
// device type, PyTorch's lists (torch/csrc/... autocast_mode.cpp):
//   Lower    products and convolutions: floating inputs other than float64 are cast
//            to the low dtype (torch's lower_precision_fp);
//   Float32  ops that need float32's range or accuracy (softmax on the GPU, the
//            losses, the norms): float16/bfloat16 inputs are cast up (torch's fp32);
//   Banned   binary_cross_entropy on the GPU, unsafe in float16: it raises;
// and every other op runs in its inputs' dtypes with the usual promotion. The casts
// are ordinary differentiable copies (ToCopyBackward0), so gradients flow back to the
// float32 parameters in float32.
#pragma once

#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/tensor_impl.h"

namespace lucid::ops::autocast {

struct Mode {
  bool enabled = false;
  Dtype dtype = Dtype::BF16;
};

Mode mode(DeviceType device);
void set_mode(DeviceType device, Mode mode);
// True when autocast is on for some device type: the one check the bindings make on
// their fast path.
bool any_enabled();

enum class Policy : uint8_t { None, Lower, Float32, Banned };
// The policy of op `name` (a lucid/torch function name) for tensors on `device`.
Policy policy(const char* name, DeviceType device);

// `tensors` as op `name` sees them under the current autocast state (null entries
// stay null; tensors that need no cast are returned as they are). Banned raises.
std::vector<TensorPtr> cast(const char* name, std::vector<TensorPtr> tensors);
TensorPtr cast(const char* name, const TensorPtr& t);

}  // namespace lucid::ops::autocast
