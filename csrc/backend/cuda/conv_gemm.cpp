// The im2col + GEMM convolutions (conv_gemm.h). Per group g (Cbg = Cb / groups input
// channels, Csg = Cs / groups output channels, K taps, L windows, rows = Cbg * K):
//   forward:    small[n, g] [Csg, L]  = w_g [Csg, rows] @ col[n, g] [rows, L]
//   transpose:  col[n, g] [rows, L]   = w_g^T @ small[n, g], then col2im into big[n]
//   weight:     gw_g [Csg, rows]     += small[n, g] @ col[n, g]^T, image after image
// The images of a chunk (the column buffer held to kColumnBytes) are one strided
// batch of the product, w_g read in place as a broadcast (stride 0) batch.
#include "backend/cuda/conv_gemm.h"

#include <algorithm>

#include "backend/cuda/im2col.h"
#include "ops/prims/linalg.h"

namespace lucid::cuda {

namespace {

constexpr int64_t kColumnBytes = int64_t(256) << 20;

struct Dims {
  int64_t n, cb, cs, groups, k, l, b, rows, csg;
};

Dims dims_of(int64_t n, int64_t cb, int64_t cs, const ops::ConvGeometry& g) {
  const int64_t k = g.kernel_numel();
  return {n, cb, cs, g.groups, k, g.small_numel(), g.big_numel(), cb / g.groups * k, cs / g.groups};
}

// Images per chunk: as many columns as kColumnBytes holds, at least one image's.
int64_t chunk_of(const Dims& d, size_t item) {
  const int64_t per_image = std::max<int64_t>(1, d.cb * d.k * d.l * int64_t(item));
  return std::clamp<int64_t>(kColumnBytes / per_image, 1, d.n);
}

// A view of t's storage with element strides and an element offset.
TensorPtr view(const TensorImpl& t, Shape shape, const Stride& elem_strides, int64_t elem_offset) {
  const int64_t item = int64_t(t.itemsize());
  Stride st;
  for (int64_t s : elem_strides) st.push_back(s * item);
  return TensorImpl::view_of(t, std::move(shape), std::move(st), t.storage_offset() + elem_offset * item);
}

// out = a @ x, or out += a @ x.
void product(const TensorPtr& out, const TensorPtr& a, const TensorPtr& x, bool accumulate, bool allow_tf32) {
  ops::Gemm p;
  p.allow_tf32 = allow_tf32;
  if (accumulate) p.beta = Scalar(int64_t(1));
  ops::launch(p, {out.get()}, {a.get(), x.get()});
}

std::byte* image(const TensorImpl& t, int64_t n, int64_t per_image) {
  return t.data_ptr() + n * per_image * int64_t(t.itemsize());
}

}  // namespace

void gemm_conv_forward(const TensorImpl& big, const TensorImpl& w, TensorImpl& small, const ops::ConvGeometry& g,
                       bool allow_tf32) {
  const Dims d = dims_of(big.shape()[0], big.shape()[1], small.shape()[1], g);
  const int device = small.device().index;
  const int64_t chunk = chunk_of(d, big.itemsize());
  TensorPtr col = TensorImpl::empty(Shape{chunk, d.cb * d.k, d.l}, big.dtype(), small.device());
  for (int64_t n0 = 0; n0 < d.n; n0 += chunk) {
    const int64_t nc = std::min(chunk, d.n - n0);
    launch_im2col(image(big, n0, d.cb * d.b), col->data_ptr(), big.dtype(), nc, d.cb, g, device);
    for (int64_t gi = 0; gi < d.groups; ++gi) {
      product(view(small, {nc, d.csg, d.l}, {d.cs * d.l, d.l, 1}, n0 * d.cs * d.l + gi * d.csg * d.l),
              view(w, {nc, d.csg, d.rows}, {0, d.rows, 1}, gi * d.csg * d.rows),
              view(*col, {nc, d.rows, d.l}, {d.cb * d.k * d.l, d.l, 1}, gi * d.rows * d.l), false, allow_tf32);
    }
  }
}

void gemm_conv_transpose(const TensorImpl& small, const TensorImpl& w, TensorImpl& big, const ops::ConvGeometry& g,
                         bool allow_tf32) {
  const Dims d = dims_of(small.shape()[0], big.shape()[1], small.shape()[1], g);
  const int device = big.device().index;
  const int64_t chunk = chunk_of(d, big.itemsize());
  TensorPtr col = TensorImpl::empty(Shape{chunk, d.cb * d.k, d.l}, big.dtype(), big.device());
  for (int64_t n0 = 0; n0 < d.n; n0 += chunk) {
    const int64_t nc = std::min(chunk, d.n - n0);
    for (int64_t gi = 0; gi < d.groups; ++gi) {
      product(view(*col, {nc, d.rows, d.l}, {d.cb * d.k * d.l, d.l, 1}, gi * d.rows * d.l),
              view(w, {nc, d.rows, d.csg}, {0, 1, d.rows}, gi * d.csg * d.rows),
              view(small, {nc, d.csg, d.l}, {d.cs * d.l, d.l, 1}, n0 * d.cs * d.l + gi * d.csg * d.l), false,
              allow_tf32);
    }
    launch_col2im(col->data_ptr(), image(big, n0, d.cb * d.b), big.dtype(), nc, d.cb, g, device);
  }
}

void gemm_conv_weight_grad(const TensorImpl& big, const TensorImpl& small, TensorImpl& gw,
                           const ops::ConvGeometry& g, bool allow_tf32) {
  const Dims d = dims_of(big.shape()[0], big.shape()[1], small.shape()[1], g);
  const int device = gw.device().index;
  const int64_t chunk = chunk_of(d, big.itemsize());
  TensorPtr col = TensorImpl::empty(Shape{chunk, d.cb * d.k, d.l}, big.dtype(), gw.device());
  for (int64_t n0 = 0; n0 < d.n; n0 += chunk) {
    const int64_t nc = std::min(chunk, d.n - n0);
    launch_im2col(image(big, n0, d.cb * d.b), col->data_ptr(), big.dtype(), nc, d.cb, g, device);
    for (int64_t i = 0; i < nc; ++i) {
      for (int64_t gi = 0; gi < d.groups; ++gi) {
        product(view(gw, {d.csg, d.rows}, {d.rows, 1}, gi * d.csg * d.rows),
                view(small, {d.csg, d.l}, {d.l, 1}, (n0 + i) * d.cs * d.l + gi * d.csg * d.l),
                view(*col, {d.l, d.rows}, {1, d.l}, i * d.cb * d.k * d.l + gi * d.rows * d.l), n0 + i > 0,
                allow_tf32);
      }
    }
  }
}

}  // namespace lucid::cuda
