// GPU kernel of the discrete Fourier transform (ops/prims/fft.h): cuFFT, opened with
// dlopen at the first GPU transform (library.h), one plan per (device, transform
// shape) kept in a bounded cache.
//
// Plans are made without cuFFT's own work area (cuFFT would cudaMalloc one per plan and
// keep it for the plan's life); each call takes its work area from the caching
// allocator on the device's stream, so plans cost no device memory while cached. cuFFT
// overwrites a C2R transform's input, so C2R runs on a copy.
#include <cufft.h>

#include <memory>
#include <mutex>
#include <vector>

#include "backend/common/plan_cache.h"
#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/library.h"
#include "backend/cuda/register.h"
#include "backend/cuda/stream.h"
#include "core/error.h"
#include "ops/prims/fft.h"

namespace lucid::cuda {

namespace {

using ops::FftKind;
using ops::Inputs;
using ops::Outputs;

constexpr const char* kCufft = "libcufft.so.12";

struct CufftApi {
  decltype(&cufftCreate) create;
  decltype(&cufftSetAutoAllocation) set_auto_allocation;
  decltype(&cufftMakePlanMany64) make_plan_many;
  decltype(&cufftSetWorkArea) set_work_area;
  decltype(&cufftSetStream) set_stream;
  decltype(&cufftExecC2C) exec_c2c;
  decltype(&cufftExecR2C) exec_r2c;
  decltype(&cufftExecC2R) exec_c2r;
  decltype(&cufftExecZ2Z) exec_z2z;
  decltype(&cufftExecD2Z) exec_d2z;
  decltype(&cufftExecZ2D) exec_z2d;
  decltype(&cufftDestroy) destroy;
};

const CufftApi& cufft() {
  static const CufftApi api = [] {
    void* lib = open_library({kCufft, "libcufft.so.11", "libcufft.so"}, "GPU Fourier transforms need cuFFT",
                             "Install the CUDA toolkit's cuFFT or add its folder to LD_LIBRARY_PATH.");
    CufftApi a{};
    bind_symbol(lib, kCufft, a.create, "cufftCreate");
    bind_symbol(lib, kCufft, a.set_auto_allocation, "cufftSetAutoAllocation");
    bind_symbol(lib, kCufft, a.make_plan_many, "cufftMakePlanMany64");
    bind_symbol(lib, kCufft, a.set_work_area, "cufftSetWorkArea");
    bind_symbol(lib, kCufft, a.set_stream, "cufftSetStream");
    bind_symbol(lib, kCufft, a.exec_c2c, "cufftExecC2C");
    bind_symbol(lib, kCufft, a.exec_r2c, "cufftExecR2C");
    bind_symbol(lib, kCufft, a.exec_c2r, "cufftExecC2R");
    bind_symbol(lib, kCufft, a.exec_z2z, "cufftExecZ2Z");
    bind_symbol(lib, kCufft, a.exec_d2z, "cufftExecD2Z");
    bind_symbol(lib, kCufft, a.exec_z2d, "cufftExecZ2D");
    bind_symbol(lib, kCufft, a.destroy, "cufftDestroy");
    return a;
  }();
  return api;
}

void check_cufft(cufftResult status, const char* call) {
  LUCID_CHECK(status == CUFFT_SUCCESS, RuntimeError, "fft: cuFFT error ", int(status), " in ", call);
}

struct PlanKey {
  int device = 0;
  cufftType type = CUFFT_C2C;
  std::vector<long long> dims;  // the real side's signal sizes
  long long batch = 1;
  bool operator==(const PlanKey&) const = default;
};

// A plan and the work area it needs; calls on it are serialised (its stream and work
// area are settings of the plan).
struct Plan {
  cufftHandle handle = 0;
  bool made = false;
  size_t work_bytes = 0;
  std::mutex mutex;
  ~Plan() {
    if (made) cufft().destroy(handle);
  }
};

std::shared_ptr<Plan> make_plan(const PlanKey& key) {
  const CufftApi& api = cufft();
  DeviceGuard guard(key.device);
  auto plan = std::make_shared<Plan>();
  check_cufft(api.create(&plan->handle), "cufftCreate");
  plan->made = true;
  check_cufft(api.set_auto_allocation(plan->handle, 0), "cufftSetAutoAllocation");
  std::vector<long long> dims = key.dims;
  // null embeddings: the basic layout, dense batches (one-sided along the last dim for
  // the complex side of a real transform)
  check_cufft(api.make_plan_many(plan->handle, int(dims.size()), dims.data(), nullptr, 1, 0, nullptr, 1, 0,
                                 key.type, key.batch, &plan->work_bytes),
              "cufftMakePlanMany64");
  return plan;
}

// Torch keeps up to 4,096 plans per device; a plan here holds no work area, only
// cuFFT's twiddles and kernel choices, so a bound of 64 loses little.
std::shared_ptr<Plan> plan_for(const PlanKey& key) {
  static backend::PlanCache<PlanKey, Plan, 64> cache;
  return cache.get(key, [&] { return make_plan(key); });
}

cufftType type_of(FftKind kind, bool f64) {
  switch (kind) {
    case FftKind::C2C: return f64 ? CUFFT_Z2Z : CUFFT_C2C;
    case FftKind::R2C: return f64 ? CUFFT_D2Z : CUFFT_R2C;
    case FftKind::C2R: return f64 ? CUFFT_Z2D : CUFFT_C2R;
  }
  return CUFFT_C2C;
}

void fft_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::Fft>(prim);
  const TensorImpl* x = ins[0];
  TensorImpl* y = outs[0];
  const int device = y->device().index;
  DeviceGuard guard(device);
  const ops::FftShape shape = ops::fft_shape(p, *x, *y);
  const bool f64 = shape.f64;
  PlanKey key;
  key.device = device;
  key.type = type_of(p.kind, f64);
  key.dims.assign(shape.dims.begin(), shape.dims.end());
  key.batch = shape.batch;
  std::shared_ptr<Plan> plan = plan_for(key);
  const CufftApi& api = cufft();
  cudaStream_t s = stream(device);
  void* in = x->data_ptr();
  GpuStorage copy;
  if (p.kind == FftKind::C2R) {
    copy = CachingAllocator::instance().allocate(x->nbytes(), device);
    LUCID_CUDA_CHECK(cudaMemcpyAsync(copy.ptr(), in, x->nbytes(), cudaMemcpyDeviceToDevice, s));
    in = copy.ptr();
  }
  std::lock_guard<std::mutex> lock(plan->mutex);
  GpuStorage work = CachingAllocator::instance().allocate(std::max<size_t>(plan->work_bytes, 1), device);
  check_cufft(api.set_stream(plan->handle, s), "cufftSetStream");
  check_cufft(api.set_work_area(plan->handle, work.ptr()), "cufftSetWorkArea");
  void* out = y->data_ptr();
  const int direction = p.inverse ? CUFFT_INVERSE : CUFFT_FORWARD;
  switch (p.kind) {
    case FftKind::C2C:
      check_cufft(f64 ? api.exec_z2z(plan->handle, static_cast<cufftDoubleComplex*>(in),
                                     static_cast<cufftDoubleComplex*>(out), direction)
                      : api.exec_c2c(plan->handle, static_cast<cufftComplex*>(in), static_cast<cufftComplex*>(out),
                                     direction),
                  "cufftExecC2C");
      break;
    case FftKind::R2C:
      check_cufft(f64 ? api.exec_d2z(plan->handle, static_cast<cufftDoubleReal*>(in),
                                     static_cast<cufftDoubleComplex*>(out))
                      : api.exec_r2c(plan->handle, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out)),
                  "cufftExecR2C");
      break;
    case FftKind::C2R:
      check_cufft(f64 ? api.exec_z2d(plan->handle, static_cast<cufftDoubleComplex*>(in),
                                     static_cast<cufftDoubleReal*>(out))
                      : api.exec_c2r(plan->handle, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(out)),
                  "cufftExecC2R");
      break;
  }
}

}  // namespace

void register_fft_kernels() { ops::register_kernel(ops::Prim::Fft, DeviceType::GPU, fft_kernel); }

}  // namespace lucid::cuda
