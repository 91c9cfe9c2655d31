#include "core/dtype.h"

namespace lucid {

namespace {
struct DtypeInfo {
  std::string_view name;
  size_t size;
  DtypeKind kind;
};
constexpr DtypeInfo kInfo[kNumDtypes] = {
    {"bool", 1, DtypeKind::Bool},         {"uint8", 1, DtypeKind::Integer},
    {"int8", 1, DtypeKind::Integer},      {"int16", 2, DtypeKind::Integer},
    {"int32", 4, DtypeKind::Integer},     {"int64", 8, DtypeKind::Integer},
    {"float16", 2, DtypeKind::Floating},  {"bfloat16", 2, DtypeKind::Floating},
    {"float32", 4, DtypeKind::Floating},  {"float64", 8, DtypeKind::Floating},
    {"complex64", 8, DtypeKind::Complex}, {"complex128", 16, DtypeKind::Complex},
};
}  // namespace

size_t dtype_size(Dtype d) { return kInfo[int(d)].size; }
std::string_view dtype_name(Dtype d) { return kInfo[int(d)].name; }

const char* scalar_type_name(Dtype d) {
  switch (d) {
    case Dtype::Bool: return "Bool";
    case Dtype::U8: return "Byte";
    case Dtype::I8: return "Char";
    case Dtype::I16: return "Short";
    case Dtype::I32: return "Int";
    case Dtype::I64: return "Long";
    case Dtype::F16: return "Half";
    case Dtype::BF16: return "BFloat16";
    case Dtype::F32: return "Float";
    case Dtype::F64: return "Double";
    case Dtype::C64: return "ComplexFloat";
    case Dtype::C128: return "ComplexDouble";
  }
  return "?";
}
DtypeKind dtype_kind(Dtype d) { return kInfo[int(d)].kind; }

Dtype dtype_from_code(int code) {
  LUCID_CHECK(code >= 0 && code < kNumDtypes, TypeError, "invalid dtype code ", code,
              " (expected 0..", kNumDtypes - 1, ")");
  return Dtype(code);
}

Dtype promote_types(Dtype a, Dtype b) {
  if (a == b) return a;
  auto ka = dtype_kind(a), kb = dtype_kind(b);
  // a complex type with float64 (or complex128): complex128
  if ((ka == DtypeKind::Complex || kb == DtypeKind::Complex) && (a == Dtype::F64 || b == Dtype::F64))
    return Dtype::C128;
  if (ka != kb) return ka > kb ? a : b;  // bool < integer < floating < complex
  switch (ka) {
    case DtypeKind::Integer: {
      // uint8 mixes with a signed type by widening to the next signed size.
      if (a == Dtype::U8 || b == Dtype::U8) {
        Dtype s = a == Dtype::U8 ? b : a;
        return s == Dtype::I8 ? Dtype::I16 : s;
      }
      return a > b ? a : b;
    }
    case DtypeKind::Floating:
      if ((a == Dtype::F16 && b == Dtype::BF16) || (a == Dtype::BF16 && b == Dtype::F16))
        return Dtype::F32;
      return a > b ? a : b;
    case DtypeKind::Complex:
      return Dtype::C128;  // complex64 with complex128 (equal types returned above)
    default:
      return a;  // Bool/Bool, equal, handled above
  }
}

}  // namespace lucid
