// Note [Fused norm rows]
// After the elementwise pass (Note [Elementwise fusion]), a GPU flush looks at each
// layer_norm / rms_norm call (NormRows), and each softmax / log_softmax over rows
// (SoftmaxDim with inner == 1), and its neighbours in the list:
//  - the call just before it becomes its prologue when that call computes the row op's
//    input x: a fused program, or one fusable call (a residual add, autocast's cast);
//  - the call just after it becomes its epilogue when that call reads the row op's
//    result y: autocast's cast to bfloat16 for the next product, a scale, an activation.
// The two or three calls become one FusedNormRows (FusedSoftmaxRows) call
// (ops/prims/fused_rows.h) whose kernel is the unfused kernel's own text with generated
// loads and stores (backend/cuda/norm_rows_forward.cuh, softmax_rows_forward.cuh,
// fused_rows.cpp): the prologue runs as the row is read into registers or shared
// memory, once per element, and the epilogue as each result is stored. In a
// Transformer block under bfloat16 autocast, cast up, residual add, norm and cast down
// are one kernel that reads 4 bytes an element and writes 2 (and x when autograd holds
// it), where four kernels moved 36. Attention written out by hand, softmax(q k^T *
// scale + mask), reads the scores once and writes the probabilities (which autograd
// holds) once; a softmax under autocast casts up as it reads.
// - x is stored only when something besides these calls holds it (autograd does when
//   training; x_stored), y likewise (y_stored); the chains' other results as the
//   elementwise pass decided.
// - Fused results are the unfused ones bit for bit: the same text, no contraction.
// - The calls' operands may share storage only where one call hands x or y to the next
//   (at the same place); any other overlap with a write between the prologue, the norm
//   and the epilogue leaves them unfused, since the fused kernel's threads write and
//   read in another order than three kernels in turn. That is conservative: in the
//   post-norm block's `y + s` after `s = x + h; y = norm(s)`, one thread writes and
//   reads each element of s, so it would be safe.
// - Until the backend's kernel is compiled (in the background, Note [Generated
//   kernels]), and for rows too long to stage, the calls stay unfused.
// - lucid.gpu.set_norm_fusion / LUCID_NORM_FUSION=0 switch it off (on by default).
// Row reductions (sums, means, sums of magnitudes: MomentBlock; values-only max and
// min: ExtremumBlock; inner == 1) take the call before them as their prologue likewise
// (FusedReduceRows): the hand-written RMS statistic `(x.float() ** 2).mean(-1)` and a
// loss's `(a - b).abs().sum(-1)` read x's inputs once and write one value a row. Their
// kernel walks a row in the unfused reduction's order (reduce_rows_walk.cuh), so the
// bits are the same; reductions the unfused kernel splits over several blocks (few,
// long rows) stay unfused.
// The backward (NormRowsBackward) takes the call after it as dx's epilogue likewise
// (FusedNormRowsBackward: norm_rows_backward.cuh's text with a generated store), dx
// stored when something else holds it (dx_stored); its affine gradients stay the
// unfused column sums, run after the generated kernel.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "ops/fusion.h"
#include "ops/fusion_internal.h"
#include "ops/prims/fused_rows.h"
#include "ops/recorded_launch.h"

namespace lucid::ops {

namespace {

// On unless LUCID_NORM_FUSION=0 (or false, off) at start: a switch to compare with.
bool norm_fusion_at_start() {
  const char* v = std::getenv("LUCID_NORM_FUSION");
  return !v || !(std::strcmp(v, "0") == 0 || std::strcmp(v, "false") == 0 || std::strcmp(v, "off") == 0);
}
std::atomic<bool> g_norm_fusion{norm_fusion_at_start()};
std::atomic<const FusedRowsVariants*> g_variants{nullptr};

// The program a recorded call is, when it is one: a fused program's own, or a single
// fusable call's (its outputs those something besides it holds).
std::optional<Built> program_of(pending::Work& w) {
  if (auto* r = dynamic_cast<RecordedLaunch*>(&w); r && r->prim().kind() == Prim::FusedElementwise) {
    Built b;
    b.program = prim_cast<FusedElementwise>(r->prim()).program;
    for (const TensorPtr& t : r->outputs()) b.outs.push_back(t.get());
    for (const TensorPtr& t : r->inputs()) b.ins.push_back(t.get());
    return b;
  }
  std::optional<Call> c = as_call(w, Views::Any);
  if (!c) return std::nullopt;
  size_t fits = 0;
  return build({*c}, 1, fits);
}

// The program that reads t and stores it unchanged: a side without a chain.
Built identity(const TensorImpl* t) {
  Built b;
  FusedProgram& p = b.program;
  p.dtype = t->dtype();
  p.n_inputs = p.n_outputs = 1;
  p.in_dtype[0] = p.out_dtype[0] = t->dtype();
  b.ins = {t};
  b.outs = {t};
  return b;
}

// Whether every element operand of a chain has x's element count and compute type.
bool fits_rows(const Built& b, const TensorImpl& x) {
  if (fused_compute(b.program.dtype) != fused_compute(x.dtype())) return false;
  for (const auto* part : {&b.outs, &b.ins})
    for (const TensorImpl* t : *part)
      if (t->numel() != x.numel() && t->numel() != 1) return false;
  return true;
}

// The recorded call of `prim` over outs and ins, replacing `count` calls from `first`.
Replacement replacement(const Primitive& prim, Prim kind, const std::vector<const TensorImpl*>& outs,
                        const std::vector<const TensorImpl*>& ins, size_t first, size_t count) {
  std::vector<TensorImpl*> o;
  for (const TensorImpl* t : outs) o.push_back(const_cast<TensorImpl*>(t));
  return {first, count,
          std::make_unique<RecordedLaunch>(kernel_of(kind, DeviceType::GPU), prim, Outputs(o.data(), o.size()),
                                           Inputs(ins.data(), ins.size()))};
}

// A recorded call's tensors (snapshots), as its primitive's tensors() takes them.
struct Operands {
  std::vector<TensorImpl*> outs;
  std::vector<const TensorImpl*> ins;
  explicit Operands(RecordedLaunch& r) {
    for (const TensorPtr& o : r.outputs()) outs.push_back(o.get());
    for (const TensorPtr& i : r.inputs()) ins.push_back(i.get());
  }
  Outputs out_span() { return Outputs(outs.data(), outs.size()); }
  Inputs in_span() const { return Inputs(ins.data(), ins.size()); }
};

// The input of a chain that reads `place` element by element, or -1.
int input_reading(const Built& chain, const TensorImpl& place) {
  for (int i = 0; i < chain.program.n_inputs; ++i)
    if (chain.program.in_read[i] == FusedRead::Elements && same_place(*chain.ins[size_t(i)], place)) return i;
  return -1;
}

// The chain of list[k + 1] when it reads `place` element by element, fits its rows and
// stores something: a norm's (or its backward's) epilogue.
std::optional<Built> epilogue_at(std::vector<std::unique_ptr<pending::Work>>& list, size_t k, const TensorImpl& place) {
  if (k + 1 >= list.size()) return std::nullopt;
  std::optional<Built> epi = program_of(*list[k + 1]);
  if (epi && (!fits_rows(*epi, place) || input_reading(*epi, place) < 0 || epi->program.n_outputs == 0)) epi.reset();
  return epi;
}

// An operand of one of the calls being fused: group 0, 1, 2 in list order.
struct Operand {
  const TensorImpl* t;
  int group;
  bool written;
};
// A place one call hands to the next (x from the prologue to the norm, y from the norm
// to the epilogue): group `from` writes it, group from + 1 reads it.
struct Link {
  const TensorImpl* place;
  int from;
};

// Whether the calls' operands share storage only at their links: any other overlap
// with a write between two of them leaves them unfused.
bool disjoint(const std::vector<Operand>& all, std::initializer_list<Link> links) {
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t j = i + 1; j < all.size(); ++j) {
      const Operand &a = all[i], &b = all[j];
      if (a.group == b.group || !(a.written || b.written) || bytes_of(*a.t) != bytes_of(*b.t)) continue;
      const bool link = std::any_of(links.begin(), links.end(), [&](const Link& l) {
        return std::min(a.group, b.group) == l.from && std::max(a.group, b.group) == l.from + 1 &&
               same_place(*a.t, *l.place) && same_place(*b.t, *l.place);
      });
      if (!link) return false;
    }
  return true;
}

void add_chain(std::vector<Operand>& all, const Built& b, int group, bool writes) {
  for (const TensorImpl* o : b.outs) all.push_back({o, group, writes});
  for (const TensorImpl* i : b.ins) all.push_back({i, group, false});
}

// A row op's call as the pass fuses it: its input x, its result y, and its own other
// operands (a norm's weight and bias; its mean and rstd), in the order its fused
// primitive takes them.
struct RowCall {
  const TensorImpl *x, *y;
  std::vector<const TensorImpl*> ins, outs;
};

// The row op at list[k] as the fused call `f` with `pro` (list[k - 1]'s chain) and
// `epi` (list[k + 1]'s), where given; nothing when their operands overlap (disjoint)
// or the backend has no kernel.
template <class Fused, class Variant>
std::optional<Replacement> assemble(std::vector<std::unique_ptr<pending::Work>>& list, size_t k,
                                    std::optional<Built> pro, std::optional<Built> epi, const RowCall& c, Fused f,
                                    int device, Variant variant) {
  auto& row_call = *list[k];
  const TensorImpl &x = *c.x, &y = *c.y;
  const bool real_prologue = pro.has_value(), real_epilogue = epi.has_value();
  f.elements = x.numel();
  if (pro) {
    f.x_output = uint8_t(std::find_if(pro->outs.begin(), pro->outs.end(),
                                      [&](const TensorImpl* o) { return same_place(*o, x); }) -
                         pro->outs.begin());
    f.x_stored = storage_copies(x) > snapshots_holding(*list[k - 1], bytes_of(x)) +
                                        snapshots_holding(row_call, bytes_of(x));
  } else {
    pro = identity(c.x);
  }
  if (epi) {
    f.y_input = uint8_t(input_reading(*epi, y));
    f.y_stored = storage_copies(y) > snapshots_holding(row_call, bytes_of(y)) +
                                        snapshots_holding(*list[k + 1], bytes_of(y));
  } else {
    epi = identity(c.y);
  }
  std::vector<Operand> all;
  add_chain(all, *pro, 0, real_prologue);  // (the identity prologue writes nothing)
  all.push_back({c.x, 1, false});
  for (const TensorImpl* i : c.ins) all.push_back({i, 1, false});
  all.push_back({c.y, 1, true});
  for (const TensorImpl* o : c.outs) all.push_back({o, 1, true});
  add_chain(all, *epi, 2, true);
  if (!disjoint(all, {{c.x, 0}, {c.y, 1}})) return std::nullopt;
  f.prologue = pro->program;
  f.epilogue = epi->program;
  if ((f.variant = variant(f, device)) == 0) return std::nullopt;

  std::vector<const TensorImpl*> outs, ins = pro->ins;
  for (size_t o = 0; o < pro->outs.size(); ++o)
    if (o != f.x_output || f.x_stored) outs.push_back(pro->outs[o]);
  if (f.y_stored) outs.push_back(c.y);
  outs.insert(outs.end(), c.outs.begin(), c.outs.end());
  outs.insert(outs.end(), epi->outs.begin(), epi->outs.end());
  ins.insert(ins.end(), c.ins.begin(), c.ins.end());
  for (size_t i = 0; i < epi->ins.size(); ++i)
    if (i != f.y_input) ins.push_back(epi->ins[i]);
  return replacement(f, Fused::kKind, outs, ins, real_prologue ? k - 1 : k,
                     1 + (real_prologue ? 1 : 0) + (real_epilogue ? 1 : 0));
}

// Whether the row op's x and y are what the fused kernels take: float32 or float64,
// contiguous, x not empty.
bool rows_fusable(const RowCall& c) {
  const TensorImpl& x = *c.x;
  return (x.dtype() == Dtype::F32 || x.dtype() == Dtype::F64) && x.is_contiguous() && c.y->is_contiguous() &&
         x.numel() != 0;
}

// The chain of list[k - 1] (when `before_free`: not taken by a fusion before) when it
// computes x among its results and fits x's rows: a row op's prologue.
std::optional<Built> prologue_at(std::vector<std::unique_ptr<pending::Work>>& list, size_t k, bool before_free,
                                 const TensorImpl& x) {
  std::optional<Built> pro;
  if (before_free && k > 0 && (pro = program_of(*list[k - 1])))
    if (!fits_rows(*pro, x) ||
        std::none_of(pro->outs.begin(), pro->outs.end(), [&](const TensorImpl* o) { return same_place(*o, x); }))
      pro.reset();
  return pro;
}

// The row op at list[k] with the call before it (when `before_free`) and the call after
// it, or with one of them when the other overlaps; nothing when neither fits. x and y
// are float32 or float64 and contiguous.
template <class Fused, class Variant>
std::optional<Replacement> fuse_row_at(std::vector<std::unique_ptr<pending::Work>>& list, size_t k,
                                       bool before_free, const RowCall& c, const Fused& f, int device,
                                       Variant variant) {
  if (!rows_fusable(c)) return std::nullopt;
  std::optional<Built> pro = prologue_at(list, k, before_free, *c.x);
  std::optional<Built> epi = epilogue_at(list, k, *c.y);
  if (pro && epi)
    if (auto r = assemble(list, k, pro, epi, c, f, device, variant)) return r;
  if (epi)
    if (auto r = assemble(list, k, std::nullopt, epi, c, f, device, variant)) return r;
  if (pro) return assemble(list, k, pro, std::nullopt, c, f, device, variant);
  return std::nullopt;
}

// The norm at list[k] with its neighbours.
std::optional<Replacement> fuse_norm_at(std::vector<std::unique_ptr<pending::Work>>& list, size_t k,
                                        bool before_free, int device, const FusedRowsVariants& variants) {
  auto& call = static_cast<RecordedLaunch&>(*list[k]);
  FusedNormRows f;
  f.norm = prim_cast<NormRows>(call.prim());
  if (f.norm.n == 0) return std::nullopt;
  Operands ops(call);
  const auto t = f.norm.tensors(ops.out_span(), ops.in_span());
  RowCall c{t.x, t.y, {}, {}};
  for (const TensorImpl* i : {t.weight, t.bias}) if (i) c.ins.push_back(i);
  for (const TensorImpl* o : {t.mean, t.rstd}) if (o) c.outs.push_back(o);
  return fuse_row_at(list, k, before_free, c, f, device, variants.norm);
}

// The softmax / log_softmax over rows at list[k] with its neighbours.
std::optional<Replacement> fuse_softmax_at(std::vector<std::unique_ptr<pending::Work>>& list, size_t k,
                                           bool before_free, int device, const FusedRowsVariants& variants) {
  auto& call = static_cast<RecordedLaunch&>(*list[k]);
  FusedSoftmaxRows f;
  f.softmax = prim_cast<SoftmaxDim>(call.prim());
  if (f.softmax.inner != 1 || f.softmax.n == 0) return std::nullopt;
  const RowCall c{call.inputs()[0].get(), call.outputs()[0].get(), {}, {}};
  if (c.y->dtype() != c.x->dtype()) return std::nullopt;
  return fuse_row_at(list, k, before_free, c, f, device, variants.softmax);
}

// The row reduction at list[k] (a sum, mean or sum of magnitudes: MomentBlock; a
// values-only max or min: ExtremumBlock; over rows) with the chain before it, which
// computes its input. x starts its storage, as a result of the chain always does, so
// the unfused reduction reads it 16 bytes a load where its rows allow (the backend's
// kernel reads in the same groups: reduce_rows_walk.cuh).
std::optional<Replacement> fuse_reduce_at(std::vector<std::unique_ptr<pending::Work>>& list, size_t k,
                                          bool before_free, int device, const FusedRowsVariants& variants) {
  auto& call = static_cast<RecordedLaunch&>(*list[k]);
  FusedReduceRows f;
  int64_t inner = 1;
  if (call.prim().kind() == Prim::MomentBlock) {
    const auto& m = prim_cast<MomentBlock>(call.prim());
    f.outer = m.outer, f.n = m.n, inner = m.inner;
    switch (m.moment) {
      case BlockMoment::Sum: f.reduce = RowReduce::Sum; break;
      case BlockMoment::Mean: f.reduce = RowReduce::Mean; break;
      case BlockMoment::Norm1: f.reduce = RowReduce::AbsSum; break;
      default: return std::nullopt;  // (two passes, or a square root after the sum)
    }
  } else {
    const auto& e = prim_cast<ExtremumBlock>(call.prim());
    if (!e.values || e.indices) return std::nullopt;
    f.outer = e.outer, f.n = e.n, inner = e.inner;
    f.reduce = e.is_max ? RowReduce::Max : RowReduce::Min;
  }
  if (inner != 1 || f.n == 0) return std::nullopt;
  const RowCall c{call.inputs()[0].get(), call.outputs()[0].get(), {}, {}};
  if (!rows_fusable(c) || c.y->dtype() != c.x->dtype() || c.x->storage_offset() != 0) return std::nullopt;
  std::optional<Built> pro = prologue_at(list, k, before_free, *c.x);
  if (!pro) return std::nullopt;
  return assemble(list, k, pro, std::nullopt, c, f, device, variants.reduce);
}

// The norm's backward at list[k] with the call after it, which takes dx.
std::optional<Replacement> fuse_backward_at(std::vector<std::unique_ptr<pending::Work>>& list, size_t k, int device,
                                            const FusedRowsVariants& variants) {
  auto& call = static_cast<RecordedLaunch&>(*list[k]);
  FusedNormRowsBackward f;
  f.norm = prim_cast<NormRowsBackward>(call.prim());
  Operands ops(call);
  const auto t = f.norm.tensors(ops.out_span(), ops.in_span());
  const TensorImpl& dx = *t.dx;
  if ((dx.dtype() != Dtype::F32 && dx.dtype() != Dtype::F64) || !dx.is_contiguous() || !t.dy->is_contiguous() ||
      !t.x->is_contiguous() || f.norm.n == 0 || dx.numel() == 0)
    return std::nullopt;
  std::optional<Built> epi = epilogue_at(list, k, dx);
  if (!epi) return std::nullopt;
  f.dx_input = uint8_t(input_reading(*epi, dx));
  f.dx_stored =
      storage_copies(dx) > snapshots_holding(call, bytes_of(dx)) + snapshots_holding(*list[k + 1], bytes_of(dx));
  std::vector<Operand> all;
  for (const TensorImpl* i : {t.dy, t.x, t.weight, t.mean, t.rstd}) if (i) all.push_back({i, 0, false});
  for (const TensorImpl* o : {t.dx, t.dweight, t.dbias}) if (o) all.push_back({o, 0, true});
  add_chain(all, *epi, 1, true);
  if (!disjoint(all, {{t.dx, 0}})) return std::nullopt;
  f.epilogue = epi->program;
  if ((f.variant = variants.norm_backward(f, device)) == 0) return std::nullopt;

  std::vector<const TensorImpl*> outs, ins{t.dy, t.x};
  if (f.dx_stored) outs.push_back(t.dx);
  for (const TensorImpl* o : {t.dweight, t.dbias}) if (o) outs.push_back(o);
  outs.insert(outs.end(), epi->outs.begin(), epi->outs.end());
  for (const TensorImpl* i : {t.weight, t.mean, t.rstd}) if (i) ins.push_back(i);
  for (size_t i = 0; i < epi->ins.size(); ++i)
    if (i != f.dx_input) ins.push_back(epi->ins[i]);
  return replacement(f, Prim::FusedNormRowsBackward, outs, ins, k, 2);
}

}  // namespace

size_t fuse_norm_rows(int device, std::vector<std::unique_ptr<pending::Work>>& list) {
  const FusedRowsVariants* variants = g_variants.load(std::memory_order_acquire);
  if (!norm_fusion_enabled() || !variants) return 0;
  try {
    std::vector<Replacement> replacements;
    size_t replaced = 0, free_from = 0;  // the calls before free_from are taken
    for (size_t k = 0; k < list.size(); ++k) {
      auto* r = dynamic_cast<RecordedLaunch*>(list[k].get());
      if (!r) continue;
      std::optional<Replacement> f;
      switch (r->prim().kind()) {
        case Prim::NormRows: f = fuse_norm_at(list, k, k > free_from, device, *variants); break;
        case Prim::NormRowsBackward: f = fuse_backward_at(list, k, device, *variants); break;
        case Prim::SoftmaxDim: f = fuse_softmax_at(list, k, k > free_from, device, *variants); break;
        case Prim::MomentBlock:
        case Prim::ExtremumBlock: f = fuse_reduce_at(list, k, k > free_from, device, *variants); break;
        default: break;
      }
      if (!f) continue;
      replaced += f->count;
      free_from = f->first + f->count;
      k = free_from - 1;
      replacements.push_back(std::move(*f));
    }
    splice(list, replacements);
    return replaced;
  } catch (...) {
    return 0;  // (out of host memory: the list runs as it was left by the elementwise pass)
  }
}

bool norm_fusion_enabled() { return g_norm_fusion.load(std::memory_order_relaxed); }
void set_norm_fusion_enabled(bool enabled) { g_norm_fusion.store(enabled, std::memory_order_relaxed); }

void set_fused_rows_variants(const FusedRowsVariants& variants) {
  // (set at the backend's registration; never freed, as a pass may be reading it)
  g_variants.store(new FusedRowsVariants(variants), std::memory_order_release);
}

}  // namespace lucid::ops
