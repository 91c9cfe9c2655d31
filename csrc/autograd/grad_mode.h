// Grad modes, per thread (PyTorch's no_grad / enable_grad / set_grad_enabled /
// inference_mode). Ops record graph nodes only while grad mode is enabled.
#pragma once

namespace lucid::autograd {

bool grad_enabled();
void set_grad_enabled(bool enabled);
// Inference mode disables recording like no_grad; it is tracked separately so that
// lucid.is_inference_mode_enabled() reports it.
bool inference_mode_enabled();
void set_inference_mode(bool enabled);

// Sets grad mode for a scope and restores the previous one.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(grad_enabled()) { set_grad_enabled(enabled); }
  ~GradModeGuard() { set_grad_enabled(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace lucid::autograd
