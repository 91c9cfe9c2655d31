// Anomaly mode (PyTorch's detect_anomaly / set_detect_anomaly): while it is on, every
// graph node records the stack of the forward call that made it, and backward names
// the node whose gradient went wrong: a node that raises gets its forward stack
// reported, and (with check_nan) a node that returns NaN raises, naming itself and
// the output. The mode is process-wide, as in PyTorch.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/tensor_impl.h"

namespace lucid::autograd {

bool anomaly_enabled();
bool anomaly_check_nan();
void set_anomaly(bool enabled, bool check_nan);

// The engine has no Python: the bindings install how to capture the current
// (Python) stack and how to report a node's forward stack when its backward fails.
struct AnomalyHooks {
  std::string (*capture_stack)() = nullptr;
  void (*report)(const std::string& node_name, const std::string& forward_stack) = nullptr;
};
void set_anomaly_hooks(AnomalyHooks hooks);

// The forward stack for a node created now (empty when the mode is off).
std::unique_ptr<std::string> capture_forward_stack();
// Reports a failed node's forward stack (no-op without a recorded stack).
void report_anomaly(const std::string& node_name, const std::string* forward_stack);
// Raises if a gradient the node named `node_name` returned holds a NaN.
void check_no_nan(const std::string& node_name, const std::vector<TensorPtr>& grads);

}  // namespace lucid::autograd
