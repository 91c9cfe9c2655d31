#include "core/default_dtype.h"

#include <atomic>

namespace lucid {

namespace {
std::atomic<Dtype> g_default{Dtype::F32};
}

Dtype default_dtype() { return g_default.load(std::memory_order_relaxed); }

void set_default_dtype(Dtype d) {
  LUCID_CHECK(is_floating(d), TypeError, "only floating-point types are supported as the default type, got ",
              dtype_name(d));
  g_default.store(d, std::memory_order_relaxed);
}

}  // namespace lucid
