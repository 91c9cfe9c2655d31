// Error checking for CUDA runtime calls.
//
// A failing CUDA call becomes a lucid::RuntimeError (a Python RuntimeError), never an
// abort: a user who runs out of memory or hits a bad device index must be able to
// catch the error and carry on, exactly as with PyTorch's torch.cuda errors.
// Kernel (.cu) files do not include this header (it pulls in <sstream> through
// core/error.h); their launchers return a cudaError_t that a .cpp file checks.
#pragma once

#include <cuda_runtime_api.h>

#include "core/error.h"

namespace lucid::cuda {

// The file name without its directories: CMake passes absolute paths in __FILE__,
// which would make every message start with the builder's home directory.
constexpr const char* base_name(const char* path) {
  const char* base = path;
  for (const char* p = path; *p; ++p)
    if (*p == '/' || *p == '\\') base = p + 1;
  return base;
}

// Out of line of the macro so every check site stays one compare and one call.
// cudaGetLastError() resets the runtime's per-thread "last error" so that this
// failure is not reported a second time by an unrelated later call. Sticky errors
// (a faulting kernel) survive that reset: CUDA cannot recover the context then, and
// every later call keeps failing with the same message, which is the honest outcome.
// Whether this process is a fork of the one that loaded lucid (a DataLoader worker,
// multiprocessing's default start method on Linux): a CUDA context does not survive a
// fork, and a child's first CUDA call then fails with an initialization error.
bool forked_after_load() noexcept;

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file,
                                          int line) {
  (void)cudaGetLastError();
  if (err == cudaErrorInitializationError && forked_after_load())
    fail<RuntimeError>("Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you "
                       "must use the 'spawn' start method (a DataLoader's workers are forked: make GPU tensors "
                       "in the main process, or pass multiprocessing_context='spawn'); in ", call);
  fail<RuntimeError>("CUDA error: ", cudaGetErrorString(err), " (", cudaGetErrorName(err),
                     ") in ", call, " at ", base_name(file), ":", line);
}

}  // namespace lucid::cuda

// Evaluates a CUDA runtime call once and throws lucid::RuntimeError unless it
// returned cudaSuccess. The message names the CUDA error and the failing call.
#define LUCID_CUDA_CHECK(expr)                                                   \
  do {                                                                           \
    const cudaError_t lucid_cuda_err_ = (expr);                                  \
    if (lucid_cuda_err_ != cudaSuccess)                                          \
      ::lucid::cuda::throw_cuda_error(lucid_cuda_err_, #expr, __FILE__, __LINE__); \
  } while (0)
