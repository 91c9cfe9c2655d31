// Note [Generated kernels]
//
// Kernels whose source lucid writes at run time (the fused elementwise chains,
// fused_codegen.h) are compiled with NVRTC (nvrtc.h) and cached three ways:
//  - in memory, one entry per source, never freed (a program has few distinct ones);
//  - on disk, as CUBINs under $LUCID_CACHE_DIR/kernels (default
//    ~/.cache/lucid/kernels; LUCID_CACHE_DIR="" keeps them in memory only), keyed by the
//    source, the entry point, the GPU architecture and NVRTC's version, so that a new
//    process finds its kernels compiled. A file is written whole under a temporary name
//    and renamed; one that does not hold its own key, or does not load, is compiled
//    again and replaced.
//  - while a source compiles, its caller runs something else: a background thread
//    compiles (mode Background, the default), and kernel_for() answers nullptr until
//    the kernel is loaded, so a flush never waits for the compiler (about 20 ms a
//    kernel) and the fused chain runs interpreted meanwhile. Mode Sync compiles in the
//    caller (tests that must see the generated kernel run); Off never compiles.
// lucid's own kernels are compiled with --fmad=false, as the elementwise kernels they
// stand in for are (backend/cuda/CMakeLists.txt): a multiply and an add of two ops are
// rounded separately, as when each op is its own kernel. A source that fails to compile
// or load is never tried again; generated_stats() keeps the message.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace lucid::cuda {

enum class CompileMode { Background, Sync, Off };
CompileMode compile_mode();  // LUCID_KERNEL_COMPILE=background|sync|off at start
void set_compile_mode(CompileMode mode);

// One source's entry in the cache (opaque; lives as long as the process).
struct GeneratedKernel;

// NVRTC's options for lucid's own generated kernels (--fmad=false, above).
const std::vector<std::string>& fused_options();

// The entry for the extern "C" kernel `entry` of `source` compiled with `options`
// (part of its key), made on first sight.
GeneratedKernel& generated_kernel(const std::string& source, const char* entry,
                                  const std::vector<std::string>& options = fused_options());

// The kernel, for cudaLaunchKernel on `device`; nullptr while it compiles, when the
// mode is Off, or when it could not be compiled. The first call for a device of an
// architecture not yet compiled starts the compilation (Background, Sync).
const void* kernel_for(GeneratedKernel& kernel, int device);

// The kernel for `device`, compiled now if it is not yet, whatever the mode (a kernel a
// user asked to run: lucid.fast.cuda_kernel); waits for a compilation under way.
// RuntimeError with the compiler's message when it does not compile or load.
const void* compile_now(GeneratedKernel& kernel, int device);

// Stops the background compiler thread after the kernel in hand and waits until it has
// ended; later first sights stay interpreted (Note [The compiler thread at exit],
// generated_kernels.cpp: lucid.gpu calls it at interpreter exit).
void stop_compiler_thread();

struct GeneratedStats {
  size_t compiled = 0;   // by NVRTC in this process
  size_t loaded = 0;     // from the disk cache
  size_t failed = 0;     // sources that did not compile or load
  size_t compiling = 0;  // queued or being compiled now
  std::string last_error;
};
GeneratedStats generated_stats();

}  // namespace lucid::cuda
