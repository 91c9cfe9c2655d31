// Philox generator and the random ops on the CPU: known answers, determinism, state
// round-trips, distribution moments and the PyTorch-style argument errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backend/cpu/random.h"
#include "core/generator.h"
#include "core/philox.h"
#include "core/tensor_impl.h"
#include "ops/random.h"

using namespace lucid;

namespace {

TensorPtr cpu_tensor(int64_t n, Dtype d) { return TensorImpl::empty({n}, d, Device::cpu()); }

template <typename T>
std::vector<T> values(const TensorImpl& t) {
  std::vector<T> v(size_t(t.numel()));
  std::memcpy(v.data(), t.host_ptr(), v.size() * sizeof(T));
  return v;
}

struct Moments {
  double mean = 0, var = 0;
};
template <typename T>
Moments moments(const std::vector<T>& v) {
  Moments m;
  for (const T& x : v) m.mean += double(x);
  m.mean /= double(v.size());
  for (const T& x : v) m.var += (double(x) - m.mean) * (double(x) - m.mean);
  m.var /= double(v.size() - 1);
  return m;
}

// Runs f and expects a RuntimeError whose message contains `needle`.
template <typename F>
void expect_runtime_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected RuntimeError containing: " << needle;
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// A dtype a sampler does not support is NotImplementedError, as in PyTorch.
template <typename F>
void expect_not_implemented(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected NotImplementedError containing: " << needle;
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(Philox, KnownAnswers) {  // Random123 kat_vectors, philox4x32_10
  uint32_t c0[4] = {0, 0, 0, 0}, k0[2] = {0, 0};
  Philox4 r = philox4x32(c0, k0);
  EXPECT_EQ(r.x[0], 0x6627e8d5u);
  EXPECT_EQ(r.x[1], 0xe169c58du);
  EXPECT_EQ(r.x[2], 0xbc57ac4cu);
  EXPECT_EQ(r.x[3], 0x9b00dbd8u);
  uint32_t c1[4] = {~0u, ~0u, ~0u, ~0u}, k1[2] = {~0u, ~0u};
  r = philox4x32(c1, k1);
  EXPECT_EQ(r.x[0], 0x408f276du);
  EXPECT_EQ(r.x[1], 0x41c83b0eu);
  EXPECT_EQ(r.x[2], 0xa20bc7c6u);
  EXPECT_EQ(r.x[3], 0x6d5451fdu);
  uint32_t c2[4] = {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u};
  uint32_t k2[2] = {0xa4093822u, 0x299f31d0u};
  r = philox4x32(c2, k2);
  EXPECT_EQ(r.x[0], 0xd16cfe09u);
  EXPECT_EQ(r.x[1], 0x94fdccebu);
  EXPECT_EQ(r.x[2], 0x5001e420u);
  EXPECT_EQ(r.x[3], 0x24126ea1u);
}

TEST(Philox, LanesGiveEachBlocksBits) {  // Note [Philox in lanes], the ISA this CPU runs
  const PhiloxDraw draw{0x9E3779B97F4A7C15ull, (uint64_t(1) << 32) - 20};  // blocks cross 2^32
  for (int64_t count : {1, 15, 16, 17, 40, 256}) {
    std::vector<uint32_t> words(size_t(4 * count) + 4, 0xDEADBEEFu);
    cpu::philox_blocks(draw, 3, count, words.data());
    for (int64_t k = 0; k < count; ++k) {
      const Philox4 want = draw.block(uint64_t(3 + k));
      for (int w = 0; w < 4; ++w) ASSERT_EQ(words[size_t(4 * k + w)], want.x[w]) << count << " " << k << " " << w;
    }
    for (int w = 0; w < 4; ++w) EXPECT_EQ(words[size_t(4 * count + w)], 0xDEADBEEFu);  // nothing past count
  }
}

TEST(Generator, SeedOffsetAndState) {
  EXPECT_EQ(kDefaultRngSeed, 67280421310721ull);
  EXPECT_EQ(default_generator().initial_seed(), kDefaultRngSeed);
  EXPECT_EQ(&default_generator(), &default_generator());

  Generator g(123);
  EXPECT_EQ(g.initial_seed(), 123u);
  EXPECT_EQ(g.reserve(5), 0u);  // 5 words -> 2 blocks
  EXPECT_EQ(g.reserve(4), 2u);
  EXPECT_EQ(g.reserve(0), 3u);
  EXPECT_EQ(g.offset(), 3u);
  g.manual_seed(7);
  EXPECT_EQ(g.offset(), 0u);
  EXPECT_EQ(g.initial_seed(), 7u);

  g.manual_seed(0x0102030405060708ull);
  g.set_offset(0x1112131415161718ull);
  std::vector<uint8_t> s = g.get_state();
  ASSERT_EQ(s.size(), kRngStateBytes);
  EXPECT_EQ(s[0], 0x08);  // little-endian seed, then offset
  EXPECT_EQ(s[7], 0x01);
  EXPECT_EQ(s[8], 0x18);
  Generator h;
  h.set_state(s);
  EXPECT_EQ(h.initial_seed(), 0x0102030405060708ull);
  EXPECT_EQ(h.offset(), 0x1112131415161718ull);

  Generator copy(g);
  EXPECT_EQ(copy.get_state(), s);
  uint64_t fresh = copy.seed();  // non-deterministic reseed returns the new seed
  EXPECT_EQ(copy.initial_seed(), fresh);

  expect_runtime_error([&] { h.set_state(std::vector<uint8_t>(10)); }, "size to be 10");
  EXPECT_EQ(h.offset(), 0x1112131415161718ull);  // a rejected state changes nothing
}

TEST(Random, DeterministicAndCounterBased) {
  Generator a(42), b(42), c(43);
  auto ta = cpu_tensor(1001, Dtype::F32), tb = cpu_tensor(1001, Dtype::F32),
       tc = cpu_tensor(1001, Dtype::F32);
  ops::uniform_(ta, 0, 1, a);
  ops::uniform_(tb, 0, 1, b);
  ops::uniform_(tc, 0, 1, c);
  EXPECT_EQ(values<float>(*ta), values<float>(*tb));
  EXPECT_NE(values<float>(*ta), values<float>(*tc));
  EXPECT_EQ(a.offset(), 251u);  // ceil(1001 / 4) blocks

  // Element i depends only on (seed, offset, i): a shorter draw is a prefix.
  Generator p(42);
  auto shorter = cpu_tensor(7, Dtype::F32);
  ops::uniform_(shorter, 0, 1, p);
  auto full = values<float>(*ta);
  EXPECT_EQ(values<float>(*shorter), std::vector<float>(full.begin(), full.begin() + 7));

  // The next draw uses new counters.
  ops::uniform_(tb, 0, 1, b);
  EXPECT_NE(values<float>(*ta), values<float>(*tb));
}

TEST(Random, StateRoundTripReplays) {
  Generator g(5);
  auto t = cpu_tensor(100, Dtype::F64);
  ops::normal_(t, 0, 1, g);
  std::vector<uint8_t> state = g.get_state();
  auto first = cpu_tensor(100, Dtype::F64), second = cpu_tensor(100, Dtype::I64);
  ops::normal_(first, 0, 1, g);
  ops::random_(second, 0, 1000, g);
  g.set_state(state);
  auto first2 = cpu_tensor(100, Dtype::F64), second2 = cpu_tensor(100, Dtype::I64);
  ops::normal_(first2, 0, 1, g);
  ops::random_(second2, 0, 1000, g);
  EXPECT_EQ(values<double>(*first), values<double>(*first2));
  EXPECT_EQ(values<int64_t>(*second), values<int64_t>(*second2));
}

TEST(Random, UniformMomentsAndBounds) {
  const int64_t n = 100000;
  Generator g(1);
  auto f32 = cpu_tensor(n, Dtype::F32), f64 = cpu_tensor(n, Dtype::F64);
  ops::uniform_(f32, 2, 5, g);
  ops::uniform_(f64, 2, 5, g);
  // Mean 3.5, variance 9/12; standard error of the mean sqrt(0.75 / n) ~ 0.0027.
  for (const Moments& m : {moments(values<float>(*f32)), moments(values<double>(*f64))}) {
    EXPECT_NEAR(m.mean, 3.5, 5 * std::sqrt(0.75 / n));
    EXPECT_NEAR(m.var, 0.75, 0.02);
  }
  for (float x : values<float>(*f32)) ASSERT_TRUE(x >= 2.0f && x < 5.0f) << x;
  for (double x : values<double>(*f64)) ASSERT_TRUE(x >= 2.0 && x < 5.0) << x;

  // Half-open even where the 16-bit rounding would reach `to`.
  auto h = cpu_tensor(20000, Dtype::F16), bf = cpu_tensor(20000, Dtype::BF16);
  ops::uniform_(h, 1, 2, g);
  ops::uniform_(bf, 1, 2, g);
  for (Half x : values<Half>(*h)) ASSERT_TRUE(float(x) >= 1.0f && float(x) < 2.0f) << float(x);
  for (BFloat16 x : values<BFloat16>(*bf)) ASSERT_TRUE(float(x) >= 1.0f && float(x) < 2.0f);

  auto c = cpu_tensor(n, Dtype::C64);  // real and imaginary parts both uniform
  ops::uniform_(c, -1, 1, g);
  auto cv = values<complex64>(*c);
  std::vector<float> re, im;
  for (auto z : cv) re.push_back(z.real()), im.push_back(z.imag());
  EXPECT_NEAR(moments(re).mean, 0.0, 0.02);
  EXPECT_NEAR(moments(im).var, 1.0 / 3.0, 0.01);
}

TEST(Random, NormalMoments) {
  const int64_t n = 100000;
  Generator g(2);
  auto f32 = cpu_tensor(n, Dtype::F32), f64 = cpu_tensor(n + 1, Dtype::F64);  // odd count too
  ops::normal_(f32, 1.0, 2.0, g);
  ops::normal_(f64, 1.0, 2.0, g);
  // se(mean) = 2/sqrt(n) ~ 0.0063; se(var) = 4*sqrt(2/n) ~ 0.018.
  for (const Moments& m : {moments(values<float>(*f32)), moments(values<double>(*f64))}) {
    EXPECT_NEAR(m.mean, 1.0, 5 * 2.0 / std::sqrt(double(n)));
    EXPECT_NEAR(m.var, 4.0, 5 * 4.0 * std::sqrt(2.0 / n));
  }
  for (double x : values<double>(*f64)) ASSERT_TRUE(std::isfinite(x));

  auto c = cpu_tensor(n, Dtype::C64);  // torch.randn(complex): each part has variance 1/2
  ops::normal_(c, 0, 1, g);
  std::vector<float> re;
  for (auto z : values<complex64>(*c)) re.push_back(z.real());
  EXPECT_NEAR(moments(re).var, 0.5, 0.02);

  auto z = cpu_tensor(9, Dtype::F32);  // std 0 gives the mean exactly
  ops::normal_(z, 3.0, 0.0, g);
  for (float x : values<float>(*z)) EXPECT_EQ(x, 3.0f);
}

TEST(Random, RandintRange) {
  Generator g(3);
  auto t = cpu_tensor(20000, Dtype::I8);
  ops::random_(t, -5, 7, g);
  std::vector<int> counts(12);
  for (int8_t x : values<int8_t>(*t)) {
    ASSERT_TRUE(x >= -5 && x < 7) << int(x);
    ++counts[x + 5];
  }
  for (int c : counts) EXPECT_NEAR(c, 20000 / 12, 200);  // ~5 binomial sd

  auto big = cpu_tensor(1000, Dtype::I64);  // the widest span must not overflow
  ops::random_(big, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), g);
  auto bv = values<int64_t>(*big);
  EXPECT_TRUE(std::any_of(bv.begin(), bv.end(), [](int64_t x) { return x < 0; }));
  EXPECT_TRUE(std::any_of(bv.begin(), bv.end(), [](int64_t x) { return x > 0; }));

  auto f = cpu_tensor(1000, Dtype::F32), b = cpu_tensor(1000, Dtype::Bool);
  ops::random_(f, 10, 20, g);
  for (float x : values<float>(*f)) ASSERT_TRUE(x >= 10 && x < 20 && x == std::floor(x));
  ops::random_(b, 0, 2, g);
  auto bools = values<uint8_t>(*b);
  EXPECT_TRUE(std::all_of(bools.begin(), bools.end(), [](uint8_t x) { return x <= 1; }));
  EXPECT_NE(std::count(bools.begin(), bools.end(), 1), 0);
}

TEST(Random, Bernoulli) {
  const int64_t n = 100000;
  Generator g(4);
  auto t = cpu_tensor(n, Dtype::F32);
  ops::bernoulli_(t, 0.3, g);
  Moments m = moments(values<float>(*t));
  EXPECT_NEAR(m.mean, 0.3, 5 * std::sqrt(0.21 / n));
  auto zeros = cpu_tensor(100, Dtype::Bool), ones = cpu_tensor(100, Dtype::I32);
  ops::bernoulli_(zeros, 0.0, g);
  ops::bernoulli_(ones, 1.0, g);
  for (uint8_t x : values<uint8_t>(*zeros)) EXPECT_EQ(x, 0);
  for (int32_t x : values<int32_t>(*ones)) EXPECT_EQ(x, 1);

  auto probs = cpu_tensor(100, Dtype::F64), out = cpu_tensor(100, Dtype::I64);
  auto* pp = reinterpret_cast<double*>(probs->host_ptr());
  for (int i = 0; i < 100; ++i) pp[i] = i % 2;  // certain outcomes
  ops::bernoulli_(out, probs, g);
  auto ov = values<int64_t>(*out);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(ov[i], i % 2);

  pp[37] = 1.5;
  uint64_t before = g.offset();
  expect_runtime_error([&] { ops::bernoulli_(out, probs, g); },
                       "Expected p_in >= 0 && p_in <= 1 to be true, but got false");
  EXPECT_EQ(g.offset(), before);  // checked before drawing
  expect_runtime_error([&] { ops::bernoulli_(t, -0.1, g); },
                       "bernoulli_ expects p to be in [0, 1]");
}

TEST(Random, Randperm) {
  Generator g(6);
  for (Dtype d : {Dtype::I64, Dtype::I32, Dtype::F32}) {
    TensorPtr t = ops::randperm(1000, d, Device::cpu(), g);
    std::vector<int64_t> v;
    if (d == Dtype::I64)
      for (auto x : values<int64_t>(*t)) v.push_back(x);
    if (d == Dtype::I32)
      for (auto x : values<int32_t>(*t)) v.push_back(x);
    if (d == Dtype::F32)
      for (auto x : values<float>(*t)) v.push_back(int64_t(x));
    std::vector<int64_t> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[size_t(i)], i);
    EXPECT_NE(v, sorted);  // shuffled (a sorted result has probability 1/1000!)
  }
  EXPECT_EQ(ops::randperm(0, Dtype::I64, Device::cpu(), g)->numel(), 0);
  EXPECT_EQ(values<int64_t>(*ops::randperm(1, Dtype::I64, Device::cpu(), g)), std::vector<int64_t>{0});
  EXPECT_EQ(ops::randperm(256, Dtype::U8, Device::cpu(), g)->numel(), 256);  // values up to 255 fit

  expect_runtime_error([&] { ops::randperm(-1, Dtype::I64, Device::cpu(), g); }, "n must be non-negative");
  expect_runtime_error([&] { ops::randperm(300, Dtype::I8, Device::cpu(), g); }, "too large");
  expect_not_implemented([&] { ops::randperm(3, Dtype::Bool, Device::cpu(), g); },
                       "randperm is not implemented for dtype bool");
}

TEST(Random, BadInputs) {
  Generator g(8);
  auto i64 = cpu_tensor(4, Dtype::I64), f32 = cpu_tensor(4, Dtype::F32),
       b = cpu_tensor(4, Dtype::Bool);
  auto c = cpu_tensor(4, Dtype::C64), i8 = cpu_tensor(4, Dtype::I8);
  expect_not_implemented([&] { ops::normal_(i64, 0, 1, g); },
                       "normal_ is not implemented for dtype int64");
  expect_not_implemented([&] { ops::normal_(b, 0, 1, g); },
                       "normal_ is not implemented for dtype bool");
  expect_runtime_error([&] { ops::normal_(f32, 0, -1, g); },
                       "normal expects std >= 0.0, but found std -1");
  expect_not_implemented([&] { ops::uniform_(i64, 0, 1, g); },
                       "uniform_ is not implemented for dtype int64");
  expect_runtime_error([&] { ops::uniform_(f32, 1, 0, g); },
                       "expects to return a [from, to) range");
  expect_runtime_error([&] { ops::random_(f32, 5, 5, g); },
                       "random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
  expect_runtime_error([&] { ops::random_(i8, -200, 0, g); }, "for dtype int8, but got from=-200");
  expect_runtime_error([&] { ops::random_(i8, 0, 300, g); }, "but got to=300");
  expect_not_implemented([&] { ops::random_(c, 0, 3, g); },
                       "random_ is not implemented for dtype complex64");
  expect_not_implemented([&] { ops::bernoulli_(c, 0.5, g); },
                       "bernoulli_ is not implemented for dtype complex64");
  expect_runtime_error([&] { ops::bernoulli_(f32, i64, g); }, "floating dtype");
  EXPECT_EQ(g.offset(), 0u);  // no failed call consumed randomness
}
