// Device selection for the CUDA backend: the (cached) device count, index checks,
// and an RAII guard that makes a device current for a scope.
#pragma once

namespace lucid::cuda {

// Number of visible CUDA devices, asked once and cached (CUDA_VISIBLE_DEVICES cannot
// change after the driver has started anyway). Returns 0, and never throws, when
// there is no driver or no device: the CI machine has nvcc but no GPU, and a CUDA
// build must still import and report "no GPU" there.
int device_count() noexcept;

// Throws lucid::RuntimeError unless 0 <= device < device_count().
void check_device(int device);

// The device's multiprocessors and compute capability (90 for 9.0), asked once a device.
int multiprocessor_count(int device);
int compute_capability(int device);

// Makes `device` current for the lifetime of the guard and restores the previous
// device afterwards, so a call on gpu:1 does not leave the caller's thread on gpu:1.
// cudaSetDevice is skipped when the device is already current (the common case).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

}  // namespace lucid::cuda
