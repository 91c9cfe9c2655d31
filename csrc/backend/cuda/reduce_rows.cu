// CUDA kernels of the row reductions that run over an accumulate-dtype copy
// (ops/prims/reduce.h: ProdRows, RowStat) and of nonzero's count (ops/prims/index.h:
// CountNonzero), all on the deterministic engine of reduce.cuh. The statistics follow
// the CPU's (backend/cpu/reduce_stats.cpp) case for case: two passes for variances
// (the mean, then the squared deviations), two for log-sum-exp (the maximum, then the
// sum of exponentials), the same special values for empty rows, NaNs and infinities.
#include <cmath>
#include <limits>

#include "backend/cuda/reduce.cuh"
#include "backend/cuda/register.h"
#include "backend/cuda/tensor_data.h"
#include "ops/prims/index.h"
#include "ops/prims/reduce.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

// complex128 as stored and accumulated (complex rows come in complex128, the ops
// layer's accumulate dtype).
struct Cplx {
  double re, im;
};

__device__ inline Cplx cmul(Cplx a, Cplx b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }

// ---- prod ---------------------------------------------------------------------------

// int64 products wrap (as PyTorch's, and the CPU's): computed in uint64, which wraps
// by definition and gives the same bits in any order.
struct ProdI64 {
  using Acc = uint64_t;
  const int64_t* x;
  int64_t* y;
  __device__ Acc init() const { return 1; }
  __device__ Acc load(int64_t e, int64_t) const { return uint64_t(x[e]); }
  __device__ Acc combine(Acc a, Acc b) const { return a * b; }
  __device__ void store(int64_t o, Acc a) const { y[o] = int64_t(a); }
};

struct ProdF64 {
  using Acc = double;
  const double* x;
  double* y;
  __device__ Acc init() const { return 1.0; }
  __device__ Acc load(int64_t e, int64_t) const { return x[e]; }
  __device__ Acc combine(Acc a, Acc b) const { return a * b; }
  __device__ void store(int64_t o, Acc a) const { y[o] = a; }
};

struct ProdC128 {
  using Acc = Cplx;
  const Cplx* x;
  Cplx* y;
  __device__ Acc init() const { return {1.0, 0.0}; }
  __device__ Acc load(int64_t e, int64_t) const { return x[e]; }
  __device__ Acc combine(Acc a, Acc b) const { return cmul(a, b); }
  __device__ void store(int64_t o, Acc a) const { y[o] = a; }
};

void prod_rows_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::ProdRows>(prim);
  const TensorImpl* x = ins[0];
  TensorImpl* y = outs[0];
  const int dev = y->device().index;
  switch (x->dtype()) {
    case Dtype::I64: return reduce_block(ProdI64{cdata<int64_t>(x), mdata<int64_t>(y)}, p.outer, p.n, 1, dev);
    case Dtype::F64: return reduce_block(ProdF64{cdata<double>(x), mdata<double>(y)}, p.outer, p.n, 1, dev);
    case Dtype::C128: return reduce_block(ProdC128{cdata<Cplx>(x), mdata<Cplx>(y)}, p.outer, p.n, 1, dev);
    default: fail<RuntimeError>("internal: prod_rows on ", dtype_name(x->dtype()));
  }
}

// ---- var / std ------------------------------------------------------------------------

// The mean of each row (NaN when empty), to scratch.
struct RowMean {
  using Acc = double;
  const double* x;
  double* mean;
  double scale;
  __device__ Acc init() const { return 0.0; }
  __device__ Acc load(int64_t e, int64_t) const { return x[e]; }
  __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ void store(int64_t o, Acc a) const { mean[o] = a * scale; }
};

struct RowMeanC128 {
  using Acc = Cplx;
  const Cplx* x;
  Cplx* mean;
  double scale;
  __device__ Acc init() const { return {0.0, 0.0}; }
  __device__ Acc load(int64_t e, int64_t) const { return x[e]; }
  __device__ Acc combine(Acc a, Acc b) const { return {a.re + b.re, a.im + b.im}; }
  __device__ void store(int64_t o, Acc a) const { mean[o] = {a.re * scale, a.im * scale}; }
};

// sum |x - mean|^2 / dof (its square root for std). The CPU's empty-row and
// no-dof rules: real rows give NaN when empty (m2 / 0 otherwise: inf, or NaN for 0 / 0),
// complex rows NaN whenever dof is 0 (torch's complex path).
template <bool kComplex>
struct RowSqDev {
  using Acc = double;
  const void* x;
  const void* mean;
  double* y;
  int64_t n;
  double dof;
  bool root;
  __device__ Acc init() const { return 0.0; }
  __device__ Acc load(int64_t e, int64_t) const {
    if constexpr (kComplex) {
      const Cplx v = static_cast<const Cplx*>(x)[e];
      const Cplx m = static_cast<const Cplx*>(mean)[e / n];
      const double dr = v.re - m.re, di = v.im - m.im;
      return dr * dr + di * di;
    } else {
      const double d = static_cast<const double*>(x)[e] - static_cast<const double*>(mean)[e / n];
      return d * d;
    }
  }
  __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ void store(int64_t o, Acc a) const {
    const bool defined = kComplex ? n && dof > 0 : n != 0;
    const double v = defined ? a / dof : nan("");
    y[o] = root ? sqrt(v) : v;
  }
};

void row_var(const ops::RowStat& p, const TensorImpl& x, double* y, int dev) {
  const bool complex = x.dtype() == Dtype::C128;
  const double scale = p.n ? 1.0 / double(p.n) : std::numeric_limits<double>::quiet_NaN();
  const double dof = std::max(double(p.n) - p.correction, 0.0);
  const bool root = p.stat == ops::RowStatKind::Std;
  TensorPtr mean = TensorImpl::empty({p.outer * (complex ? 2 : 1)}, Dtype::F64, Device::gpu(dev));
  if (complex) {
    reduce_block(RowMeanC128{cdata<Cplx>(&x), mdata<Cplx>(mean.get()), scale}, p.outer, p.n, 1, dev);
    reduce_block(RowSqDev<true>{x.data_ptr(), mean->data_ptr(), y, p.n, dof, root}, p.outer, p.n, 1, dev);
  } else {
    reduce_block(RowMean{cdata<double>(&x), mdata<double>(mean.get()), scale}, p.outer, p.n, 1, dev);
    reduce_block(RowSqDev<false>{x.data_ptr(), mean->data_ptr(), y, p.n, dof, root}, p.outer, p.n, 1, dev);
  }
}

// ---- logsumexp ------------------------------------------------------------------------

// Pass one: the largest element that is not NaN (-inf for an empty row) to scratch,
// and whether a NaN was seen. A row whose maximum is infinite gets its result here
// (the maximum, or NaN after a NaN), as on the CPU; pass two skips it.
struct RowMaxNan {
  struct Acc {
    double m;
    int nan;
  };
  const double* x;
  double* max;
  double* y;
  __device__ Acc init() const { return {-INFINITY, 0}; }
  __device__ Acc load(int64_t e, int64_t) const {
    const double v = x[e];
    return v != v ? Acc{-INFINITY, 1} : Acc{v, 0};
  }
  __device__ Acc combine(Acc a, Acc b) const { return {b.m > a.m ? b.m : a.m, a.nan | b.nan}; }
  __device__ void store(int64_t o, Acc a) const {
    max[o] = a.m;
    if (isinf(a.m)) y[o] = a.nan ? nan("") : a.m;
  }
};

// Pass two: max + log(sum exp(x - max)) for rows of finite maximum (a NaN propagates).
struct RowSumExp {
  using Acc = double;
  const double* x;
  const double* max;
  double* y;
  int64_t n;
  __device__ Acc init() const { return 0.0; }
  __device__ Acc load(int64_t e, int64_t) const {
    const double m = max[e / n];
    return isinf(m) ? 0.0 : exp(x[e] - m);
  }
  __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ void store(int64_t o, Acc a) const {
    if (!isinf(max[o])) y[o] = max[o] + log(a);
  }
};

void row_logsumexp(const ops::RowStat& p, const TensorImpl& x, double* y, int dev) {
  TensorPtr max = TensorImpl::empty({p.outer}, Dtype::F64, Device::gpu(dev));
  reduce_block(RowMaxNan{cdata<double>(&x), mdata<double>(max.get()), y}, p.outer, p.n, 1, dev);
  reduce_block(RowSumExp{cdata<double>(&x), cdata<double>(max.get()), y, p.n}, p.outer, p.n, 1, dev);
}

// ---- p-norms ------------------------------------------------------------------------

// What the norm sums of each |x| (or, for +-inf, keeps the extreme of).
enum class NormTerm : uint8_t { Max, Min, Count, Abs, Square, Pow };

// One pass over |x| (the magnitude for complex rows, as hypot in double).
template <bool kComplex>
struct RowNorm {
  using Acc = double;
  const void* x;
  double* y;
  NormTerm term;
  double p;
  __device__ Acc init() const { return term == NormTerm::Min ? INFINITY : 0.0; }
  __device__ double magnitude(int64_t e) const {
    if constexpr (kComplex) {
      const Cplx v = static_cast<const Cplx*>(x)[e];
      return hypot(v.re, v.im);
    } else {
      return fabs(static_cast<const double*>(x)[e]);
    }
  }
  __device__ Acc load(int64_t e, int64_t) const {
    const double a = magnitude(e);
    switch (term) {
      case NormTerm::Count: return a != 0 ? 1.0 : 0.0;
      case NormTerm::Square: return a * a;
      case NormTerm::Pow: return pow(a, p);
      default: return a;  // Max, Min, Abs
    }
  }
  // The extremes: a NaN wins.
  __device__ Acc combine(Acc a, Acc b) const {
    if (term == NormTerm::Max || term == NormTerm::Min) {
      if (a != a) return a;
      if (b != b) return b;
      return term == NormTerm::Max ? (b > a ? b : a) : (b < a ? b : a);
    }
    return a + b;
  }
  __device__ void store(int64_t o, Acc a) const {
    y[o] = term == NormTerm::Square ? sqrt(a) : term == NormTerm::Pow ? pow(a, 1.0 / p) : a;
  }
};

void row_norm(const ops::RowStat& p, const TensorImpl& x, double* y, int dev) {
  const NormTerm term = std::isinf(p.p) ? (p.p > 0 ? NormTerm::Max : NormTerm::Min)
                        : p.p == 0      ? NormTerm::Count
                        : p.p == 1      ? NormTerm::Abs
                        : p.p == 2      ? NormTerm::Square
                                        : NormTerm::Pow;
  if (x.dtype() == Dtype::C128) reduce_block(RowNorm<true>{x.data_ptr(), y, term, p.p}, p.outer, p.n, 1, dev);
  else reduce_block(RowNorm<false>{x.data_ptr(), y, term, p.p}, p.outer, p.n, 1, dev);
}

void row_stat_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  using S = ops::RowStatKind;
  const auto& p = ops::prim_cast<ops::RowStat>(prim);
  double* y = mdata<double>(outs[0]);
  const int dev = outs[0]->device().index;
  switch (p.stat) {
    case S::Var:
    case S::Std: return row_var(p, *ins[0], y, dev);
    case S::LogSumExp: return row_logsumexp(p, *ins[0], y, dev);
    case S::Norm: return row_norm(p, *ins[0], y, dev);
  }
}

// ---- count_nonzero ------------------------------------------------------------------

struct CountTrue {
  using Acc = int64_t;
  const uint8_t* flags;
  int64_t* count;
  __device__ Acc init() const { return 0; }
  __device__ Acc load(int64_t e, int64_t) const { return flags[e] != 0; }
  __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ void store(int64_t, Acc a) const { *count = a; }
};

void count_nonzero_kernel(const ops::Primitive&, Outputs outs, Inputs ins) {
  reduce_block(CountTrue{cdata<uint8_t>(ins[0]), mdata<int64_t>(outs[0])}, 1, ins[0]->numel(), 1,
               outs[0]->device().index);
}

}  // namespace

void register_reduce_rows_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::ProdRows, DeviceType::GPU, prod_rows_kernel);
  ops::register_kernel(Prim::RowStat, DeviceType::GPU, row_stat_kernel);
  ops::register_kernel(Prim::CountNonzero, DeviceType::GPU, count_nonzero_kernel);
}

}  // namespace lucid::cuda
