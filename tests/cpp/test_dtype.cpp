// Dtype table (sizes, names, kinds), code validation and type promotion checked
// against torch.promote_types.
#include <gtest/gtest.h>

#include <string>

#include "core/dtype.h"

using namespace lucid;

namespace {

constexpr Dtype kAll[kNumDtypes] = {Dtype::Bool, Dtype::U8,   Dtype::I8,  Dtype::I16,
                                    Dtype::I32,  Dtype::I64,  Dtype::F16, Dtype::BF16,
                                    Dtype::F32,  Dtype::F64,  Dtype::C64, Dtype::C128};

TEST(Dtype, SizesNamesKinds) {
  struct Row {
    Dtype d;
    size_t size;
    const char* name;
    DtypeKind kind;
  };
  const Row rows[] = {
      {Dtype::Bool, 1, "bool", DtypeKind::Bool},
      {Dtype::U8, 1, "uint8", DtypeKind::Integer},
      {Dtype::I8, 1, "int8", DtypeKind::Integer},
      {Dtype::I16, 2, "int16", DtypeKind::Integer},
      {Dtype::I32, 4, "int32", DtypeKind::Integer},
      {Dtype::I64, 8, "int64", DtypeKind::Integer},
      {Dtype::F16, 2, "float16", DtypeKind::Floating},
      {Dtype::BF16, 2, "bfloat16", DtypeKind::Floating},
      {Dtype::F32, 4, "float32", DtypeKind::Floating},
      {Dtype::F64, 8, "float64", DtypeKind::Floating},
      {Dtype::C64, 8, "complex64", DtypeKind::Complex},
      {Dtype::C128, 16, "complex128", DtypeKind::Complex},
  };
  ASSERT_EQ(std::size(rows), size_t(kNumDtypes));
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(dtype_size(r.d), r.size);
    EXPECT_EQ(std::string(dtype_name(r.d)), r.name);
    EXPECT_EQ(dtype_kind(r.d), r.kind);
    EXPECT_EQ(is_floating(r.d), r.kind == DtypeKind::Floating);
    EXPECT_EQ(is_complex(r.d), r.kind == DtypeKind::Complex);
    EXPECT_EQ(is_integral(r.d, false), r.kind == DtypeKind::Integer);
    EXPECT_EQ(is_integral(r.d, true),
              r.kind == DtypeKind::Integer || r.kind == DtypeKind::Bool);
  }
}

TEST(Dtype, SizesMatchCppTypes) {
  for (Dtype d : kAll) {
    size_t s = visit_dtype(d, []<typename T>() { return sizeof(T); });
    EXPECT_EQ(s, dtype_size(d)) << dtype_name(d);
  }
}

TEST(Dtype, FromCodeRoundTrips) {
  for (int code = 0; code < kNumDtypes; ++code) {
    EXPECT_EQ(dtype_from_code(code), kAll[code]);
    EXPECT_EQ(int(dtype_from_code(code)), code);
  }
}

TEST(Dtype, FromCodeRejectsBadCodes) {
  for (int code : {-1, -100, kNumDtypes, kNumDtypes + 1, 255, 256, 1 << 30})
    EXPECT_THROW(dtype_from_code(code), TypeError) << code;
}

TEST(Dtype, FromCodeErrorMessage) {
  try {
    dtype_from_code(42);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("42"), std::string::npos) << e.what();
  }
}

// torch.promote_types(a, b) for every pair, generated with PyTorch 2.x:
//   ds = [bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32,
//         float64, complex64, complex128]; [[promote_types(a, b) for b in ds] for a in ds]
TEST(Dtype, PromoteTypesMatchesTorch) {
  using enum Dtype;
  const Dtype expected[kNumDtypes][kNumDtypes] = {
      {Bool, U8, I8, I16, I32, I64, F16, BF16, F32, F64, C64, C128},
      {U8, U8, I16, I16, I32, I64, F16, BF16, F32, F64, C64, C128},
      {I8, I16, I8, I16, I32, I64, F16, BF16, F32, F64, C64, C128},
      {I16, I16, I16, I16, I32, I64, F16, BF16, F32, F64, C64, C128},
      {I32, I32, I32, I32, I32, I64, F16, BF16, F32, F64, C64, C128},
      {I64, I64, I64, I64, I64, I64, F16, BF16, F32, F64, C64, C128},
      {F16, F16, F16, F16, F16, F16, F16, F32, F32, F64, C64, C128},
      {BF16, BF16, BF16, BF16, BF16, BF16, F32, BF16, F32, F64, C64, C128},
      {F32, F32, F32, F32, F32, F32, F32, F32, F32, F64, C64, C128},
      {F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, C128, C128},
      {C64, C64, C64, C64, C64, C64, C64, C64, C64, C128, C64, C128},
      {C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128},
  };
  for (int i = 0; i < kNumDtypes; ++i)
    for (int j = 0; j < kNumDtypes; ++j)
      EXPECT_EQ(promote_types(kAll[i], kAll[j]), expected[i][j])
          << dtype_name(kAll[i]) << " x " << dtype_name(kAll[j]) << " gave "
          << dtype_name(promote_types(kAll[i], kAll[j]));
}

TEST(Dtype, PromoteTypesSymmetricAndIdempotent) {
  for (Dtype a : kAll) {
    EXPECT_EQ(promote_types(a, a), a);
    for (Dtype b : kAll) {
      Dtype ab = promote_types(a, b);
      EXPECT_EQ(ab, promote_types(b, a)) << dtype_name(a) << " x " << dtype_name(b);
      // The result absorbs both operands.
      EXPECT_EQ(promote_types(ab, a), ab);
      EXPECT_EQ(promote_types(ab, b), ab);
    }
  }
}

TEST(Dtype, PromoteTypesAssociative) {
  for (Dtype a : kAll)
    for (Dtype b : kAll)
      for (Dtype c : kAll)
        EXPECT_EQ(promote_types(promote_types(a, b), c), promote_types(a, promote_types(b, c)))
            << dtype_name(a) << ", " << dtype_name(b) << ", " << dtype_name(c);
}

TEST(Dtype, VisitDtypeMapsEveryCode) {
  EXPECT_TRUE((visit_dtype(Dtype::Bool, []<typename T>() { return std::is_same_v<T, bool>; })));
  EXPECT_TRUE((visit_dtype(Dtype::U8, []<typename T>() { return std::is_same_v<T, uint8_t>; })));
  EXPECT_TRUE((visit_dtype(Dtype::I8, []<typename T>() { return std::is_same_v<T, int8_t>; })));
  EXPECT_TRUE((visit_dtype(Dtype::I16, []<typename T>() { return std::is_same_v<T, int16_t>; })));
  EXPECT_TRUE((visit_dtype(Dtype::I32, []<typename T>() { return std::is_same_v<T, int32_t>; })));
  EXPECT_TRUE((visit_dtype(Dtype::I64, []<typename T>() { return std::is_same_v<T, int64_t>; })));
  EXPECT_TRUE((visit_dtype(Dtype::F16, []<typename T>() { return std::is_same_v<T, Half>; })));
  EXPECT_TRUE((visit_dtype(Dtype::BF16, []<typename T>() { return std::is_same_v<T, BFloat16>; })));
  EXPECT_TRUE((visit_dtype(Dtype::F32, []<typename T>() { return std::is_same_v<T, float>; })));
  EXPECT_TRUE((visit_dtype(Dtype::F64, []<typename T>() { return std::is_same_v<T, double>; })));
  EXPECT_TRUE((visit_dtype(Dtype::C64, []<typename T>() { return std::is_same_v<T, complex64>; })));
  EXPECT_THROW(visit_dtype(Dtype(kNumDtypes), []<typename T>() { return 0; }), RuntimeError);
}

}  // namespace
