// The CUDA kernel of the Pointwise primitive (Note [One rounding], ops/prims/elementwise.h):
// add with alpha, lerp, addcmul, addcdiv, in the opmath type, over the elementwise
// loops' planned calls. Built without contraction (CMakeLists.txt): the functors'
// fused multiply-adds are written out, as torch's kernels have them.
#include "backend/cuda/elementwise_launch.cuh"
#include "ops/pointwise_functors.h"
#include "ops/prims/elementwise.h"

namespace lucid::cuda {

namespace {

template <typename Op, typename T>
struct PointwiseDev {
  opmath_t<T> value;
  template <typename C> __device__ T operator()(C x, C y, C z) const { return T(Op()(x, y, z, value)); }
};

template <typename Op, typename T>
void launch(const ops::Pointwise& p, const EwCall& call) {
  launch_elementwise<T, T, 3>(call, PointwiseDev<Op, T>{opmath_t<T>(p.value)});
}

template <typename Op>
void run(const ops::Pointwise& p, const EwCall& call) {
  switch (call.compute) {
    case Dtype::F16: return launch<Op, Half>(p, call);
    case Dtype::BF16: return launch<Op, BFloat16>(p, call);
    case Dtype::F32: return launch<Op, float>(p, call);
    case Dtype::F64: return launch<Op, double>(p, call);
    default: fail<RuntimeError>("internal: ", p.name(), " of dtype ", dtype_name(call.compute));
  }
}

}  // namespace

void pointwise(const ops::Pointwise& p, const EwCall& call) {
  namespace pw = ops::pointwise;
  switch (p.op) {
    case ops::PointwiseOp::AddScaled: return run<pw::AddScaled>(p, call);
    case ops::PointwiseOp::Lerp: return run<pw::Lerp>(p, call);
    case ops::PointwiseOp::Addcmul: return run<pw::Addcmul>(p, call);
    case ops::PointwiseOp::Addcdiv: return run<pw::Addcdiv>(p, call);
  }
}

}  // namespace lucid::cuda
