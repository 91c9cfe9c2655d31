// A small most-recently-used cache of library plans (the FFT backends' committed
// descriptors and cuFFT plans), shared by the CPU and GPU backends: plans cost far
// more to make than a small transform to run, and a bounded count keeps their memory
// bounded. A plan evicted while a caller still runs it lives on in that caller's
// shared_ptr.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <utility>

namespace lucid::backend {

template <class Key, class Plan, size_t kCapacity>
class PlanCache {
 public:
  // The plan for key, made by make() on a miss (under the cache's lock).
  template <class Make>
  std::shared_ptr<Plan> get(const Key& key, Make&& make) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->first == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front().second;
      }
    entries_.emplace_front(key, make());
    if (entries_.size() > kCapacity) entries_.pop_back();
    return entries_.front().second;
  }

 private:
  std::mutex mutex_;
  std::list<std::pair<Key, std::shared_ptr<Plan>>> entries_;  // most recent first
};

}  // namespace lucid::backend
