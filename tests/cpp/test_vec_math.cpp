// lucid's own float32 erf (backend/cpu/vec_exp.cpp), and sin and cos (used by builds
// without SLEEF): within 2 ULP of the true value on the polynomial's range away from the
// function's zeros, a small absolute error near them, and the scalar function's
// results exactly beyond that range, for infinities and for NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/isa.h"
#include "backend/cpu/vec_math.h"

namespace lucid::cpu {
namespace {

void check(ops::UnaryOp op, double (*exact)(double)) {
  const VecUnaryFn fn = vec_f32_sincos(op, cpu_isa());
  if (!fn) GTEST_SKIP() << "no AVX2 on this CPU";
  std::vector<float> x;
  for (int i = -200000; i <= 200000; ++i) x.push_back(float(i) * 5e-4f);  // [-100, 100]
  for (int i = 0; i < 20000; ++i) x.push_back(float(i) * 0.4096f);  // up to 8192
  const float special[] = {0.f, -0.f, 1e-30f, 8192.f, 8192.5f, 1e6f, -3e7f, std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  x.insert(x.end(), std::begin(special), std::end(special));
  x.push_back(1.5f);  // (an odd count: the last partial vector)
  std::vector<float> y(x.size());
  fn(x.data(), y.data(), int64_t(x.size()));
  int64_t worst_ulp = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float v = x[i];
    if (!(std::fabs(v) <= 8192.f)) {  // beyond the range: the scalar function's own result
      const float s = op == ops::UnaryOp::Sin ? std::sin(v) : std::cos(v);
      if (std::isnan(s)) EXPECT_TRUE(std::isnan(y[i])) << v;
      else EXPECT_EQ(y[i], s) << v;
      continue;
    }
    const double ref = exact(double(v));
    const double err = std::fabs(double(y[i]) - ref);
    if (std::fabs(ref) >= 1e-2) {
      const double ulp = std::nextafter(float(std::fabs(ref)), 2.f) - float(std::fabs(ref));
      worst_ulp = std::max(worst_ulp, int64_t(std::ceil(err / ulp - 1e-9)));
    } else {
      EXPECT_LE(err, 1e-9 + 2e-10 * std::fabs(v) + 1.2e-7 * std::fabs(ref)) << v;  // near a zero
    }
  }
  EXPECT_LE(worst_ulp, 2);
}

TEST(VecMath, SinIsWithinTwoUlp) { check(ops::UnaryOp::Sin, [](double v) { return std::sin(v); }); }
TEST(VecMath, CosIsWithinTwoUlp) { check(ops::UnaryOp::Cos, [](double v) { return std::cos(v); }); }

// erf (two polynomials in float): within 1.25 ULP everywhere, tiny and subnormal inputs
// included; +-1 from 3.9375 on and for infinities; NaN stays NaN; the sign of zero kept.
TEST(VecMath, ErfIsWithinOneAndAQuarterUlp) {
  const VecUnaryFn fn = vec_f32_activation(ops::UnaryOp::Erf, cpu_isa());
  if (!fn) GTEST_SKIP() << "no AVX2 with FMA on this CPU";
  std::vector<float> x;
  for (int i = -600000; i <= 600000; ++i) x.push_back(float(i) * 1e-5f);  // [-6, 6]
  for (float v = 1e-38f; v < 1.f; v *= 1.37f) x.push_back(v), x.push_back(-v);
  const float inf = std::numeric_limits<float>::infinity();
  const float special[] = {0.f, -0.f, 1e-45f, 0.921875f, -0.921875f, 3.9f, 3.9375f, 4.f, 4.0001f, 1e30f, inf, -inf};
  x.insert(x.end(), std::begin(special), std::end(special));
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  std::vector<float> y(x.size());
  fn(x.data(), y.data(), int64_t(x.size()));
  double worst_ulp = 0;
  for (size_t i = 0; i + 1 < x.size(); ++i) {
    const double ref = std::erf(double(x[i]));
    const float r = float(std::fabs(ref));
    const double ulp = r == 0.f ? std::numeric_limits<float>::denorm_min() : std::nextafter(r, 2.f) - r;
    worst_ulp = std::max(worst_ulp, std::fabs(double(y[i]) - ref) / ulp);
    EXPECT_EQ(std::signbit(y[i]), std::signbit(x[i])) << x[i];
  }
  EXPECT_LE(worst_ulp, 1.25);
  EXPECT_EQ(y[x.size() - 3], 1.f);   // inf
  EXPECT_EQ(y[x.size() - 2], -1.f);  // -inf
  EXPECT_TRUE(std::isnan(y.back()));
}

// gelu's vector form takes 1 + erf(x / sqrt 2) as erfc(|x| / sqrt 2) where erf nears -1,
// so it keeps its relative accuracy in the negative tail, where 1 + erf cancelled (at
// x = -5 that lost all but a digit); 0 from x = -5.57 on, where erf rounds to -1.
TEST(VecMath, GeluKeepsItsRelativeAccuracyInTheNegativeTail) {
  const VecUnaryFn fn = vec_f32_activation(ops::UnaryOp::Gelu, cpu_isa());
  if (!fn) GTEST_SKIP() << "no AVX2 with FMA on this CPU";
  std::vector<float> x;
  for (int i = -55000; i <= 60000; ++i) x.push_back(float(i) * 1e-4f);  // [-5.5, 6]
  std::vector<float> y(x.size());
  fn(x.data(), y.data(), int64_t(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i], ref = v * 0.5 * std::erfc(-v / std::sqrt(2.0));
    if (ref == 0.0) continue;
    worst = std::max(worst, std::fabs(double(y[i]) - ref) / std::fabs(ref));
  }
  // x / sqrt 2 rounds to float, and erfc's relative error grows as 2 z^2 times that
  // rounding: 1.9e-6 near -5.5. (The cancelling form was off by 0.3 there.)
  EXPECT_LT(worst, 3e-6);
  const float far[] = {-5.6f, -30.f};
  float got[2];
  fn(far, got, 2);
  EXPECT_EQ(got[0], 0.f);
  EXPECT_EQ(got[1], 0.f);
}

}  // namespace
}  // namespace lucid::cpu
