// Primitives of the reductions, scans and softmax (ops/reduce.cpp, reduce_minmax.cpp,
// reduce_stats.cpp, scan.cpp, softmax.cpp).
//
// The op lays the input out first (ops/reduce_plan.h) and the primitive says which
// layout it takes; the sizes of that layout travel as parameters:
// - rows: a contiguous [outer, n] tensor, each row reduced to one element;
// - a block: a contiguous tensor read as [outer, n, inner], reduced or run along n,
//   one result per (o, i). A block is often the input's own memory (no copy).
// Outputs are contiguous; a reduction's output holds outer (* inner) elements.
#pragma once

#include <cstdint>

#include "ops/primitive.h"

namespace lucid::ops {

// The dtypes ScanDim (with a separate output) reads as they are: float32 and float64,
// and on the CPU float16 and bfloat16 (through float windows, Note [16-bit rows]). Other
// dtypes, and 16-bit ones on the GPU, are scanned in place in a copy of an accumulate
// dtype.
inline bool block_scan_dtype(Dtype d, const Device& device) {
  return d == Dtype::F32 || d == Dtype::F64 || ((d == Dtype::F16 || d == Dtype::BF16) && device.is_cpu());
}

// The dtypes MomentBlock and ExtremumBlock read as they are: float32 and float64, and
// float16 and bfloat16 (widened as they are read: in double on the GPU, through float
// blocks on the CPU, Note [16-bit rows]), so that a 16-bit sum, var, norm or max runs in
// one pass over its own memory (on the GPU, the bias gradient of a 16-bit [batch,
// features] activation is read where it lies rather than transposed into rows first, a
// copy of the whole activation, 4 a Transformer layer). Other dtypes go through rows in
// an accumulate dtype.
inline bool block_float_dtype(const TensorImpl& x) {
  const Dtype d = x.dtype();
  return d == Dtype::F32 || d == Dtype::F64 || d == Dtype::F16 || d == Dtype::BF16;
}

// out = the sum of x over its last `reduced` dims (divided by their element count for
// the mean: NaN when there are none). x is a view with any strides whose leading dims
// are out's; out has x's dtype. Accumulates in double (int64 for integers,
// complex<double> for complex). ins: {x}.
struct SumLastDims : PrimitiveOf<Prim::SumLastDims, SumLastDims> {
  int64_t reduced = 0;
  bool mean = false;
  const char* name() const override { return mean ? "mean" : "sum"; }
};

// What MomentBlock computes for each (o, i), in double: Sum, Mean (NaN when n == 0),
// Var and Std (two passes: sum (x - mean)^2 / max(n - correction, 0)), Norm1 (sum |x|),
// Norm2 (sqrt(sum x^2)).
enum class BlockMoment : uint8_t { Sum, Mean, Var, Std, Norm1, Norm2 };

// A moment of each [o, :, i] of a block of a float dtype (block_float_dtype); out has
// x's dtype. ins: {x}.
struct MomentBlock : PrimitiveOf<Prim::MomentBlock, MomentBlock> {
  BlockMoment moment = BlockMoment::Sum;
  int64_t outer = 1, n = 1, inner = 1;
  double correction = 0;  // Var, Std
  const char* name() const override;
};

// The largest (is_max) or smallest element of each [o, :, i] of a block of a float
// dtype (block_float_dtype) and/or its first index along n; a NaN wins (its first occurrence), as in PyTorch.
// n >= 1. outs: {values (x's dtype)} if values, then {indices (int64)} if indices.
// ins: {x}.
struct ExtremumBlock : PrimitiveOf<Prim::ExtremumBlock, ExtremumBlock> {
  int64_t outer = 1, n = 1, inner = 1;
  bool is_max = true, values = true, indices = false;
  const char* name() const override { return is_max ? "max" : "min"; }
};

// ExtremumBlock for rows of any real dtype (inner == 1). outs and ins as there.
struct ExtremumRows : PrimitiveOf<Prim::ExtremumRows, ExtremumRows> {
  int64_t outer = 1, n = 1;
  bool is_max = true, values = true, indices = false;
  const char* name() const override { return is_max ? "max" : "min"; }
};

// Whether every (is_all) or some element of each bool row is true. outs: {bool}.
struct AllAnyRows : PrimitiveOf<Prim::AllAnyRows, AllAnyRows> {
  int64_t outer = 1, n = 1;
  bool is_all = true;
  const char* name() const override { return is_all ? "all" : "any"; }
};

// The product of each row, in the row's dtype: int64, float64 or complex64.
struct ProdRows : PrimitiveOf<Prim::ProdRows, ProdRows> {
  int64_t outer = 1, n = 1;
  const char* name() const override { return "prod"; }
};

// What RowStat computes for each row: Var and Std (sum |x - mean|^2 /
// max(n - correction, 0), its sqrt), LogSumExp (max + log(sum(exp(x - max)))), Norm
// (the p-norm; p may be 0, +-inf or any other number).
enum class RowStatKind : uint8_t { Var, Std, LogSumExp, Norm };

// A statistic of each float64 row (complex64 rows for Var, Std and Norm, which reduce
// their magnitudes), as float64. outs: {float64}. ins: {rows}.
struct RowStat : PrimitiveOf<Prim::RowStat, RowStat> {
  RowStatKind stat = RowStatKind::Var;
  int64_t outer = 1, n = 1;
  double correction = 0;  // Var, Std
  double p = 2;           // Norm
  const char* name() const override;
};

// The cumulative sum (or product) along n of a block, in its dtype. Either out is a
// separate float32/64 tensor, or out is x itself, scanned in place, in an accumulate
// dtype (int64, float64 or complex64). ins: {x}.
struct ScanDim : PrimitiveOf<Prim::ScanDim, ScanDim> {
  int64_t outer = 1, n = 1, inner = 1;
  bool is_prod = false;
  const char* name() const override { return is_prod ? "cumprod" : "cumsum"; }
};

// Softmax (or log-softmax) along n of a float32/64 block, max-subtracted; out has
// x's dtype. ins: {x}.
struct SoftmaxDim : PrimitiveOf<Prim::SoftmaxDim, SoftmaxDim> {
  int64_t outer = 1, n = 1, inner = 1;
  bool log = false;
  const char* name() const override { return log ? "log_softmax" : "softmax"; }
};

// The gradient of SoftmaxDim from its output y and the output's gradient g, along n
// of [outer, n, inner] blocks (one dtype, float32/64, and 16-bit on the GPU):
// y * (g - sum(g * y)) for softmax, g - exp(y) * sum(g) for log-softmax, the sums in
// double. ins: {y, g}.
struct SoftmaxBackwardDim : PrimitiveOf<Prim::SoftmaxBackwardDim, SoftmaxBackwardDim> {
  int64_t outer = 1, n = 1, inner = 1;
  bool log = false;
  const char* name() const override { return log ? "log_softmax_backward" : "softmax_backward"; }
};

// Cross entropy of logits x (a contiguous [outer, n, inner] block: n classes, rows
// (o, i) the samples) against int64 class indices t (rows elements), torch's
// cross_entropy with class indices in one pass over x (with log_probs, its nll_loss: lse 0):
// per row r with t_r != ignore_index,
// lse_r = log sum_c exp(x_rc) and
//   loss_r = (1 - eps) w[t_r] (lse_r - x_r,t_r) + eps / n * sum_c w[c] (lse_r - x_rc)
// (w = 1 without a weight; eps = label_smoothing); ignored rows give 0 and weigh 0.
// A class index outside [0, n) that is not ignored raises IndexError "Target i is out of
// bounds." (the CPU at the call, the GPU at the next synchronisation).
// ins: {x (float32/64; the GPU also float16/bfloat16), t, weight (x's dtype, [n]) if
// has_weight}. outs: {loss (x's dtype: [rows] for Reduction::None, else 0-d), lse (float32,
// float64 for float64 x: [rows]), stats (lse's dtype, [2]: the total weight of the rows
// that count, sum_c w[c]), and for Sum and Mean partial (float64 [rows, 2]: each row's loss
// and weight, summed in row order so the result never depends on the threads)}.
enum class LossReduction : uint8_t { None, Sum, Mean };
struct CrossEntropyParams {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t ignore_index = -100;
  double label_smoothing = 0;
  bool has_weight = false;
  // nll_loss: x holds log-probabilities, lse is 0 (no softmax term; label_smoothing 0)
  bool log_probs = false;
  LossReduction reduction = LossReduction::Mean;
};
struct CrossEntropy : PrimitiveOf<Prim::CrossEntropy, CrossEntropy>, CrossEntropyParams {
  const char* name() const override { return "cross_entropy"; }
};

// The gradient of CrossEntropy with respect to x: for row r that counts, with
// p = exp(x - lse_r) and s_r = g_r (None), g (Sum) or g / total (Mean),
//   gx_rc = s_r (p_rc ((1 - eps) w[t_r] + eps / n sum_c w[c]) - (1 - eps) w[t_r] [c == t_r] - eps / n w[c]),
// 0 on ignored rows and on rows whose class is out of range (the forward reported them).
// ins: {x, t, weight if has_weight, lse, stats, g (x's dtype: [rows] for None, else 0-d)}.
// outs: {gx (x's dtype, x's shape)}.
struct CrossEntropyBackward : PrimitiveOf<Prim::CrossEntropyBackward, CrossEntropyBackward>, CrossEntropyParams {
  const char* name() const override { return "cross_entropy_backward"; }
};

// The stable sorting permutation of each row of a contiguous [rows, n] block: out
// (int64 [rows, k]) lists each row's positions in ascending (or descending) order
// of their values, equal values in position order. NaN is greater than every other
// value (last ascending, first descending), -0.0 equals 0.0, as PyTorch's sort.
// Any real dtype. ins: {x}. With `values`, a second out of x's dtype gets the sorted
// values themselves, x's bits (the CPU reads most rows back from its sorted keys instead
// of gathering by position). k <= n: only each row's first k positions (and values) are
// wanted, outs [rows, k] (topk; the CPU selects them without sorting the row).
struct SortRows : PrimitiveOf<Prim::SortRows, SortRows> {
  int64_t rows = 0, n = 0, k = 0;
  bool descending = false, values = false;
  const char* name() const override { return "sort"; }
};

// For each value of row r of values [rows, m], where it goes in row r of the sorted
// boundaries [rows, n] (row 0 for every r when shared): the count of boundaries below
// it (right: at most it), in SortRows' order (NaN the largest value). Both contiguous,
// one real dtype; out int64 [rows, m]. ins: {boundaries, values}.
struct SearchSorted : PrimitiveOf<Prim::SearchSorted, SearchSorted> {
  int64_t rows = 0, n = 0, m = 0;
  bool right = false, shared = false;
  const char* name() const override { return "searchsorted"; }
};

inline const char* MomentBlock::name() const {
  switch (moment) {
    case BlockMoment::Sum: return "sum";
    case BlockMoment::Mean: return "mean";
    case BlockMoment::Var: return "var";
    case BlockMoment::Std: return "std";
    default: return "norm";
  }
}

inline const char* RowStat::name() const {
  switch (stat) {
    case RowStatKind::Var: return "var";
    case RowStatKind::Std: return "std";
    case RowStatKind::LogSumExp: return "logsumexp";
    default: return "norm";
  }
}

}  // namespace lucid::ops
