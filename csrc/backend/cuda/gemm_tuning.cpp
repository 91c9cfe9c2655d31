// Note [Tuned products] (gemm_tuning.h).
#include "backend/cuda/gemm_tuning.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend/cuda/check.h"

namespace lucid::cuda {

namespace {

constexpr int kReps = 5;  // timed runs a candidate, after one untimed
// A product whose heuristic pick takes longer a run is not tuned: large products are
// bound by the tensor cores, where the heuristic's model is good, and tuning them
// would cost tens of milliseconds at their first call.
constexpr float kMaxTunedMs = 0.25f;

// Releases the events of one tuning however it ends.
struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    LUCID_CUDA_CHECK(cudaEventCreate(&start));
    LUCID_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

}  // namespace

bool gemm_tuning_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("LUCID_GEMM_TUNING");
    return v && std::strcmp(v, "1") == 0;
  }();
  return enabled;
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  LUCID_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

int fastest_candidate(int count, cudaStream_t stream, const std::function<bool(int)>& run) {
  if (count < 2) return 0;
  Events ev;
  std::vector<float> ms(size_t(count), -1.0f);  // -1: cannot run
  for (int i = 0; i < count; ++i) {
    if (!run(i)) continue;  // (also the untimed run: clocks up, code loaded)
    LUCID_CUDA_CHECK(cudaEventRecord(ev.start, stream));
    for (int r = 0; r < kReps; ++r) run(i);
    LUCID_CUDA_CHECK(cudaEventRecord(ev.stop, stream));
    LUCID_CUDA_CHECK(cudaEventSynchronize(ev.stop));
    LUCID_CUDA_CHECK(cudaEventElapsedTime(&ms[size_t(i)], ev.start, ev.stop));
    if (i == 0 && ms[0] > kMaxTunedMs * kReps) return 0;
  }
  int best = 0;
  for (int i = 1; i < count; ++i)
    if (ms[size_t(i)] >= 0 && (ms[size_t(best)] < 0 || ms[size_t(i)] < ms[size_t(best)])) best = i;
  // candidate 0 (the heuristic's pick) stays unless the best is clearly faster
  if (best != 0 && ms[0] >= 0 && ms[size_t(best)] > 0.95f * ms[0]) best = 0;
  return best;
}

}  // namespace lucid::cuda
