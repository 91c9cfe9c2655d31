// Fused attention on the GPU (AttentionForward / AttentionBackward, ops/prims/seq.h):
// cuDNN's flash attention, reached through the backend graph API (cudnn_graph.h).
//
// Note [Attention through cuDNN]
// cuDNN has no single call for attention. Its runtime fusion engine recognises an
// operation graph of matrix products, pointwise ops and row reductions spelling
// softmax(q k^T * scale) v (and, for the backward, the flash attention gradient) and
// runs it as one fused kernel (cudnn_generated_..._sdpa_sm90_flash_fprop/bprop: the
// kernels PyTorch's cuDNN attention runs). The graphs below are the ones the
// cudnn-frontend library builds for its SDPA node, written directly as backend
// descriptors (that library is a large header set lucid does not need).
//  - Operands are [B, H, S, D] with any strides whose last is 1 and whose others are
//    multiples of 16 bytes (ops::attention_operand): [B, S, H, D] memory, as
//    nn.MultiheadAttention's head split leaves it, is read without a copy, and the
//    outputs keep their operand's memory order.
//  - One plan per (direction, dtype, shapes, strides, causal, device), made the first
//    time and kept for the process (making one costs milliseconds; running none).
//    attention_supported() makes both directions' plans before the forward runs, so
//    a graph cuDNN rejects is known before any work is done: the composite form then
//    computes the attention (python/lucid/nn/_functional_seq.py), never a backward
//    that fails halfway through a training step.
//  - The scale travels by value; the softmax statistics (each row's log-sum-exp, float32)
//    go from the forward to the backward as a tensor, as in flash attention.
//  - Dropout is cuDNN's RNG node (Bernoulli, Philox) multiplying the weights after the
//    softmax; its seed and offset travel by value (lucid's generator's draw), so the
//    backward regenerates the forward's mask instead of storing it.
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/cudnn.h"
#include "backend/cuda/cudnn_graph.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/register.h"
#include "core/error.h"
#include "ops/prims/seq.h"

namespace lucid::cuda {

namespace {

using Dims = GraphBuilder::Dims;
using ops::Inputs;
using ops::Outputs;

// The uids of the graphs' tensors that are not virtual, bound at execution: the
// operands, the by-value scalars (host floats) and the backward's two float32 scratch
// tensors in its workspace.
enum Uid : int64_t {
  kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV, kScale, kNegInf, kDeltaScale, kDeltas, kDqSum, kBias,
  kSeed, kOffset, kDropoutScale
};

cudnnDataType_t cudnn_dtype(Dtype d) { return d == Dtype::F16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16; }

Dims dims_of(const TensorImpl& t) { return Dims(t.shape().begin(), t.shape().end()); }

// Element strides (cuDNN's) from lucid's byte strides.
Dims elements(const Stride& bytes, int64_t size) {
  Dims s(bytes.begin(), bytes.end());
  for (int64_t& x : s) x /= size;
  return s;
}

Dims packed(const Dims& d) { return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1}; }
// The same memory with the last two dims swapped (k^T from k).
Dims swap_last(const Dims& d) { return {d[0], d[1], d[3], d[2]}; }

// The operands' shapes and element strides, dtype, mask and device: what a plan
// depends on. o, dq, dk, dv are laid out as ops/attention.cpp lays them out (dense,
// in their operand's memory order).
struct Layout {
  Dims q, k, v, o;        // shapes (dq, dk, dv: q's, k's, v's)
  Dims sq, sk, sv, so;    // strides
  Dims sdq, sdk, sdv;
  Dims bias, sbias;       // the additive mask [1 or B, 1 or Hq, Sq, Skv]; empty: none
  Dtype dtype = Dtype::F16;
  bool causal = false;
  double dropout = 0.0;  // the probability of dropping a weight (0: no RNG node)
  int device = 0;

  Layout(const TensorImpl& q_, const TensorImpl& k_, const TensorImpl& v_, bool causal_,
         const TensorImpl* bias_ = nullptr, double dropout_ = 0.0)
      : q(dims_of(q_)), k(dims_of(k_)), v(dims_of(v_)), dtype(q_.dtype()), causal(causal_), dropout(dropout_),
        device(q_.device().index) {
    if (bias_) bias = dims_of(*bias_), sbias = elements(bias_->stride(), int64_t(bias_->itemsize()));
    const int64_t size = int64_t(q_.itemsize());
    o = {q[0], q[1], q[2], v[3]};
    sq = elements(q_.stride(), size), sk = elements(k_.stride(), size), sv = elements(v_.stride(), size);
    so = elements(dense_strides_like(o, q_.stride(), size), size);
    sdq = elements(dense_strides_like(q, q_.stride(), size), size);
    sdk = elements(dense_strides_like(k, k_.stride(), size), size);
    sdv = elements(dense_strides_like(v, v_.stride(), size), size);
  }
  // [B, Hq, Sq, 1] float32, packed: the row statistics (cuDNN 9.19 wants them packed).
  Dims rows() const { return {q[0], q[1], q[2], 1}; }
  // The [B, Hq, Sq, Skv] scores (virtual: never in memory), packed, and transposed.
  Dims scores() const { return {q[0], q[1], q[2], k[2]}; }
  Dims scores_t() const { return {q[0], q[1], k[2], q[2]}; }
  Dims scores_t_strides() const { return {q[1] * q[2] * k[2], q[2] * k[2], 1, k[2]}; }
  bool grouped() const { return k[1] != q[1]; }
  // The backward's float32 scratch in front of cuDNN's workspace: d q's sums
  // [B, Hq, Sq, D] and the rows' sum(d o * o), each 256-byte aligned.
  int64_t dq_sum_bytes() const { return align(q[0] * q[1] * q[2] * q[3] * 4); }
  int64_t deltas_bytes() const { return align(q[0] * q[1] * q[2] * 4); }
  static int64_t align(int64_t n) { return (n + 255) / 256 * 256; }

  auto key(bool backward) const {
    return std::make_tuple(backward, device, dtype, causal, dropout, q, k, v, sq, sk, sv, bias, sbias);
  }
};
using PlanKey = decltype(std::declval<Layout>().key(false));

// -- the graphs (Note [Attention through cuDNN]; the node order is cudnn-frontend's) --

// select(row >= col, x, -inf): query i sees keys 0..i.
const BackendDescriptor& causal_mask(GraphBuilder& g, const Layout& l, const BackendDescriptor& x) {
  const Dims dims = l.scores(), strides = packed(dims);
  const auto& row = g.virtual_tensor(CUDNN_DATA_INT32, dims, strides);
  const auto& col = g.virtual_tensor(CUDNN_DATA_INT32, dims, strides);
  g.gen_index(x, 2, row);
  g.gen_index(x, 3, col);
  const auto& seen = g.virtual_tensor(CUDNN_DATA_BOOLEAN, dims, strides);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, &col, seen, nullptr, CUDNN_DATA_BOOLEAN);
  const auto& masked = g.virtual_tensor(CUDNN_DATA_FLOAT, dims, strides);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, x, &g.scalar(kNegInf), masked, &seen);
  return masked;
}

// q k^T * scale, [B, Hq, Sq, Skv] float32 (k^T is k's memory with two dims swapped;
// grouped-query heads broadcast over the product's batch dims).
const BackendDescriptor& scaled_scores(GraphBuilder& g, const Layout& l, const BackendDescriptor& q,
                                       const BackendDescriptor& kt, const BackendDescriptor& scale) {
  const Dims dims = l.scores(), strides = packed(dims);
  const auto& s = g.virtual_tensor(CUDNN_DATA_FLOAT, dims, strides);
  g.matmul(q, kt, s);
  const auto& scaled = g.virtual_tensor(CUDNN_DATA_FLOAT, dims, strides);
  g.pointwise(CUDNN_POINTWISE_MUL, s, &scale, scaled);
  return scaled;
}

// x + the mask, when there is one (broadcast over its batch and head dims of 1).
const BackendDescriptor& masked(GraphBuilder& g, const Layout& l, const BackendDescriptor& x) {
  if (l.bias.empty()) return x;
  const Dims dims = l.scores();
  const auto& out = g.virtual_tensor(CUDNN_DATA_FLOAT, dims, packed(dims));
  g.pointwise(CUDNN_POINTWISE_ADD, x, &g.tensor(kBias, cudnn_dtype(l.dtype), l.bias, l.sbias), out);
  return out;
}

// The dropout's keep-mask [B, Hq, Sq, Skv] (1 kept, 0 dropped), float32: cuDNN's RNG
// node from the by-value seed and offset, so a graph regenerates it rather than reading it.
const BackendDescriptor& keep_mask(GraphBuilder& g, const Layout& l) {
  const Dims dims = l.scores();
  const auto& kept = g.virtual_tensor(CUDNN_DATA_FLOAT, dims, packed(dims));
  g.bernoulli(1.0 - l.dropout, g.scalar(kSeed, CUDNN_DATA_INT64), g.scalar(kOffset, CUDNN_DATA_INT64), kept);
  return kept;
}

// The dropout's mask and its scale 1 / (1 - p) (bound by value), each one node of its graph.
struct Dropout {
  const BackendDescriptor& kept;
  const BackendDescriptor& scale;
  Dropout(GraphBuilder& g, const Layout& l) : kept(keep_mask(g, l)), scale(g.scalar(kDropoutScale)) {}
};

// x * kept * 1 / (1 - p) into a new `dtype` tensor.
const BackendDescriptor& drop(GraphBuilder& g, const Layout& l, const BackendDescriptor& x, const Dropout& d,
                              cudnnDataType_t dtype) {
  const Dims dims = l.scores(), strides = packed(dims);
  const auto& masked_x = g.virtual_tensor(CUDNN_DATA_FLOAT, dims, strides);
  g.pointwise(CUDNN_POINTWISE_MUL, x, &d.kept, masked_x);
  const auto& out = g.virtual_tensor(dtype, dims, strides);
  g.pointwise(CUDNN_POINTWISE_MUL, masked_x, &d.scale, out);
  return out;
}

BackendPlan forward_plan(cudnnHandle_t handle, const Layout& l) {
  GraphBuilder g;
  const cudnnDataType_t io = cudnn_dtype(l.dtype);
  const Dims dims = l.scores(), strides = packed(dims), rows = l.rows(), row_strides = packed(rows);
  const auto& q = g.tensor(kQ, io, l.q, l.sq);
  const auto& kt = g.tensor(kK, io, swap_last(l.k), swap_last(l.sk));
  const auto* s = &masked(g, l, scaled_scores(g, l, q, kt, g.scalar(kScale)));
  if (l.causal) s = &causal_mask(g, l, *s);
  // softmax with its statistics: max, exp(s - max), their sum, log-sum-exp
  const auto& max = g.virtual_tensor(CUDNN_DATA_FLOAT, rows, row_strides);
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, *s, max);
  const auto& shifted = g.virtual_tensor(CUDNN_DATA_FLOAT, dims, strides);
  g.pointwise(CUDNN_POINTWISE_SUB, *s, &max, shifted);
  const auto& e = g.virtual_tensor(CUDNN_DATA_FLOAT, dims, strides);
  g.pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, e);
  const auto& sum = g.virtual_tensor(CUDNN_DATA_FLOAT, rows, row_strides);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  const auto& log_sum = g.virtual_tensor(CUDNN_DATA_FLOAT, rows, row_strides);
  g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, log_sum);
  g.pointwise(CUDNN_POINTWISE_ADD, max, &log_sum, g.tensor(kStats, CUDNN_DATA_FLOAT, rows, row_strides));
  // the weights enter the second product in the operands' 16-bit type (as cuDNN requires),
  // dropped out after the softmax
  const auto* p = &g.virtual_tensor(l.dropout ? CUDNN_DATA_FLOAT : io, dims, strides);
  g.pointwise(CUDNN_POINTWISE_DIV, e, &sum, *p);
  if (l.dropout) p = &drop(g, l, *p, Dropout(g, l), io);
  g.matmul(*p, g.tensor(kV, io, l.v, l.sv), g.tensor(kO, io, l.o, l.so));
  return g.plan(handle, "scaled_dot_product_attention (cuDNN forward graph)");
}

// c = a b into `out`; with grouped-query heads the product is per query head
// ([B, Hq, ...], virtual) and summed over each group into out ([B, Hk, ...]).
void product_into(GraphBuilder& g, const Layout& l, const BackendDescriptor& a, const BackendDescriptor& b,
                  const BackendDescriptor& out, const Dims& out_dims, cudnnDataType_t io) {
  if (!l.grouped()) return g.matmul(a, b, out);
  const Dims full{out_dims[0], l.q[1], out_dims[2], out_dims[3]};
  const auto& per_head = g.virtual_tensor(io, full, packed(full));
  g.matmul(a, b, per_head);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, per_head, out);
}

// The flash attention gradient: with P = exp(scale q k^T [masked] - stats) and
// D = rowsum(d o * o): d v = P^T d o, dS = scale P * (d o v^T - D), d k = dS^T q,
// d q = dS k (summed in float32 scratch, then rounded). With dropout (mask M, r =
// 1 / (1 - p)): d v = (r P M)^T d o and dS = scale r P * (M d o v^T - D / r), the
// rows' D then bound pre-divided by r (kDeltaScale = 1 - p), as cudnn-frontend does.
BackendPlan backward_plan(cudnnHandle_t handle, const Layout& l) {
  GraphBuilder g;
  const cudnnDataType_t io = cudnn_dtype(l.dtype), f32 = CUDNN_DATA_FLOAT;
  const Dims dims = l.scores(), strides = packed(dims), rows = l.rows(), row_strides = packed(rows);
  const auto& q = g.tensor(kQ, io, l.q, l.sq);
  const auto& kt = g.tensor(kK, io, swap_last(l.k), swap_last(l.sk));
  const auto& vt = g.tensor(kV, io, swap_last(l.v), swap_last(l.sv));
  const auto& o = g.tensor(kO, io, l.o, l.so);
  const auto& d_o = g.tensor(kDO, io, l.o, l.so);
  const auto& stats = g.tensor(kStats, f32, rows, row_strides);
  const auto& scale = g.scalar(kScale);
  const auto& deltas = g.tensor(kDeltas, f32, rows, row_strides);
  const std::optional<Dropout> dropout = l.dropout ? std::optional<Dropout>(std::in_place, g, l) : std::nullopt;
  // D = rowsum(d o * o) * kDeltaScale (1, or 1 - p with dropout)
  const Dims o_dims = l.o;
  const auto& d_o_o = g.virtual_tensor(f32, o_dims, {o_dims[1] * o_dims[2] * o_dims[3], o_dims[2] * o_dims[3],
                                                     o_dims[1] * o_dims[3], 1});
  g.pointwise(CUDNN_POINTWISE_MUL, d_o, &o, d_o_o);
  const auto& row_sums = g.virtual_tensor(f32, rows, row_strides);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, d_o_o, row_sums);
  g.pointwise(CUDNN_POINTWISE_MUL, row_sums, &g.scalar(kDeltaScale), deltas);
  // P, recomputed from the statistics
  const auto& scaled = masked(g, l, scaled_scores(g, l, q, kt, scale));
  const auto* z = &g.virtual_tensor(f32, dims, strides);
  g.pointwise(CUDNN_POINTWISE_SUB, scaled, &stats, *z);
  if (l.causal) z = &causal_mask(g, l, *z);
  const auto& p = g.virtual_tensor(f32, dims, strides);
  g.pointwise(CUDNN_POINTWISE_EXP, *z, nullptr, p);
  // d v = P^T d o (P dropped out)
  const auto& pt = g.virtual_tensor(io, l.scores_t(), l.scores_t_strides());
  g.reshape(dropout ? drop(g, l, p, *dropout, f32) : p, pt);
  product_into(g, l, pt, d_o, g.tensor(kDV, io, l.v, l.sdv), l.v, io);
  // dS = scale P (d o v^T - D); with dropout scale r P (M d o v^T - D / r)
  const auto* dp = &g.virtual_tensor(f32, dims, strides);
  g.matmul(d_o, vt, *dp);
  if (dropout) {
    const auto& dp_kept = g.virtual_tensor(f32, dims, strides);
    g.pointwise(CUDNN_POINTWISE_MUL, *dp, &dropout->kept, dp_kept);
    dp = &dp_kept;
  }
  const auto& dp_centred = g.virtual_tensor(f32, dims, strides);
  g.pointwise(CUDNN_POINTWISE_SUB, *dp, &deltas, dp_centred);
  const auto* dp_weighted = &g.virtual_tensor(f32, dims, strides);
  g.pointwise(CUDNN_POINTWISE_MUL, dp_centred, &p, *dp_weighted);
  if (dropout) {
    const auto& rescaled = g.virtual_tensor(f32, dims, strides);
    g.pointwise(CUDNN_POINTWISE_MUL, *dp_weighted, &dropout->scale, rescaled);
    dp_weighted = &rescaled;
  }
  const auto& ds = g.virtual_tensor(f32, dims, strides);
  g.pointwise(CUDNN_POINTWISE_MUL, *dp_weighted, &scale, ds);
  // d k = dS^T q
  const auto& dst = g.virtual_tensor(io, l.scores_t(), l.scores_t_strides());
  g.reshape(ds, dst);
  product_into(g, l, dst, q, g.tensor(kDK, io, l.k, l.sdk), l.k, io);
  // d q = dS k, summed in float32 and rounded once
  const auto& k = g.virtual_tensor(f32, l.k, l.sk);
  g.reshape(kt, k);
  const auto& dq_sum = g.tensor(kDqSum, f32, l.q, packed(l.q));
  g.matmul(ds, k, dq_sum);
  g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_sum, nullptr, g.tensor(kDQ, io, l.q, l.sdq));
  return g.plan(handle, "scaled_dot_product_attention backward (cuDNN graph)");
}

// The process's plans; a null entry remembers a graph cuDNN rejected.
std::mutex g_plans_mutex;
std::map<PlanKey, std::shared_ptr<const BackendPlan>> g_plans;

// The plan of this direction and layout, made on first use; null when cuDNN rejects
// the graph (its reason in *why, when given).
std::shared_ptr<const BackendPlan> find_plan(bool backward, const Layout& l, std::string* why = nullptr) {
  const PlanKey key = l.key(backward);
  std::lock_guard<std::mutex> lock(g_plans_mutex);
  auto it = g_plans.find(key);
  if (it != g_plans.end()) return it->second;
  std::shared_ptr<const BackendPlan> plan;
  try {
    DeviceGuard guard(l.device);
    const cudnnHandle_t h = cudnn_handle(l.device);
    plan = std::make_shared<const BackendPlan>(backward ? backward_plan(h, l) : forward_plan(h, l));
  } catch (const RuntimeError& e) {
    if (why) *why = e.what();
  }
  g_plans.emplace(key, plan);
  return plan;
}

// Shapes and dtypes cuDNN's flash attention takes (its support matrix for Hopper and
// Ampere, and cudnn-frontend's checks): float16/bfloat16, head dims multiples of 8 up
// to 256, whole groups of query heads per key/value head; not a single query and key
// (which the backward rejects). Whether cuDNN has an engine is then its plan's answer.
bool shapes_supported(const TensorImpl& q, const TensorImpl& k, const TensorImpl& v, const TensorImpl* bias) {
  if (bias) {  // the mask's rows whole and of unit stride, as the operands'
    if (bias->dtype() != q.dtype() || !bias->is_gpu_storage() || bias->ndim() != 4) return false;
    if (bias->stride()[3] != int64_t(bias->itemsize()) || bias->stride()[2] % 16) return false;
  }
  if (q.dtype() != Dtype::F16 && q.dtype() != Dtype::BF16) return false;
  if (k.dtype() != q.dtype() || v.dtype() != q.dtype()) return false;
  for (const TensorImpl* t : {&q, &k, &v})
    if (!t->is_gpu_storage() || t->device() != q.device() || t->ndim() != 4 || t->numel() == 0) return false;
  const int64_t d = q.shape()[3], dv = v.shape()[3];
  if (d % 8 || dv % 8 || d > 256 || dv > 256 || k.shape()[3] != d) return false;
  if (k.shape()[0] != q.shape()[0] || v.shape()[0] != q.shape()[0]) return false;
  if (v.shape()[1] != k.shape()[1] || v.shape()[2] != k.shape()[2] || q.shape()[1] % k.shape()[1]) return false;
  return q.shape()[2] > 1 || k.shape()[2] > 1;
}

void require(const std::shared_ptr<const BackendPlan>& plan, const std::string& why, const char* what) {
  LUCID_CHECK(plan != nullptr, NotImplementedError, what,
              ": no fused GPU kernel for these operands (cuDNN's flash attention takes float16/bfloat16 with head "
              "dims that are multiples of 8 up to 256); the composite form computes them. cuDNN: ",
              why);
}

// The dropout's by-value scalars, bound at execution when there is dropout.
struct DropoutValues {
  int64_t seed, offset;
  float scale;
  bool on;
  explicit DropoutValues(const ops::AttentionDropout& d)
      : seed(int64_t(d.draw.seed)), offset(int64_t(d.draw.offset)), scale(float(1.0 / (1.0 - d.p))), on(d.on()) {}
  void bind(std::vector<int64_t>& uids, std::vector<void*>& ptrs) {
    if (!on) return;
    uids.insert(uids.end(), {kSeed, kOffset, kDropoutScale});
    ptrs.insert(ptrs.end(), {&seed, &offset, &scale});
  }
};

// The plan of the forward (backward) graph for these operands; NotImplementedError
// saying why there is none. Run as the primitives' Check too, so that the error comes
// from the call on a lazy GPU; the kernel's second lookup is a cache hit.
std::shared_ptr<const BackendPlan> plan_for(bool backward, const Layout& l, const TensorImpl& q, const TensorImpl& k,
                                            const TensorImpl& v, const TensorImpl* bias) {
  std::string why = "float16/bfloat16 operands only";
  std::shared_ptr<const BackendPlan> plan;
  if (shapes_supported(q, k, v, bias)) plan = find_plan(backward, l, &why);
  require(plan, why, backward ? "scaled_dot_product_attention backward" : "scaled_dot_product_attention");
  return plan;
}

void check_attention_forward(const ops::Primitive& prim, Outputs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::AttentionForward>(prim);
  const TensorImpl* bias = ins.size() > 3 ? ins[3] : nullptr;
  plan_for(false, Layout(*ins[0], *ins[1], *ins[2], p.causal, bias, p.dropout.p), *ins[0], *ins[1], *ins[2], bias);
}

void check_attention_backward(const ops::Primitive& prim, Outputs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::AttentionBackward>(prim);
  const TensorImpl* bias = ins.size() > 6 ? ins[6] : nullptr;
  plan_for(true, Layout(*ins[0], *ins[1], *ins[2], p.causal, bias, p.dropout.p), *ins[0], *ins[1], *ins[2], bias);
}

void attention_forward_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::AttentionForward>(prim);
  const TensorImpl &q = *ins[0], &k = *ins[1], &v = *ins[2];
  const TensorImpl* bias = ins.size() > 3 ? ins[3] : nullptr;
  const Layout l(q, k, v, p.causal, bias, p.dropout.p);
  const std::shared_ptr<const BackendPlan> plan = plan_for(false, l, q, k, v, bias);
  float scale = float(p.scale), neg_inf = -std::numeric_limits<float>::infinity();
  std::vector<int64_t> uids{kQ, kK, kV, kO, kStats, kScale};
  std::vector<void*> ptrs{q.data_ptr(), k.data_ptr(), v.data_ptr(), outs[0]->data_ptr(), outs[1]->data_ptr(),
                          &scale};
  if (l.causal) uids.push_back(kNegInf), ptrs.push_back(&neg_inf);
  if (bias) uids.push_back(kBias), ptrs.push_back(bias->data_ptr());
  DropoutValues dropout(p.dropout);
  dropout.bind(uids, ptrs);
  DeviceGuard guard(l.device);
  GpuStorage workspace;
  if (plan->workspace) workspace = CachingAllocator::instance().allocate(size_t(plan->workspace), l.device);
  execute(cudnn_handle(l.device), *plan, uids, ptrs, workspace.ptr());
}

void attention_backward_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::AttentionBackward>(prim);
  const TensorImpl &q = *ins[0], &k = *ins[1], &v = *ins[2], &o = *ins[3], &d_o = *ins[4], &stats = *ins[5];
  const TensorImpl* bias = ins.size() > 6 ? ins[6] : nullptr;
  const Layout l(q, k, v, p.causal, bias, p.dropout.p);
  const std::shared_ptr<const BackendPlan> plan = plan_for(true, l, q, k, v, bias);
  DeviceGuard guard(l.device);
  // [d q's float32 sums | the rows' D | cuDNN's own workspace]
  const int64_t scratch = l.dq_sum_bytes() + l.deltas_bytes();
  GpuStorage workspace = CachingAllocator::instance().allocate(size_t(scratch + plan->workspace), l.device);
  std::byte* ws = workspace.ptr();
  float scale = float(p.scale), neg_inf = -std::numeric_limits<float>::infinity();
  float delta_scale = float(1.0 - p.dropout.p);
  std::vector<int64_t> uids{kQ, kK, kV, kO, kDO, kStats, kDQ, kDK, kDV, kScale, kDeltaScale, kDqSum, kDeltas};
  std::vector<void*> ptrs{q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), d_o.data_ptr(),
                          stats.data_ptr(), outs[0]->data_ptr(), outs[1]->data_ptr(), outs[2]->data_ptr(),
                          &scale, &delta_scale, ws, ws + l.dq_sum_bytes()};
  if (l.causal) uids.push_back(kNegInf), ptrs.push_back(&neg_inf);
  if (bias) uids.push_back(kBias), ptrs.push_back(bias->data_ptr());
  DropoutValues dropout(p.dropout);
  dropout.bind(uids, ptrs);
  execute(cudnn_handle(l.device), *plan, uids, ptrs, ws + scratch);
}

}  // namespace

bool attention_supported(const TensorImpl& q, const TensorImpl& k, const TensorImpl& v, bool causal,
                         const TensorImpl* bias, double dropout) {
  if (!shapes_supported(q, k, v, bias)) return false;
  try {
    if (cudnn_version() < 90000) return false;
    const Layout l(q, k, v, causal, bias, dropout);
    return find_plan(false, l) && find_plan(true, l);
  } catch (const RuntimeError&) {  // no cuDNN, or none that loads: the composite form
    return false;
  }
}

void register_attention_kernels() {
  ops::register_kernel(ops::Prim::AttentionForward, DeviceType::GPU, attention_forward_kernel,
                       check_attention_forward);
  ops::register_kernel(ops::Prim::AttentionBackward, DeviceType::GPU, attention_backward_kernel,
                       check_attention_backward);
}

}  // namespace lucid::cuda
