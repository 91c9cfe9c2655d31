// The convolution primitives on the GPU (ops/prims/spatial.h): ConvForward,
// ConvTranspose and ConvWeightGrad through cuDNN, Im2Col and Col2Im through lucid's
// own kernels (im2col.cu).
//
// Note [Convolutions through cuDNN]
// The three convolution primitives are cuDNN's three legacy convolution calls on one
// set of descriptors: ConvForward is cudnnConvolutionForward (big -> small),
// ConvTranspose cudnnConvolutionBackwardData (small -> big, the adjoint) and
// ConvWeightGrad cudnnConvolutionBackwardFilter; lucid's weight layout [Cs, Cb/groups,
// *k] is cuDNN's filter for all three. lucid's geometry is always 3-d; a size-1
// leading dim is dropped, so 2-d convolutions run as cuDNN's 2-d ones and 1-d as 2-d
// with height 1 (as PyTorch runs them). Each (pass, shape, geometry, dtype, TF32
// choice, device) builds its descriptors and picks its algorithm once, with the v7
// heuristics (no benchmarking, which would synchronise and allocate); the plan lives
// for the process, the workspace comes from the caching allocator per call.
//  - Exact float32 by default: cuDNN's CUDNN_DEFAULT_MATH lets float32 convolutions
//    use TF32 tensor cores (PyTorch's torch.backends.cudnn.allow_tf32 is True by
//    default). lucid instead follows its matmul switch: CUDNN_FMA_MATH (no TF32)
//    unless lucid.backends.cuda.matmul.allow_tf32 is set, carried by the primitive,
//    so a convolution and the same product through matmul round alike.
//  - float16/bfloat16 run natively on tensor cores, accumulating in float32
//    (ops/conv_common.h conv_product_dtype): 2-4x faster than computing them in
//    float32. Where cuDNN cannot run one, the GEMM route computes it in float32 and
//    rounds once (run_gemm_in_float32).
//  - Deterministic when asked: with lucid.backends.cudnn.deterministic or
//    use_deterministic_algorithms (ops::conv_deterministic, carried by the primitive)
//    only algorithms cuDNN reports as deterministic are taken (the first such in the
//    heuristic's order), as PyTorch does; backward data and filter ALGO_0 and filter
//    ALGO_3 sum with atomics and are skipped. By default, as PyTorch's, the heuristic's
//    first algorithm runs, whatever it is.
//  - What cuDNN cannot express runs as im2col + cuBLASLt GEMM (conv_gemm.h), on the
//    GPU: conv_transpose with output_padding >= stride (allowed when it is below the
//    dilation), whose big image is larger than the one cuDNN derives from the small;
//    tensors past cuDNN's int sizes; any geometry for which cuDNN reports no
//    deterministic algorithm or rejects a descriptor; and one whose algorithm the
//    convolution call itself refuses (CUDNN_STATUS_NOT_SUPPORTED), from then on.
#include <array>
#include <climits>
#include <map>
#include <mutex>
#include <vector>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/cast_kernel.cuh"
#include "backend/cuda/check.h"
#include "backend/cuda/conv_gemm.h"
#include "backend/cuda/cudnn.h"
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

enum class Pass { Forward, Data, Filter };

constexpr int kMaxAlgos = 16;                       // more than any pass has
constexpr size_t kMaxWorkspace = size_t(1) << 30;  // an algorithm wanting more is passed over

// One convolution's cuDNN descriptors and algorithm; usable false when cuDNN cannot
// run it (then conv_gemm.h does).
struct Plan {
  bool usable = false;
  cudnnTensorDescriptor_t big = nullptr, small = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;
  size_t workspace = 0;
};

// What the primitive asks of the algorithm: TF32 allowed, deterministic only.
struct Choice {
  bool tf32 = false, deterministic = false;
};

// pass, device, dtype, choice, n, cb, cs, groups, then big, small, k, stride, pad, dil.
using PlanKey = std::array<int64_t, 26>;

PlanKey key_of(Pass pass, int device, Dtype dtype, Choice c, int64_t n, int64_t cb, int64_t cs,
               const ConvGeometry& g) {
  PlanKey key{int64_t(pass), device, int64_t(dtype), int64_t(c.tf32) | int64_t(c.deterministic) << 1, n, cb, cs,
              g.groups};
  for (int d = 0; d < 3; ++d) {
    key[8 + d] = g.big[d];
    key[11 + d] = g.small[d];
    key[14 + d] = g.k[d];
    key[17 + d] = g.stride[d];
    key[20 + d] = g.pad[d];
    key[23 + d] = g.dil[d];
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

bool set_tensor(cudnnTensorDescriptor_t desc, cudnnDataType_t type, const std::vector<int>& dims) {
  std::vector<int> strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * dims[i];
  return cudnn().tensor_set(desc, type, int(dims.size()), dims.data(), strides.data()) == CUDNN_STATUS_SUCCESS;
}

void destroy(Plan& p) {
  const CudnnApi& api = cudnn();
  if (p.big) api.tensor_destroy(p.big);
  if (p.small) api.tensor_destroy(p.small);
  if (p.w) api.filter_destroy(p.w);
  if (p.conv) api.conv_destroy(p.conv);
  p = Plan{};
}

// Takes the first algorithm of the heuristic's list that ran (status), is
// deterministic when asked, keeps float32 exact when asked (no tensor-op math) and
// whose workspace is at most kMaxWorkspace; sets the descriptor's math type to it.
// get(count, &returned, perf) lists the algorithms, workspace(algo, &bytes) sizes one.
template <typename Perf, typename Get, typename Workspace>
bool choose(Plan& p, bool exact_float, bool deterministic, Get get, Workspace workspace) {
  Perf perf[kMaxAlgos];
  int count = 0;
  if (get(kMaxAlgos, &count, perf) != CUDNN_STATUS_SUCCESS) return false;
  for (int i = 0; i < count; ++i) {
    const Perf& r = perf[i];
    if (r.status != CUDNN_STATUS_SUCCESS || (deterministic && r.determinism != CUDNN_DETERMINISTIC)) continue;
    const bool tensor_ops = r.mathType == CUDNN_TENSOR_OP_MATH || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    if (exact_float && tensor_ops) continue;
    if (cudnn().conv_set_math(p.conv, exact_float ? CUDNN_FMA_MATH : r.mathType) != CUDNN_STATUS_SUCCESS) continue;
    size_t bytes = 0;
    if (workspace(r.algo, &bytes) != CUDNN_STATUS_SUCCESS || bytes > kMaxWorkspace) continue;
    p.algo = int(r.algo);
    p.workspace = bytes;
    return true;
  }
  return false;
}

Plan build_plan(Pass pass, int device, Dtype dtype, Choice c, int64_t n, int64_t cb, int64_t cs,
                const ConvGeometry& g) {
  Plan p;
  if (!expressible(g, n, cb, cs)) return p;
  const CudnnApi& api = cudnn();
  const cudnnHandle_t h = cudnn_handle(device);
  const cudnnDataType_t type = data_type(dtype);
  // (16-bit products accumulate in float32, as PyTorch asks cuDNN for them)
  const cudnnDataType_t compute = dtype == Dtype::F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  const int first = first_dim(g), nsp = 3 - first;
  std::vector<int> big{int(n), int(cb)}, small{int(n), int(cs)}, w{int(cs), int(cb / g.groups)}, pad, stride, dil;
  for (int d = first; d < 3; ++d) {
    big.push_back(int(g.big[d]));
    small.push_back(int(g.small[d]));
    w.push_back(int(g.k[d]));
    pad.push_back(int(g.pad[d]));
    stride.push_back(int(g.stride[d]));
    dil.push_back(int(g.dil[d]));
  }
  constexpr cudnnStatus_t ok = CUDNN_STATUS_SUCCESS;
  bool built = api.tensor_create(&p.big) == ok && api.tensor_create(&p.small) == ok &&
               api.filter_create(&p.w) == ok && api.conv_create(&p.conv) == ok && set_tensor(p.big, type, big) &&
               set_tensor(p.small, type, small) &&
               api.filter_set(p.w, type, CUDNN_TENSOR_NCHW, nsp + 2, w.data()) == ok &&
               api.conv_set(p.conv, nsp, pad.data(), stride.data(), dil.data(), CUDNN_CROSS_CORRELATION, compute) == ok &&
               api.conv_set_groups(p.conv, int(g.groups)) == ok;
  // (the heuristics rank the algorithms for the math type set here, as PyTorch asks:
  // tensor cores for 16-bit, which under the default math ranked SIMT algorithms first)
  const bool exact = dtype == Dtype::F32 && !c.tf32, half = dtype == Dtype::F16 || dtype == Dtype::BF16;
  const cudnnMathType_t math = exact ? CUDNN_FMA_MATH : half ? CUDNN_TENSOR_OP_MATH : CUDNN_DEFAULT_MATH;
  built = built && api.conv_set_math(p.conv, math) == ok;
  if (built) {
    switch (pass) {
      case Pass::Forward:
        built = choose<cudnnConvolutionFwdAlgoPerf_t>(
            p, exact, c.deterministic, [&](int c, int* r, cudnnConvolutionFwdAlgoPerf_t* perf) {
              return api.forward_algos(h, p.big, p.w, p.conv, p.small, c, r, perf);
            },
            [&](cudnnConvolutionFwdAlgo_t a, size_t* bytes) {
              return api.forward_workspace(h, p.big, p.w, p.conv, p.small, a, bytes);
            });
        break;
      case Pass::Data:
        built = choose<cudnnConvolutionBwdDataAlgoPerf_t>(
            p, exact, c.deterministic, [&](int c, int* r, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
              return api.data_algos(h, p.w, p.small, p.conv, p.big, c, r, perf);
            },
            [&](cudnnConvolutionBwdDataAlgo_t a, size_t* bytes) {
              return api.data_workspace(h, p.w, p.small, p.conv, p.big, a, bytes);
            });
        break;
      case Pass::Filter:
        built = choose<cudnnConvolutionBwdFilterAlgoPerf_t>(
            p, exact, c.deterministic, [&](int c, int* r, cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
              return api.filter_algos(h, p.big, p.small, p.conv, p.w, c, r, perf);
            },
            [&](cudnnConvolutionBwdFilterAlgo_t a, size_t* bytes) {
              return api.filter_workspace(h, p.big, p.small, p.conv, p.w, a, bytes);
            });
        break;
    }
  }
  if (!built) destroy(p);
  p.usable = built;
  return p;
}

// The plans, built once per key; descriptors live for the process.
std::mutex plans_mu;
std::map<PlanKey, Plan> plans;

// A copy of the key's plan (a few handles), built on first use.
Plan plan_for(const PlanKey& key, Pass pass, int device, Dtype dtype, Choice c, int64_t n, int64_t cb, int64_t cs,
              const ConvGeometry& g) {
  std::lock_guard<std::mutex> lock(plans_mu);
  auto it = plans.find(key);
  if (it != plans.end()) return it->second;
  return plans.emplace(key, build_plan(pass, device, dtype, c, n, cb, cs, g)).first->second;
}

// A plan whose algorithm cuDNN refused when run (its heuristics can list one that the
// call then reports CUDNN_STATUS_NOT_SUPPORTED for): the key runs as im2col + GEMM
// from now on. Its descriptors are kept (another thread may be using them).
void retire(const PlanKey& key) {
  std::lock_guard<std::mutex> lock(plans_mu);
  plans[key].usable = false;
}

// One convolution pass: out = forward(big, w), data(small, w) or filter(big, small).
// Tensors non-empty and contiguous.
struct Operands {
  const TensorImpl* big;
  const TensorImpl* small;
  const TensorImpl* w;
  TensorImpl* out;
};

cudnnStatus_t run_cudnn(Pass pass, const Plan& p, const Operands& t, const TensorImpl& big,
                        const TensorImpl& small) {
  const CudnnApi& api = cudnn();
  const Dtype dtype = t.out->dtype();
  const int device = t.out->device().index;
  DeviceGuard guard(device);
  GpuStorage workspace;
  if (p.workspace) workspace = CachingAllocator::instance().allocate(p.workspace, device);
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const void* one = dtype == Dtype::F64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = dtype == Dtype::F64 ? static_cast<const void*>(&zero_d) : &zero_f;
  const cudnnHandle_t h = cudnn_handle(device);
  void* ws = workspace.ptr();
  switch (pass) {
    case Pass::Forward:
      return api.forward(h, one, p.big, big.data_ptr(), p.w, t.w->data_ptr(), p.conv,
                         cudnnConvolutionFwdAlgo_t(p.algo), ws, p.workspace, zero, p.small, t.out->data_ptr());
    case Pass::Data:
      return api.backward_data(h, one, p.w, t.w->data_ptr(), p.small, small.data_ptr(), p.conv,
                               cudnnConvolutionBwdDataAlgo_t(p.algo), ws, p.workspace, zero, p.big,
                               t.out->data_ptr());
    case Pass::Filter:
      return api.backward_filter(h, one, p.big, big.data_ptr(), p.small, small.data_ptr(), p.conv,
                                 cudnnConvolutionBwdFilterAlgo_t(p.algo), ws, p.workspace, zero, p.w,
                                 t.out->data_ptr());
  }
  return CUDNN_STATUS_BAD_PARAM;
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

constexpr const char* kCallName[] = {"cudnnConvolutionForward", "cudnnConvolutionBackwardData",
                                     "cudnnConvolutionBackwardFilter"};

void run(Pass pass, const ConvGeometry& g, Choice c, const Operands& t) {
  const TensorImpl& big = pass == Pass::Data ? *t.out : *t.big;
  const TensorImpl& small = pass == Pass::Forward ? *t.out : *t.small;
  const Dtype dtype = t.out->dtype();
  const int device = t.out->device().index;
  const int64_t n = big.shape()[0], cb = big.shape()[1], cs = small.shape()[1];
  const PlanKey key = key_of(pass, device, dtype, c, n, cb, cs, g);
  const Plan p = plan_for(key, pass, device, dtype, c, n, cb, cs, g);
  if (p.usable) {
    const cudnnStatus_t status = run_cudnn(pass, p, t, big, small);
    if (status != CUDNN_STATUS_NOT_SUPPORTED) return check_cudnn(status, kCallName[int(pass)]);
    retire(key);
  }
  if (dtype == Dtype::F16 || dtype == Dtype::BF16) return run_gemm_in_float32(pass, g, t, big, small);
  run_gemm(pass, g, c.tf32, big, small, *t.w, *t.out);
}

void zero(TensorImpl& t) {
  const int device = t.device().index;
  DeviceGuard guard(device);
  LUCID_CUDA_CHECK(cudaMemsetAsync(t.data_ptr(), 0, t.nbytes(), stream(device)));
}

// out [N, C, *spatial] += bias [C], when there is a bias; out non-empty.
void add_bias(TensorImpl& out, Inputs ins) {
  if (ins.size() < 3) return;
  const int64_t n = out.shape()[0], c = out.shape()[1];
  launch_add_bias(out.data_ptr(), ins[2]->data_ptr(), out.dtype(), n, c, out.numel() / (n * c), out.device().index);
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
