// Pooling ops (max, average, adaptive) over 1-3 trailing spatial dims. Every pool is
// a list of windows per dim (PoolWindows, ops/prims/spatial.h); the kernels walk them.
//   max:  the values and flat spatial indices; d input = scatter_add of g at the
//         indices (differentiable: its own VJP is a gather).
//   avg:  a linear map whose adjoint is its own kernel run backwards; each one's VJP
//         is the other, so double backward works.
#include <array>
#include <cmath>
#include <memory>

#include "autograd/record.h"
#include "core/error.h"
#include "ops/conv.h"
#include "ops/conv_common.h"
#include "ops/gather_ops.h"
#include "ops/prims/spatial.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"
#include "ops/views.h"

namespace lucid::ops {

using autograd::Grads;

namespace {

// An average pool's windows, shared by its VJP chain (each adjoint launches them again).
using Dims = std::shared_ptr<const PoolDims>;

struct PoolPlan {
  int nsp = 2;
  Shape lead;  // the non-spatial dims ([N, C] or [C])
  PoolDims dims;
  Shape out_shape() const {
    Shape s = lead;
    for (int d = 3 - nsp; d < 3; ++d) s.push_back(dims[d].out);
    return s;
  }
};

std::string sizes_str(const Shape& s, size_t from) {
  std::string r = "(";
  for (size_t i = from; i < s.size(); ++i) {
    if (i > from) r += 'x';
    r += std::to_string(s[i]);
  }
  return r + ")";
}

PoolPlan plan_input(const char* name, const TensorPtr& input, int nsp) {
  const int64_t nd = input->ndim();
  bool ok = nd == nsp + 1 || nd == nsp + 2;
  for (int64_t i = (nd == nsp + 2 ? 1 : 0); ok && i < nd; ++i) ok = input->shape()[i] > 0;
  LUCID_CHECK(ok, RuntimeError, name, "(): Expected ", nsp + 1, "D or ", nsp + 2,
              "D (batch mode) tensor with optional 0 dim batch size for input, and non-zero sizes for the other "
              "dims, but got input of size: ", shape_str(input->shape()));
  PoolPlan P;
  P.nsp = nsp;
  for (int64_t i = 0; i < nd - nsp; ++i) P.lead.push_back(input->shape()[i]);
  for (int d = 0; d < 3; ++d) {
    PoolWindows& pd = P.dims[d];
    pd.in = d < 3 - nsp ? 1 : input->shape()[nd - 3 + d];
    pd.out = 1;
    pd.start = {0};
    pd.len = {1};
    pd.size = {1.0};
  }
  return P;
}

IntVec per_dim(const char* name, const IntVec& v, int nsp, const char* what) {
  LUCID_CHECK(v.size() == size_t(nsp) || v.size() == 1, RuntimeError, name, "(): ", what,
              " must either be a single int, or a tuple of ", nsp, " ints");
  IntVec r(nsp);
  for (int d = 0; d < nsp; ++d) r[d] = v.size() == 1 ? v[0] : v[d];
  return r;
}

// PyTorch's pooling_output_shape, in 128-bit arithmetic: a kernel, stride or padding
// near 2^63 must give a size (and its error), not wrap around.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t dil, bool ceil_mode) {
  using Wide = __int128;
  const Wide num = Wide(in) + 2 * Wide(pad) - Wide(dil) * (k - 1) - 1 + (ceil_mode ? Wide(s) - 1 : 0);
  Wide out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= Wide(in) + pad) --out;
  return int64_t(std::max<Wide>(out, -1));  // at most in + 1: the padding is at most half the window
}

// Fills the sliding windows of P's dims; checks as PyTorch does.
void plan_windows(const char* name, PoolPlan& P, const TensorPtr& input, const IntVec& kernel_in,
                  const IntVec& stride_in, const IntVec& padding_in, const IntVec& dilation_in, bool ceil_mode,
                  bool avg, bool count_include_pad) {
  const int nsp = P.nsp;
  IntVec k = per_dim(name, kernel_in, nsp, "kernel_size");
  IntVec s = stride_in.empty() ? k : per_dim(name, stride_in, nsp, "stride");
  IntVec p = per_dim(name, padding_in, nsp, "padding");
  IntVec dl = per_dim(name, dilation_in, nsp, "dilation");
  bool small = false;
  for (int i = 0; i < nsp; ++i) {
    LUCID_CHECK(k[i] > 0, RuntimeError, name, "(): kernel_size must be greater than zero, but got ", k[i]);
    LUCID_CHECK(s[i] > 0, RuntimeError, name, "(): stride must be greater than zero, but got ", s[i]);
    LUCID_CHECK(dl[i] > 0, RuntimeError, name, "(): dilation must be greater than zero, but got ", dl[i]);
    LUCID_CHECK(p[i] >= 0 && __int128(p[i]) <= (__int128(dl[i]) * (k[i] - 1) + 1) / 2, RuntimeError, name,
                "(): pad should be at most half of effective kernel size, but got pad=", p[i],
                ", kernel_size=", k[i], " and dilation=", dl[i]);
    PoolWindows& pd = P.dims[3 - nsp + i];
    pd.out = pooled_size(pd.in, k[i], p[i], s[i], dl[i], ceil_mode);
    small = small || pd.out < 1;
    pd.step = dl[i];
    pd.start.assign(size_t(std::max<int64_t>(pd.out, 0)), 0);
    pd.len.assign(pd.start.size(), k[i]);
    pd.size.assign(pd.start.size(), 1.0);
    for (int64_t o = 0; o < pd.out; ++o) {
      const int64_t st = o * s[i] - p[i];
      if (avg) {
        pd.size[o] = count_include_pad ? double(std::min(st + k[i], pd.in + p[i]) - st)
                                       : double(std::min(st + k[i], pd.in) - std::max<int64_t>(st, 0));
      }
      // Only the taps inside the input: the kernels skip the others, and a window
      // of 2^62 taps must not be walked tap by tap.
      const int64_t first = st < 0 ? (-st + dl[i] - 1) / dl[i] : 0;
      const int64_t last = st > pd.in - 1 ? -1 : std::min<int64_t>(k[i] - 1, (pd.in - 1 - st) / dl[i]);
      pd.start[o] = st + first * dl[i];
      pd.len[o] = std::max<int64_t>(last - first + 1, 0);
    }
  }
  if (small) {
    Shape o = P.out_shape();
    fail<RuntimeError>("Given input size: ", sizes_str(input->shape(), size_t(input->ndim() - nsp - 1)),
                       ". Calculated output size: ", sizes_str(o, o.size() - nsp - 1), ". Output size is too small");
  }
}

void plan_adaptive(const char* name, PoolPlan& P, const IntVec& out_in) {
  IntVec out = per_dim(name, out_in, P.nsp, "output_size");
  for (int i = 0; i < P.nsp; ++i) {
    LUCID_CHECK(out[i] >= 0, RuntimeError, name, "(): elements of output_size must be greater than or equal to 0 ",
                "but received ", out[i]);
    PoolWindows& pd = P.dims[3 - P.nsp + i];
    pd.out = out[i];
    pd.step = 1;
    try {
      pd.start.resize(out[i]);
      pd.len.resize(out[i]);
      pd.size.resize(out[i]);
    } catch (const std::exception&) {  // bad_alloc, length_error
      fail<RuntimeError>("out of host memory: ", name, "(): output_size ", out[i], " is too large to plan");
    }
    for (int64_t o = 0; o < out[i]; ++o) {
      const int64_t a = (o * pd.in) / out[i], b = ((o + 1) * pd.in + out[i] - 1) / out[i];
      pd.start[o] = a;
      pd.len[o] = b - a;
      pd.size[o] = double(b - a);
    }
  }
}

std::pair<TensorPtr, TensorPtr> max_raw(const char* name, const TensorPtr& input, const PoolPlan& P,
                                        const char* node_name, bool allow_int) {
  // Integers (as PyTorch's max_pool, not its adaptive one) compare as int64: exact.
  const Dtype dt = input->dtype();
  const bool integer = allow_int && is_integral(dt, false);
  const Dtype cd = integer ? Dtype::I64 : conv_compute_dtype(name, dt);
  TensorPtr x = contiguous_as(input, cd);
  Shape os = P.out_shape();
  const Device device = input->device();
  TensorPtr out = TensorImpl::empty(os, cd, device);
  TensorPtr idx = TensorImpl::empty(os, Dtype::I64, device);
  MaxPool p;
  p.dims = P.dims;
  launch(p, {out.get(), idx.get()}, {x.get()});
  if (cd != dt) out = out->clone(dt);
  if (autograd::needs_grad({&input})) {
    const Shape in_shape = input->shape();
    const int nsp = P.nsp;
    autograd::record(node_name, {input}, {out}, [in_shape, nsp, idx, device](const Node&, const Grads& g) {
      const int64_t lead = int64_t(in_shape.size()) - nsp;
      Shape flat(in_shape.begin(), in_shape.begin() + lead);
      int64_t in_n = 1;
      for (size_t i = size_t(lead); i < in_shape.size(); ++i) in_n *= in_shape[i];
      Shape zs = flat;
      zs.push_back(in_n);
      TensorPtr gflat = flatten(g[0], lead, -1), iflat = flatten(idx, lead, -1);
      TensorPtr z = TensorImpl::full(zs, Scalar(0.0), g[0]->dtype(), device);
      return Grads{reshape(scatter_add(z, lead, iflat, gflat), in_shape)};
    });
  }
  return {out, idx};
}

TensorPtr avg_raw(const char* name, const TensorPtr& x, const Dims& D, const Shape& out_shape, double divisor,
                  bool adjoint);

// adjoint == false: x is the input, the result has out_shape (the pool);
// adjoint == true: x is a gradient of the pool's output, the result has out_shape
// (the input's shape).
TensorPtr avg_raw(const char* name, const TensorPtr& x, const Dims& D, const Shape& out_shape, double divisor,
                  bool adjoint) {
  const Dtype dt = x->dtype(), cd = conv_compute_dtype(name, dt);
  TensorPtr xc = contiguous_as(x, cd);
  TensorPtr out = TensorImpl::empty(out_shape, cd, x->device());
  if ((*D)[0].out * (*D)[1].out * (*D)[2].out == 0) {
    out->initialize(Scalar(0.0));
  } else {
    AvgPool p;
    p.dims = *D;
    p.divisor = divisor;
    p.adjoint = adjoint;
    launch(p, {out.get()}, {xc.get()});
  }
  if (cd != dt) out = out->clone(dt);
  if (autograd::needs_grad({&x})) {
    const Shape in_shape = x->shape();
    autograd::record(adjoint ? "AvgPoolBackwardBackward0" : "AvgPoolBackward0", {x}, {out},
                     [D, in_shape, divisor, adjoint](const Node&, const Grads& g) {
                       return Grads{avg_raw("avg_pool", g[0], D, in_shape, divisor, !adjoint)};
                     });
  }
  return out;
}

}  // namespace

std::pair<TensorPtr, TensorPtr> max_pool(const char* name, const TensorPtr& input, const IntVec& kernel,
                                         const IntVec& stride, const IntVec& padding, const IntVec& dilation,
                                         bool ceil_mode) {
  PoolPlan P = plan_input(name, input, int(kernel.size()));
  plan_windows(name, P, input, kernel, stride, padding, dilation, ceil_mode, false, false);
  return max_raw(name, input, P, P.nsp == 3 ? "MaxPool3DWithIndicesBackward0" : "MaxPool2DWithIndicesBackward0", true);
}

TensorPtr avg_pool(const char* name, const TensorPtr& input, const IntVec& kernel, const IntVec& stride,
                   const IntVec& padding, bool ceil_mode, bool count_include_pad,
                   std::optional<int64_t> divisor_override) {
  PoolPlan P = plan_input(name, input, int(kernel.size()));
  LUCID_CHECK(!divisor_override || *divisor_override != 0, RuntimeError, name, "(): divisor must be not zero");
  plan_windows(name, P, input, kernel, stride, padding, IntVec{1}, ceil_mode, true, count_include_pad);
  auto D = std::make_shared<const PoolDims>(P.dims);
  return avg_raw(name, input, D, P.out_shape(), divisor_override ? double(*divisor_override) : 0.0, false);
}

TensorPtr adaptive_avg_pool(const char* name, const TensorPtr& input, const IntVec& output_size) {
  PoolPlan P = plan_input(name, input, int(output_size.size()));
  plan_adaptive(name, P, output_size);
  // A global average (every output size 1: a classifier's head) is the mean over the
  // spatial dims, as torch computes it (its grad_fn is MeanBackward1 too): the reduction's
  // vector kernels, not a window loop (3.8x torch's time on [16, 64, 64, 64]).
  bool global = true;
  for (int64_t size : output_size) global = global && size == 1;
  if (global) {
    (void)conv_compute_dtype(name, input->dtype());  // (the pool's dtype check)
    std::vector<int64_t> spatial;
    for (int64_t d = 1; d <= int64_t(output_size.size()); ++d) spatial.push_back(-d);
    return mean(input, spatial, true, std::nullopt);
  }
  auto D = std::make_shared<const PoolDims>(P.dims);
  return avg_raw(name, input, D, P.out_shape(), 0.0, false);
}

std::pair<TensorPtr, TensorPtr> adaptive_max_pool(const char* name, const TensorPtr& input,
                                                  const IntVec& output_size) {
  PoolPlan P = plan_input(name, input, int(output_size.size()));
  plan_adaptive(name, P, output_size);
  return max_raw(name, input, P, P.nsp == 3 ? "AdaptiveMaxPool3DBackward0" : "AdaptiveMaxPool2DBackward0", false);
}

}  // namespace lucid::ops
