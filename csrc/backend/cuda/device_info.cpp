// What lucid.cuda reports about a GPU and the few knobs around it (CudaRuntime's
// device_info methods): properties, free memory, the per-process memory cap, the
// architectures this build carries, and NVTX annotations for Nsight Systems.
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <cmath>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <vector>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/register.h"
#include "backend/cuda/runtime.h"
#include "core/error.h"

namespace lucid::cuda {

namespace {

std::string uuid_text(const cudaUUID_t& u) {
  // torch prints it as "GPU-" and the 16 bytes in the 8-4-4-4-12 groups of a UUID.
  char out[64];
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  std::snprintf(out, sizeof out, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return out;
}

// Each device's cap as a fraction of its memory (1: none), for memory_fraction().
std::mutex g_fraction_mu;
std::vector<double> g_fractions;

}  // namespace

DeviceProperties CudaRuntime::properties(int device) {
  check_device(device);
  cudaDeviceProp p{};
  LUCID_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceProperties out;
  out.name = p.name;
  out.uuid = uuid_text(p.uuid);
  out.major = p.major;
  out.minor = p.minor;
  out.multi_processor_count = p.multiProcessorCount;
  out.max_threads_per_multi_processor = p.maxThreadsPerMultiProcessor;
  out.warp_size = p.warpSize;
  out.regs_per_multiprocessor = p.regsPerMultiprocessor;
  out.total_memory = p.totalGlobalMem;
  out.l2_cache_size = size_t(p.l2CacheSize);
  out.is_integrated = p.integrated != 0;
  out.is_multi_gpu_board = p.isMultiGpuBoard != 0;
  return out;
}

std::pair<size_t, size_t> CudaRuntime::memory_info(int device) {
  check_device(device);
  DeviceGuard guard(device);
  size_t free = 0, total = 0;
  LUCID_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return {free, total};
}

void CudaRuntime::set_memory_fraction(double fraction, int device) {
  check_device(device);
  LUCID_CHECK(std::isfinite(fraction) && fraction >= 0.0 && fraction <= 1.0, ValueError,
              "Invalid fraction value: ", fraction, ". Allowed range: 0~1");
  const size_t total = properties(device).total_memory;
  CachingAllocator::instance().set_limit(fraction >= 1.0 ? SIZE_MAX : size_t(double(total) * fraction), device);
  std::lock_guard<std::mutex> lock(g_fraction_mu);
  if (g_fractions.size() <= size_t(device)) g_fractions.resize(size_t(device) + 1, 1.0);
  g_fractions[size_t(device)] = fraction;
}

double CudaRuntime::memory_fraction(int device) {
  check_device(device);
  std::lock_guard<std::mutex> lock(g_fraction_mu);
  return size_t(device) < g_fractions.size() ? g_fractions[size_t(device)] : 1.0;
}

std::vector<std::string> CudaRuntime::arch_list() {
  // LUCID_CUDA_ARCHITECTURES is CMake's list joined by commas: "90-real,90-virtual",
  // or "90" for both kinds ("native" and "all" name no number and are left out).
  std::vector<std::string> out;
  std::stringstream list(LUCID_CUDA_ARCHITECTURES);
  for (std::string entry; std::getline(list, entry, ',');) {
    const size_t dash = entry.find('-');
    const std::string number = entry.substr(0, dash), kind = dash == std::string::npos ? "" : entry.substr(dash + 1);
    if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) continue;
    if (kind.empty() || kind == "real") out.push_back("sm_" + number);
    if (kind.empty() || kind == "virtual") out.push_back("compute_" + number);
  }
  return out;
}

int CudaRuntime::nvtx_range_push(const std::string& message) { return nvtxRangePushA(message.c_str()); }
int CudaRuntime::nvtx_range_pop() { return nvtxRangePop(); }
uint64_t CudaRuntime::nvtx_range_start(const std::string& message) { return nvtxRangeStartA(message.c_str()); }
void CudaRuntime::nvtx_range_end(uint64_t id) { nvtxRangeEnd(id); }
void CudaRuntime::nvtx_mark(const std::string& message) { nvtxMarkA(message.c_str()); }

int cuda_runtime_version() { return CUDART_VERSION; }

}  // namespace lucid::cuda
