// NVRTC, CUDA's run-time compiler, opened with dlopen at its first use (library.h):
// CUDA C++ source in, a CUBIN for one GPU architecture out. Used by the generated
// kernels (generated_kernels.h); `import lucid` and every other op work without it.
#pragma once

#include <string>
#include <vector>

namespace lucid::cuda::nvrtc {

// The CUBIN of `source` compiled for compute capability `arch` (90: sm_90) with
// `options`. RuntimeError with the compiler's log when the source does not compile,
// or saying why NVRTC could not be loaded.
std::string compile(const std::string& source, const char* program_name, int arch,
                    const std::vector<std::string>& options);

// The CUDA toolkit's include folders that exist here (the build's, $CUDA_HOME's,
// /usr/local/cuda's), for sources that include the toolkit's headers (cuda_fp16.h).
std::vector<std::string> toolkit_include_dirs();

// "13.0": the loaded compiler's version (part of a cached kernel's key); RuntimeError
// when NVRTC cannot be loaded.
std::string version();

}  // namespace lucid::cuda::nvrtc
