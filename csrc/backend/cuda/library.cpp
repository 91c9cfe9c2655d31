#include "backend/cuda/library.h"

#include <dlfcn.h>

#include <string>

#include "core/error.h"

namespace lucid::cuda {

// The toolkit's library folder at build time (CMakeLists.txt), tried after the
// loader's own search.
#ifndef LUCID_CUDA_LIBRARY_DIR
#define LUCID_CUDA_LIBRARY_DIR ""
#endif

void* open_library(std::initializer_list<const char*> sonames, const char* what, const char* hint) {
  std::string why = "not found";
  for (const char* soname : sonames) {
    for (const std::string& path : {std::string(soname), std::string(LUCID_CUDA_LIBRARY_DIR) + "/" + soname}) {
      if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
      if (const char* e = dlerror()) why = e;
    }
  }
  fail<RuntimeError>(what, " (", *sonames.begin(), "), which could not be loaded: ", why, ". ", hint);
}

void* library_symbol(void* lib, const char* soname, const char* symbol) {
  void* fn = dlsym(lib, symbol);
  LUCID_CHECK(fn, RuntimeError, soname, " has no ", symbol);
  return fn;
}

}  // namespace lucid::cuda
