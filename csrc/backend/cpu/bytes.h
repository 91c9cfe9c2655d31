// Unaligned typed access to raw bytes (tensor data is addressed by byte strides;
// memcpy compiles to a plain load or store).
#pragma once

#include <cstddef>
#include <cstring>

namespace lucid::cpu {

template <typename T>
inline T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
inline void store(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace lucid::cpu
