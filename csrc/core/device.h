// Where a tensor's data lives. "gpu" is the canonical name; the Python layer also
// accepts "cuda" and "cuda:N" as aliases (python/lucid/_device.py).
#pragma once

#include <cstdint>
#include <string>

namespace lucid {

enum class DeviceType : uint8_t { CPU, GPU };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;  // always 0 for the CPU

  static Device cpu() { return {}; }
  static Device gpu(int index = 0) { return {DeviceType::GPU, index}; }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_gpu() const { return type == DeviceType::GPU; }
  bool operator==(const Device&) const = default;
  std::string str() const { return is_cpu() ? "cpu" : "gpu:" + std::to_string(index); }
};

}  // namespace lucid
