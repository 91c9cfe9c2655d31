// The (primitive, device) kernel table and launch (Note [The compute seam]).
#include <array>

#include "core/error.h"
#include "ops/primitive.h"

namespace lucid::ops {

namespace {

constexpr const char* kPrimName[] = {
#define LUCID_PRIM_NAME(name) #name,
    LUCID_PRIMITIVES(LUCID_PRIM_NAME)
#undef LUCID_PRIM_NAME
};

constexpr size_t kDeviceTypes = 2;  // DeviceType::CPU, DeviceType::GPU

// Written at import (register_kernels of each backend), read-only afterwards.
std::array<std::array<Kernel, kDeviceTypes>, kPrimCount>& table() {
  static std::array<std::array<Kernel, kDeviceTypes>, kPrimCount> t{};
  return t;
}

const char* device_type_name(DeviceType d) { return d == DeviceType::CPU ? "cpu" : "gpu"; }

}  // namespace

const char* prim_name(Prim p) { return kPrimName[size_t(p)]; }

void register_kernel(Prim p, DeviceType device, Kernel kernel) { table()[size_t(p)][size_t(device)] = kernel; }

bool has_kernel(Prim p, DeviceType device) { return table()[size_t(p)][size_t(device)] != nullptr; }

std::vector<std::pair<std::string, std::string>> registered_kernels() {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t p = 0; p < kPrimCount; ++p)
    for (DeviceType d : {DeviceType::CPU, DeviceType::GPU})
      if (table()[p][size_t(d)]) out.emplace_back(kPrimName[p], device_type_name(d));
  return out;
}

void launch(const Primitive& p, Outputs outs, Inputs ins) {
  LUCID_CHECK(!outs.empty() || !ins.empty(), RuntimeError, "internal: ", p.name(), " launched with no tensors");
  const Device device = outs.empty() ? ins.front()->device() : outs.front()->device();
  // A kernel dereferences what it is given on its own device: a tensor elsewhere would
  // be a wild pointer, so this is checked here once instead of trusted in every op.
  auto same = [&](const TensorImpl* t) {
    LUCID_CHECK(t->device() == device, RuntimeError, "Expected all tensors to be on the same device, but found at "
                "least two devices, ", device.str(), " and ", t->device().str(), "! (in ", p.name(), ")");
  };
  for (const TensorImpl* t : outs) same(t);
  for (const TensorImpl* t : ins) same(t);
  Kernel k = table()[size_t(p.kind())][size_t(device.type)];
  if (!k) {
    if (device.is_gpu())
      fail<NotImplementedError>("no CUDA kernel for ", p.name(), " on ", device.str(),
                                " yet: move the tensors with .cpu()");
    fail<NotImplementedError>("internal: no CPU kernel for ", p.name());
  }
  k(p, outs, ins);
}

void launch(const Primitive& p, std::initializer_list<TensorImpl*> outs,
            std::initializer_list<const TensorImpl*> ins) {
  launch(p, Outputs(outs.begin(), outs.size()), Inputs(ins.begin(), ins.size()));
}

}  // namespace lucid::ops
