// The convolution primitives on the GPU (ops/prims/spatial.h): ConvForward,
// ConvTranspose and ConvWeightGrad through cuDNN, Im2Col and Col2Im through lucid's
// own kernels (im2col.cu).
//
// Note [Convolutions through cuDNN]
// The three convolution primitives are the three convolution operations of cuDNN's
// backend graph API (cudnn_graph.h), each a one-node graph: ConvForward is the forward
// convolution (big -> small), ConvTranspose the backward data one (small -> big, the
// adjoint) and ConvWeightGrad the backward filter one; lucid's weight layout [Cs,
// Cb/groups, *k] is cuDNN's filter for all three, and groups are Cb over its dim 1.
// lucid's geometry is always 3-d; a size-1 leading dim is dropped, so 2-d
// convolutions run as cuDNN's 2-d ones and 1-d as 2-d with height 1 (as PyTorch runs
// them). Each (pass, shape, geometry, dtype, TF32 choice, pointer alignment, device)
// builds its graph and execution plan once, from cuDNN's heuristics (no benchmarking,
// which would synchronise and allocate); a call is then one variant pack and one
// execution. The legacy calls (cudnnConvolutionForward and its kin) ran the same
// kernels but cost ~60 us of host time each on the H200 against ~25 us for PyTorch's
// whole conv2d (which executes cached graph plans too): a small convolution's training
// step was bound by it. The workspace comes from the caching allocator per call.
//  - Exact float32 by default: cuDNN's engines for float32 include TF32 tensor-core
//    ones (PyTorch's torch.backends.cudnn.allow_tf32 is True by default). lucid
//    instead follows its matmul switch: engines with cuDNN's tensor-core note are passed
//    over unless lucid.backends.cuda.matmul.allow_tf32 is set, carried by the
//    primitive, so a convolution and the same product through matmul round alike.
//    Engines that round the inputs down first are always passed over (as PyTorch's).
//  - float16/bfloat16 run natively on tensor cores, accumulating in float32
//    (ops/conv_common.h conv_product_dtype): 2-4x faster than computing them in
//    float32. Where cuDNN cannot run one, the GEMM route computes it in float32 and
//    rounds once (run_gemm_in_float32).
//  - Deterministic when asked: with lucid.backends.cudnn.deterministic or
//    use_deterministic_algorithms (ops::conv_deterministic, carried by the primitive)
//    only engines without cuDNN's non-deterministic note are taken (the first such in
//    the heuristic's order), as PyTorch does. By default, as PyTorch's, the heuristic's
//    first engine runs, whatever it is.
//  - What cuDNN cannot express runs as im2col + cuBLASLt GEMM (conv_gemm.h), on the
//    GPU: conv_transpose with output_padding >= stride (allowed when it is below the
//    dilation), whose big image is larger than the one cuDNN derives from the small;
//    tensors past cuDNN's int sizes; and any graph for which no engine passes (none
//    deterministic, say) or cuDNN rejects a descriptor.
#include <array>
#include <climits>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/cast_kernel.cuh"
#include "backend/cuda/check.h"
#include "backend/cuda/conv_gemm.h"
#include "backend/cuda/cudnn.h"
#include "backend/cuda/cudnn_graph.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/im2col.h"
#include "backend/cuda/register.h"
#include "backend/cuda/stream.h"
#include "ops/prims/spatial.h"

namespace lucid::cuda {

namespace {

using ops::ConvGeometry;
using ops::Inputs;
using ops::Outputs;

using Pass = ConvPass;

constexpr int64_t kMaxWorkspace = int64_t(1) << 30;  // an engine wanting more is passed over

// One convolution's cuDNN plan; null when cuDNN cannot run it (then conv_gemm.h does).
using Plan = std::shared_ptr<const BackendPlan>;

// What the primitive asks of the engine: TF32 allowed, deterministic only.
struct Choice {
  bool tf32 = false, deterministic = false;
};

// Which of the three tensors (big, small, filter) are channels-last rather than
// contiguous (Note [Channels-last convolutions] in ops/conv.cpp), and the largest power
// of two up to 16 dividing their addresses.
struct Layout {
  bool big_cl = false, small_cl = false, filter_cl = false;
  int64_t alignment = 16;
  int64_t bits() const { return int64_t(big_cl) | int64_t(small_cl) << 1 | int64_t(filter_cl) << 2; }
};

// pass, device, dtype, choice, layout, alignment, n, cb, cs, groups, then big, small, k, stride, pad, dil.
using PlanKey = std::array<int64_t, 28>;

PlanKey key_of(Pass pass, int device, Dtype dtype, Choice c, const Layout& l, int64_t n, int64_t cb, int64_t cs,
               const ConvGeometry& g) {
  PlanKey key{int64_t(pass), device, int64_t(dtype), int64_t(c.tf32) | int64_t(c.deterministic) << 1, l.bits(),
              l.alignment, n, cb, cs, g.groups};
  for (int d = 0; d < 3; ++d) {
    key[10 + d] = g.big[d];
    key[13 + d] = g.small[d];
    key[16 + d] = g.k[d];
    key[19 + d] = g.stride[d];
    key[22 + d] = g.pad[d];
    key[25 + d] = g.dil[d];
  }
  return key;
}

// The first spatial dim cuDNN sees: 1 when dim 0 only pads the rank to 3 (size 1 everywhere, no padding).
int first_dim(const ConvGeometry& g) {
  return g.big[0] == 1 && g.small[0] == 1 && g.k[0] == 1 && g.pad[0] == 0 ? 1 : 0;
}

// Whether cuDNN's output size (from big) is the geometry's small, and every size and
// element count fits cuDNN's int.
bool expressible(const ConvGeometry& g, int64_t n, int64_t cb, int64_t cs) {
  for (int d = first_dim(g); d < 3; ++d) {
    const int64_t ek = g.dil[d] * (g.k[d] - 1) + 1;
    if (g.big[d] + 2 * g.pad[d] < ek || (g.big[d] + 2 * g.pad[d] - ek) / g.stride[d] + 1 != g.small[d]) return false;
  }
  const int64_t counts[] = {n * cb * g.big_numel(), n * cs * g.small_numel(), cs * (cb / g.groups) * g.kernel_numel(),
                            g.stride[0], g.stride[1], g.stride[2], g.pad[0], g.pad[1], g.pad[2],
                            g.dil[0], g.dil[1], g.dil[2]};
  for (int64_t c : counts)
    if (c > INT_MAX) return false;
  return true;
}

cudnnDataType_t data_type(Dtype d) {
  switch (d) {
    case Dtype::F64: return CUDNN_DATA_DOUBLE;
    case Dtype::F16: return CUDNN_DATA_HALF;
    case Dtype::BF16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
  }
}

// The element strides of [N, C, *spatial] dims, contiguous or channels-last.
GraphBuilder::Dims strides_of(const GraphBuilder::Dims& dims, bool channels_last) {
  GraphBuilder::Dims strides(dims.size(), 1);
  if (!channels_last) {
    for (size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * dims[i];
    return strides;
  }
  int64_t next = dims[1];  // C innermost, then the spatial dims from the last, then N
  for (size_t i = dims.size() - 1; i >= 2; --i) {
    strides[i] = next;
    next *= dims[i];
  }
  strides[0] = next;
  return strides;
}

// The tensors' uids in the graph and the variant pack.
enum Uid : int64_t { kBig = 1, kSmall = 2, kFilter = 3 };

// The pass's graph and its plan: the first engine of cuDNN's heuristics that keeps
// float32 exact when asked (no TF32 tensor cores), is deterministic when asked, never
// rounds the inputs down, and needs at most kMaxWorkspace; null when there is none.
Plan build_plan(Pass pass, int device, Dtype dtype, Choice c, const Layout& l, int64_t n, int64_t cb, int64_t cs,
                const ConvGeometry& g) {
  if (!expressible(g, n, cb, cs)) return nullptr;
  const cudnnDataType_t type = data_type(dtype);
  // (16-bit products accumulate in float32, as PyTorch asks cuDNN for them)
  const cudnnDataType_t compute = dtype == Dtype::F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  GraphBuilder::Dims big{n, cb}, small{n, cs}, w{cs, cb / g.groups}, pad, stride, dil;
  for (int d = first_dim(g); d < 3; ++d) {
    big.push_back(g.big[d]);
    small.push_back(g.small[d]);
    w.push_back(g.k[d]);
    pad.push_back(g.pad[d]);
    stride.push_back(g.stride[d]);
    dil.push_back(g.dil[d]);
  }
  EngineFilter filter;
  filter.no_tensor_cores = dtype == Dtype::F32 && !c.tf32;
  filter.deterministic = c.deterministic;
  filter.exact_inputs = true;
  filter.max_workspace = kMaxWorkspace;
  try {
    GraphBuilder graph;
    const auto& x = graph.tensor(kBig, type, big, strides_of(big, l.big_cl), l.alignment);
    const auto& y = graph.tensor(kSmall, type, small, strides_of(small, l.small_cl), l.alignment);
    const auto& f = graph.tensor(kFilter, type, w, strides_of(w, l.filter_cl), l.alignment);
    graph.convolution(pass, x, f, y, pad, stride, dil, compute);
    return std::make_shared<const BackendPlan>(graph.plan(cudnn_handle(device), "convolution (cuDNN graph)", filter));
  } catch (const RuntimeError&) {  // a descriptor cuDNN rejects, or no engine passes: the GEMM route
    return nullptr;
  }
}

// The plans, built once per key; they live for the process.
std::mutex plans_mu;
std::map<PlanKey, Plan> plans;

Plan plan_for(const PlanKey& key, Pass pass, int device, Dtype dtype, Choice c, const Layout& l, int64_t n,
              int64_t cb, int64_t cs, const ConvGeometry& g) {
  std::lock_guard<std::mutex> lock(plans_mu);
  auto it = plans.find(key);
  if (it != plans.end()) return it->second;
  return plans.emplace(key, build_plan(pass, device, dtype, c, l, n, cb, cs, g)).first->second;
}

// One convolution pass: out = forward(big, w), data(small, w) or filter(big, small).
// Tensors non-empty, each contiguous or channels-last.
struct Operands {
  const TensorImpl* big;
  const TensorImpl* small;
  const TensorImpl* w;
  TensorImpl* out;
};

// The largest power of two up to 16 that divides every pointer.
int64_t alignment_of(std::initializer_list<const void*> ptrs) {
  uintptr_t bits = 16;
  for (const void* p : ptrs) bits |= reinterpret_cast<uintptr_t>(p);
  return int64_t(bits & (~bits + 1));
}

void run_cudnn(const Plan& p, const TensorImpl& big, const TensorImpl& small, const TensorImpl& w, int device) {
  DeviceGuard guard(device);
  GpuStorage workspace;
  if (p->workspace) workspace = CachingAllocator::instance().allocate(size_t(p->workspace), device);
  execute(cudnn_handle(device), *p, {kBig, kSmall, kFilter},
          {big.data_ptr(), small.data_ptr(), w.data_ptr()}, workspace.ptr());
}

// The im2col + GEMM route (conv_gemm.h) of one pass.
void run_gemm(Pass pass, const ConvGeometry& g, bool tf32, const TensorImpl& big, const TensorImpl& small,
              const TensorImpl& w, TensorImpl& out) {
  if (pass == Pass::Forward) gemm_conv_forward(big, w, out, g, tf32);
  else if (pass == Pass::Data) gemm_conv_transpose(small, w, out, g, tf32);
  else gemm_conv_weight_grad(big, small, out, g, tf32);
}

// dst = src cast to dst's dtype; both contiguous, on the same device, float32 and 16-bit.
void cast_into(TensorImpl& dst, const TensorImpl& src) {
  const bool queued = launch_contiguous_cast(dst.data_ptr(), CastType(int(dst.dtype())), src.data_ptr(),
                                             CastType(int(src.dtype())), src.numel(), stream(dst.device().index));
  LUCID_CHECK(queued, RuntimeError, "conv: no cast from ", dtype_name(src.dtype()), " to ", dtype_name(dst.dtype()));
  LUCID_CUDA_CHECK(cudaGetLastError());
}

TensorPtr float32_copy(const TensorImpl& x) {
  TensorPtr y = TensorImpl::empty(x.shape(), Dtype::F32, x.device());
  cast_into(*y, x);
  return y;
}

// A 16-bit pass cuDNN cannot run: the GEMM route on float32 copies (its weight
// gradient sums image by image into the output, which a 16-bit output would round at
// every image), rounded once into `out`.
void run_gemm_in_float32(Pass pass, const ConvGeometry& g, const Operands& t, const TensorImpl& big,
                         const TensorImpl& small) {
  DeviceGuard guard(t.out->device().index);
  const TensorPtr out = TensorImpl::empty(t.out->shape(), Dtype::F32, t.out->device());
  const TensorPtr w = pass == Pass::Filter ? out : float32_copy(*t.w);
  const TensorPtr in_big = pass == Pass::Data ? out : float32_copy(big);
  const TensorPtr in_small = pass == Pass::Forward ? out : float32_copy(small);
  run_gemm(pass, g, false, *in_big, *in_small, *w, *out);
  cast_into(*t.out, *out);
}

void run(Pass pass, const ConvGeometry& g, Choice c, const Operands& t) {
  const TensorImpl& big = pass == Pass::Data ? *t.out : *t.big;
  const TensorImpl& small = pass == Pass::Forward ? *t.out : *t.small;
  const TensorImpl& w = pass == Pass::Filter ? *t.out : *t.w;
  const Dtype dtype = t.out->dtype();
  const int device = t.out->device().index;
  const int64_t n = big.shape()[0], cb = big.shape()[1], cs = small.shape()[1];
  Layout l;
  l.big_cl = !big.is_contiguous(), l.small_cl = !small.is_contiguous(), l.filter_cl = !w.is_contiguous();
  l.alignment = alignment_of({big.data_ptr(), small.data_ptr(), w.data_ptr()});
  const PlanKey key = key_of(pass, device, dtype, c, l, n, cb, cs, g);
  if (const Plan p = plan_for(key, pass, device, dtype, c, l, n, cb, cs, g)) return run_cudnn(p, big, small, w, device);
  if (l.bits()) {  // channels-last and no engine: the pass on contiguous copies, then laid out
    const TensorPtr out = TensorImpl::empty(t.out->shape(), dtype, t.out->device());
    const TensorPtr cbig = t.big ? t.big->clone() : nullptr, csmall = t.small ? t.small->clone() : nullptr;
    const TensorPtr cw = t.w ? t.w->clone() : nullptr;
    run(pass, g, c, {cbig.get(), csmall.get(), cw.get(), out.get()});
    return t.out->copy_from(*out);
  }
  if (dtype == Dtype::F16 || dtype == Dtype::BF16) return run_gemm_in_float32(pass, g, t, big, small);
  run_gemm(pass, g, c.tf32, big, small, w, *t.out);
}

void zero(TensorImpl& t) {
  const int device = t.device().index;
  DeviceGuard guard(device);
  LUCID_CUDA_CHECK(cudaMemsetAsync(t.data_ptr(), 0, t.nbytes(), stream(device)));
}

// out [N, C, *spatial] += bias [C], when there is a bias; out non-empty.
void add_bias(TensorImpl& out, Inputs ins) {
  if (ins.size() < 3) return;
  const int64_t n = out.shape()[0], c = out.shape()[1], spatial = out.numel() / (n * c);
  // (a channels-last out is [N * spatial, C] in memory)
  if (out.is_contiguous()) launch_add_bias(out.data_ptr(), ins[2]->data_ptr(), out.dtype(), n, c, spatial, out.device().index);
  else launch_add_bias(out.data_ptr(), ins[2]->data_ptr(), out.dtype(), n * spatial, c, 1, out.device().index);
}

void conv_forward_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::ConvForward>(prim);
  TensorImpl& small = *outs[0];
  if (small.numel() == 0) return;
  if (ins[0]->numel() == 0 || ins[1]->numel() == 0) zero(small);  // an empty sum (no input channels)
  else run(Pass::Forward, p.geom, {p.allow_tf32, p.deterministic}, {ins[0], nullptr, ins[1], &small});
  add_bias(small, ins);
}

void conv_transpose_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::ConvTranspose>(prim);
  TensorImpl& big = *outs[0];
  if (big.numel() == 0) return;
  if (ins[0]->numel() == 0 || ins[1]->numel() == 0) zero(big);
  else run(Pass::Data, p.geom, {p.allow_tf32, p.deterministic}, {nullptr, ins[0], ins[1], &big});
  add_bias(big, ins);
}

void conv_weight_grad_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::ConvWeightGrad>(prim);
  TensorImpl& gw = *outs[0];
  if (gw.numel() == 0) return;
  if (ins[0]->numel() == 0 || ins[1]->numel() == 0) zero(gw);  // an empty batch
  else run(Pass::Filter, p.geom, {p.allow_tf32, p.deterministic}, {ins[0], ins[1], nullptr, &gw});
}

void im2col_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const TensorImpl& x = *ins[0];
  launch_im2col(x.data_ptr(), outs[0]->data_ptr(), x.dtype(), x.shape()[0], x.shape()[1],
                ops::prim_cast<ops::Im2Col>(prim).geom, x.device().index);
}

void col2im_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  TensorImpl& img = *outs[0];
  launch_col2im(ins[0]->data_ptr(), img.data_ptr(), img.dtype(), img.shape()[0], img.shape()[1],
                ops::prim_cast<ops::Col2Im>(prim).geom, img.device().index);
}

}  // namespace

void register_conv_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::ConvForward, DeviceType::GPU, conv_forward_kernel);
  ops::register_kernel(Prim::ConvTranspose, DeviceType::GPU, conv_transpose_kernel);
  ops::register_kernel(Prim::ConvWeightGrad, DeviceType::GPU, conv_weight_grad_kernel);
  ops::register_kernel(Prim::Im2Col, DeviceType::GPU, im2col_kernel);
  ops::register_kernel(Prim::Col2Im, DeviceType::GPU, col2im_kernel);
}

}  // namespace lucid::cuda
