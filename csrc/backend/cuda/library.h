// The CUDA libraries lucid calls (cuBLASLt, cuDNN) are opened with dlopen at their first
// use, not linked: `import lucid` must work on machines without them (no GPU, or a GPU
// but no cuDNN), and only the op that needs a library fails without it.
#pragma once

#include <initializer_list>

namespace lucid::cuda {

// The first of `sonames` that loads, each tried by the loader's own search and then in
// the toolkit's folder at build time; kept open for the process. RuntimeError "<what>
// need(s) <sonames[0]>, which could not be loaded: <why>. <hint>" otherwise.
void* open_library(std::initializer_list<const char*> sonames, const char* what, const char* hint);

// `symbol` of `lib` (opened as `soname`); RuntimeError naming both when it is missing.
void* library_symbol(void* lib, const char* soname, const char* symbol);

template <typename F>
void bind_symbol(void* lib, const char* soname, F& fn, const char* symbol) {
  fn = reinterpret_cast<F>(library_symbol(lib, soname, symbol));
}

}  // namespace lucid::cuda
