#include "autograd/anomaly.h"

#include <atomic>

#include "core/error.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"

namespace lucid::autograd {

namespace {
std::atomic<bool> g_enabled{false};
std::atomic<bool> g_check_nan{true};
AnomalyHooks g_hooks;
}  // namespace

bool anomaly_enabled() { return g_enabled.load(std::memory_order_relaxed); }
bool anomaly_check_nan() { return g_check_nan.load(std::memory_order_relaxed); }

void set_anomaly(bool enabled, bool check_nan) {
  g_check_nan.store(check_nan, std::memory_order_relaxed);
  g_enabled.store(enabled, std::memory_order_relaxed);
}

void set_anomaly_hooks(AnomalyHooks hooks) { g_hooks = hooks; }

std::unique_ptr<std::string> capture_forward_stack() {
  if (!anomaly_enabled() || !g_hooks.capture_stack) return nullptr;
  return std::make_unique<std::string>(g_hooks.capture_stack());
}

void report_anomaly(const std::string& node_name, const std::string* forward_stack) {
  if (forward_stack && g_hooks.report) g_hooks.report(node_name, *forward_stack);
}

void check_no_nan(const std::string& node_name, const std::vector<TensorPtr>& grads) {
  for (size_t i = 0; i < grads.size(); ++i) {
    const TensorPtr& g = grads[i];
    if (!g || !(is_floating(g->dtype()) || is_complex(g->dtype())) || g->numel() == 0) continue;
    const TensorPtr found = ops::any(ops::unary(ops::UnaryOp::Isnan, g), {}, false);
    LUCID_CHECK(!std::get<bool>(found->item()), RuntimeError, "Function '", node_name, "' returned nan values in its ",
                i, "th output.");  // PyTorch's wording
  }
}

}  // namespace lucid::autograd
