// What the standalone kernel microbenchmarks (rows_layouts.cu, softmax_variants.cu)
// share: a CUDA call checked, and a launch timed alone.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                         \
  do {                                                                                   \
    cudaError_t e = (x);                                                                 \
    if (e != cudaSuccess) {                                                              \
      std::printf("%s: %s (line %d)\n", #x, cudaGetErrorString(e), __LINE__);            \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

// Microseconds a launch, the best of 5 runs of 50 launches (after 5 to warm up).
template <typename Launch>
float time_us(Launch launch) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 5; ++i) launch();
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    CHECK(cudaEventRecord(a));
    for (int i = 0; i < 50; ++i) launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    best = std::min(best, ms * 1000.f / 50.f);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return best;
}
