// CPU kernels of the spatial primitives (ops/prims/spatial.h): adapters to the loops
// of backend/cpu/conv_kernels.h (convolution, unfold/fold, pooling), resample.h and
// grid_sample.h. Every tensor arrives contiguous, in the dtype the kernel computes in.
#include <array>

#include "backend/cpu/conv_kernels.h"
#include "backend/cpu/grid_sample.h"
#include "backend/cpu/register.h"
#include "backend/cpu/resample.h"
#include "core/error.h"
#include "ops/prims/spatial.h"

namespace lucid::cpu {

namespace {

using ops::Inputs;
using ops::Outputs;

// A contiguous host tensor's elements as T* (T matching its dtype); null for an
// absent tensor (a convolution without bias).
template <typename T>
T* data(const TensorImpl* t) {
  return t ? reinterpret_cast<T*>(t->host_ptr()) : nullptr;
}

// Runs fn(float{}) or fn(double{}) for a float32 or float64 tensor.
template <typename Fn>
void dispatch_float(Dtype d, Fn&& fn) {
  if (d == Dtype::F64) fn(double{});
  else fn(float{});
}

// ---- convolution ----------------------------------------------------------------------

ConvGeom conv_geom(const ops::ConvGeometry& g) {
  ConvGeom c;
  for (int d = 0; d < 3; ++d) {
    c.big[d] = g.big[d];
    c.small[d] = g.small[d];
    c.k[d] = g.k[d];
    c.stride[d] = g.stride[d];
    c.pad[d] = g.pad[d];
    c.dil[d] = g.dil[d];
  }
  c.groups = g.groups;
  return c;
}

const TensorImpl* bias_of(Inputs ins) { return ins.size() > 2 ? ins[2] : nullptr; }

void conv_forward_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const ConvGeom g = conv_geom(ops::prim_cast<ops::ConvForward>(p).geom);
  const TensorImpl *big = ins[0], *w = ins[1], *bias = bias_of(ins);
  TensorImpl* small = outs[0];
  dispatch_float(small->dtype(), [&](auto tag) {
    using T = decltype(tag);
    conv_forward<T>(data<T>(big), data<T>(w), data<T>(bias), data<T>(small), big->shape()[0], big->shape()[1],
                    w->shape()[0], g);
  });
}

void conv_transpose_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const ConvGeom g = conv_geom(ops::prim_cast<ops::ConvTranspose>(p).geom);
  const TensorImpl *small = ins[0], *w = ins[1], *bias = bias_of(ins);
  TensorImpl* big = outs[0];
  dispatch_float(big->dtype(), [&](auto tag) {
    using T = decltype(tag);
    conv_transpose_forward<T>(data<T>(small), data<T>(w), data<T>(bias), data<T>(big), small->shape()[0],
                              big->shape()[1], small->shape()[1], g);
  });
}

void conv_weight_grad_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const ConvGeom g = conv_geom(ops::prim_cast<ops::ConvWeightGrad>(p).geom);
  const TensorImpl *big = ins[0], *small = ins[1];
  TensorImpl* gw = outs[0];
  dispatch_float(gw->dtype(), [&](auto tag) {
    using T = decltype(tag);
    conv_weight_grad<T>(data<T>(big), data<T>(small), data<T>(gw), big->shape()[0], big->shape()[1],
                        small->shape()[1], g);
  });
}

// One image at a time: x [N, C, *big] -> col [N, C * K, L].
void im2col_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const ConvGeom g = conv_geom(ops::prim_cast<ops::Im2Col>(p).geom);
  const TensorImpl* x = ins[0];
  TensorImpl* col = outs[0];
  const int64_t n = x->shape()[0], c = x->shape()[1];
  const int64_t rows = c * g.kernel_numel(), l = g.small_numel(), b = g.big_numel();
  dispatch_float(col->dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) im2col<T>(data<T>(x) + i * c * b, data<T>(col) + i * rows * l, c, g);
  });
}

// One image at a time: col [N, C * K, L] -> img [N, C, *big], overwritten.
void col2im_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const ConvGeom g = conv_geom(ops::prim_cast<ops::Col2Im>(p).geom);
  const TensorImpl* col = ins[0];
  TensorImpl* img = outs[0];
  const int64_t n = col->shape()[0], c = img->shape()[1];
  const int64_t rows = c * g.kernel_numel(), l = g.small_numel(), b = g.big_numel();
  dispatch_float(img->dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i)
      col2im<T>(data<T>(col) + i * rows * l, data<T>(img) + i * c * b, c, g, /*overwrite=*/true);
  });
}

// ---- pooling ----------------------------------------------------------------------------

std::array<PoolDim, 3> pool_dims(const ops::PoolDims& dims) {
  std::array<PoolDim, 3> r;
  for (size_t d = 0; d < 3; ++d) {
    const ops::PoolWindows& w = dims[d];
    r[d] = {w.in, w.out, w.step, w.start, w.len, w.size};
  }
  return r;
}

// The number of [*in] images in t, an input-shaped [*lead, *in] tensor.
int64_t images(const TensorImpl& t, const std::array<PoolDim, 3>& dims) {
  return t.numel() / (dims[0].in * dims[1].in * dims[2].in);  // (every dim's in >= 1)
}

void max_pool_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const std::array<PoolDim, 3> dims = pool_dims(ops::prim_cast<ops::MaxPool>(p).dims);
  const TensorImpl* x = ins[0];
  TensorImpl *out = outs[0], *idx = outs[1];
  const int64_t nc = images(*x, dims);
  if (x->dtype() == Dtype::I64) {
    max_pool<int64_t>(data<int64_t>(x), data<int64_t>(out), data<int64_t>(idx), nc, dims.data());
    return;
  }
  dispatch_float(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    max_pool<T>(data<T>(x), data<T>(out), data<int64_t>(idx), nc, dims.data());
  });
}

void avg_pool_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::AvgPool>(prim);
  const std::array<PoolDim, 3> dims = pool_dims(p.dims);
  const TensorImpl* x = ins[0];
  TensorImpl* out = outs[0];
  const int64_t nc = images(p.adjoint ? *out : *x, dims);
  dispatch_float(out->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (p.adjoint) avg_pool_adjoint<T>(data<T>(x), data<T>(out), nc, dims.data(), p.divisor);
    else avg_pool<T>(data<T>(x), data<T>(out), nc, dims.data(), p.divisor);
  });
}

// ---- resampling -------------------------------------------------------------------------

// Checks every tap index before anything is written (the message is the op's own).
void resample_taps_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::ResampleTaps>(prim);
  const TensorImpl *src = ins[0], *index = ins[1], *weight = ins[2];
  TensorImpl* out = outs[0];
  const int64_t in = (p.adjoint ? out : src)->shape()[p.dim];
  const int64_t* ip = data<const int64_t>(index);
  for (int64_t j = 0, n = index->numel(); j < n; ++j)
    LUCID_CHECK(ip[j] >= 0 && ip[j] < in, IndexError, p.name(), "(): tap index ", ip[j], " is out of range for size ",
                in);
  if (out->numel() == 0 || src->numel() == 0) return;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < src->ndim(); ++d) {
    if (d < p.dim) outer *= src->shape()[d];
    if (d > p.dim) inner *= src->shape()[d];
  }
  const int64_t k = index->shape()[0], osz = index->shape()[1];
  dispatch_float(src->dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = data<T>(out);
    const T *x = data<const T>(src), *w = data<const T>(weight);
    if (p.adjoint) taps_adjoint<T>(o, x, ip, w, outer, in, osz, inner, k);
    else taps_forward<T>(o, x, ip, w, outer, in, osz, inner, k);
  });
}

// ---- grid_sample ----------------------------------------------------------------------------

using backend::grid_args;

void grid_sample_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const TensorImpl *input = ins[0], *grid = ins[1];
  const GridSampleArgs a = grid_args(ops::prim_cast<ops::GridSample>(p).options, *input, *grid);
  dispatch_float(input->dtype(), [&](auto tag) {
    using T = decltype(tag);
    grid_sample2d_forward<T>(data<T>(outs[0]), data<const T>(input), data<const T>(grid), a);
  });
}

void grid_sample_backward_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const TensorImpl *grad_out = ins[0], *input = ins[1], *grid = ins[2];
  const GridSampleArgs a = grid_args(ops::prim_cast<ops::GridSampleBackward>(p).options, *input, *grid);
  dispatch_float(input->dtype(), [&](auto tag) {
    using T = decltype(tag);
    grid_sample2d_backward<T>(data<T>(outs[0]), data<T>(outs[1]), data<const T>(grad_out), data<const T>(input),
                              data<const T>(grid), a);
  });
}

}  // namespace

void register_spatial_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::ConvForward, DeviceType::CPU, conv_forward_kernel);
  ops::register_kernel(Prim::ConvTranspose, DeviceType::CPU, conv_transpose_kernel);
  ops::register_kernel(Prim::ConvWeightGrad, DeviceType::CPU, conv_weight_grad_kernel);
  ops::register_kernel(Prim::Im2Col, DeviceType::CPU, im2col_kernel);
  ops::register_kernel(Prim::Col2Im, DeviceType::CPU, col2im_kernel);
  ops::register_kernel(Prim::MaxPool, DeviceType::CPU, max_pool_kernel);
  ops::register_kernel(Prim::AvgPool, DeviceType::CPU, avg_pool_kernel);
  ops::register_kernel(Prim::ResampleTaps, DeviceType::CPU, resample_taps_kernel);
  ops::register_kernel(Prim::GridSample, DeviceType::CPU, grid_sample_kernel);
  ops::register_kernel(Prim::GridSampleBackward, DeviceType::CPU, grid_sample_backward_kernel);
}

}  // namespace lucid::cpu
