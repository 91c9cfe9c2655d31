// host_strided_copy's cast matrix (PyTorch's cast rules), broadcasting and strided
// operands, collapse_dims, copy_from broadcasting, and fill with each Scalar kind.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

#include "core/copy.h"
#include "core/tensor_impl.h"
#include "core/transpose.h"

using namespace lucid;

namespace {

using cd = std::complex<double>;

constexpr Dtype kAll[kNumDtypes] = {Dtype::Bool, Dtype::U8,   Dtype::I8,  Dtype::I16,
                                    Dtype::I32,  Dtype::I64,  Dtype::F16, Dtype::BF16,
                                    Dtype::F32,  Dtype::F64,  Dtype::C64, Dtype::C128};

// The value of one element of type d at p, widened to complex<double>.
cd read_elem(Dtype d, const std::byte* p) {
  return visit_dtype(d, [&]<typename T>() -> cd {
    T v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (kIsComplexValue<T>) return cd(v.real(), v.imag());
    else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return cd(float(v), 0);
    else return cd(double(v), 0);
  });
}

// Stores v into type d; false when v is not exactly representable there.
bool write_elem(Dtype d, std::byte* p, cd v) {
  return visit_dtype(d, [&]<typename T>() -> bool {
    T x;
    if constexpr (kIsComplexValue<T>) {
      using R = typename T::value_type;
      x = T(R(v.real()), R(v.imag()));
    } else {
      if (v.imag() != 0) return false;
      double r = v.real();
      if constexpr (std::is_same_v<T, bool>) {
        if (r != 0 && r != 1) return false;
        x = r != 0;
      } else if constexpr (std::is_integral_v<T>) {
        if (r != std::trunc(r) || r < double(std::numeric_limits<T>::min()) ||
            r > double(std::numeric_limits<T>::max()))
          return false;
        x = T(int64_t(r));
      } else {
        x = T(float(r));
        if constexpr (std::is_same_v<T, double>) x = r;
      }
    }
    std::memcpy(p, &x, sizeof x);
    return read_elem(d, p) == v;
  });
}

// PyTorch's result of casting v (held exactly in src) to dst; false where the C++
// conversion is undefined (a float out of an integer type's range) or inexact.
bool expected_cast(Dtype src, Dtype dst, cd v, cd* out) {
  double re = v.real();
  switch (dtype_kind(dst)) {
    case DtypeKind::Bool: *out = cd(v != cd(0, 0) ? 1 : 0, 0); return true;
    case DtypeKind::Complex: {
      *out = v;
      std::byte buf[16];
      return write_elem(dst, buf, v);  // exact in complex64
    }
    case DtypeKind::Floating: {
      *out = cd(re, 0);
      std::byte buf[16];
      return write_elem(dst, buf, *out);
    }
    case DtypeKind::Integer: {
      int bits = int(dtype_size(dst)) * 8;
      bool is_signed = dst != Dtype::U8;
      double t = std::trunc(re);
      if (dtype_kind(src) == DtypeKind::Floating || dtype_kind(src) == DtypeKind::Complex) {
        double lo = is_signed ? -std::ldexp(1.0, bits - 1) : 0;
        double hi = is_signed ? std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits);
        if (t < lo || t >= hi) return false;
        *out = cd(t, 0);
        return true;
      }
      // Integer to integer wraps modulo 2^bits (well defined since C++20).
      uint64_t u = uint64_t(int64_t(t));
      if (bits < 64) u &= (uint64_t(1) << bits) - 1;
      int64_t w = int64_t(u);
      if (is_signed && bits < 64 && (u >> (bits - 1)) & 1) w = int64_t(u) - (int64_t(1) << bits);
      *out = cd(double(w), 0);
      return true;
    }
  }
  return false;
}

TEST(HostStridedCopy, CastsBetweenEveryPair) {
  const cd values[] = {0, 1, -1, 2.5, -2.5, 100, 255, -128, 300, 70000, 4294967301.0,
                       cd(2.5, 3), cd(0, 1), cd(-7.75, -0.5)};
  int checked = 0;
  for (Dtype src : kAll) {
    for (Dtype dst : kAll) {
      SCOPED_TRACE(std::string(dtype_name(src)) + " -> " + std::string(dtype_name(dst)));
      const size_t si = dtype_size(src), di = dtype_size(dst);
      std::vector<cd> in, want;
      std::vector<std::byte> sbuf(sizeof(values) / sizeof(cd) * si);
      for (cd v : values) {
        cd e;
        if (!write_elem(src, sbuf.data() + in.size() * si, v)) continue;
        if (!expected_cast(src, dst, v, &e)) continue;
        in.push_back(v);
        want.push_back(e);
      }
      const int64_t n = int64_t(in.size());
      ASSERT_GT(n, 0);
      // Contiguous 1-d (the vectorised row loop).
      std::vector<std::byte> dbuf(size_t(n) * di);
      host_strided_copy(dbuf.data(), {int64_t(di)}, dst, sbuf.data(), {int64_t(si)}, src, {n});
      // Strided destination (the element-wise loop).
      std::vector<std::byte> sparse(size_t(n) * 2 * di, std::byte{0x5a});
      host_strided_copy(sparse.data(), {int64_t(2 * di)}, dst, sbuf.data(), {int64_t(si)}, src, {n});
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_EQ(read_elem(dst, dbuf.data() + i * di), want[i]) << "value " << in[i];
        EXPECT_EQ(read_elem(dst, sparse.data() + 2 * i * di), want[i]) << "value " << in[i];
        EXPECT_EQ(sparse[(2 * i + 1) * di], std::byte{0x5a}) << "gap overwritten";
        // 0-d copy of a single element.
        std::byte one[16];
        host_strided_copy(one, {}, dst, sbuf.data() + i * si, {}, src, {});
        EXPECT_EQ(read_elem(dst, one), want[i]) << "0-d, value " << in[i];
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 700);
}

TEST(HostStridedCopy, SpotChecksOfCastRules) {
  auto cast1 = [](Dtype src, cd v, Dtype dst) {
    std::byte s[16], d[16];
    EXPECT_TRUE(write_elem(src, s, v) || std::isnan(v.real()));
    host_strided_copy(d, {}, dst, s, {}, src, {});
    return read_elem(dst, d);
  };
  EXPECT_EQ(cast1(Dtype::F32, 2.5, Dtype::I32), cd(2));
  EXPECT_EQ(cast1(Dtype::F32, -2.5, Dtype::I64), cd(-2));
  EXPECT_EQ(cast1(Dtype::F16, -2.5, Dtype::I8), cd(-2));
  EXPECT_EQ(cast1(Dtype::BF16, 2.5, Dtype::U8), cd(2));
  EXPECT_EQ(cast1(Dtype::F64, 0.5, Dtype::Bool), cd(1));
  EXPECT_EQ(cast1(Dtype::F32, -0.0, Dtype::Bool), cd(0));
  EXPECT_EQ(cast1(Dtype::C64, cd(0, 1), Dtype::Bool), cd(1));
  EXPECT_EQ(cast1(Dtype::C64, cd(0, 1), Dtype::I32), cd(0));
  EXPECT_EQ(cast1(Dtype::C64, cd(2.5, 3), Dtype::I32), cd(2));
  EXPECT_EQ(cast1(Dtype::C64, cd(-2.5, 3), Dtype::F16), cd(-2.5));
  EXPECT_EQ(cast1(Dtype::I16, -1, Dtype::U8), cd(255));
  EXPECT_EQ(cast1(Dtype::I32, 300, Dtype::I8), cd(44));
  EXPECT_EQ(cast1(Dtype::I64, 4294967301.0, Dtype::I32), cd(5));
  EXPECT_EQ(cast1(Dtype::U8, 255, Dtype::I8), cd(-1));
  EXPECT_EQ(cast1(Dtype::Bool, 1, Dtype::C64), cd(1, 0));
  EXPECT_EQ(cast1(Dtype::F32, 70000, Dtype::F16), cd(INFINITY));
  EXPECT_EQ(cast1(Dtype::F64, 65519, Dtype::F16), cd(65504));
  EXPECT_EQ(cast1(Dtype::I32, 257, Dtype::BF16), cd(256));  // round to nearest even
  EXPECT_TRUE(std::isnan(cast1(Dtype::F64, NAN, Dtype::F16).real()));
  EXPECT_TRUE(std::isnan(cast1(Dtype::F32, NAN, Dtype::BF16).real()));
  EXPECT_EQ(cast1(Dtype::F32, NAN, Dtype::Bool), cd(1));  // NaN != 0
}

TEST(HostStridedCopy, BroadcastTransposeAndEmpty) {
  const float src[6] = {0, 1, 2, 3, 4, 5};
  auto sp = reinterpret_cast<const std::byte*>(src);
  // Broadcast a row over 4 rows with a 0 stride, casting to int64.
  int64_t rows[4][3];
  host_strided_copy(reinterpret_cast<std::byte*>(rows), {24, 8}, Dtype::I64, sp, {0, 4},
                    Dtype::F32, {4, 3});
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(rows[r][c], c);
  // Broadcast a column (stride 0 in the last dimension).
  double cols[2][3];
  host_strided_copy(reinterpret_cast<std::byte*>(cols), {24, 8}, Dtype::F64, sp, {12, 0},
                    Dtype::F32, {2, 3});
  EXPECT_EQ(std::vector<double>(&cols[0][0], &cols[0][0] + 6),
            (std::vector<double>{0, 0, 0, 3, 3, 3}));
  // A single element everywhere.
  int16_t all[2][2][2];
  host_strided_copy(reinterpret_cast<std::byte*>(all), {8, 4, 2}, Dtype::I16, sp + 20, {0, 0, 0},
                    Dtype::F32, {2, 2, 2});
  for (int16_t v : std::vector<int16_t>(&all[0][0][0], &all[0][0][0] + 8)) EXPECT_EQ(v, 5);
  // Transposed source: the (2, 3) array read as (3, 2).
  float t[6];
  host_strided_copy(reinterpret_cast<std::byte*>(t), {8, 4}, Dtype::F32, sp, {4, 12}, Dtype::F32,
                    {3, 2});
  EXPECT_EQ(std::vector<float>(t, t + 6), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // Transposed destination.
  float u[6];
  host_strided_copy(reinterpret_cast<std::byte*>(u), {4, 12}, Dtype::F32, sp, {8, 4}, Dtype::F32,
                    {3, 2});
  EXPECT_EQ(std::vector<float>(u, u + 6), (std::vector<float>{0, 2, 4, 1, 3, 5}));
  // 3-d with a permuted source and size-1 dims.
  float w[6];
  host_strided_copy(reinterpret_cast<std::byte*>(w), {24, 8, 8, 4}, Dtype::F32, sp,
                    {0, 4, 100, 12}, Dtype::F32, {1, 3, 1, 2});
  EXPECT_EQ(std::vector<float>(w, w + 6), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // A zero-size shape writes nothing.
  float z[2] = {-1, -1};
  host_strided_copy(reinterpret_cast<std::byte*>(z), {4, 4}, Dtype::F32, sp, {4, 4}, Dtype::F32,
                    {2, 0});
  EXPECT_EQ(z[0], -1);
  EXPECT_EQ(z[1], -1);
}

TEST(CollapseDims, MergesContiguousAndDropsSizeOne) {
  Stride a{48, 16, 4};
  EXPECT_EQ(collapse_dims({2, 3, 4}, {&a}), (Shape{24}));
  EXPECT_EQ(a, (Stride{4}));

  Stride b{12, 999, 4};  // a size-1 dimension with any stride
  EXPECT_EQ(collapse_dims({2, 1, 3}, {&b}), (Shape{6}));
  EXPECT_EQ(b, (Stride{4}));

  Stride c{4, 12};  // transposed: nothing merges
  EXPECT_EQ(collapse_dims({3, 2}, {&c}), (Shape{3, 2}));
  EXPECT_EQ(c, (Stride{4, 12}));

  Stride d{96, 16, 4};  // padded rows: only the inner two merge
  EXPECT_EQ(collapse_dims({2, 3, 4}, {&d}), (Shape{2, 12}));
  EXPECT_EQ(d, (Stride{96, 4}));

  Stride e{8, 8};  // all size 1: a single element
  EXPECT_TRUE(collapse_dims({1, 1}, {&e}).empty());
  EXPECT_TRUE(e.empty());
  Stride e0{};
  EXPECT_TRUE(collapse_dims({}, {&e0}).empty());

  // Two operands merge only where both are contiguous across the boundary.
  Stride dst{48, 16, 4}, src{4, 24, 8};  // src: a permuted layout
  EXPECT_EQ(collapse_dims({2, 3, 4}, {&dst, &src}), (Shape{2, 3, 4}));
  Stride dst2{48, 16, 4}, src2{0, 16, 4};  // src broadcast in dim 0, contiguous inside
  EXPECT_EQ(collapse_dims({2, 3, 4}, {&dst2, &src2}), (Shape{2, 12}));
  EXPECT_EQ(dst2, (Stride{48, 4}));
  EXPECT_EQ(src2, (Stride{0, 4}));
  Stride z{0, 0};  // fully broadcast: zero strides merge
  EXPECT_EQ(collapse_dims({2, 3}, {&z}), (Shape{6}));
  EXPECT_EQ(z, (Stride{0}));
}

template <typename T>
std::vector<T> values_of(const TensorImpl& t) {
  std::vector<std::byte> b = t.to_bytes();
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

TensorPtr f32(const Shape& shape, std::vector<float> v) {
  TensorPtr t = TensorImpl::empty(shape, Dtype::F32, Device::cpu());
  std::memcpy(t->host_ptr(), v.data(), v.size() * 4);
  return t;
}

TEST(CopyFrom, BroadcastsAndCasts) {
  TensorPtr dst = TensorImpl::empty({2, 3}, Dtype::I32, Device::cpu());
  dst->copy_from(*f32({3}, {1.5f, -2.5f, 3.9f}));
  EXPECT_EQ(values_of<int32_t>(*dst), (std::vector<int32_t>{1, -2, 3, 1, -2, 3}));
  dst->copy_from(*f32({2, 1}, {7, 8}));
  EXPECT_EQ(values_of<int32_t>(*dst), (std::vector<int32_t>{7, 7, 7, 8, 8, 8}));
  dst->copy_from(*f32({1, 3}, {4, 5, 6}));
  EXPECT_EQ(values_of<int32_t>(*dst), (std::vector<int32_t>{4, 5, 6, 4, 5, 6}));
  dst->copy_from(*f32({}, {9}));
  EXPECT_EQ(values_of<int32_t>(*dst), (std::vector<int32_t>(6, 9)));
  dst->copy_from(*f32({2, 3}, {0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(values_of<int32_t>(*dst), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));

  // Into a non-contiguous view: only the view's elements change.
  TensorPtr base = f32({2, 3}, {0, 0, 0, 0, 0, 0});
  TensorPtr col = TensorImpl::view_of(*base, {2}, {12}, 4);  // column 1
  col->copy_from(*f32({2}, {10, 20}));
  EXPECT_EQ(values_of<float>(*base), (std::vector<float>{0, 10, 0, 0, 20, 0}));
  // From a transposed view.
  TensorPtr src = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  TensorPtr out = TensorImpl::empty({3, 2}, Dtype::F64, Device::cpu());
  out->copy_from(*TensorImpl::view_of(*src, {3, 2}, {4, 12}, 0));
  EXPECT_EQ(values_of<double>(*out), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // Empty destination with a broadcastable source is a no-op.
  TensorPtr e = TensorImpl::empty({0, 3}, Dtype::F32, Device::cpu());
  EXPECT_NO_THROW(e->copy_from(*f32({3}, {1, 2, 3})));
}

TEST(CopyFrom, IncompatibleShapesThrow) {
  TensorPtr dst = TensorImpl::empty({2, 4}, Dtype::F32, Device::cpu());
  EXPECT_THROW(dst->copy_from(*f32({3}, {1, 2, 3})), RuntimeError);
  EXPECT_THROW(dst->copy_from(*f32({2}, {1, 2})), RuntimeError);
  EXPECT_THROW(dst->copy_from(*f32({3, 1}, {1, 2, 3})), RuntimeError);
  EXPECT_THROW(dst->copy_from(*f32({1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})), RuntimeError);
  TensorPtr e = TensorImpl::empty({0}, Dtype::F32, Device::cpu());
  EXPECT_THROW(e->copy_from(*f32({2}, {1, 2})), RuntimeError);
  uint64_t v = dst->version();
  EXPECT_THROW(dst->copy_from(*f32({3}, {1, 2, 3})), RuntimeError);
  EXPECT_EQ(dst->version(), v);  // a rejected copy writes nothing
}

TEST(Fill, EveryScalarKindIntoEveryDtype) {
  struct Case {
    Scalar s;
    cd exact;  // the scalar's value
  };
  const Case cases[] = {{Scalar(true), 1},          {Scalar(false), 0},
                        {Scalar(int64_t(-3)), -3},  {Scalar(int64_t(100)), 100},
                        {Scalar(2.75), 2.75},       {Scalar(-0.5), -0.5},
                        {Scalar(cd(2.5, 0)), 2.5},  {Scalar(cd(1.5, -2)), cd(1.5, -2)}};
  for (Dtype d : kAll) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " <- " + std::to_string(c.s.index()) + ":" +
                   std::to_string(c.exact.real()));
      Dtype sd = c.s.index() == 0 ? Dtype::Bool : c.s.index() == 1 ? Dtype::I64
                 : c.s.index() == 2 ? Dtype::F64 : Dtype::C128;
      cd want;
      if (c.exact.imag() != 0 && !is_complex(d) && d != Dtype::Bool) continue;  // torch raises
      if (!expected_cast(sd, d, c.exact, &want)) continue;
      TensorPtr t = TensorImpl::empty({2, 3}, d, Device::cpu());
      if (d == Dtype::U8 && sd != Dtype::I64 && c.exact.real() < 0) {
        // torch: "value cannot be converted to type uint8_t without overflow";
        // only integer scalars wrap into uint8.
        EXPECT_THROW(t->fill(c.s), RuntimeError);
        continue;
      }
      t->fill(c.s);
      std::vector<std::byte> b = t->to_bytes();
      for (int i = 0; i < 6; ++i) EXPECT_EQ(read_elem(d, b.data() + i * dtype_size(d)), want);
    }
  }
}

TEST(Fill, SpecificValues) {
  TensorPtr u8 = TensorImpl::empty({3}, Dtype::U8, Device::cpu());
  u8->fill(Scalar(int64_t(-3)));  // torch: 253
  EXPECT_EQ(values_of<uint8_t>(*u8), (std::vector<uint8_t>(3, 253)));
  TensorPtr i64 = TensorImpl::empty({2}, Dtype::I64, Device::cpu());
  i64->fill(Scalar(int64_t(INT64_MAX - 1)));  // exact: no trip through double
  EXPECT_EQ(values_of<int64_t>(*i64), (std::vector<int64_t>(2, INT64_MAX - 1)));
  TensorPtr f64 = TensorImpl::empty({2}, Dtype::F64, Device::cpu());
  f64->fill(Scalar(0.1));
  EXPECT_EQ(values_of<double>(*f64), (std::vector<double>(2, 0.1)));
  TensorPtr b = TensorImpl::empty({2}, Dtype::Bool, Device::cpu());
  b->fill(Scalar(cd(0, 1)));
  EXPECT_EQ(values_of<uint8_t>(*b), (std::vector<uint8_t>(2, 1)));
  b->fill(Scalar(0.0));
  EXPECT_EQ(values_of<uint8_t>(*b), (std::vector<uint8_t>(2, 0)));
  // Fill into a strided view touches only the view.
  TensorPtr base = f32({2, 2}, {0, 0, 0, 0});
  TensorPtr diag = TensorImpl::view_of(*base, {2}, {12}, 0);
  diag->fill(Scalar(int64_t(1)));
  EXPECT_EQ(values_of<float>(*base), (std::vector<float>{1, 0, 0, 1}));
  // A 0-d tensor.
  TensorPtr s = TensorImpl::empty({}, Dtype::F16, Device::cpu());
  s->fill(Scalar(65519.0));
  EXPECT_EQ(std::get<double>(s->item()), 65504.0);
}

// torch.zeros(2, dtype=float64).fill_(0.1+0j) holds exactly 0.1: a complex Scalar
// keeps double precision on its way into a float64 tensor.
TEST(Fill, ComplexScalarKeepsDoublePrecision) {
  TensorPtr f64 = TensorImpl::empty({2}, Dtype::F64, Device::cpu());
  f64->fill(Scalar(cd(0.1, 0)));
  std::vector<double> v = values_of<double>(*f64);
  EXPECT_EQ(v[0], 0.1) << std::hexfloat << v[0];
  EXPECT_EQ(v[1], 0.1) << std::hexfloat << v[1];
}

// transpose_elements' vector blocks (16 x 16 on AVX-512, 8 x 8 on AVX2) and their
// edges give the plain transpose, for 4-, 2- and 1-byte elements, ragged sizes, padded
// rows and streamed stores.
template <typename E>
void expect_plain_transpose() {
  const E pad = E(0xdeadbeefu);
  for (int64_t rows : {1, 7, 8, 9, 16, 17, 31, 64, 65, 130})
    for (int64_t cols : {1, 5, 8, 15, 16, 33, 100}) {
      for (bool stream : {false, true}) {
        const int64_t srs = rows + 3, drs = stream ? (cols + 63) / 64 * 64 : cols + 5;  // (in elements)
        std::vector<E> src(size_t(cols * srs)), dst(size_t(rows * drs) + 64, pad);
        for (size_t i = 0; i < src.size(); ++i) src[i] = E(i * 2654435761u);
        // (an aligned destination when streaming: the function streams only then)
        E* d = dst.data() + (stream ? (64 - reinterpret_cast<uintptr_t>(dst.data()) % 64) % 64 / sizeof(E) : 0);
        if (!transpose_elements(sizeof(E), reinterpret_cast<std::byte*>(d), drs * sizeof(E),
                                reinterpret_cast<const std::byte*>(src.data()), srs * sizeof(E), rows, cols, stream))
          GTEST_SKIP() << "no vector transpose of " << sizeof(E) << "-byte elements on this CPU";
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c)
            ASSERT_EQ(d[r * drs + c], src[size_t(c * srs + r)]) << rows << "x" << cols << " at " << r << "," << c;
        for (int64_t r = 0; r < rows; ++r)  // the padding between rows is never written
          for (int64_t c = cols; c < drs && r * drs + c < int64_t(dst.size()) - (d - dst.data()); ++c)
            ASSERT_EQ(d[r * drs + c], pad) << rows << "x" << cols;
      }
    }
}
TEST(TransposeElements, FourBytesMatchThePlainTranspose) { expect_plain_transpose<uint32_t>(); }
TEST(TransposeElements, TwoBytesMatchThePlainTranspose) { expect_plain_transpose<uint16_t>(); }
TEST(TransposeElements, OneByteMatchesThePlainTranspose) { expect_plain_transpose<uint8_t>(); }

}  // namespace
