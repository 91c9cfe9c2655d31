// Convolution as three differentiable ops over the im2col + GEMM kernels, each one
// launch of its primitive (ops/prims/spatial.h):
//   conv_raw   (big -> small),  conv_transpose_raw (small -> big),
//   weight_raw (big, small -> weight gradient).
// Each one's VJP is written with the other two, so gradients of gradients (double
// backward) are themselves convolutions:
//   conv:       d big = convT(g, w),  d w = weight(big, g),  d bias = sum(g)
//   convT:      d small = conv(g, w), d w = weight(g, small), d bias = sum(g)
//   weight:     d big = convT(small, g), d small = conv(big, g)
//
// Note [Channels-last convolutions]
// As torch's: a convolution whose image or weight is channels-last (a 4-d or 5-d
// tensor stored as [N, *spatial, C], torch's suggest_memory_format) gives a
// channels-last result, and its gradients (image and weight) keep that layout. On the
// GPU the primitives read and write it as it is: cuDNN's tensor-core kernels work in
// that layout, so a channels-last model runs its convolutions without a transpose. The
// CPU's kernels work on contiguous copies, and the result is laid out afterwards.
#include "ops/conv.h"

#include <atomic>

#include "autograd/record.h"
#include "core/error.h"
#include "ops/conv_common.h"
#include "ops/elementwise.h"
#include "ops/linalg.h"
#include "ops/prims/spatial.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {
std::atomic<bool> g_conv_allow_tf32{false};
std::atomic<bool> g_conv_deterministic{false};
}  // namespace

void set_conv_allow_tf32(bool allow) { g_conv_allow_tf32.store(allow, std::memory_order_relaxed); }
bool conv_allow_tf32() { return g_conv_allow_tf32.load(std::memory_order_relaxed); }
void set_conv_deterministic(bool on) { g_conv_deterministic.store(on, std::memory_order_relaxed); }
bool conv_deterministic() { return g_conv_deterministic.load(std::memory_order_relaxed); }


using autograd::Grads;

namespace {

struct Geo {
  ConvGeometry g;
  int nsp = 2;
};

Shape image_shape(int64_t n, int64_t c, const std::array<int64_t, 3>& sizes3, int nsp) {
  Shape s{n, c};
  for (int d = 3 - nsp; d < 3; ++d) s.push_back(sizes3[d]);
  return s;
}

std::vector<int64_t> sum_dims(int nsp) {
  std::vector<int64_t> d{0};
  for (int i = 0; i < nsp; ++i) d.push_back(2 + i);
  return d;
}

struct ImageLayout;
// (layout: the forward's, for a gradient; by default decided from the operands)
TensorPtr conv_raw(const TensorPtr& big, const TensorPtr& w, const TensorPtr& bias, const Geo& G,
                   const ImageLayout* layout = nullptr);
TensorPtr conv_transpose_raw(const TensorPtr& small, const TensorPtr& w, const TensorPtr& bias, const Geo& G,
                             const ImageLayout* layout = nullptr);
TensorPtr weight_raw(const TensorPtr& big, const TensorPtr& small, const Geo& G, const ImageLayout* layout = nullptr);

bool wants(const Node& n, size_t i) { return i < n.next_edges.size() && n.next_edges[i].valid(); }

// Whether t's strides are channels-last ones for its shape (size-1 dims may have any).
bool channels_last_dense(const TensorImpl& t) {
  const int64_t nd = t.ndim();
  if (nd != 4 && nd != 5) return false;
  int64_t expected = int64_t(t.itemsize());
  std::vector<int64_t> order{1};  // innermost first: C, then the spatial dims from the last, then N
  for (int64_t d = nd - 1; d >= 2; --d) order.push_back(d);
  order.push_back(0);
  for (int64_t d : order) {
    if (t.shape()[d] == 1) continue;
    if (t.stride()[d] != expected) return false;
    expected *= t.shape()[d];
  }
  return true;
}

// torch's suggest_memory_format: channels-last, and not also plainly contiguous.
bool channels_last(const TensorImpl& t) { return !t.is_contiguous() && channels_last_dense(t); }

// The byte strides of a channels-last tensor of `shape`.
Stride channels_last_strides(const Shape& shape, int64_t itemsize) {
  const int64_t nd = int64_t(shape.size());
  Stride st(shape.size());
  int64_t next = itemsize;
  st[1] = next;
  next *= shape[1];
  for (int64_t d = nd - 1; d >= 2; --d) {
    st[d] = next;
    next *= shape[d];
  }
  st[0] = next;
  return st;
}

// How a convolution lays out its result and its primitive's operands.
struct ImageLayout {
  bool channels_last = false;  // the result (and the gradients) are channels-last
  bool native = false;         // ... and the primitive reads and writes that layout (the GPU)
};

ImageLayout layout_of(const TensorImpl& image, const TensorImpl& other) {
  ImageLayout l;
  // (torch's GPU rule keeps float64 contiguous: cuDNN has no channels-last double kernels)
  const bool gpu_double = image.device().is_gpu() && image.dtype() == Dtype::F64;
  l.channels_last = (channels_last(image) || channels_last(other)) && !gpu_double;
  l.native = l.channels_last && image.device().is_gpu();
  return l;
}

// t as the primitive reads it: dtype cd, contiguous or (native) channels-last.
TensorPtr operand(const TensorPtr& t, Dtype cd, ImageLayout l) {
  if (!l.native) return contiguous_as(t, cd);
  if (t->dtype() == cd && channels_last_dense(*t)) return t;
  TensorPtr out = TensorImpl::empty_strided(t->shape(), channels_last_strides(t->shape(), int64_t(dtype_size(cd))),
                                            cd, t->device());
  out->copy_from(*t);
  return out;
}

// The primitive's output of `shape`.
TensorPtr empty_image(const Shape& shape, Dtype cd, Device device, ImageLayout l) {
  if (!l.native) return TensorImpl::empty(shape, cd, device);
  return TensorImpl::empty_strided(shape, channels_last_strides(shape, int64_t(dtype_size(cd))), cd, device);
}

// The primitive's output `out` as the op returns it: dtype dt, laid out as l says.
TensorPtr finish(TensorPtr out, Dtype dt, ImageLayout l) {
  if (out->dtype() != dt) out = out->clone(dt, std::nullopt, /*preserve_layout=*/true);
  if (l.channels_last && !channels_last_dense(*out)) {
    ImageLayout native = l;
    native.native = true;
    out = operand(out, dt, native);
  }
  return out;
}

// Launches a convolution primitive on (x, w) and the bias when there is one.
void launch_conv(const Primitive& p, const TensorPtr& out, const TensorPtr& x, const TensorPtr& w,
                 const TensorPtr& bias) {
  if (bias) launch(p, {out.get()}, {x.get(), w.get(), bias.get()});
  else launch(p, {out.get()}, {x.get(), w.get()});
}

TensorPtr conv_raw(const TensorPtr& big, const TensorPtr& w, const TensorPtr& bias, const Geo& G,
                   const ImageLayout* layout) {
  const Dtype dt = big->dtype(), cd = conv_product_dtype("conv", dt, big->device());
  const int64_t N = big->shape()[0], Cs = w->shape()[0];
  const ImageLayout l = layout ? *layout : layout_of(*big, *w);
  TensorPtr x = operand(big, cd, l), wc = operand(w, cd, l), bc = bias ? contiguous_as(bias, cd) : nullptr;
  TensorPtr out = empty_image(image_shape(N, Cs, G.g.small, G.nsp), cd, big->device(), l);
  ConvForward p;
  p.geom = G.g;
  p.allow_tf32 = conv_allow_tf32();
  p.deterministic = conv_deterministic();
  launch_conv(p, out, x, wc, bc);
  out = finish(out, dt, l);
  if (autograd::needs_grad({&big, &w, &bias})) {
    auto node = autograd::record("ConvolutionBackward0", {big, w, bias}, {out}, [G, l](const Node& n, const Grads& g) {
      TensorPtr b = n.saved(0), wt = n.saved(1);
      // (one copy of a broadcast or strided gradient in the primitive's layout, shared by both products)
      TensorPtr gc = wants(n, 0) && wants(n, 1) ? operand(g[0], g[0]->dtype(), l) : g[0];
      return Grads{wants(n, 0) ? conv_transpose_raw(gc, wt, nullptr, G, &l) : nullptr,
                   wants(n, 1) ? weight_raw(b, gc, G, &l) : nullptr,
                   wants(n, 2) ? sum(g[0], sum_dims(G.nsp), false, std::nullopt) : nullptr};
    });
    node->save(big);
    node->save(w);
  }
  return out;
}

TensorPtr conv_transpose_raw(const TensorPtr& small, const TensorPtr& w, const TensorPtr& bias, const Geo& G,
                             const ImageLayout* layout) {
  const Dtype dt = small->dtype(), cd = conv_product_dtype("conv_transpose", dt, small->device());
  const int64_t N = small->shape()[0], Cb = w->shape()[1] * G.g.groups;
  const ImageLayout l = layout ? *layout : layout_of(*small, *w);
  TensorPtr x = operand(small, cd, l), wc = operand(w, cd, l), bc = bias ? contiguous_as(bias, cd) : nullptr;
  TensorPtr out = empty_image(image_shape(N, Cb, G.g.big, G.nsp), cd, small->device(), l);
  ConvTranspose p;
  p.geom = G.g;
  p.allow_tf32 = conv_allow_tf32();
  p.deterministic = conv_deterministic();
  launch_conv(p, out, x, wc, bc);
  out = finish(out, dt, l);
  if (autograd::needs_grad({&small, &w, &bias})) {
    auto node = autograd::record("ConvolutionBackward0", {small, w, bias}, {out}, [G, l](const Node& n, const Grads& g) {
      TensorPtr s = n.saved(0), wt = n.saved(1);
      TensorPtr gc = wants(n, 0) && wants(n, 1) ? operand(g[0], g[0]->dtype(), l) : g[0];
      return Grads{wants(n, 0) ? conv_raw(gc, wt, nullptr, G, &l) : nullptr,
                   wants(n, 1) ? weight_raw(gc, s, G, &l) : nullptr,
                   wants(n, 2) ? sum(g[0], sum_dims(G.nsp), false, std::nullopt) : nullptr};
    });
    node->save(small);
    node->save(w);
  }
  return out;
}

TensorPtr weight_raw(const TensorPtr& big, const TensorPtr& small, const Geo& G, const ImageLayout* layout) {
  const Dtype dt = big->dtype(), cd = conv_product_dtype("conv", dt, big->device());
  const int64_t Cb = big->shape()[1], Cs = small->shape()[1];
  const ImageLayout l = layout ? *layout : layout_of(*big, *small);
  TensorPtr x = operand(big, cd, l), y = operand(small, cd, l);
  Shape ws{Cs, Cb / G.g.groups};
  for (int d = 3 - G.nsp; d < 3; ++d) ws.push_back(G.g.k[d]);
  TensorPtr out = empty_image(ws, cd, big->device(), l);
  ConvWeightGrad p;
  p.geom = G.g;
  p.allow_tf32 = conv_allow_tf32();
  p.deterministic = conv_deterministic();
  launch(p, {out.get()}, {x.get(), y.get()});
  out = finish(out, dt, l);
  if (autograd::needs_grad({&big, &small})) {
    auto node = autograd::record("ConvolutionBackwardBackward0", {big, small}, {out},
                                 [G, l](const Node& n, const Grads& g) {
      TensorPtr b = n.saved(0), s = n.saved(1);
      return Grads{wants(n, 0) ? conv_transpose_raw(s, g[0], nullptr, G, &l) : nullptr,
                   wants(n, 1) ? conv_raw(b, g[0], nullptr, G, &l) : nullptr};
    });
    node->save(big);
    node->save(small);
  }
  return out;
}

std::string dims_str(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s + ")";
}

}  // namespace

TensorPtr convolution(const char* name, const TensorPtr& input, const TensorPtr& weight, const TensorPtr& bias,
                      const IntVec& stride, const IntVec& padding, const IntVec& dilation, bool transposed,
                      const IntVec& output_padding, int64_t groups) {
  op_device(name, {input.get(), weight.get(), bias.get()});
  const int64_t wdim = weight->ndim();
  LUCID_CHECK(wdim >= 3 && wdim <= 5, RuntimeError, name, "(): expected weight to be 3-, 4- or 5-dimensional, but got ",
              wdim, "-dimensional weight of size ", shape_str(weight->shape()));
  const int nsp = int(wdim - 2);
  const int64_t nd = input->ndim();
  LUCID_CHECK(nd == nsp + 1 || nd == nsp + 2, RuntimeError, "Expected ", nsp + 1, "D (unbatched) or ", nsp + 2,
              "D (batched) input to ", name, ", but got input of size: ", shape_str(input->shape()));
  if (nd == nsp + 1) {
    TensorPtr r = convolution(name, unsqueeze(input, 0), weight, bias, stride, padding, dilation, transposed,
                              output_padding, groups);
    return squeeze(r, {0});
  }
  LUCID_CHECK(input->dtype() == weight->dtype() && (!bias || bias->dtype() == input->dtype()), RuntimeError,
              name, "(): expected input, weight and bias to have the same dtype, but got input ",
              dtype_name(input->dtype()), ", weight ", dtype_name(weight->dtype()),
              bias ? str_cat(", bias ", dtype_name(bias->dtype())) : std::string());
  auto per_dim = [&](const IntVec& v, const char* what) {
    LUCID_CHECK(v.size() == size_t(nsp) || v.size() == 1, RuntimeError, name, "(): expected ", what, " to be a single ",
                "integer or a list of ", nsp, " integers, but got ", v.size(), " values");
    IntVec r(3, 0);
    for (int d = 0; d < nsp; ++d) r[3 - nsp + d] = v.size() == 1 ? v[0] : v[d];
    return r;
  };
  IntVec s = per_dim(stride, "stride"), p = per_dim(padding, "padding"), dl = per_dim(dilation, "dilation");
  IntVec op = transposed ? per_dim(output_padding, "output_padding") : IntVec(3, 0);
  for (int d = 3 - nsp; d < 3; ++d) {
    LUCID_CHECK(s[d] > 0, RuntimeError, "non-positive stride is not supported");
    LUCID_CHECK(p[d] >= 0, RuntimeError, "negative padding is not supported");
    LUCID_CHECK(dl[d] > 0, RuntimeError, "dilation should be greater than zero");
    LUCID_CHECK(op[d] >= 0, RuntimeError, "negative output_padding is not supported");
    LUCID_CHECK(!transposed || op[d] < s[d] || op[d] < dl[d], RuntimeError,
                "output padding must be smaller than either stride or dilation, but got output_padding=", op[d],
                ", stride=", s[d], ", dilation=", dl[d]);
  }
  LUCID_CHECK(groups > 0, RuntimeError, "non-positive groups is not supported");
  const Shape& is = input->shape();
  const Shape& ws = weight->shape();
  LUCID_CHECK(ws[0] % groups == 0, RuntimeError, "Given groups=", groups, ", expected weight to be divisible by ",
              groups, " at dimension 0, but got weight of size ", shape_str(ws), " instead");
  if (!transposed) {
    LUCID_CHECK(is[1] == ws[1] * groups, RuntimeError, "Given groups=", groups, ", weight of size ", shape_str(ws),
                ", expected input", shape_str(is), " to have ", ws[1] * groups, " channels, but got ", is[1],
                " channels instead");
  } else {
    LUCID_CHECK(is[1] == ws[0], RuntimeError, "Given transposed=1, weight of size ", shape_str(ws),
                ", expected input", shape_str(is), " to have ", ws[0], " channels, but got ", is[1],
                " channels instead");
  }
  const int64_t c_out = transposed ? ws[1] * groups : ws[0];
  LUCID_CHECK(!bias || (bias->ndim() == 1 && bias->shape()[0] == c_out), RuntimeError, "Given weight of size ",
              shape_str(ws), ", expected bias to be 1-dimensional with ", c_out, " elements, but got bias of size ",
              bias ? shape_str(bias->shape()) : std::string(), " instead");
  Geo G;
  G.nsp = nsp;
  G.g.groups = groups;
  std::vector<int64_t> padded, eff;
  for (int d = 3 - nsp; d < 3; ++d) {
    const int64_t k = ws[2 + d - (3 - nsp)], in = is[2 + d - (3 - nsp)];
    G.g.k[d] = k;
    G.g.stride[d] = s[d];
    G.g.pad[d] = p[d];
    G.g.dil[d] = dl[d];
    const int64_t ek = dl[d] * (k - 1) + 1;
    if (!transposed) {
      padded.push_back(in + 2 * p[d]);
      eff.push_back(ek);
      G.g.big[d] = in;
      G.g.small[d] = (in + 2 * p[d] - ek) / s[d] + 1;
    } else {
      G.g.small[d] = in;
      G.g.big[d] = (in - 1) * s[d] - 2 * p[d] + ek + op[d];
      LUCID_CHECK(G.g.big[d] > 0 || in == 0, RuntimeError, name, "(): the output size would be non-positive (",
                  G.g.big[d], ") for input size ", in, ", kernel ", k, ", stride ", s[d], ", padding ", p[d]);
    }
  }
  if (!transposed) {
    bool ok = true;
    for (size_t i = 0; i < padded.size(); ++i) ok = ok && padded[i] >= eff[i];
    LUCID_CHECK(ok, RuntimeError, "Calculated padded input size per channel: ", dims_str(padded), ". Kernel size: ",
                dims_str(eff), ". Kernel size can't be greater than actual input size");
    return conv_raw(input, weight, bias, G);
  }
  return conv_transpose_raw(input, weight, bias, G);
}

// ---- unfold / fold: im2col and col2im as a pair of adjoint ops -------------------------

namespace {

TensorPtr im2col_raw(const TensorPtr& x, const Geo& G);
TensorPtr col2im_raw(const TensorPtr& col, const Geo& G, int64_t channels);

TensorPtr im2col_raw(const TensorPtr& x, const Geo& G) {
  const Dtype dt = x->dtype(), cd = conv_compute_dtype("unfold", dt);
  const int64_t N = x->shape()[0], C = x->shape()[1];
  TensorPtr xc = contiguous_as(x, cd);
  TensorPtr out = TensorImpl::empty(Shape{N, C * G.g.kernel_numel(), G.g.small_numel()}, cd, x->device());
  Im2Col p;
  p.geom = G.g;
  launch(p, {out.get()}, {xc.get()});
  if (cd != dt) out = out->clone(dt);
  if (autograd::needs_grad({&x})) {
    autograd::record("Im2ColBackward0", {x}, {out},
                     [G, C](const Node&, const Grads& g) { return Grads{col2im_raw(g[0], G, C)}; });
  }
  return out;
}

TensorPtr col2im_raw(const TensorPtr& col, const Geo& G, int64_t C) {
  const Dtype dt = col->dtype(), cd = conv_compute_dtype("fold", dt);
  const int64_t N = col->shape()[0];
  TensorPtr cc = contiguous_as(col, cd);
  TensorPtr out = TensorImpl::empty(image_shape(N, C, G.g.big, G.nsp), cd, col->device());
  Col2Im p;
  p.geom = G.g;
  launch(p, {out.get()}, {cc.get()});
  if (cd != dt) out = out->clone(dt);
  if (autograd::needs_grad({&col})) {
    autograd::record("Col2ImBackward0", {col}, {out},
                     [G](const Node&, const Grads& g) { return Grads{im2col_raw(g[0], G)}; });
  }
  return out;
}

Geo unfold_geo(const char* name, const IntVec& kernel, const IntVec& dilation, const IntVec& padding,
               const IntVec& stride) {
  auto two = [&](const IntVec& v, const char* what) {
    LUCID_CHECK(v.size() == 2 || v.size() == 1, RuntimeError, name, "(): expected ", what,
                " to be a single integer or a pair, but got ", v.size(), " values");
    return IntVec{v[0], v.size() == 1 ? v[0] : v[1]};
  };
  IntVec k = two(kernel, "kernel_size"), d = two(dilation, "dilation"), p = two(padding, "padding"),
         s = two(stride, "stride");
  Geo G;
  G.nsp = 2;
  for (int i = 0; i < 2; ++i) {
    LUCID_CHECK(k[i] > 0, RuntimeError, name, "(): kernel size should be greater than zero, but got kernel_size=",
                shape_str(Shape{k[0], k[1]}));
    LUCID_CHECK(d[i] > 0, RuntimeError, name, "(): dilation should be greater than zero, but got dilation=",
                shape_str(Shape{d[0], d[1]}));
    LUCID_CHECK(s[i] > 0, RuntimeError, name, "(): stride should be greater than zero, but got stride=",
                shape_str(Shape{s[0], s[1]}));
    LUCID_CHECK(p[i] >= 0, RuntimeError, name, "(): padding should be non-negative, but got padding=",
                shape_str(Shape{p[0], p[1]}));
    G.g.k[1 + i] = k[i];
    G.g.dil[1 + i] = d[i];
    G.g.pad[1 + i] = p[i];
    G.g.stride[1 + i] = s[i];
  }
  return G;
}

}  // namespace

TensorPtr unfold_im2col(const TensorPtr& input, const IntVec& kernel, const IntVec& dilation, const IntVec& padding,
                        const IntVec& stride) {
  LUCID_CHECK(input->ndim() == 3 || input->ndim() == 4, NotImplementedError,
              "Input Error: Only 3D or 4D input Tensors are supported (got ", input->ndim(), "D)");
  if (input->ndim() == 3) return squeeze(unfold_im2col(unsqueeze(input, 0), kernel, dilation, padding, stride), {0});
  Geo G = unfold_geo("unfold", kernel, dilation, padding, stride);
  for (int i = 1; i < 3; ++i) {
    const int64_t in = input->shape()[1 + i], ek = G.g.dil[i] * (G.g.k[i] - 1) + 1;
    G.g.big[i] = in;
    const int64_t o = (in + 2 * G.g.pad[i] - ek) / G.g.stride[i] + 1;
    LUCID_CHECK(in + 2 * G.g.pad[i] >= ek && o >= 1, RuntimeError, "unfold(): the padded input size ",
                shape_str(Shape{input->shape()[2] + 2 * G.g.pad[1], input->shape()[3] + 2 * G.g.pad[2]}),
                " is smaller than the dilated kernel size along dim ", 1 + i, " (", ek, ")");
    G.g.small[i] = o;
  }
  return im2col_raw(input, G);
}

TensorPtr fold_col2im(const TensorPtr& input, const IntVec& output_size, const IntVec& kernel,
                      const IntVec& dilation, const IntVec& padding, const IntVec& stride) {
  LUCID_CHECK(input->ndim() == 2 || input->ndim() == 3, NotImplementedError,
              "Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got ", input->ndim(),
              "D)");
  if (input->ndim() == 2)
    return squeeze(fold_col2im(unsqueeze(input, 0), output_size, kernel, dilation, padding, stride), {0});
  Geo G = unfold_geo("fold", kernel, dilation, padding, stride);
  LUCID_CHECK(output_size.size() == 1 || output_size.size() == 2, RuntimeError,
              "fold(): expected output_size to be a single integer or a pair");
  const int64_t K = G.g.k[1] * G.g.k[2];
  LUCID_CHECK(input->shape()[1] % K == 0, RuntimeError,
              "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
              "input.size(1)=", input->shape()[1], " and kernel_size=", shape_str(Shape{G.g.k[1], G.g.k[2]}));
  int64_t L = 1;
  for (int i = 1; i < 3; ++i) {
    const int64_t out = output_size.size() == 1 ? output_size[0] : output_size[i - 1];
    const int64_t ek = G.g.dil[i] * (G.g.k[i] - 1) + 1;
    G.g.big[i] = out;
    G.g.small[i] = (out + 2 * G.g.pad[i] - ek) / G.g.stride[i] + 1;
    LUCID_CHECK(out + 2 * G.g.pad[i] >= ek && G.g.small[i] >= 1, RuntimeError,
                "fold(): the padded output size is smaller than the dilated kernel size along dim ", 1 + i);
    L *= G.g.small[i];
  }
  LUCID_CHECK(input->shape()[2] == L, RuntimeError, "Given output_size=", shape_str(Shape{G.g.big[1], G.g.big[2]}),
              ", kernel_size=", shape_str(Shape{G.g.k[1], G.g.k[2]}), ", dilation=",
              shape_str(Shape{G.g.dil[1], G.g.dil[2]}), ", padding=", shape_str(Shape{G.g.pad[1], G.g.pad[2]}),
              ", stride=", shape_str(Shape{G.g.stride[1], G.g.stride[2]}),
              ", expected size of input's dimension 2 to match the calculated number of sliding blocks ",
              G.g.small[1], " * ", G.g.small[2], " = ", L, ", but got input.size(2)=", input->shape()[2], ".");
  return col2im_raw(input, G, input->shape()[1] / K);
}

}  // namespace lucid::ops
