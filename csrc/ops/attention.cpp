// Fused scaled dot-product attention (the AttentionForward / AttentionBackward
// primitives, ops/prims/seq.h): softmax(q k^T * scale [+ mask] [causal]) v without storing the
// [B, H, Sq, Skv] weights, optionally with dropout on them. On the GPU the kernels are cuDNN's flash attention
// (backend/cuda/attention.cpp); on the CPU a reference loop. nn.functional's
// scaled_dot_product_attention chooses this op or its composite form
// (python/lucid/nn/_functional_seq.py).
#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "ops/elementwise.h"
#include "ops/prims/seq.h"
#include "ops/reduce_plan.h"
#include "ops/seq_ops.h"

namespace lucid::ops {

namespace {

// An output of `shape` laid out in the memory order of `like` (q's [B, S, H, D] order
// stays, so that attention's usual transpose back to [B, S, H * D] is free).
TensorPtr empty_like_layout(const Shape& shape, const TensorImpl& like, Dtype dtype) {
  return TensorImpl::empty_strided(shape, dense_strides_like(shape, like.stride(), int64_t(dtype_size(dtype))), dtype,
                                   like.device());
}

void check_operands(const char* name, const TensorPtr& q, const TensorPtr& k, const TensorPtr& v) {
  op_device(name, {q.get(), k.get(), v.get()});
  LUCID_CHECK(q->ndim() == 4 && k->ndim() == 4 && v->ndim() == 4, RuntimeError, name,
              "(): expected query, key and value of 4 dims [B, H, S, D], got ", shape_str(q->shape()), ", ",
              shape_str(k->shape()), " and ", shape_str(v->shape()));
  LUCID_CHECK(is_floating(q->dtype()) && k->dtype() == q->dtype() && v->dtype() == q->dtype(), RuntimeError, name,
              "(): expected query, key and value of one floating dtype, got ", dtype_name(q->dtype()), ", ",
              dtype_name(k->dtype()), " and ", dtype_name(v->dtype()));
  const Shape &qs = q->shape(), &ks = k->shape(), &vs = v->shape();
  LUCID_CHECK(ks[0] == qs[0] && vs[0] == qs[0], RuntimeError, name, "(): batch sizes differ: query ", qs[0],
              ", key ", ks[0], ", value ", vs[0]);
  LUCID_CHECK(ks[3] == qs[3], RuntimeError, name, "(): query's last dim (", qs[3], ") must equal key's (", ks[3],
              ")");
  LUCID_CHECK(vs[1] == ks[1] && vs[2] == ks[2], RuntimeError, name,
              "(): key and value must have the same heads and sequence length, got ", shape_str(ks), " and ",
              shape_str(vs));
  LUCID_CHECK(ks[1] > 0 && qs[1] % ks[1] == 0, RuntimeError, name, "(): the query heads (", qs[1],
              ") must be a multiple of the key/value heads (", ks[1], ")");
}

}  // namespace

TensorPtr attention_operand(const TensorPtr& t) {
  // 16-byte aligned rows of unit stride, as cuDNN reads them (strides are in bytes)
  const Stride& s = t->stride();
  bool ok = t->ndim() == 4 && s[3] == int64_t(t->itemsize()) && t->storage_offset() % 16 == 0;
  for (int64_t i = 0; ok && i < 3; ++i) ok = t->shape()[i] == 1 || s[i] % 16 == 0;
  return ok ? t : contiguous_as(t, t->dtype());
}

// The mask as the kernels read it: [1 or B, 1 or Hq, Sq, Skv] of q's dtype, no gradient.
TensorPtr attention_bias(const char* name, const TensorPtr& bias, const TensorImpl& q, const TensorImpl& k) {
  if (!bias) return nullptr;
  op_device(name, {&q, bias.get()});
  const Shape &qs = q.shape(), &bs = bias->shape();
  LUCID_CHECK(bias->ndim() == 4 && (bs[0] == 1 || bs[0] == qs[0]) && (bs[1] == 1 || bs[1] == qs[1]) &&
                  bs[2] == qs[2] && bs[3] == k.shape()[2],
              RuntimeError, name, "(): expected a mask of shape [1 or ", qs[0], ", 1 or ", qs[1], ", ", qs[2], ", ",
              k.shape()[2], "], got ", shape_str(bs));
  LUCID_CHECK(bias->dtype() == q.dtype(), RuntimeError, name, "(): expected a mask of the query's dtype ",
              dtype_name(q.dtype()), ", got ", dtype_name(bias->dtype()));
  LUCID_CHECK(!bias->requires_grad(), NotImplementedError, name,
              "(): the fused kernel takes no gradient for its mask; the composite form does");
  return attention_operand(bias);
}

std::vector<TensorPtr> attention_fused(const TensorPtr& query, const TensorPtr& key, const TensorPtr& value,
                                       double scale, bool causal, const TensorPtr& mask, double dropout) {
  const char* name = "scaled_dot_product_attention";
  check_operands(name, query, key, value);
  LUCID_CHECK(dropout >= 0.0 && dropout < 1.0, RuntimeError, name,
              "(): expected a dropout probability in [0, 1) for the fused kernel, got ", dropout);
  TensorPtr q = attention_operand(query), k = attention_operand(key), v = attention_operand(value);
  TensorPtr bias = attention_bias(name, mask, *q, *k);
  const Shape& qs = q->shape();
  const Dtype stats_dtype = q->dtype() == Dtype::F64 ? Dtype::F64 : Dtype::F32;
  TensorPtr o = empty_like_layout({qs[0], qs[1], qs[2], v->shape()[3]}, *q, q->dtype());
  TensorPtr stats = TensorImpl::empty({qs[0], qs[1], qs[2]}, stats_dtype, q->device());
  AttentionForward p;
  p.scale = scale, p.causal = causal;
  if (dropout > 0.0) {
    // one Philox word per weight (the CPU's; cuDNN's stream starts at the same offset)
    const uint64_t weights = uint64_t(qs[0] * qs[1] * qs[2] * k->shape()[2]);
    p.dropout = {dropout, default_generator().draw(weights)};
  }
  if (bias) launch(p, {o.get(), stats.get()}, {q.get(), k.get(), v.get(), bias.get()});
  else launch(p, {o.get(), stats.get()}, {q.get(), k.get(), v.get()});
  if (autograd::needs_grad({&query, &key, &value})) {
    auto node = autograd::record("ScaledDotProductFlashAttentionBackward0", {query, key, value}, {o},
                                 [scale, causal, bias, drop = p.dropout](const Node& n, const autograd::Grads& g) {
      // (torch's fused attention has no double backward either)
      LUCID_CHECK(!autograd::grad_enabled(), NotImplementedError,
                  "the gradient of the fused scaled_dot_product_attention is not differentiable (create_graph); "
                  "use float32 or float64 inputs, which take the composite form");
      TensorPtr q = n.saved(0), k = n.saved(1), v = n.saved(2), o = n.saved(3), stats = n.saved(4);
      // d o in o's layout: the backward's plan (cuDNN's) is made for o's strides
      TensorPtr d_o = g[0];
      if (d_o->stride() != o->stride() || d_o->storage_offset() % 16 != 0) {
        TensorPtr c = empty_like_layout(o->shape(), *o, o->dtype());
        c->copy_from(*d_o);
        d_o = c;
      }
      TensorPtr dq = empty_like_layout(q->shape(), *q, q->dtype());
      TensorPtr dk = empty_like_layout(k->shape(), *k, k->dtype());
      TensorPtr dv = empty_like_layout(v->shape(), *v, v->dtype());
      AttentionBackward back;
      back.scale = scale, back.causal = causal, back.dropout = drop;
      if (bias)
        launch(back, {dq.get(), dk.get(), dv.get()},
               {q.get(), k.get(), v.get(), o.get(), d_o.get(), stats.get(), bias.get()});
      else
        launch(back, {dq.get(), dk.get(), dv.get()}, {q.get(), k.get(), v.get(), o.get(), d_o.get(), stats.get()});
      return autograd::Grads{dq, dk, dv};
    });
    node->save(q);
    node->save(k);
    node->save(v);
    node->save(o, true);
    node->save(stats);
  }
  return {o, stats};
}

}  // namespace lucid::ops
