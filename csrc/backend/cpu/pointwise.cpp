// The CPU kernel of the Pointwise primitive (Note [One rounding], ops/prims/elementwise.h):
// add with alpha, lerp, addcmul, addcdiv over dense rows, in the opmath type.
#include <type_traits>

#include "backend/cpu/elementwise.h"
#include "core/isa.h"
#include "core/error.h"
#include "core/parallel.h"
#include "ops/pointwise_functors.h"
#include "ops/prims/elementwise.h"

namespace lucid::cpu {

namespace {

// o[i] = f(x[i], y[i], z ? z[i] : z_value, value), computed in C. Compiled twice: the
// baseline (std::fma a library call) and with AVX2 and FMA (std::fma one instruction);
// both round alike, since a fused multiply-add is exact before its one rounding.
#define LUCID_POINTWISE_LOOP(ATTR, SFX)                                                                    \
  template <typename T, typename C, typename F>                                                           \
  ATTR void pointwise_rows##SFX(T* __restrict o, const T* __restrict x, const T* __restrict y,             \
                                const T* __restrict z, C z_value, C value, int64_t n, F f) {              \
    if (z)                                                                                                \
      for (int64_t i = 0; i < n; ++i) o[i] = T(f(C(x[i]), C(y[i]), C(z[i]), value));                      \
    else                                                                                                  \
      for (int64_t i = 0; i < n; ++i) o[i] = T(f(C(x[i]), C(y[i]), z_value, value));                      \
  }
LUCID_POINTWISE_LOOP(, _base)
#if LUCID_X86_DISPATCH
LUCID_POINTWISE_LOOP(__attribute__((target("avx2,fma"))), _fma)
#endif
#undef LUCID_POINTWISE_LOOP

template <typename T, typename F>
void run_rows(T* o, const T* x, const T* y, const T* z, const ops::Pointwise& p, int64_t n, F f) {
  using C = std::conditional_t<sizeof(T) == 2, float, T>;  // (Half, BFloat16: float)
  C z_value = C(p.z.value_or(0.0));
  const C value = C(p.value);
  // torch's CPU kernel takes add's alpha in the tensors' dtype (its CUDA kernel in float)
  if (p.op == ops::PointwiseOp::AddScaled) z_value = C(T(z_value));
#if LUCID_X86_DISPATCH
  static const bool fma = cpu_isa() != Isa::Baseline;
#else
  constexpr bool fma = false;
#endif
  parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
    const T* zb = z ? z + b : nullptr;
#if LUCID_X86_DISPATCH
    if (fma) return pointwise_rows_fma(o + b, x + b, y + b, zb, z_value, value, e - b, f);
#endif
    pointwise_rows_base(o + b, x + b, y + b, zb, z_value, value, e - b, f);
  });
}

template <typename T>
void run_dense(T* o, const T* x, const T* y, const T* z, const ops::Pointwise& p, int64_t n) {
  namespace pw = ops::pointwise;
  switch (p.op) {
    case ops::PointwiseOp::AddScaled: return run_rows(o, x, y, z, p, n, pw::AddScaled());
    case ops::PointwiseOp::Lerp: return run_rows(o, x, y, z, p, n, pw::Lerp());
    case ops::PointwiseOp::Addcmul: return run_rows(o, x, y, z, p, n, pw::Addcmul());
    case ops::PointwiseOp::Addcdiv: return run_rows(o, x, y, z, p, n, pw::Addcdiv());
  }
}

}  // namespace

// Inputs that do not lie dense (broadcast, strided) are made dense first, and an output
// that does not is written through a dense one (the elements are independent).
void pointwise_kernel(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<ops::Pointwise>(prim);
  TensorImpl& out = *outs[0];
  LUCID_CHECK(ins.size() == (p.z ? 2u : 3u), RuntimeError, "internal: ", p.name(), " given ", ins.size(),
              " tensors");
  TensorPtr held[3];
  const std::byte* in[3] = {};
  for (size_t k = 0; k < ins.size(); ++k) {
    const TensorImpl* t = ins[k];
    if (!t->is_contiguous() || t->numel() != out.numel()) t = (held[k] = t->clone()).get();
    in[k] = t->host_ptr();
  }
  TensorPtr dense = out.is_contiguous() ? nullptr : TensorImpl::empty(out.shape(), out.dtype(), Device::cpu());
  std::byte* o = dense ? dense->host_ptr() : out.host_ptr();
  auto run = [&]<typename T>() {
    run_dense(reinterpret_cast<T*>(o), reinterpret_cast<const T*>(in[0]), reinterpret_cast<const T*>(in[1]),
              reinterpret_cast<const T*>(in[2]), p, out.numel());
  };
  switch (p.compute) {
    case Dtype::F16: run.operator()<Half>(); break;
    case Dtype::BF16: run.operator()<BFloat16>(); break;
    case Dtype::F32: run.operator()<float>(); break;
    case Dtype::F64: run.operator()<double>(); break;
    default: fail<RuntimeError>("internal: ", p.name(), " of dtype ", dtype_name(p.compute));
  }
  if (!dense) return;
  write_dense_into(out, *dense);
}

}  // namespace lucid::cpu
