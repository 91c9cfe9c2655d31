// Intel MKL (libmkl_rt), opened with dlopen at its first use and kept for the process:
// the CPU's Fourier transforms (fft.cpp) need it, the decompositions (lapack.cpp) prefer
// its LAPACK to OpenBLAS's when it is there (Note [The CPU's LAPACK]). `import lucid`
// never needs it.
#pragma once

#include <string>

namespace lucid::cpu {

// libmkl_rt's handle, its threading layer chosen (GNU OpenMP when libgomp and MKL's GNU
// layer are there, else sequential); nullptr when it cannot be loaded, with the reason
// in mkl_load_error(). The loader's search is tried first, then the path Python found in
// the `mkl` package (ops::set_mkl_library). A failed load is tried again once that
// path changes.
void* mkl_library();
std::string mkl_load_error();

// `symbol` of MKL, or nullptr (when MKL or the symbol is missing).
void* mkl_symbol(const char* symbol);

// MKL's thread count for the calling thread for a scope (MKL_Set_Num_Threads_Local):
// lucid's pool size for one large call, 1 inside a piece of lucid's pool (whose threads
// are the parallelism then). Nothing when MKL is not loaded.
class MklThreads {
 public:
  explicit MklThreads(int threads);
  ~MklThreads();
  MklThreads(const MklThreads&) = delete;
  MklThreads& operator=(const MklThreads&) = delete;
};

}  // namespace lucid::cpu
