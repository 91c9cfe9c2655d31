// The CPU kernel of a fused elementwise chain (ops/prims/fused.h), Note [Compiled CPU
// chains] (ops/fusion.h): blocks of kBlock elements in parallel; in a block each step is
// a select (where: its bool condition read as 0 or 1) or the op's own row kernel (RowKernels, elementwise.h: the SIMD loop or vector math its
// eager kernel runs) over rows that stay in cache, so the chain reads its inputs and
// writes its outputs once, and every element gets the bits the unfused ops give it (the
// row kernels compute each element on its own, wherever a row starts). A View input,
// which on the CPU repeats a row (a bias), is copied into its register a block at a time.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backend/cpu/elementwise.h"
#include "backend/cpu/register.h"
#include "core/error.h"
#include "core/parallel.h"
#include "ops/elementwise.h"
#include "ops/fusion.h"
#include "ops/prims/fused.h"

namespace lucid::cpu {

namespace {

// Elements a block: 8 rows of float32 are 64 KiB, of float64 128 KiB (a core's L2).
constexpr int64_t kBlock = 2048;

struct Step {
  RowKernels rows;  // Unary and Binary steps (a where is a select, below)
  ops::FusedKind kind;
};

// The row kernels of each step, looked up once a call; the program's dtypes checked
// (the fusion pass gives the CPU programs of one dtype, bool inputs aside, without casts).
void steps_of(const ops::FusedProgram& p, Step* steps) {
  bool one_dtype = true;
  for (int k = 0; k < p.n_inputs; ++k) {
    one_dtype = one_dtype && (p.in_dtype[k] == p.dtype || p.in_dtype[k] == Dtype::Bool);
    const ops::FusedView& v = p.in_view[k];
    LUCID_CHECK(p.in_read[k] != ops::FusedRead::View || (v.terms == 1 && v.div[0] == 1 && v.stride[0] == 1),
                RuntimeError, "internal: a CPU fused elementwise program reads a view that does not repeat a row");
  }
  for (int o = 0; o < p.n_outputs; ++o) one_dtype = one_dtype && p.out_dtype[o] == p.dtype;
  for (int s = 0; s < p.n_instrs; ++s) one_dtype = one_dtype && p.instrs[s].dtype == p.dtype;
  LUCID_CHECK(one_dtype, RuntimeError, "internal: a CPU fused elementwise program of several dtypes");
  for (int s = 0; s < p.n_instrs; ++s) {
    const ops::FusedInstr& in = p.instrs[s];
    steps[s].kind = in.kind;
    bool found = true;
    if (in.kind == ops::FusedKind::Binary) {
      steps[s].rows = binary_rows(ops::BinaryOp(in.op), p.dtype);
      found = steps[s].rows.rows != nullptr;
    } else if (in.kind == ops::FusedKind::Unary) {
      steps[s].rows = unary_rows(ops::UnaryOp(in.op), p.dtype);
      found = steps[s].rows.unary != nullptr;
    }
    LUCID_CHECK(in.kind != ops::FusedKind::Cast, RuntimeError, "internal: a cast in a CPU fused elementwise program");
    LUCID_CHECK(found, RuntimeError, "internal: a fused elementwise program's step ",
                in.kind == ops::FusedKind::Binary ? ops::op_name(ops::BinaryOp(in.op)) : ops::op_name(ops::UnaryOp(in.op)),
                " has no CPU row kernel for ", dtype_name(p.dtype));
  }
}

// T's bits as an unsigned integer of its size, which may alias T: the where steps and the
// bool reads move and test bits, so they vectorise. (Branches on a random condition
// mispredict every other element: a compiled elu ran at 4x its eager time.)
template <typename T>
struct BitsOf;
template <> struct BitsOf<Half> { typedef uint16_t __attribute__((may_alias)) type; };
template <> struct BitsOf<BFloat16> { typedef uint16_t __attribute__((may_alias)) type; };
template <> struct BitsOf<float> { typedef uint32_t __attribute__((may_alias)) type; };
template <> struct BitsOf<double> { typedef uint64_t __attribute__((may_alias)) type; };

// dst[i] = T(1) or T(0) for a bool row.
template <typename T>
void bools_as_row(T* dst, const bool* src, int64_t m) {
  using U = typename BitsOf<T>::type;
  U one;
  const T one_t(1.0f);
  std::memcpy(&one, &one_t, sizeof(U));
  U* d = reinterpret_cast<U*>(dst);
  const uint8_t* s = reinterpret_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < m; ++i) d[i] = U(U(0) - U(s[i])) & one;  // (a bool's byte is 0 or 1)
}

// dst[i] = c[i] != 0 ? x[i] : y[i], each operand a row (stride 1) or one value (0): the
// where kernel's bits, as a blend. A value is nonzero when its bits but the sign are.
template <typename T, int kC, int kX, int kY>
void select_rows(T* dst, const T* c, const T* x, const T* y, int64_t m) {
  using U = typename BitsOf<T>::type;
  const U* cu = reinterpret_cast<const U*>(c);
  const U* xu = reinterpret_cast<const U*>(x);
  const U* yu = reinterpret_cast<const U*>(y);
  U* d = reinterpret_cast<U*>(dst);
  for (int64_t i = 0; i < m; ++i) {
    const U a = xu[i * kX], b = yu[i * kY];
    d[i] = U(cu[i * kC] << 1) != 0 ? a : b;
  }
}

template <typename T>
void select_step(T* dst, const T* c, bool c_row, const T* x, bool x_row, const T* y, bool y_row, int64_t m) {
  const int which = (c_row ? 4 : 0) | (x_row ? 2 : 0) | (y_row ? 1 : 0);
  switch (which) {
    case 0: return select_rows<T, 0, 0, 0>(dst, c, x, y, m);
    case 1: return select_rows<T, 0, 0, 1>(dst, c, x, y, m);
    case 2: return select_rows<T, 0, 1, 0>(dst, c, x, y, m);
    case 3: return select_rows<T, 0, 1, 1>(dst, c, x, y, m);
    case 4: return select_rows<T, 1, 0, 0>(dst, c, x, y, m);
    case 5: return select_rows<T, 1, 0, 1>(dst, c, x, y, m);
    case 6: return select_rows<T, 1, 1, 0>(dst, c, x, y, m);
    default: return select_rows<T, 1, 1, 1>(dst, c, x, y, m);
  }
}

template <typename T>
void run_program(const ops::FusedProgram& p, const Step* steps, const void* const* in_bytes,
                 T* const* out, int64_t n) {
  // Typed inputs; a bool input (a where's condition) is read as 0 or 1 of T.
  const T* in[ops::kFusedMaxInputs] = {};
  const bool* in_bool[ops::kFusedMaxInputs] = {};
  for (int k = 0; k < p.n_inputs; ++k) {
    if (p.in_dtype[k] == Dtype::Bool) in_bool[k] = static_cast<const bool*>(in_bytes[k]);
    else in[k] = static_cast<const T*>(in_bytes[k]);
  }
  // A register is a row of the block (a step's result), a row of an input read where
  // it lies, or one value (a constant, a broadcast input): the same for every block.
  // The row kernels take such a value in T's opmath type C (kernel_unit.h): `wide`. A
  // constant is a float32 (or double) value; T's own only for the where's selects.
  using C = std::conditional_t<sizeof(T) == 2, float, T>;  // (Half, BFloat16: float)
  T value[ops::kFusedMaxRegs] = {};
  C wide[ops::kFusedMaxRegs] = {};
  for (int c = 0; c < p.n_consts; ++c) {
    value[p.const_reg[c]] = T(p.consts[c]);
    wide[p.const_reg[c]] = C(p.consts[c]);
  }
  for (int k = 0; k < p.n_inputs; ++k)
    if (p.in_read[k] == ops::FusedRead::One) {
      value[p.in_reg[k]] = in_bool[k] ? T(in_bool[k][0] ? 1.0f : 0.0f) : in[k][0];
      wide[p.in_reg[k]] = C(value[p.in_reg[k]]);
    }
  // A step that gives an output its final value writes it there directly, unless an
  // output is also an input (in place): then every read of the block comes first.
  int direct[ops::kFusedMaxInstrs];
  std::fill_n(direct, ops::kFusedMaxInstrs, -1);
  bool in_place = false;
  for (int o = 0; o < p.n_outputs; ++o)
    for (int k = 0; k < p.n_inputs; ++k) in_place = in_place || static_cast<const T*>(out[o]) == in[k];
  bool direct_output[ops::kFusedMaxOutputs] = {};
  for (int o = 0; o < p.n_outputs; ++o)
    for (int k = 0; k < p.n_inputs; ++k) in_place = in_place || static_cast<const void*>(out[o]) == in_bool[k];
  for (int o = 0; o < p.n_outputs && !in_place; ++o)
    for (int s = p.n_instrs - 1; s >= 0; --s)
      if (p.instrs[s].dst == p.out_reg[o]) {
        direct[s] = o, direct_output[o] = true;
        break;
      }
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  auto run_blocks = [&](int64_t first, int64_t last) {
    alignas(64) T rows[ops::kFusedMaxRegs][kBlock];
    for (int64_t blk = first; blk < last; ++blk) {
      const int64_t b0 = blk * kBlock, m = std::min(kBlock, n - b0);
      const T* src[ops::kFusedMaxRegs] = {};
      bool one_value[ops::kFusedMaxRegs] = {};
      for (int c = 0; c < p.n_consts; ++c) {
        const int r = p.const_reg[c];
        one_value[r] = true, src[r] = &value[r];
      }
      for (int k = 0; k < p.n_inputs; ++k) {
        const int r = p.in_reg[k];
        one_value[r] = p.in_read[k] == ops::FusedRead::One;
        if (one_value[r]) {
          src[r] = &value[r];
        } else if (p.in_read[k] == ops::FusedRead::View) {  // a repeated row: the block's stretch of it, copied
          const int64_t row = p.in_view[k].size[0];
          for (int64_t j = 0; j < m;) {
            const int64_t at = (b0 + j) % row, len = std::min(row - at, m - j);
            if (in_bool[k])
              bools_as_row(rows[r] + j, in_bool[k] + at, len);
            else
              std::memcpy(rows[r] + j, in[k] + at, size_t(len) * sizeof(T));
            j += len;
          }
          src[r] = rows[r];
        } else if (in_bool[k]) {
          bools_as_row(rows[r], in_bool[k] + b0, m);
          src[r] = rows[r];
        } else {
          src[r] = in[k] + b0;
        }
      }
      // A value where a row is needed (never from the fusion pass's programs, which
      // give every step a row operand) becomes a row of it.
      auto as_row = [&](int r) {
        if (!one_value[r]) return;
        std::fill_n(rows[r], m, value[r]);
        src[r] = rows[r], one_value[r] = false;
      };
      for (int s = 0; s < p.n_instrs; ++s) {
        const ops::FusedInstr& ins = p.instrs[s];
        const RowKernels& k = steps[s].rows;
        T* dst = direct[s] >= 0 ? out[direct[s]] + b0 : rows[ins.dst];
        if (steps[s].kind == ops::FusedKind::Where) {  // a select: the where kernel's bits
          select_step(dst, src[ins.a], !one_value[ins.a], src[ins.b], !one_value[ins.b], src[ins.c], !one_value[ins.c], m);
        } else if (steps[s].kind == ops::FusedKind::Unary) {
          as_row(ins.a);
          k.unary(src[ins.a], dst, m);
        } else if (one_value[ins.a] && one_value[ins.b]) {
          as_row(ins.a);
          k.row_value(dst, src[ins.a], &wide[ins.b], m);
        } else if (one_value[ins.b]) {
          k.row_value(dst, src[ins.a], &wide[ins.b], m);
        } else if (one_value[ins.a]) {
          k.value_row(dst, &wide[ins.a], src[ins.b], m);
        } else {
          k.rows(dst, src[ins.a], src[ins.b], m);
        }
        src[ins.dst] = dst, one_value[ins.dst] = false;
      }
      // (After every read of the block: an output may be an input's storage, in place.)
      for (int o = 0; o < p.n_outputs; ++o) {
        const int r = p.out_reg[o];
        if (direct_output[o]) continue;
        if (one_value[r]) std::fill_n(out[o] + b0, m, value[r]);
        else std::memcpy(out[o] + b0, src[r], size_t(m) * sizeof(T));
      }
    }
  };
  if (blocks < 2) return run_blocks(0, blocks);
  parallel_for(blocks, 2, run_blocks);
}

void fused_elementwise_kernel(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& fused = ops::prim_cast<ops::FusedElementwise>(prim);
  const ops::FusedProgram& p = fused.program;
  LUCID_CHECK(ops::fused_program_valid(p) && outs.size() == p.n_outputs && ins.size() == p.n_inputs && !outs.empty(),
              RuntimeError,
              "internal: a fused elementwise program given ", outs.size(), " outputs and ", ins.size(), " inputs");
  Step steps[ops::kFusedMaxInstrs];
  steps_of(p, steps);
  auto run = [&]<typename T>() {
    const void* in[ops::kFusedMaxInputs] = {};
    T* out[ops::kFusedMaxOutputs] = {};
    for (size_t k = 0; k < ins.size(); ++k) in[k] = ins[k]->host_ptr();
    for (size_t o = 0; o < outs.size(); ++o) out[o] = reinterpret_cast<T*>(outs[o]->host_ptr());
    run_program<T>(p, steps, in, out, outs[0]->numel());
  };
  switch (p.dtype) {
    case Dtype::F16: return run.operator()<Half>();
    case Dtype::BF16: return run.operator()<BFloat16>();
    case Dtype::F32: return run.operator()<float>();
    case Dtype::F64: return run.operator()<double>();
    default: fail<RuntimeError>("internal: a fused elementwise program of ", dtype_name(p.dtype));
  }
}

}  // namespace

void register_fused_kernels() {
  ops::register_kernel(ops::Prim::FusedElementwise, DeviceType::CPU, fused_elementwise_kernel);
  ops::enable_elementwise_fusion();  // the pending lists' rewriter (the CPU's and the GPUs')
}

}  // namespace lucid::cpu
