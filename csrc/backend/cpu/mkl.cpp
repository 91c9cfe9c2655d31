// Intel MKL opened with dlopen (mkl.h).
#include "backend/cpu/mkl.h"

#include <dlfcn.h>
#include <unistd.h>

#include <mutex>
#include <vector>

#include "ops/fft.h"

namespace lucid::cpu {

namespace {

// MKL_Set_Threading_Layer's values (mkl_service.h).
constexpr int kMklThreadingSequential = 1, kMklThreadingGnu = 3;

std::mutex g_mutex;
void* g_library = nullptr;
std::string g_error = "not loaded yet";
bool g_tried = false;
std::string g_tried_path;  // the Python-given path of the last failed load
int (*g_set_threads_local)(int) = nullptr;

void* open_first(const std::vector<std::string>& names, std::string& why) {
  for (const std::string& name : names) {
    if (name.empty()) continue;
    if (void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    why = dlerror();
  }
  return nullptr;
}

// The folder of the library that holds `symbol`, with its slash ("" when unknown).
std::string folder_of(void* symbol) {
  Dl_info info{};
  if (!dladdr(symbol, &info) || !info.dli_fname) return "";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

void* load() {
  std::string why = "not found";
  void* lib = open_first({"libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so", ops::mkl_library_path()}, why);
  if (!lib) {
    g_error = why;
    return nullptr;
  }
  auto set_layer = reinterpret_cast<int (*)(int)>(dlsym(lib, "MKL_Set_Threading_Layer"));
  g_set_threads_local = reinterpret_cast<int (*)(int)>(dlsym(lib, "MKL_Set_Num_Threads_Local"));
  if (!set_layer || !g_set_threads_local) {
    g_error = "libmkl_rt has no MKL_Set_Threading_Layer (too old an MKL?)";
    return nullptr;
  }
  // MKL's threading layers take libm's and OpenMP's symbols from the global scope. A
  // missing layer library is a fatal error inside MKL (it exits), so the GNU layer is
  // chosen only when libgomp loads here and the layer's library is beside libmkl_rt
  // (MKL opens it from there; it cannot be opened on its own, before MKL's core). Its
  // threads sleep after a short spin, where Intel OpenMP's default spin of 200 ms
  // would take the cores from lucid's pool after every call.
  dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL);
  const std::string dir = folder_of(reinterpret_cast<void*>(set_layer));
  const bool gnu = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL) &&
                   (access((dir + "libmkl_gnu_thread.so.3").c_str(), R_OK) == 0 ||
                    access((dir + "libmkl_gnu_thread.so.2").c_str(), R_OK) == 0);
  set_layer(gnu ? kMklThreadingGnu : kMklThreadingSequential);
  return lib;
}

}  // namespace

void* mkl_library() {
  std::lock_guard<std::mutex> lock(g_mutex);
  // (a failed load is tried again only once Python has given another path: LAPACK asks
  // on every batch piece, and a machine without MKL must not search for it each time)
  if (!g_library && (!g_tried || g_tried_path != ops::mkl_library_path())) {
    g_tried = true;
    g_tried_path = ops::mkl_library_path();
    g_library = load();
  }
  return g_library;
}

std::string mkl_load_error() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_error;
}

void* mkl_symbol(const char* symbol) {
  void* lib = mkl_library();
  return lib ? dlsym(lib, symbol) : nullptr;
}

MklThreads::MklThreads(int threads) {
  if (mkl_library()) g_set_threads_local(threads);
}

MklThreads::~MklThreads() {
  if (g_set_threads_local) g_set_threads_local(0);  // back to MKL's global setting for this thread
}

}  // namespace lucid::cpu
