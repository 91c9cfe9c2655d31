// Random number generator state: a Philox4x32-10 key (the seed) and a counter offset.
//
// Note [Philox stream layout]
// A draw that needs W 32-bit words reserves ceil(W/4) Philox blocks starting at the
// generator's current `offset` and advances `offset` past them, so consecutive draws
// never reuse a counter. Word j of the draw is philox_block(seed, offset + j/4).x[j%4].
// Each kernel assigns a fixed number of words to each element, so element i depends
// only on (seed, offset, i): the values do not change with the number of threads or
// how the draw is split among them.
//
// Thread-safety: every method locks the generator's mutex, so one Generator may be
// shared by threads (the default generator is). A kernel calls draw() once and then
// generates without holding the lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/philox.h"

namespace lucid {

// PyTorch's default CPU seed (c10::default_rng_seed_val).
inline constexpr uint64_t kDefaultRngSeed = 67280421310721ull;
// Size of get_state(): seed then offset, each a little-endian uint64.
inline constexpr size_t kRngStateBytes = 16;

// What a draw gets: the key and the first Philox block it owns.
struct PhiloxDraw {
  uint64_t seed;
  uint64_t offset;
  // Block b of this draw (b counts from 0).
  LUCID_HD Philox4 block(uint64_t b) const { return philox_block(seed, offset + b); }
};

class Generator {
 public:
  explicit Generator(uint64_t seed = kDefaultRngSeed) : seed_(seed) {}
  // Copies the state (seed and offset); the copy then evolves independently.
  Generator(const Generator& other);
  Generator& operator=(const Generator& other);

  // Sets the seed and restarts the stream (offset 0), like torch.manual_seed.
  void manual_seed(uint64_t seed);
  // Like torch.Generator.seed(): reseeds from a non-deterministic source
  // (std::random_device) and returns the new seed.
  uint64_t seed();
  // The seed in use (set by the constructor, manual_seed, seed() or set_state).
  uint64_t initial_seed() const;

  // The Philox block offset (torch.Generator.get_offset/set_offset analogues).
  uint64_t offset() const;
  void set_offset(uint64_t offset);

  // kRngStateBytes bytes: seed, offset (little-endian uint64 each).
  std::vector<uint8_t> get_state() const;
  // Restores a get_state() result; RuntimeError when the size is wrong.
  void set_state(const std::vector<uint8_t>& state);
  void set_state(const uint8_t* data, size_t size);

  // Reserves the blocks for `n_uint32` random words (ceil(n_uint32 / 4) blocks),
  // returns the first block's offset and advances past them.
  uint64_t reserve(uint64_t n_uint32);
  // reserve() plus the seed, read under the same lock so a concurrent manual_seed
  // cannot pair the new seed with the old offset. Kernels use this one.
  PhiloxDraw draw(uint64_t n_uint32);

 private:
  mutable std::mutex mu_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The process-wide CPU generator (torch.default_generator), seeded with
// kDefaultRngSeed at first use.
Generator& default_generator();

}  // namespace lucid
