#include "core/generator.h"

#include <random>

#include "core/error.h"

namespace lucid {

Generator::Generator(const Generator& other) {
  std::lock_guard<std::mutex> lock(other.mu_);
  seed_ = other.seed_;
  offset_ = other.offset_;
}

Generator& Generator::operator=(const Generator& other) {
  if (this == &other) return *this;
  // scoped_lock orders the two locks, so a = b and b = a on two threads cannot deadlock.
  std::scoped_lock lock(mu_, other.mu_);
  seed_ = other.seed_;
  offset_ = other.offset_;
  return *this;
}

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::seed() {
  // random_device yields 32 bits per call; two calls fill the 64-bit key.
  std::random_device rd;
  uint64_t s = (uint64_t(rd()) << 32) | uint64_t(rd());
  manual_seed(s);
  return s;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seed_;
}

uint64_t Generator::offset() const {
  std::lock_guard<std::mutex> lock(mu_);
  return offset_;
}

void Generator::set_offset(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  offset_ = offset;
}

// Explicit little-endian byte order, so a saved state means the same on any host.
static void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
static uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

std::vector<uint8_t> Generator::get_state() const {
  std::vector<uint8_t> out(kRngStateBytes);
  std::lock_guard<std::mutex> lock(mu_);
  put_u64(out.data(), seed_);
  put_u64(out.data() + 8, offset_);
  return out;
}

void Generator::set_state(const std::vector<uint8_t>& state) {
  set_state(state.data(), state.size());
}

void Generator::set_state(const uint8_t* data, size_t size) {
  // PyTorch raises RuntimeError for an RNG state of the wrong size; so do we.
  LUCID_CHECK(size == kRngStateBytes, RuntimeError, "Expected an RNG state of ", kRngStateBytes,
              " bytes (seed and offset as little-endian uint64), but found the input RNG "
              "state size to be ",
              size);
  LUCID_CHECK(data != nullptr, RuntimeError, "RNG state data is null");
  uint64_t seed = get_u64(data), offset = get_u64(data + 8);
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = offset;
}

uint64_t Generator::reserve(uint64_t n_uint32) { return draw(n_uint32).offset; }

PhiloxDraw Generator::draw(uint64_t n_uint32) {
  // Rounding up to whole blocks is what keeps draws disjoint: the leftover words of a
  // draw's last block are discarded, never handed to the next draw.
  uint64_t blocks = n_uint32 / 4 + (n_uint32 % 4 != 0);
  std::lock_guard<std::mutex> lock(mu_);
  PhiloxDraw d{seed_, offset_};
  offset_ += blocks;  // wraps after 2^64 blocks (2^68 bytes of randomness): never in practice
  return d;
}

Generator& default_generator() {
  // A function-local static: constructed thread-safely on first use, and never
  // subject to static-initialisation order across translation units.
  static Generator gen(kDefaultRngSeed);
  return gen;
}

}  // namespace lucid
