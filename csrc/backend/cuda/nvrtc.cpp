#include "backend/cuda/nvrtc.h"

#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include <climits>
#include <sys/stat.h>

#include "backend/cuda/library.h"
#include "core/error.h"

namespace lucid::cuda::nvrtc {

namespace {

constexpr const char* kSoname = "libnvrtc.so.13";

struct Api {
  decltype(&::nvrtcVersion) version;
  decltype(&::nvrtcGetErrorString) error_string;
  decltype(&::nvrtcCreateProgram) create;
  decltype(&::nvrtcDestroyProgram) destroy;
  decltype(&::nvrtcCompileProgram) compile;
  decltype(&::nvrtcGetProgramLogSize) log_size;
  decltype(&::nvrtcGetProgramLog) log;
  decltype(&::nvrtcGetCUBINSize) cubin_size;
  decltype(&::nvrtcGetCUBIN) cubin;
};

const Api& api() {
  static const Api a = [] {
    void* lib = open_library({kSoname, "libnvrtc.so"}, "Generated GPU kernels need NVRTC",
                             "Install the CUDA toolkit's NVRTC or add its folder to LD_LIBRARY_PATH.");
    Api r{};
    bind_symbol(lib, kSoname, r.version, "nvrtcVersion");
    bind_symbol(lib, kSoname, r.error_string, "nvrtcGetErrorString");
    bind_symbol(lib, kSoname, r.create, "nvrtcCreateProgram");
    bind_symbol(lib, kSoname, r.destroy, "nvrtcDestroyProgram");
    bind_symbol(lib, kSoname, r.compile, "nvrtcCompileProgram");
    bind_symbol(lib, kSoname, r.log_size, "nvrtcGetProgramLogSize");
    bind_symbol(lib, kSoname, r.log, "nvrtcGetProgramLog");
    bind_symbol(lib, kSoname, r.cubin_size, "nvrtcGetCUBINSize");
    bind_symbol(lib, kSoname, r.cubin, "nvrtcGetCUBIN");
    return r;
  }();
  return a;
}

void check(nvrtcResult r, const char* call) {
  LUCID_CHECK(r == NVRTC_SUCCESS, RuntimeError, "NVRTC error: ", api().error_string(r), " in ", call);
}

// Destroys the program however compile() leaves.
struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) api().destroy(&p);
  }
};

}  // namespace

std::string compile(const std::string& source, const char* program_name, int arch,
                    const std::vector<std::string>& options) {
  const Api& a = api();
  Program prog;
  check(a.create(&prog.p, source.c_str(), program_name, 0, nullptr, nullptr), "nvrtcCreateProgram");
  const std::string target = "--gpu-architecture=sm_" + std::to_string(arch);
  std::vector<const char*> opts{target.c_str()};
  for (const std::string& o : options) opts.push_back(o.c_str());
  const nvrtcResult compiled = a.compile(prog.p, int(opts.size()), opts.data());
  if (compiled != NVRTC_SUCCESS) {
    size_t size = 0;
    std::string log;
    if (a.log_size(prog.p, &size) == NVRTC_SUCCESS && size > 1) {
      log.resize(size);
      if (a.log(prog.p, log.data()) != NVRTC_SUCCESS) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    fail<RuntimeError>("NVRTC could not compile ", program_name, " for sm_", arch, " (", a.error_string(compiled),
                       ")", log.empty() ? "" : ":\n", log);
  }
  size_t size = 0;
  check(a.cubin_size(prog.p, &size), "nvrtcGetCUBINSize");
  std::string cubin(size, '\0');
  check(a.cubin(prog.p, cubin.data()), "nvrtcGetCUBIN");
  return cubin;
}

#ifndef LUCID_CUDA_INCLUDE_DIR
#define LUCID_CUDA_INCLUDE_DIR ""
#endif

std::vector<std::string> toolkit_include_dirs() {
  std::vector<std::string> dirs;
  auto add = [&](const std::string& path) {
    struct stat st {};
    char real[PATH_MAX];
    if (path.empty() || ::stat((path + "/cuda_runtime.h").c_str(), &st) != 0 || !::realpath(path.c_str(), real))
      return;
    const std::string d = real;  // (the same folder under several names once)
    if (std::find(dirs.begin(), dirs.end(), d) != dirs.end()) return;
    dirs.push_back(d);
    // CUDA 13 keeps libcu++ (cuda/std/..., which cooperative_groups.h includes) in cccl/
    if (::stat((d + "/cccl/cuda/std/type_traits").c_str(), &st) == 0) dirs.push_back(d + "/cccl");
  };
  add(LUCID_CUDA_INCLUDE_DIR);
  if (const char* home = std::getenv("CUDA_HOME")) add(std::string(home) + "/include");
  add("/usr/local/cuda/include");
  return dirs;
}

std::string version() {
  int major = 0, minor = 0;
  check(api().version(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace lucid::cuda::nvrtc
