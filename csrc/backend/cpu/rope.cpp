// The CPU kernel of lucid.fast.rope (ops/prims/rope.h): rows of D features in parallel.
#include <algorithm>

#include "backend/cpu/register.h"
#include "core/error.h"
#include "core/parallel.h"
#include "ops/prims/rope.h"

namespace lucid::cpu {

namespace {

template <typename T>
void rope_rows(const ops::RopeParams& p, const T* x, T* y, int64_t rows, int64_t seq, int64_t features) {
  const int64_t grain = std::max<int64_t>(1, 16384 / features);
  parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* in = x + r * features;
      T* out = y + r * features;
      for (int64_t pair = 0; pair < p.dims / 2; ++pair) ops::rope_pair(p, in, out, r % seq, pair);
      for (int64_t j = p.dims; j < features; ++j) out[j] = in[j];
    }
  });
}

void rope_kernel(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const ops::RopeParams& p = ops::prim_cast<ops::Rope>(prim).p;
  const TensorImpl& x = *ins[0];
  TensorImpl& y = *outs[0];
  const int64_t features = x.shape().back(), seq = x.shape()[x.ndim() - 2], rows = x.numel() / features;
  auto run = [&]<typename T>() {
    rope_rows(p, reinterpret_cast<const T*>(x.host_ptr()), reinterpret_cast<T*>(y.host_ptr()), rows, seq, features);
  };
  switch (x.dtype()) {
    case Dtype::F16: return run.operator()<Half>();
    case Dtype::BF16: return run.operator()<BFloat16>();
    case Dtype::F32: return run.operator()<float>();
    case Dtype::F64: return run.operator()<double>();
    default: fail<RuntimeError>("internal: fast.rope of ", dtype_name(x.dtype()));
  }
}

}  // namespace

void register_rope_kernels() { ops::register_kernel(ops::Prim::Rope, DeviceType::CPU, rope_kernel); }

}  // namespace lucid::cpu
