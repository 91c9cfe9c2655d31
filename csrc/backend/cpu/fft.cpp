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
// `mkl` package (ops::set_cpu_fft_library).
//
// Threads: MKL runs a transform on its GNU OpenMP layer, as many threads as lucid's
// pool (set per call, thread-locally); its threads sleep after a short spin, where
// Intel OpenMP's default spin of 200 ms would take the cores from lucid's pool after
// every transform. Without libgomp, MKL's sequential layer.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/common/plan_cache.h"
#include "backend/cpu/blas.h"
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
// MKL_Set_Threading_Layer's values (mkl_service.h).
constexpr int kMklThreadingSequential = 1, kMklThreadingGnu = 3;

struct MklApi {
  MklLong (*create)(Descriptor*, int precision, int domain, MklLong rank, ...);
  MklLong (*set)(Descriptor, int param, ...);
  MklLong (*commit)(Descriptor);
  MklLong (*forward)(Descriptor, void* in, ...);
  MklLong (*backward)(Descriptor, void* in, ...);
  MklLong (*free)(Descriptor*);
  char* (*message)(MklLong);
  int (*set_threading_layer)(int);
  int (*set_num_threads_local)(int);
};

void* open_first(const std::vector<std::string>& names, std::string& why) {
  for (const std::string& name : names) {
    if (name.empty()) continue;
    if (void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    why = dlerror();
  }
  return nullptr;
}

template <class F>
void bind(void* lib, F& fn, const char* symbol) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
  LUCID_CHECK(fn, RuntimeError, "fft: MKL's libmkl_rt has no ", symbol, " (too old an MKL?)");
}

// The folder of the library that holds `symbol`, with its slash ("" when unknown).
std::string folder_of(void* symbol) {
  Dl_info info{};
  if (!dladdr(symbol, &info) || !info.dli_fname) return "";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

MklApi load_mkl() {
  std::string why = "not found";
  void* lib = open_first({"libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so", ops::cpu_fft_library()}, why);
  LUCID_CHECK(lib, RuntimeError, "fft: the CPU's Fourier transforms need Intel MKL (libmkl_rt), which could not be "
              "loaded (", why, "). Install it with `pip install mkl`, or run the transform on the GPU");
  MklApi api{};
  bind(lib, api.create, "DftiCreateDescriptor");
  bind(lib, api.set, "DftiSetValue");
  bind(lib, api.commit, "DftiCommitDescriptor");
  bind(lib, api.forward, "DftiComputeForward");
  bind(lib, api.backward, "DftiComputeBackward");
  bind(lib, api.free, "DftiFreeDescriptor");
  bind(lib, api.message, "DftiErrorMessage");
  bind(lib, api.set_threading_layer, "MKL_Set_Threading_Layer");
  bind(lib, api.set_num_threads_local, "MKL_Set_Num_Threads_Local");
  // MKL's threading layers take libm's and OpenMP's symbols from the global scope. A
  // missing layer library is a fatal error inside MKL (it exits), so the GNU layer is
  // chosen only when libgomp loads here and the layer's library is beside libmkl_rt
  // (MKL opens it from there; it cannot be opened on its own, before MKL's core).
  dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL);
  const std::string dir = folder_of(reinterpret_cast<void*>(api.create));
  const bool gnu = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL) &&
                   (access((dir + "libmkl_gnu_thread.so.3").c_str(), R_OK) == 0 ||
                    access((dir + "libmkl_gnu_thread.so.2").c_str(), R_OK) == 0);
  api.set_threading_layer(gnu ? kMklThreadingGnu : kMklThreadingSequential);
  return api;
}

const MklApi& mkl() {
  static const MklApi api = load_mkl();  // a failed load throws, and is tried again next call
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
  api.set_num_threads_local(get_num_threads());
  const bool forward = p.kind == FftKind::R2C || (p.kind == FftKind::C2C && !p.inverse);
  void* in = x->host_ptr();  // an out-of-place transform only reads it
  const MklLong status = forward ? api.forward(plan->handle, in, y->host_ptr())
                                 : api.backward(plan->handle, in, y->host_ptr());
  api.set_num_threads_local(0);  // back to MKL's global setting for this thread
  check_dfti(status, forward ? "DftiComputeForward" : "DftiComputeBackward");
}

}  // namespace

void register_fft_kernels() { ops::register_kernel(ops::Prim::Fft, DeviceType::CPU, fft_kernel); }

}  // namespace lucid::cpu
