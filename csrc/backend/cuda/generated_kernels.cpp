#include "backend/cuda/generated_kernels.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/nvrtc.h"

namespace lucid::cuda {

namespace {

CompileMode mode_from_env() {
  const char* v = std::getenv("LUCID_KERNEL_COMPILE");
  if (!v) return CompileMode::Background;
  if (!std::strcmp(v, "sync")) return CompileMode::Sync;
  if (!std::strcmp(v, "off") || !std::strcmp(v, "0")) return CompileMode::Off;
  return CompileMode::Background;
}
std::atomic<CompileMode> g_mode{mode_from_env()};

enum State : int { kNone, kCompiling, kReady, kFailed };

constexpr int kMaxArchs = 4;  // distinct GPU architectures in one process
struct Slot {
  std::atomic<int> arch{0};  // 0: unused
  std::atomic<int> state{kNone};
  std::atomic<const void*> kernel{nullptr};
  std::atomic<uint32_t> loaded_on{0};  // devices the kernel has been loaded for
};

}  // namespace

struct GeneratedKernel {
  std::string source, entry;
  std::vector<std::string> options;
  Slot slots[kMaxArchs];
  std::string error;  // why it failed (under the cache's lock)
};

namespace {

// Leaked on purpose: the background thread may still hold them while the process exits.
//
// Note [The compiler thread at exit]
// A process may exit while the background thread compiles (a short script whose last
// chain was first seen at its end). Left running, that thread would go on into NVRTC,
// the CUDA runtime's teardown and statics already destroyed, and crash the exit (seen
// on the H100: "free(): invalid size", a segfault). stop_compiler_thread stops the
// thread after the job in hand (one kernel: at most a few hundred milliseconds) and
// joins it, and must run before anything the thread uses is torn down:
// - lucid.gpu registers it with Python's atexit, whose handlers run first, while the
//   interpreter still stands. A C handler is too late: NVRTC makes function-local
//   statics as it compiles, in the thread, and their destructors, registered after any
//   handler of ours, run before it. A std::atexit handler registered as the thread
//   started stopped it only after those destructors, and the exit still segfaulted
//   inside nvrtcCompileProgram (H100, 2026-12-06, 3 runs in 4).
// - For other hosts (the C++ tests), a std::atexit handler registered as the thread
//   starts, after the CUDA runtime's (at CUDA's first use), does it at exit().
// The join, not just the stop, matters too: the thread loads what it builds, so it
// holds the CUDA runtime's thread-local state, whose destructors run as it ends.
// Statics the thread reads that might be made after it starts (cache_folder) are
// never destroyed.
struct Cache {
  std::mutex mu;
  std::unordered_map<std::string, std::unique_ptr<GeneratedKernel>> entries;
  struct Job {
    GeneratedKernel* kernel;
    Slot* slot;  // claimed for the device's architecture
    int device;
  };
  std::deque<Job> queue;
  std::condition_variable wake;
  std::thread thread;      // the compiler thread (joinable once started)
  bool stopping = false;   // (exit: finish_at_exit)
  pid_t worker_pid = 0;    // the process the thread runs in (a forked child has none)
  size_t compiled = 0, loaded = 0, failed = 0, compiling = 0;
  std::string last_error;
};
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

// ---- the disk cache ---------------------------------------------------------------

// The folder for CUBINs, made on first use; "" when there is none to write.
const std::string& cache_folder() {
  static const std::string* folder = new std::string([] {  // (never destroyed: Note [The compiler thread at exit])
    std::string root;
    if (const char* d = std::getenv("LUCID_CACHE_DIR")) root = d;
    else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) root = std::string(x) + "/lucid";
    else if (const char* h = std::getenv("HOME"); h && *h) root = std::string(h) + "/.cache/lucid";
    if (root.empty()) return std::string();
    const std::string dir = root + "/kernels";
    for (size_t i = 1; i <= dir.size(); ++i)  // mkdir -p
      if (i == dir.size() || dir[i] == '/') ::mkdir(dir.substr(0, i).c_str(), 0755);
    struct stat st {};
    return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::access(dir.c_str(), W_OK) == 0 ? dir
                                                                                                 : std::string();
  }());
  return *folder;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

constexpr char kMagic[8] = {'L', 'U', 'C', 'I', 'D', 'K', 'C', '1'};

// File: magic, key length, key, CUBIN length, the CUBIN's FNV-1a hash, CUBIN (numbers
// as 8 little-endian bytes). The hash keeps a damaged CUBIN from being loaded and run.
std::string read_cached(const std::string& path, const std::string& key) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  char magic[8];
  uint64_t key_size = 0, cubin_size = 0;
  if (!f.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return {};
  if (!f.read(reinterpret_cast<char*>(&key_size), 8) || key_size != key.size()) return {};
  std::string stored(key_size, '\0');
  if (!f.read(stored.data(), std::streamsize(key_size)) || stored != key) return {};
  if (!f.read(reinterpret_cast<char*>(&cubin_size), 8) || cubin_size == 0 || cubin_size > (uint64_t(1) << 30)) return {};
  uint64_t hash = 0;
  std::string cubin(cubin_size, '\0');
  if (!f.read(reinterpret_cast<char*>(&hash), 8) || !f.read(cubin.data(), std::streamsize(cubin_size))) return {};
  return fnv1a(cubin) == hash ? cubin : std::string();
}

void write_cached(const std::string& path, const std::string& key, const std::string& cubin) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    const uint64_t key_size = key.size(), cubin_size = cubin.size(), hash = fnv1a(cubin);
    f.write(kMagic, 8);
    f.write(reinterpret_cast<const char*>(&key_size), 8);
    f.write(key.data(), std::streamsize(key.size()));
    f.write(reinterpret_cast<const char*>(&cubin_size), 8);
    f.write(reinterpret_cast<const char*>(&hash), 8);
    f.write(cubin.data(), std::streamsize(cubin.size()));
    if (!f.flush()) {
      f.close();
      ::unlink(tmp.c_str());
      return;  // (a full disk: the kernel stays in memory only)
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) ::unlink(tmp.c_str());
}

// ---- compiling and loading ----------------------------------------------------------

const void* load(const std::string& cubin, const std::string& entry) {
  cudaLibrary_t lib = nullptr;  // never unloaded: entries live as long as the process
  LUCID_CUDA_CHECK(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t kernel = nullptr;
  LUCID_CUDA_CHECK(cudaLibraryGetKernel(&kernel, lib, entry.c_str()));
  return reinterpret_cast<const void*>(kernel);
}

// Loads the kernel into `device`'s context now (CUDA loads lazily, at the first launch,
// which may be inside a stream capture).
void load_on(const void* kernel, int device) {
  DeviceGuard guard(device);
  cudaFuncAttributes attributes{};
  LUCID_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
}

// Compiles (or reads from disk) and loads `k` for `device`'s architecture; publishes
// the result in its slot. Never throws.
void build(GeneratedKernel& k, Slot& slot, int device) {
  Cache& c = cache();
  const int arch = slot.arch.load();
  bool from_disk = false;
  try {
    std::string key = "nvrtc " + nvrtc::version() + " sm_" + std::to_string(arch);
    for (const std::string& o : k.options) key += " " + o;
    key += " " + k.entry + "\n" + k.source;
    const std::string& folder = cache_folder();
    char name[32];
    std::snprintf(name, sizeof name, "/%016llx.cubin", static_cast<unsigned long long>(fnv1a(key)));
    const std::string path = folder.empty() ? std::string() : folder + name;
    const void* kernel = nullptr;
    if (!path.empty()) {
      if (std::string cubin = read_cached(path, key); !cubin.empty()) {
        try {
          kernel = load(cubin, k.entry);
          from_disk = true;
        } catch (const std::exception&) {  // a damaged file: compiled again below
        }
      }
    }
    if (!kernel) {
      const std::string cubin = nvrtc::compile(k.source, k.entry.c_str(), arch, k.options);
      kernel = load(cubin, k.entry);
      if (!path.empty()) write_cached(path, key, cubin);
    }
    load_on(kernel, device);
    slot.kernel.store(kernel, std::memory_order_release);
    slot.loaded_on.fetch_or(uint32_t(1) << device);
    slot.state.store(kReady, std::memory_order_release);
    std::lock_guard<std::mutex> lock(c.mu);
    ++(from_disk ? c.loaded : c.compiled);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(c.mu);  // (the message is in place before the state says failed)
    ++c.failed;
    c.last_error = k.error = e.what();
    slot.state.store(kFailed, std::memory_order_release);
  }
}

// The slot of `arch`, or null.
Slot* slot_of(GeneratedKernel& k, int arch) {
  for (Slot& s : k.slots)
    if (s.arch.load(std::memory_order_acquire) == arch) return &s;
  return nullptr;
}

// A free slot claimed for `arch`, marked compiling; null when every slot is taken. The
// caller holds the cache's lock and has found no slot of `arch`.
Slot* claim_slot(GeneratedKernel& k, int arch) {
  for (Slot& s : k.slots)
    if (s.arch.load() == 0) {
      s.state.store(kCompiling);
      s.arch.store(arch, std::memory_order_release);
      return &s;
    }
  return nullptr;
}

// A ready slot's kernel, loaded into `device`'s context first if it is not yet.
const void* ready_kernel(Slot& s, int device) {
  const void* kernel = s.kernel.load(std::memory_order_acquire);
  if (!(s.loaded_on.load(std::memory_order_relaxed) & (uint32_t(1) << device))) {
    load_on(kernel, device);
    s.loaded_on.fetch_or(uint32_t(1) << device);
  }
  return kernel;
}

void worker() {
  Cache& c = cache();
  std::unique_lock<std::mutex> lock(c.mu);
  for (;;) {
    c.wake.wait(lock, [&] { return c.stopping || !c.queue.empty(); });
    if (c.stopping) return;
    const Cache::Job job = c.queue.front();
    c.queue.pop_front();
    lock.unlock();
    build(*job.kernel, *job.slot, job.device);
    lock.lock();
    --c.compiling;
  }
}

void finish_at_exit() { stop_compiler_thread(); }

}  // namespace

void stop_compiler_thread() {
  Cache& c = cache();
  if (::getpid() != c.worker_pid) return;  // (none started, or a forked child: no thread, the lock may be held)
  {
    std::lock_guard<std::mutex> lock(c.mu);
    c.stopping = true;
    c.wake.notify_all();
  }
  if (c.thread.joinable()) c.thread.join();
}

CompileMode compile_mode() { return g_mode.load(std::memory_order_relaxed); }
void set_compile_mode(CompileMode mode) { g_mode.store(mode, std::memory_order_relaxed); }

const std::vector<std::string>& fused_options() {
  static const std::vector<std::string> options{"--fmad=false", "--std=c++17"};
  return options;
}

GeneratedKernel& generated_kernel(const std::string& source, const char* entry,
                                  const std::vector<std::string>& options) {
  Cache& c = cache();
  std::string key = std::string(entry) + '\n' + source;
  for (const std::string& o : options) key += '\n' + o;
  std::lock_guard<std::mutex> lock(c.mu);
  std::unique_ptr<GeneratedKernel>& k = c.entries[key];
  if (!k) {
    k = std::make_unique<GeneratedKernel>();
    k->source = source;
    k->entry = entry;
    k->options = options;
  }
  return *k;
}

const void* compile_now(GeneratedKernel& k, int device) {
  const int arch = compute_capability(device);
  Cache& c = cache();
  for (;;) {
    Slot* slot = nullptr;
    bool mine = false;
    {
      std::lock_guard<std::mutex> lock(c.mu);
      slot = slot_of(k, arch);
      if (!slot) {
        slot = claim_slot(k, arch);
        LUCID_CHECK(slot, RuntimeError, "a generated kernel was asked for more than ", kMaxArchs,
                    " GPU architectures in one process");
        mine = true;
      } else if (slot->state.load() == kFailed) {
        fail<RuntimeError>(k.error);
      }
    }
    if (mine) build(k, *slot, device);
    const int state = slot->state.load(std::memory_order_acquire);
    if (state == kReady) return ready_kernel(*slot, device);
    if (state == kCompiling) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // another thread's
    // (kFailed: raised with its message under the lock, above)
  }
}

const void* kernel_for(GeneratedKernel& k, int device) {
  const int arch = compute_capability(device);
  if (Slot* s = slot_of(k, arch))
    return s->state.load(std::memory_order_acquire) == kReady ? ready_kernel(*s, device) : nullptr;
  const CompileMode mode = compile_mode();
  if (mode == CompileMode::Off) return nullptr;
  // First sight on this architecture: claim a slot, then compile it.
  Cache& c = cache();
  Slot* slot = nullptr;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (slot_of(k, arch)) return nullptr;  // another thread claimed it meanwhile
    if (mode == CompileMode::Background && c.stopping) return nullptr;  // (exiting: interpreted)
    slot = claim_slot(k, arch);
    if (!slot) return nullptr;  // (more architectures than slots: interpreted there)
    if (mode == CompileMode::Background) {
      ++c.compiling;
      c.queue.push_back({&k, slot, device});
      if (!c.thread.joinable()) {
        c.worker_pid = ::getpid();
        std::atexit(finish_at_exit);  // (before the thread exists: it never outlives the handler)
        c.thread = std::thread(worker);
      }
      c.wake.notify_one();
      return nullptr;
    }
  }
  build(k, *slot, device);
  return slot->state.load(std::memory_order_acquire) == kReady ? ready_kernel(*slot, device) : nullptr;
}

GeneratedStats generated_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return {c.compiled, c.loaded, c.failed, c.compiling, c.last_error};
}

}  // namespace lucid::cuda
