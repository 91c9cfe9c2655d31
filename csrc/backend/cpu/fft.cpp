// CPU kernel of the discrete Fourier transform (ops/prims/fft.h): MKL's DFTI, opened
// with dlopen at the first CPU transform, one committed descriptor per transform shape
// kept in a small cache.
//
// Note [The CPU's FFT library]
// Chosen by measurement and licence (lucid is MIT). One complex64 transform of 2^24 on
// the 2-core CI machine: MKL 2026.2 (PyPI's `mkl`; the Intel Simplified Software
// Licence: redistributable, no copyleft) 89 ms on two threads, torch 2.15 (which has
// MKL inside) 102 ms; KissFFT (Debian's, BSD) 1,378 ms on one thread and float32 only;
// FFTW 3 is as fast as MKL but GPL, which an MIT library cannot require; pocketfft
// (BSD, numpy's and torch's fallback) is packaged by neither Debian nor PyPI. MKL is
// not linked: `import lucid` must not need it, and only the CPU transforms fail
// without it. The loader's search is tried first, then the path lucid.fft finds in the
// `mkl` package (ops::set_mkl_library).
//
// Threads: MKL runs a transform on its GNU OpenMP layer, as many threads as lucid's
// pool (set per call, thread-locally); its threads sleep after a short spin, where
// Intel OpenMP's default spin of 200 ms would take the cores from lucid's pool after
// every transform. Without libgomp, MKL's sequential layer.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/common/plan_cache.h"
#include "backend/cpu/blas.h"
#include "backend/cpu/mkl.h"
#include "backend/cpu/register.h"
#include "core/error.h"
#include "ops/fft.h"
#include "ops/prims/fft.h"

namespace lucid::cpu {

namespace {

using ops::FftKind;
using ops::Inputs;
using ops::Outputs;

using MklLong = long;  // MKL_LONG of MKL's LP64 interface
using Descriptor = void*;

// DFTI's configuration names and values (mkl_dfti.h).
enum DftiParam : int {
  kDftiNumberOfTransforms = 7,
  kDftiConjugateEvenStorage = 10,
  kDftiPlacement = 11,
  kDftiFwdDistance = 58,
  kDftiBwdDistance = 59,
  kDftiFwdStrides = 60,
  kDftiBwdStrides = 61,
};
enum DftiValue : int {
  kDftiComplex = 32,
  kDftiReal = 33,
  kDftiSingle = 35,
  kDftiDouble = 36,
  kDftiComplexComplex = 39,
  kDftiNotInplace = 44,
};
struct MklApi {
  MklLong (*create)(Descriptor*, int precision, int domain, MklLong rank, ...);
  MklLong (*set)(Descriptor, int param, ...);
  MklLong (*commit)(Descriptor);
  MklLong (*forward)(Descriptor, void* in, ...);
  MklLong (*backward)(Descriptor, void* in, ...);
  MklLong (*free)(Descriptor*);
  char* (*message)(MklLong);
};

template <class F>
void bind(F& fn, const char* symbol) {
  fn = reinterpret_cast<F>(mkl_symbol(symbol));
  LUCID_CHECK(fn, RuntimeError, "fft: MKL's libmkl_rt has no ", symbol, " (too old an MKL?)");
}

MklApi load_mkl() {
  LUCID_CHECK(mkl_library(), RuntimeError, "fft: the CPU's Fourier transforms need Intel MKL (libmkl_rt), which "
              "could not be loaded (", mkl_load_error(), "). Install it with `pip install mkl`, or run the transform "
              "on the GPU");
  MklApi api{};
  bind(api.create, "DftiCreateDescriptor");
  bind(api.set, "DftiSetValue");
  bind(api.commit, "DftiCommitDescriptor");
  bind(api.forward, "DftiComputeForward");
  bind(api.backward, "DftiComputeBackward");
  bind(api.free, "DftiFreeDescriptor");
  bind(api.message, "DftiErrorMessage");
  return api;
}

const MklApi& mkl() {
  static const MklApi api = load_mkl();  // a failed load throws, and is tried again next call (mkl.h)
  return api;
}

void check_dfti(MklLong status, const char* call) {
  LUCID_CHECK(status == 0, RuntimeError, "fft: MKL's ", call, " failed: ", mkl().message(status));
}

// A committed descriptor for one transform shape; computes on it are serialised.
struct Plan {
  Descriptor handle = nullptr;
  std::mutex mutex;
  ~Plan() {
    if (handle) mkl().free(&handle);
  }
};

struct PlanKey {
  bool real = false, f64 = false;
  std::vector<MklLong> dims;  // the real side's signal sizes
  MklLong batch = 1;
  bool operator==(const PlanKey&) const = default;
};

std::shared_ptr<Plan> make_plan(const PlanKey& key) {
  const MklApi& api = mkl();
  auto plan = std::make_shared<Plan>();
  const MklLong rank = MklLong(key.dims.size());
  const int precision = key.f64 ? kDftiDouble : kDftiSingle;
  const int domain = key.real ? kDftiReal : kDftiComplex;
  check_dfti(rank == 1 ? api.create(&plan->handle, precision, domain, rank, key.dims[0])
                       : api.create(&plan->handle, precision, domain, rank, key.dims.data()),
             "DftiCreateDescriptor");
  // Row-major strides of the real (forward) side and of the complex (backward) side,
  // whose last dim is one-sided for a real transform; DFTI's stride lists lead with
  // the offset.
  std::vector<MklLong> fwd(rank + 1, 0), bwd(rank + 1, 0);
  MklLong fwd_step = 1, bwd_step = 1;
  for (MklLong d = rank - 1; d >= 0; --d) {
    fwd[d + 1] = fwd_step, bwd[d + 1] = bwd_step;
    fwd_step *= key.dims[d];
    bwd_step *= key.real && d == rank - 1 ? key.dims[d] / 2 + 1 : key.dims[d];
  }
  check_dfti(api.set(plan->handle, kDftiPlacement, kDftiNotInplace), "DftiSetValue(PLACEMENT)");
  if (key.real)
    check_dfti(api.set(plan->handle, kDftiConjugateEvenStorage, kDftiComplexComplex),
               "DftiSetValue(CONJUGATE_EVEN_STORAGE)");
  check_dfti(api.set(plan->handle, kDftiFwdStrides, fwd.data()), "DftiSetValue(FWD_STRIDES)");
  check_dfti(api.set(plan->handle, kDftiBwdStrides, bwd.data()), "DftiSetValue(BWD_STRIDES)");
  check_dfti(api.set(plan->handle, kDftiNumberOfTransforms, key.batch), "DftiSetValue(NUMBER_OF_TRANSFORMS)");
  check_dfti(api.set(plan->handle, kDftiFwdDistance, fwd_step), "DftiSetValue(FWD_DISTANCE)");
  check_dfti(api.set(plan->handle, kDftiBwdDistance, bwd_step), "DftiSetValue(BWD_DISTANCE)");
  check_dfti(api.commit(plan->handle), "DftiCommitDescriptor");
  return plan;
}

// Committing a descriptor costs far more than a small transform (MKL factors the
// length and builds its twiddles), so the 16 most recent shapes keep theirs.
std::shared_ptr<Plan> plan_for(const PlanKey& key) {
  static backend::PlanCache<PlanKey, Plan, 16> cache;
  return cache.get(key, [&] { return make_plan(key); });
}

void fft_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::Fft>(prim);
  const TensorImpl* x = ins[0];
  TensorImpl* y = outs[0];
  const ops::FftShape shape = ops::fft_shape(p, *x, *y);
  PlanKey key;
  key.real = p.kind != FftKind::C2C;
  key.f64 = shape.f64;
  key.dims.assign(shape.dims.begin(), shape.dims.end());
  key.batch = shape.batch;
  std::shared_ptr<Plan> plan = plan_for(key);
  const MklApi& api = mkl();
  std::lock_guard<std::mutex> lock(plan->mutex);
  const bool forward = p.kind == FftKind::R2C || (p.kind == FftKind::C2C && !p.inverse);
  void* in = x->host_ptr();  // an out-of-place transform only reads it
  MklLong status = 0;
  {
    MklThreads threads(get_num_threads());
    status = forward ? api.forward(plan->handle, in, y->host_ptr()) : api.backward(plan->handle, in, y->host_ptr());
  }
  check_dfti(status, forward ? "DftiComputeForward" : "DftiComputeBackward");
}

}  // namespace

void register_fft_kernels() { ops::register_kernel(ops::Prim::Fft, DeviceType::CPU, fft_kernel); }

}  // namespace lucid::cpu
