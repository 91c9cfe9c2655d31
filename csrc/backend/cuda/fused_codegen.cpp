#include "backend/cuda/fused_codegen.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/generated_kernels.h"

namespace lucid::cuda {

namespace {

using ops::BinaryOp;
using ops::FusedProgram;
using ops::UnaryOp;

// Each op's body over C (float, or double for float64), written as its functor's
// float branch is (ops/elementwise_table.h, elementwise_functors.h) with NVRTC's
// built-in math in place of std::'s, so that it compiles to the same instructions.
// A body is an expression, or a block when it starts with '{'. nullptr: no generated
// form (the program is interpreted).
const char* body_of(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "a + b";
    case BinaryOp::Sub: return "a - b";
    case BinaryOp::Mul: return "a * b";
    case BinaryOp::Div: return "a / b";
    case BinaryOp::Maximum: return "{ if (a != a) return a; if (b != b) return b; return a > b ? a : b; }";
    case BinaryOp::Minimum: return "{ if (a != a) return a; if (b != b) return b; return a < b ? a : b; }";
    case BinaryOp::FloorDivide:
      return "{ if (b == C(0)) return a / b; C mod = fmod(a, b); C div = (a - mod) / b;"
             " if (mod != C(0) && (b < C(0)) != (mod < C(0))) div -= C(1);"
             " if (div == C(0)) return copysign(C(0), a / b); C floordiv = floor(div);"
             " if (div - floordiv > C(0.5)) floordiv += C(1); return floordiv; }";
    case BinaryOp::DivTrunc: return "trunc(a / b)";
    case BinaryOp::Remainder:
      return "{ C mod = fmod(a, b); if (mod != C(0) && (b < C(0)) != (mod < C(0))) mod += b; return mod; }";
    case BinaryOp::Fmod: return "fmod(a, b)";
    case BinaryOp::Pow:
      return "{ if (b == C(2)) return a * a; if (b == C(3)) return a * a * a; if (b == C(-1)) return C(1) / a;"
             " if (b == C(-2)) return C(1) / (a * a); if (b == C(0.5)) return sqrt(a);"
             " if (b == C(-0.5)) return C(1) / sqrt(a); return pow(a, b); }";
    case BinaryOp::Fmax: return "{ if (a != a) return b; if (b != b) return a; return a > b ? a : b; }";
    case BinaryOp::Fmin: return "{ if (a != a) return b; if (b != b) return a; return a < b ? a : b; }";
    case BinaryOp::Atan2: return "atan2(a, b)";
    case BinaryOp::Hypot: return "hypot(a, b)";
    case BinaryOp::Xlogy: return "{ if (b != b) return b; if (a == C(0)) return C(0); return a * log(b); }";
    case BinaryOp::Logaddexp:
      return "{ if (isinf(a) && a == b) return a; C m = a > b ? a : b; if (a != a || b != b) return quiet_nan();"
             " C d = -fabs(a - b); return m + log1p(exp(d)); }";
    case BinaryOp::Logaddexp2:
      return "{ if (isinf(a) && a == b) return a; C m = a > b ? a : b; if (a != a || b != b) return quiet_nan();"
             " C d = -fabs(a - b); return m + log1p(exp2(d)) / C(0.6931471805599453); }";
    case BinaryOp::ThresholdBackward: return "b <= C(0) ? C(0) : a";
    // (the activations' derivatives, as ops/activation_functors.h writes them: g = a, x = b)
    case BinaryOp::GeluBackward:
      return "{ C cdf = C(0.5) * erfc(-b * C(0.70710678118654752440));"
             " C pdf = C(0.39894228040143267794) * exp(b * b * C(-0.5)); return a * (cdf + b * pdf); }";
    case BinaryOp::GeluTanhBackward:
      return "{ C x_sq = b * b; C t = tanh(C(0.79788456080286535588) * (b + C(0.044715) * (x_sq * b)));"
             " C left = C(0.5) * b, right = C(1) + t; C left_derivative = C(0.5) * right;"
             " C tanh_derivative = C(1) - t * t;"
             " C inner_derivative = C(0.79788456080286535588) * (C(1) + C(3) * C(0.044715) * x_sq);"
             " return a * (left_derivative + left * tanh_derivative * inner_derivative); }";
    case BinaryOp::SiluBackward:
      return "{ C s = C(1) / (C(1) + exp(-b)); return a * s * (C(1) + b * (C(1) - s)); }";
    case BinaryOp::HardsigmoidBackward: return "{ C d = a * C(1.0 / 6.0); return ((b > C(-3)) & (b < C(3))) ? d : C(0); }";
    case BinaryOp::HardswishBackward:
      return "{ C inside = a * (b / C(3) + C(0.5)); C above = b < C(3) ? inside : a; return b <= C(-3) ? C(0) : above; }";
    case BinaryOp::SoftplusBackward: return "{ C z = exp(b); return b > C(20) ? a : a * z / (z + C(1)); }";
    case BinaryOp::LogSigmoidBackward:
      return "{ C z = exp(-fabs(b)); C q = z / (C(1) + z); return b < C(0) ? a * (C(1) - q) : a * q; }";
    case BinaryOp::MishBackward:
      return "{ C s = C(1) / (C(1) + exp(-b)); C t = tanh(log1p(exp(b))); return a * (t + b * s * (C(1) - t * t)); }";
    // (the activations with a parameter: x = a, p = b)
    case BinaryOp::LeakyRelu: return "a > C(0) ? a : a * b";
    case BinaryOp::LeakyReluSlope: return "a > C(0) ? C(1) : b";
    case BinaryOp::Softshrink: return "{ C inside = a < -b ? a + b : a * C(0); return a > b ? a - b : inside; }";
    case BinaryOp::Hardshrink: return "((a >= -b) & (a <= b)) ? C(0) : a";
    case BinaryOp::ShrinkBackward: return "b == C(0) ? C(0) : a";
    default: return nullptr;
  }
}

const char* body_of(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "-a";
    case UnaryOp::Abs: return "a < C(0) ? C(-a) : a";
    case UnaryOp::Sign: return "a > C(0) ? C(1) : a < C(0) ? C(-1) : C(0)";
    case UnaryOp::Exp: return "exp(a)";
    case UnaryOp::Log: return "log(a)";
    case UnaryOp::Sqrt: return "sqrt(a)";
    case UnaryOp::Sin: return "sin(a)";
    case UnaryOp::Cos: return "cos(a)";
    case UnaryOp::Tanh: return "tanh(a)";
    case UnaryOp::Sigmoid: return "C(1) / (C(1) + exp(-a))";
    case UnaryOp::Exp2: return "exp2(a)";
    case UnaryOp::Expm1: return "expm1(a)";
    case UnaryOp::Log2: return "log2(a)";
    case UnaryOp::Log10: return "log10(a)";
    case UnaryOp::Log1p: return "log1p(a)";
    case UnaryOp::Tan: return "tan(a)";
    case UnaryOp::Asin: return "asin(a)";
    case UnaryOp::Acos: return "acos(a)";
    case UnaryOp::Atan: return "atan(a)";
    case UnaryOp::Sinh: return "sinh(a)";
    case UnaryOp::Cosh: return "cosh(a)";
    case UnaryOp::Asinh: return "asinh(a)";
    case UnaryOp::Acosh: return "acosh(a)";
    case UnaryOp::Atanh: return "atanh(a)";
    case UnaryOp::Erf: return "erf(a)";
    case UnaryOp::Erfc: return "erfc(a)";
    case UnaryOp::Reciprocal: return "C(1) / a";
    case UnaryOp::Rsqrt: return "C(1) / sqrt(a)";
    case UnaryOp::Logit: return "log(a / (C(1) - a))";
    case UnaryOp::Floor: return "floor(a)";
    case UnaryOp::Ceil: return "ceil(a)";
    case UnaryOp::Round: return "nearbyint(a)";
    case UnaryOp::Trunc: return "trunc(a)";
    case UnaryOp::Frac: return "a - trunc(a)";
    case UnaryOp::Square: return "a * a";
    case UnaryOp::Relu: return "a > C(0) || a != a ? a : C(0)";  // the device functor's (+0 for -0)
    case UnaryOp::Gelu: return "a * C(0.5) * erfc(-a * C(0.70710678118654752440))";
    case UnaryOp::GeluTanh:
      return "C(0.5) * a * (C(1) + tanh(C(0.79788456080286535588) * (a + C(0.044715) * (a * a * a))))";
    case UnaryOp::Silu: return "a / (C(1) + exp(-a))";
    case UnaryOp::Hardsigmoid:
      return "{ C q = (a + C(3)) / C(6); C m = q < C(0) ? C(0) : q; return C(1) < m ? C(1) : m; }";
    case UnaryOp::Hardswish:
      return "{ C s = a + C(3); C m = s < C(0) ? C(0) : s; m = C(6) < m ? C(6) : m; return a * m / C(6); }";
    case UnaryOp::Softplus: return "a > C(20) ? a : log1p(exp(a))";
    case UnaryOp::LogSigmoid: return "{ C m = a < C(0) ? a : C(0); return m - log1p(exp(-fabs(a))); }";
    case UnaryOp::Mish: return "a * tanh(log1p(exp(a)))";
    default: return nullptr;  // (erfinv: a Newton-refined series, interpreted)
  }
}

const char* body_of(const ops::FusedInstr& in) {
  switch (in.kind) {
    case ops::FusedKind::Binary: return body_of(BinaryOp(in.op));
    case ops::FusedKind::Unary: return body_of(UnaryOp(in.op));
    default: return "";  // (written inline: a select, a rounding)
  }
}

constexpr int kThreads = 256;

// Elements a thread takes per input and step: 16 bytes of each operand.
int width_of(Dtype d) { return d == Dtype::F64 ? 2 : d == Dtype::F32 ? 4 : 8; }

// `v` rounded to `d` and back to C (the value a `d` result holds).
std::string round_expr(Dtype d, const std::string& v) {
  if (d == Dtype::F16) return "C(f16_load(f16_store(" + v + ")))";
  if (d == Dtype::BF16) return "C(bf16_load(bf16_store(" + v + ")))";
  return v;
}

// The kernel's parameter, as the generated source declares it (view only when the
// program has a View input: a kernel reads the prefix of the parameter it declares).
struct Params {
  const void* in[ops::kFusedMaxInputs];
  void* out[ops::kFusedMaxOutputs];
  double consts[ops::kFusedMaxConsts];
  long long n;
  ViewTerm view[ops::kFusedMaxInputs][ops::kFusedMaxTerms];
};

std::atomic<size_t> g_launches{0};

// A variable of the generated code: k0 (a constant), b1 (a broadcast input), x2 (an
// input's elements), t3 (a step's value).
std::string var(char kind, int index) {
  std::string v(1, kind);
  v += std::to_string(index);
  return v;
}

// The magic numbers of unsigned division by d (1 <= d <= 2^31): n / d is
// (umulhi(n, mul) + n) >> shift for every n < 2^31.
void divide_by(int64_t d, unsigned& mul, unsigned& shift) {
  shift = 0;
  while ((uint64_t(1) << shift) < uint64_t(d)) ++shift;
  mul = unsigned(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - uint64_t(d))) / uint64_t(d) + 1);
}

}  // namespace

int64_t view_reach(const FusedProgram& p) {
  int64_t reach = 0;
  for (int k = 0; k < p.n_inputs; ++k) {
    if (p.in_read[k] != ops::FusedRead::View) continue;
    int64_t r = 0;
    for (int t = 0; t < p.in_view[k].terms; ++t) r += (p.in_view[k].size[t] - 1) * std::abs(p.in_view[k].stride[t]);
    reach = std::max(reach, r);
  }
  return reach;
}

bool has_views(const FusedProgram& p) {
  return std::any_of(p.in_read, p.in_read + p.n_inputs, [](ops::FusedRead r) { return r == ops::FusedRead::View; });
}

std::string view_functions(bool index32) {
  std::string s =
      "struct ViewTerm { long long div, size, stride; unsigned div_mul, div_shift, size_mul, size_shift; };\n";
  if (index32)
    s += "__device__ __forceinline__ unsigned udiv(unsigned n, unsigned mul, unsigned shift) {"
         " return (__umulhi(n, mul) + n) >> shift; }\n"
         "__device__ __forceinline__ int view_term(const ViewTerm& t, unsigned i) {"
         " const unsigned q = udiv(i, t.div_mul, t.div_shift);"
         " return int(q - udiv(q, t.size_mul, t.size_shift) * unsigned(t.size)) * int(t.stride); }\n";
  else
    s += "__device__ __forceinline__ long long view_term(const ViewTerm& t, long long i) {"
         " return i / t.div % t.size * t.stride; }\n";
  return s;
}

std::string view_element(const ops::FusedView& v, const std::string& slot, const std::string& index) {
  std::string at;
  for (int t = 0; t < v.terms; ++t)
    at += std::string(t ? " + " : "") + "view_term(" + slot + "[" + std::to_string(t) + "], " + index + ")";
  return at.empty() ? std::string("0") : at;
}

void fill_view(const ops::FusedView& v, ViewTerm* terms) {
  for (int t = 0; t < v.terms && t < ops::kFusedMaxTerms; ++t) {
    ViewTerm& term = terms[t];
    term.div = v.div[t], term.size = v.size[t], term.stride = v.stride[t];
    // (the magic numbers serve 32-bit kernels, whose sizes are below 2^30)
    divide_by(std::min<int64_t>(v.div[t], int64_t(1) << 31), term.div_mul, term.div_shift);
    divide_by(std::min<int64_t>(v.size[t], int64_t(1) << 31), term.size_mul, term.size_shift);
  }
}

const char* storage_type(Dtype d) {
  switch (d) {
    case Dtype::Bool: return "unsigned char";
    case Dtype::F16: case Dtype::BF16: return "unsigned short";
    case Dtype::F32: return "float";
    default: return "double";
  }
}

// `v` (an element of a `d` operand) as C.
std::string load_expr(Dtype d, const std::string& v) {
  switch (d) {
    case Dtype::Bool: return "(" + v + " ? C(1) : C(0))";
    case Dtype::F16: return "C(f16_load(" + v + "))";
    case Dtype::BF16: return "C(bf16_load(" + v + "))";
    default: return "C(" + v + ")";
  }
}

// `v` (a C value) stored as `d`.
std::string store_expr(Dtype d, const std::string& v) {
  switch (d) {
    case Dtype::F16: return "f16_store(float(" + v + "))";
    case Dtype::BF16: return "bf16_store(float(" + v + "))";
    case Dtype::F32: return "float(" + v + ")";
    default: return "double(" + v + ")";
  }
}

// The compute type and the conversions of each dtype an operand may have: loads into C,
// stores from C and the rounding of a step's result to its dtype (the 16-bit types are
// computed in float and each result rounded as the unfused op stores it; the
// conversions are core/half.h's device instructions).
std::string fused_prelude(Dtype compute) {
  std::string s = compute == Dtype::F64
                      ? "typedef double C;\n__device__ __forceinline__ C quiet_nan() { return "
                        "__longlong_as_double(0x7ff8000000000000ll); }\n"
                      : "typedef float C;\n__device__ __forceinline__ C quiet_nan() { return __int_as_float(0x7fc00000); }\n";
  s += "__device__ __forceinline__ float f16_load(unsigned short h) { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : "
       "\"h\"(h)); return f; }\n"
       "__device__ __forceinline__ unsigned short f16_store(float f) { unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : "
       "\"=h\"(h) : \"f\"(f)); return h; }\n"
       "__device__ __forceinline__ float bf16_load(unsigned short h) { return __uint_as_float(unsigned(h) << 16); }\n"
       "__device__ __forceinline__ unsigned short bf16_store(float f) { unsigned short h; asm(\"cvt.rn.bf16.f32 %0, %1;\" "
       ": \"=h\"(h) : \"f\"(f)); return h; }\n";
  return s;
}

bool write_op_functions(std::ostream& s, std::initializer_list<const FusedProgram*> programs) {
  bool seen_b[256] = {}, seen_u[256] = {};
  for (const FusedProgram* p : programs)
    for (int i = 0; i < p->n_instrs; ++i) {
      const ops::FusedInstr& in = p->instrs[i];
      const char* body = body_of(in);
      if (!body) return false;
      if (!*body) continue;
      const bool binary = in.kind == ops::FusedKind::Binary;
      bool& seen = binary ? seen_b[in.op] : seen_u[in.op];
      if (seen) continue;
      seen = true;
      s << "__device__ __forceinline__ C " << (binary ? "binary" : "unary") << int(in.op)
        << (binary ? "(C a, C b) " : "(C a) ");
      if (body[0] == '{') s << body << "\n";
      else s << "{ return " << body << "; }\n";
    }
  return true;
}

void write_steps(std::ostream& s, const FusedProgram& p, std::string (&reg)[ops::kFusedMaxRegs],
                 const std::string& prefix, const char* indent) {
  for (int k = 0; k < p.n_instrs; ++k) {
    const ops::FusedInstr& in = p.instrs[k];
    std::string value;
    switch (in.kind) {
      case ops::FusedKind::Where: value = "(" + reg[in.a] + " != C(0) ? " + reg[in.b] + " : " + reg[in.c] + ")"; break;
      case ops::FusedKind::Cast: value = round_expr(in.dtype, reg[in.a]); break;
      case ops::FusedKind::Binary:
        value = round_expr(in.dtype, "binary" + std::to_string(in.op) + "(" + reg[in.a] + ", " + reg[in.b] + ")");
        break;
      case ops::FusedKind::Unary: value = round_expr(in.dtype, "unary" + std::to_string(in.op) + "(" + reg[in.a] + ")"); break;
    }
    const std::string name = prefix + std::to_string(k);
    s << indent << "const C " << name << " = " << value << ";\n";
    reg[in.dst] = name;
  }
}

std::string fused_kernel_source(const FusedProgram& p, bool index32) {
  const Dtype compute = ops::fused_compute(p.dtype);
  auto float_dtype = [&](Dtype d) {
    return (d == Dtype::F64 || d == Dtype::F32 || d == Dtype::F16 || d == Dtype::BF16) && ops::fused_compute(d) == compute;
  };
  if (!ops::fused_program_valid(p) || !float_dtype(p.dtype)) return {};
  for (int k = 0; k < p.n_inputs; ++k)
    if (!float_dtype(p.in_dtype[k]) && p.in_dtype[k] != Dtype::Bool) return {};
  for (int o = 0; o < p.n_outputs; ++o)
    if (!float_dtype(p.out_dtype[o])) return {};
  const int v = width_of(p.dtype);
  std::ostringstream s;
  s << "// A fused elementwise chain, generated by lucid (backend/cuda/fused_codegen.cpp)\n"
    << fused_prelude(compute) << "typedef " << (index32 ? "int" : "long long") << " I;\n";
  // One function per distinct op, as its own kernel calls its functor.
  for (int i = 0; i < p.n_instrs; ++i)
    if (!float_dtype(p.instrs[i].dtype)) return {};
  if (!write_op_functions(s, {&p})) return {};
  const bool views = has_views(p);
  if (views) s << view_functions(index32);
  s << "struct Params { const void* in[" << ops::kFusedMaxInputs << "]; void* out[" << ops::kFusedMaxOutputs
    << "]; double consts[" << ops::kFusedMaxConsts << "]; long long n;";
  if (views) s << " ViewTerm view[" << ops::kFusedMaxInputs << "][" << ops::kFusedMaxTerms << "];";
  s << " };\n"
    << "extern \"C\" __global__ void __launch_bounds__(" << kThreads << ") lucid_fused(const Params p) {\n"
    << "  const I n = I(p.n);\n";
  auto in_ptr = [&](int k) {
    return std::string("((const ") + storage_type(p.in_dtype[k]) + "*)p.in[" + std::to_string(k) + "])";
  };
  // The value each register holds, as a C expression; replaced as instructions write.
  std::string reg[ops::kFusedMaxRegs];
  for (int c = 0; c < p.n_consts; ++c) {
    s << "  const C k" << c << " = C(p.consts[" << c << "]);\n";
    reg[p.const_reg[c]] = var('k', c);
  }
  // The element of input k that the chain's element i reads (ops::FusedRead).
  auto element = [&](int k) {
    if (p.in_read[k] == ops::FusedRead::Elements) return std::string("i");
    return view_element(p.in_view[k], "p.view[" + std::to_string(k) + "]", "i");
  };
  auto one = [&](int k) { return p.in_read[k] == ops::FusedRead::One; };
  for (int i = 0; i < p.n_inputs; ++i)
    if (one(i)) s << "  const C b" << i << " = " << load_expr(p.in_dtype[i], in_ptr(i) + "[0]") << ";\n";
  s << "  for (I base = I(blockIdx.x) * " << kThreads * v << "; base < n; base += I(gridDim.x) * " << kThreads * v
    << ") {\n";
  // All loads first (an output may be an input's storage: in-place steps).
  for (int i = 0; i < p.n_inputs; ++i)
    if (!one(i)) s << "    C x" << i << "[" << v << "];\n";
  s << "#pragma unroll\n    for (int j = 0; j < " << v << "; ++j) {\n"
    << "      const I i = base + I(threadIdx.x) + j * " << kThreads << ";\n";
  for (int i = 0; i < p.n_inputs; ++i)
    if (!one(i))
      s << "      x" << i << "[j] = i < n ? " << load_expr(p.in_dtype[i], in_ptr(i) + "[" + element(i) + "]")
        << " : C(0);\n";
  s << "    }\n#pragma unroll\n    for (int j = 0; j < " << v << "; ++j) {\n"
    << "      const I i = base + I(threadIdx.x) + j * " << kThreads << ";\n";
  for (int i = 0; i < p.n_inputs; ++i)
    reg[p.in_reg[i]] = one(i) ? var('b', i) : var('x', i) + "[j]";
  write_steps(s, p, reg, "t", "      ");
  s << "      if (i < n) {\n";
  for (int o = 0; o < p.n_outputs; ++o)
    s << "        ((" << storage_type(p.out_dtype[o]) << "*)p.out[" << o << "])[i] = "
      << store_expr(p.out_dtype[o], reg[p.out_reg[o]]) << ";\n";
  s << "      }\n    }\n  }\n}\n";
  return s.str();
}

uint64_t fused_variant(const FusedProgram& p, int64_t n, int device) {
  if (compile_mode() == CompileMode::Off) return 0;
  const bool index32 = std::max(n, view_reach(p) + 1) <= (int64_t(1) << 30);
  // Programs seen, by structure: their cache entry, or null when they have no generated form.
  static std::mutex mu;
  static auto* known = new std::unordered_map<std::string, GeneratedKernel*>;
  GeneratedKernel* entry = nullptr;
  {
    std::string key = ops::fused_structure(p);
    key.push_back(char(index32));
    std::lock_guard<std::mutex> lock(mu);
    auto it = known->find(key);
    if (it == known->end()) {
      const std::string source = fused_kernel_source(p, index32);
      it = known->emplace(std::move(key), source.empty() ? nullptr : &generated_kernel(source, "lucid_fused")).first;
    }
    entry = it->second;
  }
  try {
    return entry ? reinterpret_cast<uintptr_t>(kernel_for(*entry, device)) : 0;
  } catch (const std::exception&) {
    return 0;  // (a CUDA error loading it: interpreted, and the next CUDA call raises it)
  }
}

void launch_generated_fused(const FusedProgram& p, const void* kernel, ops::Outputs outs, ops::Inputs ins, int64_t n,
                            cudaStream_t stream) {
  Params params{};
  for (size_t k = 0; k < ins.size(); ++k) params.in[k] = ins[k]->data_ptr();
  for (size_t o = 0; o < outs.size(); ++o) params.out[o] = outs[o]->data_ptr();
  std::copy(p.consts, p.consts + p.n_consts, params.consts);
  params.n = n;
  for (int k = 0; k < p.n_inputs; ++k)
    if (p.in_read[k] == ops::FusedRead::View) fill_view(p.in_view[k], params.view[k]);
  // A block per tile (up to 2^20 blocks, looping beyond). Enough blocks to fill the SMs
  // once (8 an SM), each looping over 16 tiles, measured 11% slower on the chain of 8
  // (H100, 16M float32: 7.85 us an op against 7.0): a chain of transcendental ops is
  // bound by issue slots, and blocks that end as they go keep more warps resident.
  const int64_t tile = int64_t(kThreads) * width_of(p.dtype);
  const unsigned grid = unsigned(std::clamp<int64_t>((n + tile - 1) / tile, 1, int64_t(1) << 20));
  void* args[] = {&params};
  LUCID_CUDA_CHECK(cudaLaunchKernel(kernel, dim3(grid), dim3(kThreads), args, 0, stream));
  g_launches.fetch_add(1, std::memory_order_relaxed);
}

size_t generated_fused_launches() { return g_launches.load(std::memory_order_relaxed); }

}  // namespace lucid::cuda
