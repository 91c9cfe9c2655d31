// CPU kernels of fused attention (AttentionForward / AttentionBackward, ops/prims/seq.h):
// the reference loops of flash attention's arithmetic (dropout included), in float (double for float64),
// over strided operands of any floating dtype. One query row per task forward; one
// (batch, key/value head) per task backward, so that the query heads sharing a key
// head (grouped-query) add into its gradients without a race.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "backend/cpu/register.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/parallel.h"
#include "ops/prims/seq.h"

namespace lucid::cpu {

namespace {

using ops::Inputs;
using ops::Outputs;
using ops::prim_cast;

// A [B, H, S, D] operand: element (b, h, s, d) at base[b*sb + h*sh + s*ss + d*sd]
// (element strides; the tensor's are in bytes).
template <class T>
struct Operand {
  T* base;
  int64_t sb, sh, ss, sd;
  explicit Operand(const TensorImpl* t)
      : base(reinterpret_cast<T*>(t->host_ptr())),
        sb(t->stride()[0] / int64_t(sizeof(T))),
        sh(t->stride()[1] / int64_t(sizeof(T))),
        ss(t->stride()[2] / int64_t(sizeof(T))),
        sd(t->stride()[3] / int64_t(sizeof(T))) {}
  T* row(int64_t b, int64_t h, int64_t s) const { return base + b * sb + h * sh + s * ss; }
};

// Row r of `src` (n elements, stride sd) into dst as A.
template <class A, class T>
void load_row(A* dst, const T* src, int64_t n, int64_t sd) {
  for (int64_t i = 0; i < n; ++i) dst[i] = A(float(src[i * sd]));
}
template <class A>
void load_row(A* dst, const double* src, int64_t n, int64_t sd) {
  for (int64_t i = 0; i < n; ++i) dst[i] = A(src[i * sd]);
}

template <class A>
A dot(const A* a, const A* b, int64_t n) {
  A s = 0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// Every key and value row of head (b, h) as A, [S, D] and [S, Dv].
template <class A, class T>
void load_head(std::vector<A>& kk, std::vector<A>& vv, const Operand<const T>& k, const Operand<const T>& v,
               int64_t b, int64_t h, int64_t skv, int64_t d, int64_t dv) {
  kk.resize(size_t(skv * d));
  vv.resize(size_t(skv * dv));
  for (int64_t j = 0; j < skv; ++j) {
    load_row(kk.data() + j * d, k.row(b, h, j), d, k.sd);
    load_row(vv.data() + j * dv, v.row(b, h, j), dv, v.sd);
  }
}

// The keys query i sees: all, or 0..i when causal.
inline int64_t keys_seen(int64_t i, int64_t skv, bool causal) { return causal ? std::min(i + 1, skv) : skv; }

// The additive mask [1 or B, 1 or Hq, Sq, Skv] (absent: none), read as A.
template <class T>
struct Mask {
  const T* base = nullptr;
  int64_t sb = 0, sh = 0, ss = 0, sd = 0;
  explicit Mask(const TensorImpl* t) {
    if (!t) return;
    const Operand<const T> m(t);
    base = m.base;
    // (a broadcast dim of 1 is read at index 0 for every batch or head)
    sb = t->shape()[0] == 1 ? 0 : m.sb, sh = t->shape()[1] == 1 ? 0 : m.sh, ss = m.ss, sd = m.sd;
  }
  template <class A>
  A at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (!base) return A(0);
    if constexpr (std::is_same_v<T, double>) return A(base[b * sb + h * sh + i * ss + j * sd]);
    else return A(float(base[b * sb + h * sh + i * ss + j * sd]));
  }
};

// The dropout's factor for weight `index`: 0 (dropped) or 1 / (1 - p) (AttentionDropout's
// rule: kept when its Philox word is at least p * 2^32); 1 without dropout.
template <class A>
struct DropoutFactor {
  const ops::AttentionDropout& d;
  uint32_t threshold;
  A kept;
  explicit DropoutFactor(const ops::AttentionDropout& d_)
      : d(d_), threshold(uint32_t(std::min(d_.p * 4294967296.0, 4294967295.0))), kept(A(1) / A(1 - d_.p)) {}
  A operator()(uint64_t index) const {
    if (!d.on()) return A(1);
    return d.draw.block(index / 4).x[index % 4] >= threshold ? kept : A(0);
  }
};

template <class T, class A>
void forward(const ops::AttentionForward& p, Outputs outs, Inputs ins) {
  const Operand<const T> q(ins[0]), k(ins[1]), v(ins[2]);
  const Mask<T> mask(ins.size() > 3 ? ins[3] : nullptr);
  const Operand<T> o(outs[0]);
  A* stats = reinterpret_cast<A*>(outs[1]->host_ptr());  // contiguous [B, Hq, Sq]
  const Shape &qs = ins[0]->shape(), &ks = ins[1]->shape();
  const int64_t B = qs[0], Hq = qs[1], Sq = qs[2], D = qs[3], Hk = ks[1], Skv = ks[2], Dv = ins[2]->shape()[3];
  const int64_t group = Hq / Hk;
  const A scale = A(p.scale);
  const DropoutFactor<A> drop(p.dropout);
  // one (batch, query head) per task: its key and value head converted once
  parallel_for(B * Hq, 1, [&](int64_t lo, int64_t hi) {
    std::vector<A> kk, vv, qi(static_cast<size_t>(D)), s(static_cast<size_t>(Skv)), acc(static_cast<size_t>(Dv));
    for (int64_t bh = lo; bh < hi; ++bh) {
      const int64_t b = bh / Hq, h = bh % Hq;
      load_head(kk, vv, k, v, b, h / group, Skv, D, Dv);
      for (int64_t i = 0; i < Sq; ++i) {
        load_row(qi.data(), q.row(b, h, i), D, q.sd);
        const int64_t n = keys_seen(i, Skv, p.causal);
        A m = -std::numeric_limits<A>::infinity();
        for (int64_t j = 0; j < n; ++j) {
          s[j] = dot(qi.data(), kk.data() + j * D, D) * scale + mask.template at<A>(b, h, i, j);
          m = std::max(m, s[j]);
        }
        std::fill(acc.begin(), acc.end(), A(0));
        A l = 0;
        for (int64_t j = 0; j < n && m > -std::numeric_limits<A>::infinity(); ++j) {  // (masked everywhere: none)
          const A e = std::exp(s[j] - m);
          l += e;
          const A w = e * drop(uint64_t((bh * Sq + i) * Skv + j));
          const A* vj = vv.data() + j * Dv;
          for (int64_t c = 0; c < Dv; ++c) acc[c] += w * vj[c];
        }
        T* oi = o.row(b, h, i);
        for (int64_t c = 0; c < Dv; ++c) oi[c * o.sd] = T(l > 0 ? acc[c] / l : A(0));
        stats[bh * Sq + i] = l > 0 ? m + std::log(l) : -std::numeric_limits<A>::infinity();
      }
    }
  });
}

template <class T, class A>
void backward(const ops::AttentionBackward& p, Outputs outs, Inputs ins) {
  const Operand<const T> q(ins[0]), k(ins[1]), v(ins[2]), o(ins[3]), d_o(ins[4]);
  const A* stats = reinterpret_cast<const A*>(ins[5]->host_ptr());
  const Mask<T> mask(ins.size() > 6 ? ins[6] : nullptr);
  const Operand<T> dq(outs[0]), dk(outs[1]), dv(outs[2]);
  const Shape &qs = ins[0]->shape(), &ks = ins[1]->shape();
  const int64_t B = qs[0], Hq = qs[1], Sq = qs[2], D = qs[3], Hk = ks[1], Skv = ks[2], Dv = ins[2]->shape()[3];
  const int64_t group = Hq / Hk;
  const A scale = A(p.scale);
  const DropoutFactor<A> drop(p.dropout);
  parallel_for(B * Hk, 1, [&](int64_t lo, int64_t hi) {
    std::vector<A> kk, vv, qi(static_cast<size_t>(D)), dqi(static_cast<size_t>(D));
    std::vector<A> oi(static_cast<size_t>(Dv)), gi(static_cast<size_t>(Dv));
    std::vector<A> dkk, dvv;
    for (int64_t bh = lo; bh < hi; ++bh) {
      const int64_t b = bh / Hk, hk = bh % Hk;
      load_head(kk, vv, k, v, b, hk, Skv, D, Dv);
      dkk.assign(size_t(Skv * D), A(0));
      dvv.assign(size_t(Skv * Dv), A(0));
      for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
        for (int64_t i = 0; i < Sq; ++i) {
          load_row(qi.data(), q.row(b, h, i), D, q.sd);
          load_row(oi.data(), o.row(b, h, i), Dv, o.sd);
          load_row(gi.data(), d_o.row(b, h, i), Dv, d_o.sd);
          const A lse = stats[(b * Hq + h) * Sq + i];
          // sum_j p_ij f_ij (d o_i . v_j), f the dropout's factors (o holds them)
          const A delta = dot(gi.data(), oi.data(), Dv);
          std::fill(dqi.begin(), dqi.end(), A(0));
          // (a row masked everywhere has no weights, so no gradient)
          const int64_t n = lse > -std::numeric_limits<A>::infinity() ? keys_seen(i, Skv, p.causal) : 0;
          for (int64_t j = 0; j < n; ++j) {
            const A* kj = kk.data() + j * D;
            const A* vj = vv.data() + j * Dv;
            const A pij = std::exp(dot(qi.data(), kj, D) * scale + mask.template at<A>(b, h, i, j) - lse);
            const A f = drop(uint64_t(((b * Hq + h) * Sq + i) * Skv + j));
            const A ds = pij * (f * dot(gi.data(), vj, Dv) - delta) * scale;
            A* dvj = dvv.data() + j * Dv;
            for (int64_t c = 0; c < Dv; ++c) dvj[c] += pij * f * gi[c];
            A* dkj = dkk.data() + j * D;
            for (int64_t c = 0; c < D; ++c) {
              dqi[c] += ds * kj[c];
              dkj[c] += ds * qi[c];
            }
          }
          T* out = dq.row(b, h, i);
          for (int64_t c = 0; c < D; ++c) out[c * dq.sd] = T(dqi[c]);
        }
      }
      for (int64_t j = 0; j < Skv; ++j) {
        T* dkj = dk.row(b, hk, j);
        T* dvj = dv.row(b, hk, j);
        for (int64_t c = 0; c < D; ++c) dkj[c * dk.sd] = T(dkk[size_t(j * D + c)]);
        for (int64_t c = 0; c < Dv; ++c) dvj[c * dv.sd] = T(dvv[size_t(j * Dv + c)]);
      }
    }
  });
}

// f.template operator()<T, A>() for the operands' dtype T and its accumulation type A.
template <class F>
void visit_attention_dtype(Dtype d, F&& f) {
  switch (d) {
    case Dtype::F16: return f.template operator()<Half, float>();
    case Dtype::BF16: return f.template operator()<BFloat16, float>();
    case Dtype::F32: return f.template operator()<float, float>();
    case Dtype::F64: return f.template operator()<double, double>();
    default: fail<RuntimeError>("scaled_dot_product_attention: internal: dtype ", dtype_name(d));
  }
}

void attention_forward_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::AttentionForward>(prim);
  visit_attention_dtype(ins[0]->dtype(), [&]<class T, class A>() { forward<T, A>(p, outs, ins); });
}

void attention_backward_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::AttentionBackward>(prim);
  visit_attention_dtype(ins[0]->dtype(), [&]<class T, class A>() { backward<T, A>(p, outs, ins); });
}

}  // namespace

void register_attention_kernels() {
  ops::register_kernel(ops::Prim::AttentionForward, DeviceType::CPU, attention_forward_kernel);
  ops::register_kernel(ops::Prim::AttentionBackward, DeviceType::CPU, attention_backward_kernel);
}

}  // namespace lucid::cpu
