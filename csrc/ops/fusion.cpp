// Note [Elementwise fusion] (ops/fusion.h).
#include "ops/fusion.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

#include "ops/prims/elementwise.h"
#include "ops/prims/fused.h"
#include "ops/fusion_internal.h"
#include "ops/recorded_launch.h"

namespace lucid::ops {

bool fusable_dtype(Dtype d) { return d == Dtype::F32 || d == Dtype::F64 || d == Dtype::F16 || d == Dtype::BF16; }

namespace {

// A number operand as the value the unfused kernel computes with: the compute type's
// (float for 16- and 32-bit floats), converted straight from the number as the kernel
// converts it. Complex numbers are not fused.
std::optional<double> constant_of(const Scalar& s, Dtype dtype) {
  return std::visit([dtype](auto v) -> std::optional<double> {
    using V = decltype(v);
    if constexpr (std::is_same_v<V, std::complex<double>>) {
      return std::nullopt;
    } else {
      if (dtype == Dtype::F64) return double(v);
      return double(float(v));
    }
  }, s);
}

// A where's number operand: the where kernel converts it to the output's dtype as a
// cast would (scalar_to_bytes), and selects that element.
std::optional<double> where_constant_of(const Scalar& s, Dtype dtype) {
  if (std::holds_alternative<std::complex<double>>(s)) return std::nullopt;
  alignas(16) std::byte element[16];
  scalar_to_bytes(s, dtype, element);
  const Scalar back = scalar_from_bytes(element, dtype);
  const double* v = std::get_if<double>(&back);
  return v ? std::optional<double>(*v) : std::nullopt;
}

}  // namespace

long storage_copies(const TensorImpl& t) {
  const StorageBase& s = storage_base(t.storage());
  const bool one_block = !s.data.owner_before(s.version) && !s.version.owner_before(s.data);
  return s.data.use_count() / (one_block ? 2 : 1);
}

const std::byte* bytes_of(const TensorImpl& t) { return storage_base(t.storage()).data.get(); }

bool same_place(const TensorImpl& a, const TensorImpl& b) {
  return bytes_of(a) == bytes_of(b) && a.storage_offset() == b.storage_offset() && a.dtype() == b.dtype() &&
         a.numel() == b.numel() && a.is_contiguous() && b.is_contiguous();
}

namespace {

// How a program reads `t`, a view of a call's shape that is neither contiguous nor one
// element (FusedView): the runs of its dimensions, innermost first, each a term unless
// its stride is 0; nothing when it takes more than kFusedMaxTerms terms (or a stride is
// not a whole number of elements).
std::optional<FusedView> view_of(const TensorImpl& t) {
  const Shape& shape = t.shape();
  const Stride& stride = t.stride();
  const int64_t itemsize = t.itemsize();
  FusedView v;
  int64_t div = 1, run_size = 1, run_stride = 0;
  auto close_run = [&] {
    if (run_stride != 0) {
      if (v.terms == kFusedMaxTerms) return false;
      v.div[v.terms] = div, v.size[v.terms] = run_size, v.stride[v.terms] = run_stride;
      ++v.terms;
    }
    div *= run_size;
    return true;
  };
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) continue;
    if (stride[d] % itemsize != 0) return std::nullopt;
    const int64_t s = stride[d] / itemsize;
    if (s == run_stride * run_size) {  // (the run goes on: the same steps, or 0 after 0)
      run_size *= shape[d];
      continue;
    }
    if (!close_run()) return std::nullopt;
    run_size = shape[d], run_stride = s;
  }
  if (!close_run()) return std::nullopt;
  return v;
}

bool same_view(const FusedView& a, const FusedView& b) {
  if (a.terms != b.terms) return false;
  for (int t = 0; t < a.terms; ++t)
    if (a.div[t] != b.div[t] || a.size[t] != b.size[t] || a.stride[t] != b.stride[t]) return false;
  return true;
}

// Whether `v` is a contiguous row repeated along the leading dimensions (Note
// [Compiled CPU chains]: the only views the CPU's programs read).
bool repeats_a_row(const FusedView& v) { return v.terms == 1 && v.div[0] == 1 && v.stride[0] == 1; }

// Whether a tensor operand of dtype `want` (Bool: a condition or a cast's source of
// any dtype of the program's compute type or bool) may be read by a program: its
// elements in order, one element for all, or a view of the call's shape that `views`
// allows.
bool readable(const TensorImpl& t, const TensorImpl& out, Dtype want, Views views) {
  if (t.dtype() != want) return false;
  if (t.is_contiguous() || t.numel() == 1) return true;
  if (t.shape() != out.shape()) return false;
  const std::optional<FusedView> v = view_of(t);
  return v && (views == Views::Any || repeats_a_row(*v));
}

// The step a call would be in a program, if it is a fusable one: the operands as the
// primitive and the tensors say (the fusion pass's calls, and launch's question whether
// a CPU call is worth recording). `out` and `ins` point into the call's outputs and
// inputs; `views`: which views of the call's shape its operands may be.
std::optional<Call> step_of(const Primitive& p, size_t n_outs, const TensorImpl* out, size_t n_ins,
                            const TensorImpl* const* ins, Views views) {
  if (n_outs != 1) return std::nullopt;
  Call c{nullptr, FusedKind::Unary, 0, out->dtype(), out, 0, {nullptr, nullptr, nullptr}, {}};
  // Operand k is a tensor of ins, in order, unless `number` holds it.
  size_t next = 0;
  auto take = [&](int k, const std::optional<Scalar>& number) {
    if (number) c.number[k] = number;
    else if (next < n_ins) c.operand[k] = ins[next++];
    else return false;
    return true;
  };
  if (p.kind() == Prim::Unary) {
    const UnaryOp op = prim_cast<Unary>(p).op;
    if (!fusable(op) || n_ins != 1) return std::nullopt;
    c.op = uint8_t(op);
    c.n_operands = 1;
    c.operand[0] = ins[0];
    c.dtype = ins[0]->dtype();
  } else if (p.kind() == Prim::Binary) {
    const auto& b = prim_cast<Binary>(p);
    if (!fusable(b.op)) return std::nullopt;
    c.kind = FusedKind::Binary;
    c.op = uint8_t(b.op);
    c.dtype = b.compute;
    c.n_operands = 2;
    if (!take(0, b.lhs) || !take(1, b.rhs)) return std::nullopt;
  } else if (p.kind() == Prim::Where) {
    const auto& w = prim_cast<Where>(p);
    c.kind = FusedKind::Where;
    c.n_operands = 3;
    if (n_ins < 1 || !take(0, std::nullopt) || !take(1, w.lhs) || !take(2, w.rhs)) return std::nullopt;
    if (!readable(*c.operand[0], *out, Dtype::Bool, views)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (next != n_ins && c.kind != FusedKind::Unary) return std::nullopt;
  if (!fusable_dtype(c.dtype) || c.out->dtype() != c.dtype || !c.out->is_contiguous()) return std::nullopt;
  for (int k = c.kind == FusedKind::Where ? 1 : 0; k < c.n_operands; ++k)
    if (c.operand[k] && !readable(*c.operand[k], *c.out, c.dtype, views)) return std::nullopt;
  return c;
}

// A recorded copy (a cast when the dtypes differ) as a step: to a contiguous tensor,
// from one of its element count, one element or (views) a view of its shape, to a float
// dtype of the source's compute type, or from bool.
std::optional<Call> copy_step(pending::Work& w, Views views) {
  const TensorImpl *dst = nullptr, *src = nullptr;
  if (!w.copy_operands(&dst, &src)) return std::nullopt;
  const Dtype to = dst->dtype(), from = src->dtype();
  if (!fusable_dtype(to) || !dst->is_contiguous() || dst->numel() == 0) return std::nullopt;
  if (from != Dtype::Bool && (!fusable_dtype(from) || fused_compute(from) != fused_compute(to))) return std::nullopt;
  if (src->numel() != dst->numel() && src->numel() != 1) return std::nullopt;
  if (!readable(*src, *dst, src->dtype(), views)) return std::nullopt;
  Call c{&w, FusedKind::Cast, 0, to, dst, 1, {src, nullptr, nullptr}, {}};
  return c;
}

}  // namespace

std::optional<Call> as_call(pending::Work& w, Views views) {
  auto* r = dynamic_cast<RecordedLaunch*>(&w);
  if (!r) return copy_step(w, views);
  auto ins = r->inputs();
  const TensorImpl* in[3] = {};
  if (ins.size() > 3) return std::nullopt;
  for (size_t k = 0; k < ins.size(); ++k) in[k] = ins[k].get();
  std::optional<Call> c = step_of(r->prim(), r->outputs().size(), r->outputs()[0].get(), ins.size(), in, views);
  if (c) c->work = r;
  return c;
}

long snapshots_holding(pending::Work& w, const std::byte* bytes) {
  std::vector<const TensorImpl*> held;
  if (auto* r = dynamic_cast<RecordedLaunch*>(&w)) {
    for (auto part : {r->outputs(), r->inputs()})
      for (const TensorPtr& t : part) held.push_back(t.get());
  } else {
    const TensorImpl *dst = nullptr, *src = nullptr;
    w.copy_operands(&dst, &src);
    held = {dst, src};
  }
  // (a tensor listed twice, an in-place call's, is one snapshot: RecordedLaunch)
  std::vector<const TensorImpl*> seen;
  for (const TensorImpl* t : held)
    if (t && bytes_of(*t) == bytes && std::find(seen.begin(), seen.end(), t) == seen.end()) seen.push_back(t);
  return long(seen.size());
}

namespace {

int operand_count(const FusedInstr& in) {
  return in.kind == FusedKind::Where ? 3 : in.kind == FusedKind::Binary ? 2 : 1;
}

// The registers a step reads.
std::vector<int> operands_of(const FusedInstr& in) {
  const int n = operand_count(in);
  std::vector<int> regs{int(in.a)};
  if (n > 1) regs.push_back(in.b);
  if (n > 2) regs.push_back(in.c);
  return regs;
}

// Maps the program's values (one virtual register each: inputs, constants, results) onto
// at most kFusedMaxRegs registers: a register is free again after its value's last
// read, unless the value is stored at the end; constants keep theirs (a block fills
// them once). A step may write the register of an operand it reads last (fused_apply
// reads its operands before writing). False when more values are live at once.
bool allocate_registers(FusedProgram& p) {
  constexpr int kVirtual = kFusedMaxInputs + kFusedMaxConsts + kFusedMaxInstrs;
  static_assert(kVirtual < 256);
  int last_use[kVirtual];
  for (int& u : last_use) u = -1;
  for (int s = 0; s < p.n_instrs; ++s)
    for (int v : operands_of(p.instrs[s])) last_use[v] = s;
  for (int o = 0; o < p.n_outputs; ++o) last_use[p.out_reg[o]] = p.n_instrs;
  int phys[kVirtual];
  bool busy[kFusedMaxRegs] = {};
  auto take = [&](int v) {
    for (int r = 0; r < kFusedMaxRegs; ++r)
      if (!busy[r]) {
        busy[r] = true;
        phys[v] = r;
        return true;
      }
    return false;
  };
  for (int c = 0; c < p.n_consts; ++c)
    if (!take(p.const_reg[c])) return false;
  for (int k = 0; k < p.n_inputs; ++k)
    if (!take(p.in_reg[k])) return false;
  bool pinned[kVirtual] = {};
  for (int c = 0; c < p.n_consts; ++c) pinned[p.const_reg[c]] = true;
  for (int s = 0; s < p.n_instrs; ++s) {
    FusedInstr& in = p.instrs[s];
    for (int v : operands_of(in))
      if (!pinned[v] && last_use[v] == s && busy[phys[v]]) busy[phys[v]] = false;
    const int dst = in.dst;
    const int used = operand_count(in);
    in.a = uint8_t(phys[in.a]);
    in.b = used > 1 ? uint8_t(phys[in.b]) : in.a;
    in.c = used > 2 ? uint8_t(phys[in.c]) : in.a;
    if (!take(dst)) return false;
    in.dst = uint8_t(phys[dst]);
    if (last_use[dst] < 0) busy[phys[dst]] = false;  // (a result nothing reads)
  }
  for (int c = 0; c < p.n_consts; ++c) p.const_reg[c] = uint8_t(phys[p.const_reg[c]]);
  for (int k = 0; k < p.n_inputs; ++k) p.in_reg[k] = uint8_t(phys[p.in_reg[k]]);
  for (int o = 0; o < p.n_outputs; ++o) p.out_reg[o] = uint8_t(phys[p.out_reg[o]]);
  return true;
}

// Removes the steps whose value reaches no output (a result computed and dropped), then
// the inputs and constants no step reads. Registers are still one per value here.
void drop_dead_steps(Built& b) {
  FusedProgram& p = b.program;
  bool live[256] = {};
  for (int o = 0; o < p.n_outputs; ++o) live[p.out_reg[o]] = true;
  bool keep[kFusedMaxInstrs] = {};
  for (int s = p.n_instrs - 1; s >= 0; --s)
    if ((keep[s] = live[p.instrs[s].dst]))
      for (int v : operands_of(p.instrs[s])) live[v] = true;
  int n = 0;
  for (int s = 0; s < p.n_instrs; ++s)
    if (keep[s]) p.instrs[n++] = p.instrs[s];
  p.n_instrs = uint8_t(n);
  n = 0;
  for (int k = 0; k < p.n_inputs; ++k) {
    if (!live[p.in_reg[k]]) continue;
    p.in_reg[n] = p.in_reg[k], p.in_read[n] = p.in_read[k], p.in_view[n] = p.in_view[k], p.in_dtype[n] = p.in_dtype[k];
    b.ins[n] = b.ins[k];
    ++n;
  }
  p.n_inputs = uint8_t(n);
  b.ins.resize(n);
  n = 0;
  for (int c = 0; c < p.n_consts; ++c) {
    if (!live[p.const_reg[c]]) continue;
    p.const_reg[n] = p.const_reg[c], p.consts[n] = p.consts[c];
    ++n;
  }
  p.n_consts = uint8_t(n);
}

}  // namespace

// (`fits`: the calls before the one that reached a limit)
std::optional<Built> build(const std::vector<Call>& calls, size_t count, size_t& fits) {
  // A limit reached at call s: the calls before it may still make a program.
  auto stop_at = [&fits](size_t s) -> std::optional<Built> {
    fits = s;
    return std::nullopt;
  };
  fits = count - 1;  // (a failure found after the loop: one call fewer)
  Built b;
  FusedProgram& p = b.program;
  p.dtype = calls[0].dtype;
  const int64_t n = calls[0].out->numel();
  struct Value {
    const std::byte* bytes;
    int64_t offset;
    FusedRead read;
    FusedView view;  // (View reads)
    const TensorImpl* tensor;
    int reg;
    bool written;
  };
  std::vector<Value> values;  // by (storage, offset, read, view): the register holding it now
  int regs = 0;
  auto find = [&](const TensorImpl* t, FusedRead read, const FusedView& view) -> Value* {
    for (Value& v : values)
      if (v.bytes == bytes_of(*t) && v.offset == t->storage_offset() && v.read == read && same_view(v.view, view))
        return &v;
    return nullptr;
  };
  for (size_t s = 0; s < count; ++s) {
    const Call& c = calls[s];
    if (fused_compute(c.dtype) != fused_compute(p.dtype) || c.out->numel() != n) return stop_at(s);
    FusedInstr instr;
    instr.kind = c.kind;
    instr.op = c.op;
    instr.dtype = c.dtype;
    uint8_t operand_reg[3] = {0, 0, 0};
    for (int k = 0; k < c.n_operands; ++k) {
      if (const TensorImpl* t = c.operand[k]) {
        // (step_of let a non-contiguous operand through only as a view view_of takes)
        FusedRead read = FusedRead::Elements;
        FusedView view;
        if (t->numel() == 1 && n != 1) {
          read = FusedRead::One;
        } else if (!t->is_contiguous()) {
          const std::optional<FusedView> v = view_of(*t);
          if (!v) return stop_at(s);
          read = v->terms == 0 ? FusedRead::One : FusedRead::View;  // (no term: one element expanded)
          if (read == FusedRead::View) view = *v;
        } else if (t->numel() != n) {
          return stop_at(s);
        }
        Value* v = find(t, read, view);
        if (v && v->tensor->dtype() != t->dtype()) return stop_at(s);  // (one place read as two dtypes)
        if (!v) {
          if (p.n_inputs == kFusedMaxInputs) return stop_at(s);
          values.push_back({bytes_of(*t), t->storage_offset(), read, view, t, regs, false});
          p.in_reg[p.n_inputs] = uint8_t(regs);
          p.in_dtype[p.n_inputs] = t->dtype();
          p.in_view[p.n_inputs] = view;
          p.in_read[p.n_inputs++] = read;
          b.ins.push_back(t);
          v = &values.back();
          ++regs;
        }
        operand_reg[k] = uint8_t(v->reg);
      } else {
        const std::optional<double> value =
            c.kind == FusedKind::Where ? where_constant_of(*c.number[k], c.dtype) : constant_of(*c.number[k], c.dtype);
        if (!value) return stop_at(s);
        int found = -1;
        for (int i = 0; i < p.n_consts; ++i)
          if (p.consts[i] == *value && std::signbit(p.consts[i]) == std::signbit(*value)) found = p.const_reg[i];
        if (found < 0) {
          if (p.n_consts == kFusedMaxConsts) return stop_at(s);
          p.consts[p.n_consts] = *value;
          p.const_reg[p.n_consts++] = uint8_t(regs);
          found = regs++;
        }
        operand_reg[k] = uint8_t(found);
      }
    }
    if (p.n_instrs == kFusedMaxInstrs) return stop_at(s);
    instr.a = operand_reg[0];
    instr.b = operand_reg[c.n_operands > 1 ? 1 : 0];
    instr.c = operand_reg[c.n_operands > 2 ? 2 : 0];
    instr.dst = uint8_t(regs++);
    p.instrs[p.n_instrs++] = instr;
    if (Value* v = find(c.out, FusedRead::Elements, FusedView{})) {
      if (v->tensor->dtype() != c.out->dtype()) return stop_at(s);
      v->reg = instr.dst;  // an in-place step: later reads see the new value
      v->written = true;
      v->tensor = c.out;
    } else {
      values.push_back({bytes_of(*c.out), c.out->storage_offset(), FusedRead::Elements, FusedView{}, c.out, instr.dst, true});
    }
  }
  // Two views of one storage at different places: one thread's element of one may be
  // another thread's of the other, so the order between threads would matter.
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t j = i + 1; j < values.size(); ++j)
      if (values[i].bytes == values[j].bytes && (values[i].written || values[j].written)) return std::nullopt;
  // Outputs: written storages that something besides these calls holds (the program, a
  // later call of the list, autograd). The others die with the calls: never stored.
  for (const Value& v : values) {
    if (!v.written) continue;
    long held_here = 0;  // snapshots of these calls (one per tensor a call, outputs and inputs alike)
    for (size_t s = 0; s < count; ++s) held_here += snapshots_holding(*calls[s].work, v.bytes);
    if (storage_copies(*v.tensor) <= held_here) continue;
    if (p.n_outputs == kFusedMaxOutputs) return std::nullopt;
    p.out_dtype[p.n_outputs] = v.tensor->dtype();
    p.out_reg[p.n_outputs++] = uint8_t(v.reg);
    b.outs.push_back(v.tensor);
  }
  if (p.n_outputs == 0) return b;  // nothing anyone reads: the calls need not run (fuse drops them)
  drop_dead_steps(b);
  if (!allocate_registers(p)) return std::nullopt;
  return b;
}

void splice(std::vector<std::unique_ptr<pending::Work>>& list, std::vector<Replacement>& replacements) {
  if (replacements.empty()) return;
  size_t to = 0, from = 0;
  for (Replacement& r : replacements) {
    while (from < r.first) list[to++] = std::move(list[from++]);
    from += r.count;  // (the replaced calls die as their places are overwritten or cut)
    if (r.work) list[to++] = std::move(r.work);
  }
  while (from < list.size()) list[to++] = std::move(list[from++]);
  list.resize(to);
}

namespace {

std::atomic<FusedVariant> g_variant{nullptr};

// The elementwise pass: each run of fusable calls becomes one FusedElementwise call.
size_t fuse_elementwise(int device, std::vector<std::unique_ptr<pending::Work>>& list) {
  const Kernel kernel = kernel_of(Prim::FusedElementwise, device == pending::kCpu ? DeviceType::CPU : DeviceType::GPU);
  if (!kernel) return 0;
  try {
    std::vector<Replacement> replacements;
    size_t replaced = 0;
    for (size_t i = 0; i < list.size();) {
      std::vector<Call> run;
      for (size_t j = i; j < list.size() && run.size() < size_t(kFusedMaxInstrs); ++j) {
        std::optional<Call> c = as_call(*list[j], device == pending::kCpu ? Views::Rows : Views::Any);
        // (the CPU runs programs of one dtype; a GPU program's dtypes share a compute type)
        const bool fits = c && (run.empty() || (device == pending::kCpu ? c->dtype == run[0].dtype
                                                                        : fused_compute(c->dtype) ==
                                                                              fused_compute(run[0].dtype)));
        if (!fits || c->out->numel() != (run.empty() ? c->out->numel() : run[0].out->numel())) break;
        run.push_back(*c);
      }
      std::optional<Built> built;
      size_t count = run.size(), fits = 0;
      for (; count >= 2 && !(built = build(run, count, fits)); count = std::min(count - 1, fits)) {
      }
      if (!built) {
        ++i;
        continue;
      }
      Replacement r{i, count, nullptr};
      i += count;
      replaced += count;
      // Calls whose every result dies with them (a value computed and dropped) write
      // nothing anyone can read, and no fusable op can fail: they are dropped (no work).
      if (built->program.n_outputs > 0) {
        FusedElementwise prim;
        prim.program = built->program;
        if (const FusedVariant variant = g_variant.load(std::memory_order_acquire); variant && device != pending::kCpu)
          prim.variant = variant(prim.program, run[0].out->numel(), device);
        std::vector<TensorImpl*> outs;
        for (const TensorImpl* t : built->outs) outs.push_back(const_cast<TensorImpl*>(t));
        r.work = std::make_unique<RecordedLaunch>(kernel, prim, Outputs(outs.data(), outs.size()),
                                                  Inputs(built->ins.data(), built->ins.size()));
      }
      replacements.push_back(std::move(r));
    }
    splice(list, replacements);  // the replaced calls die, and the dead intermediates with them
    return replaced;
  } catch (...) {
    return 0;  // (out of host memory: the list runs as it was recorded)
  }
}

// The pending lists' rewriter: on a GPU the products' epilogues, then the elementwise
// pass, then on a GPU the norm pass.
size_t fuse(int device, std::vector<std::unique_ptr<pending::Work>>& list) {
  size_t replaced = device != pending::kCpu ? fuse_product_epilogues(list) : 0;
  replaced += fuse_elementwise(device, list);
  if (device != pending::kCpu) replaced += fuse_norm_rows(device, list);
  return replaced;
}

}  // namespace

void enable_elementwise_fusion() { pending::set_list_rewriter(&fuse); }

void set_fused_variant(FusedVariant variant) { g_variant.store(variant, std::memory_order_release); }

bool record_on_cpu(const Primitive& p, Outputs outs, Inputs ins) {
  if (outs.size() != 1 || ins.empty() || ins.size() > 3 || outs[0]->numel() < kCpuRecordMinElements) return false;
  // (Bytes something outside lucid may write at any time run at the call, as in eager mode.)
  for (const TensorImpl* t : outs) if (!t->is_cpu_storage() || t->reached_outside()) return false;
  for (const TensorImpl* t : ins) if (!t || !t->is_cpu_storage() || t->reached_outside()) return false;
  return step_of(p, outs.size(), outs[0], ins.size(), ins.data(), Views::Rows).has_value();
}

}  // namespace lucid::ops
