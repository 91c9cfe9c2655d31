// The pooling and resampling family's CUDA kernels (ops/prims/spatial.h: MaxPool,
// AvgPool, ResampleTaps, GridSample, GridSampleBackward), one file per group:
// pool.cu, resample.cu, grid_sample.cu. register_pool_kernels() (register.h, in
// pool.cu) registers them all.
#pragma once

namespace lucid::cuda {

void register_resample_kernels();     // resample.cu
void register_grid_sample_kernels();  // grid_sample.cu

}  // namespace lucid::cuda
