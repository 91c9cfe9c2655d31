#include "backend/cuda/block_ticket.h"

#include <mutex>

#include <cuda_runtime_api.h>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/stream.h"

namespace lucid::cuda {

namespace {

// Far more than the launches one stream can have queued and running at once between
// two uses of the same counter in practice; a 16 KiB allocation a device.
constexpr int kTickets = 4096;

struct DeviceTickets {
  unsigned* counters = nullptr;  // kTickets of them, device memory, zeroed once
  int next = 0;
};

// Leaked, like the streams (stream.cpp): valid during interpreter shutdown.
DeviceTickets* g_devices[kMaxDevices];

std::mutex& ticket_mutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

}  // namespace

unsigned* block_ticket(int device) {
  check_device(device);
  std::lock_guard<std::mutex> lock(ticket_mutex());
  DeviceTickets*& d = g_devices[device];
  if (!d) {
    DeviceGuard guard(device);
    void* p = nullptr;
    LUCID_CUDA_CHECK(cudaMalloc(&p, kTickets * sizeof(unsigned)));
    // Zeroed on the legacy stream and waited for here, not queued on the device's
    // stream: this may run while that stream is being captured into a graph (relaxed
    // mode), and a memset captured there would never run if the capture were dropped.
    LUCID_CUDA_CHECK(cudaMemset(p, 0, kTickets * sizeof(unsigned)));
    LUCID_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    d = new DeviceTickets{static_cast<unsigned*>(p), 0};
  }
  unsigned* ticket = d->counters + d->next;
  d->next = (d->next + 1) % kTickets;
  return ticket;
}

}  // namespace lucid::cuda
