// How the forward rows kernels' layout (threads a row, elements kept a thread, the
// registers ptxas may take) sets their speed: softmax_rows_forward and norm_rows_forward
// (the templates lucid's unfused and fused kernels share, Note [Softmax rows] and Note
// [Forward rows in registers]) over [rows, n] float32, each layout timed alone (best of 5
// runs of 50 launches) and checked against the first. Standalone, so that layouts can be
// compared without building lucid:
//
//   nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false --expt-relaxed-constexpr -Icsrc \
//        benchmarks/profiles/rows_layouts.cu -o /tmp/rows_layouts && /tmp/rows_layouts [rows] [n]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "backend/cuda/norm_rows_forward.cuh"
#include "backend/cuda/softmax_rows_forward.cuh"
#include "kernel_timing.cuh"

using namespace lucid::cuda;

constexpr int block_of(int threads) { return threads == 32 ? kNormRowBlock : threads; }

template <int kThreads, int kKept, int kMinBlocks>
__global__ void __launch_bounds__(block_of(kThreads), kMinBlocks) softmax_dev(PlainRows<float, float> io, long long rows) {
  softmax_rows_forward<float, kThreads, kKept>(io, rows, io.n, false);
}

template <int kThreads, int kKept, int kMinBlocks>
__global__ void __launch_bounds__(block_of(kThreads), kMinBlocks) norm_dev(PlainRows<float, float> io, NormRowsArgs<float> a) {
  norm_rows_forward<float, kThreads, kKept>(io, a);
}

struct Rows {
  long long rows, n;
  float *x, *y, *w, *b, *mean, *rstd;
  std::vector<float> first;  // the first layout's result, to check the others against
};

double max_diff(const Rows& r, const std::vector<float>& got) {
  double d = 0;
  for (size_t i = 0; i < got.size(); ++i) d = std::max(d, (double)std::fabs(got[i] - r.first[i]));
  return d;
}

// Times kernel k (launched with args...) in kThreads' layout and prints its resources, its
// time and its largest difference from the first layout timed since r.first was cleared.
template <int kThreads, typename Kernel, typename... Args>
void report(Rows& r, const char* op, const char* what, Kernel k, Args... args) {
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, k));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, block_of(kThreads), 0));
  const long long per_block = block_of(kThreads) / kThreads;
  const unsigned grid = unsigned((r.rows + per_block - 1) / per_block);
  const float us = time_us([&] { k<<<grid, block_of(kThreads)>>>(args...); });
  std::vector<float> got(size_t(r.rows * r.n));
  CHECK(cudaMemcpy(got.data(), r.y, got.size() * 4, cudaMemcpyDeviceToHost));
  if (r.first.empty()) r.first = got;
  std::printf("%-10s %-32s %3d regs %4d B local, %2d blocks an SM (%3lld rows): %7.1f us, %5.0f GB/s, max diff %.2g\n",
              op, what, attr.numRegs, (int)attr.localSizeBytes, per_sm, per_sm * per_block, us,
              2.0 * r.rows * r.n * 4 / us / 1e3, max_diff(r, got));
}

template <int kThreads, int kKept, int kMinBlocks>
void softmax_layout(Rows& r, const char* what) {
  report<kThreads>(r, "softmax", what, &softmax_dev<kThreads, kKept, kMinBlocks>, PlainRows<float, float>{r.x, r.y, r.n},
                   r.rows);
}

template <int kThreads, int kKept, int kMinBlocks>
void norm_layout(Rows& r, const char* what) {
  report<kThreads>(r, "layer_norm", what, &norm_dev<kThreads, kKept, kMinBlocks>,
                   PlainRows<float, float>{r.x, r.y, r.n},
                   NormRowsArgs<float>{r.w, r.b, r.mean, r.rstd, r.rows, r.n, 1e-5, false});
}

int main(int argc, char** argv) {
  Rows r{};
  r.rows = argc > 1 ? std::atoll(argv[1]) : 16384;
  r.n = argc > 2 ? std::atoll(argv[2]) : 1024;
  std::vector<float> host(size_t(r.rows * r.n));
  unsigned s = 12345;
  for (auto& v : host) {
    s = s * 1664525u + 1013904223u;
    v = float((s >> 8) & 0xffff) / 65536.f * 8.f - 4.f;
  }
  CHECK(cudaMalloc(&r.x, host.size() * 4));
  CHECK(cudaMalloc(&r.y, host.size() * 4));
  CHECK(cudaMalloc(&r.w, r.n * 4));
  CHECK(cudaMalloc(&r.b, r.n * 4));
  CHECK(cudaMalloc(&r.mean, r.rows * 4));
  CHECK(cudaMalloc(&r.rstd, r.rows * 4));
  CHECK(cudaMemcpy(r.x, host.data(), host.size() * 4, cudaMemcpyHostToDevice));
  std::vector<float> ones(r.n, 1.f);
  CHECK(cudaMemcpy(r.w, ones.data(), r.n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(r.b, 0, r.n * 4));
  std::printf("[%lld, %lld] float32\n", r.rows, r.n);
  softmax_layout<128, 8, 1>(r, "128 a row x 8 (lucid's)");
  softmax_layout<128, 8, 16>(r, "128 a row x 8, <=32 regs");
  softmax_layout<128, 8, 12>(r, "128 a row x 8, <=40 regs");
  softmax_layout<64, 16, 1>(r, "64 a row x 16");
  softmax_layout<64, 16, 24>(r, "64 a row x 16, <=40 regs");
  softmax_layout<256, 4, 1>(r, "256 a row x 4");
  softmax_layout<32, 32, 1>(r, "warp a row x 32");
  softmax_layout<32, 32, 3>(r, "warp a row x 32, <=80 regs");
  softmax_layout<32, 32, 4>(r, "warp a row x 32, <=64 regs");
  r.first.clear();
  norm_layout<128, 8, 1>(r, "128 a row x 8 (lucid's)");
  norm_layout<128, 8, 16>(r, "128 a row x 8, <=32 regs");
  norm_layout<128, 8, 12>(r, "128 a row x 8, <=40 regs");
  norm_layout<64, 16, 1>(r, "64 a row x 16");
  norm_layout<64, 16, 24>(r, "64 a row x 16, <=40 regs");
  norm_layout<256, 4, 1>(r, "256 a row x 4");
  norm_layout<32, 32, 1>(r, "warp a row x 32");
  norm_layout<32, 32, 4>(r, "warp a row x 32, <=64 regs");
  return 0;
}
