// lucid.gpu (alias lucid.cuda): device queries and allocator statistics.
#include <memory>

#include <nanobind/stl/array.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "bindings/common.h"
#include "core/gpu_runtime.h"
#include "core/pending.h"
#include "ops/fusion.h"
#include "ops/op_tally.h"
#include "ops/prims/custom_kernel.h"
#ifdef LUCID_WITH_CUDA
#include "backend/cuda/fused_codegen.h"
#include "backend/cuda/fused_rows.h"
#include "backend/cuda/generated_kernels.h"
#include "backend/cuda/nvrtc.h"
#endif

namespace lucid::bindings {

namespace {

// lucid.gpu.pending_stats() and the CPU's (core/pending.h).
nb::dict pending_stats_dict(const pending::Stats& s) {
  nb::dict d;
  d["ops"] = s.ops;
  d["bytes"] = s.bytes;
  d["flushes"] = s.flushes;
  d["graph_runs"] = s.graph_runs;
  d["graph_abandoned"] = s.graph_abandoned;
  d["fused_calls"] = s.fused_calls;
  d["region_breaks"] = s.region_breaks;
  d["replays"] = s.replays;
  d["fixed_replays"] = s.fixed_replays;
  return d;
}

// Called with the device at a compiled region's break; never destroyed (a static
// object's destructor would run after the interpreter is gone).
nb::object& break_callback() {
  static nb::object* callback = new nb::object();
  return *callback;
}

void call_break_callback(int device) {
  nb::gil_scoped_acquire gil;
  if (!break_callback().is_valid()) return;
  try {
    break_callback()(device);
  } catch (nb::python_error& e) {
    e.discard_as_unraisable("lucid.compile.diagnose's break observer");
  }
}

}  // namespace

void init_gpu(nb::module_& m) {
  m.def("gpu_device_count", [] {
    GpuRuntime* rt = gpu_runtime_or_null();
    return rt ? rt->device_count() : 0;
  });
  m.def("gpu_synchronize", [](int device) {
    nb::gil_scoped_release release;
    gpu_runtime(device).synchronize(device);
  });
  m.def("gpu_stream_handle", [](int device) { return gpu_runtime(device).stream_handle(device); });
  m.def("gpu_memory_stats", [](int device) {
    MemoryStats s = gpu_runtime(device).memory_stats(device);
    nb::dict d;
    d["allocated"] = s.allocated;
    d["max_allocated"] = s.max_allocated;
    d["reserved"] = s.reserved;
    d["max_reserved"] = s.max_reserved;
    return d;
  });
  m.def("gpu_device_properties", [](int device) {
    DeviceProperties p = gpu_runtime(device).properties(device);
    nb::dict d;
    d["name"] = p.name;
    d["uuid"] = p.uuid;
    d["major"] = p.major;
    d["minor"] = p.minor;
    d["total_memory"] = p.total_memory;
    d["multi_processor_count"] = p.multi_processor_count;
    d["max_threads_per_multi_processor"] = p.max_threads_per_multi_processor;
    d["warp_size"] = p.warp_size;
    d["regs_per_multiprocessor"] = p.regs_per_multiprocessor;
    d["L2_cache_size"] = p.l2_cache_size;
    d["is_integrated"] = p.is_integrated;
    d["is_multi_gpu_board"] = p.is_multi_gpu_board;
    return d;
  });
  m.def("gpu_memory_info", [](int device) { return gpu_runtime(device).memory_info(device); });
  m.def("gpu_set_memory_fraction", [](double fraction, int device) {
    gpu_runtime(device).set_memory_fraction(fraction, device);
  });
  m.def("gpu_memory_fraction", [](int device) { return gpu_runtime(device).memory_fraction(device); });
  m.def("gpu_arch_list", [] {
    GpuRuntime* rt = gpu_runtime_or_null();
    return rt ? rt->arch_list() : std::vector<std::string>{};
  });
  m.def("gpu_nvtx_range_push", [](const std::string& msg) { return gpu_runtime().nvtx_range_push(msg); });
  m.def("gpu_nvtx_range_pop", [] { return gpu_runtime().nvtx_range_pop(); });
  m.def("gpu_nvtx_range_start", [](const std::string& msg) { return gpu_runtime().nvtx_range_start(msg); });
  m.def("gpu_nvtx_range_end", [](uint64_t id) { gpu_runtime().nvtx_range_end(id); });
  m.def("gpu_nvtx_mark", [](const std::string& msg) { gpu_runtime().nvtx_mark(msg); });
  // Note [Lazy GPU execution] (core/pending.h).
  m.def("gpu_lazy", [] { return pending::lazy_enabled(); });
  m.def("gpu_set_lazy", [](bool enabled) {
    nb::gil_scoped_release release;
    pending::set_lazy(enabled);
  });
  m.def("gpu_flush", [](int device) {  // runs the recorded work; no wait (-1: every device)
    nb::gil_scoped_release release;
    if (device < 0) pending::flush_all();
    else pending::flush(device);
  });
  // The end of optimizer.step() (python/lucid/optim/optimizer.py): a flush outside a
  // compiled call's region.
  m.def("gpu_boundary_flush", [] {
    nb::gil_scoped_release release;
    pending::flush_at_boundary();
  });
  // A compiled call's region (python/lucid/compile): its end flushes every device.
  m.def("gpu_enter_region", [] { pending::enter_region(); });
  m.def("gpu_exit_region", [] {
    nb::gil_scoped_release release;
    pending::exit_region();
  });
  // Note [Replayed steps] (core/pending.h): a region's end that reports its signature
  // and breaks, and keeps its list as a capture when `capture` and it can.
  nb::class_<pending::Capture>(m, "_Capture")
      .def("replay", [](pending::Capture& c) {
        nb::gil_scoped_release release;
        pending::replay(c);
      })
      .def_prop_ro("calls", [](const pending::Capture& c) { return c.ops.size(); });
  m.def("gpu_exit_region_reporting", [](bool capture) {
    pending::RegionEnd end;
    {
      nb::gil_scoped_release release;
      end = pending::exit_region_reporting(capture);
    }
    nb::object kept = end.capture ? nb::cast(std::move(end.capture)) : nb::none();
    return nb::make_tuple(end.signature, end.breaks, kept);
  });
  // lucid.compile.diagnose: the ops this thread launches between the two calls, as
  // (name, shape, dtype name, "cpu"/"gpu", recorded) tuples.
  m.def("_op_tally_begin", [] {
    LUCID_CHECK(!ops::op_tally(), RuntimeError, "an op tally (lucid.compile.diagnose, lucid.onnx.export) is "
                "already running on this thread");
    ops::set_op_tally(new ops::OpTally);
  });
  m.def("_op_tally_end", [] {
    std::unique_ptr<ops::OpTally> tally(ops::op_tally());
    LUCID_CHECK(tally, RuntimeError, "internal: no op tally is running");
    ops::set_op_tally(nullptr);
    nb::list out;
    for (const ops::OpTally::Op& op : tally->ops)
      out.append(nb::make_tuple(op.name, nb::cast(op.shape), std::string(dtype_name(op.dtype)),
                                op.device == DeviceType::GPU ? "gpu" : "cpu", op.recorded));
    return out;
  });
  m.def("_op_tally_count", [] {  // (lucid.onnx's trace)
    const ops::OpTally* tally = ops::op_tally();
    return tally ? tally->ops.size() : size_t(0);
  });
  m.def("_grad_sinks", [] { return ops::grad_sinks(); });
  m.def("_set_region_break_callback", [](nb::object callback) {
    if (callback.is_none()) {
      pending::set_break_observer(nullptr);
      break_callback() = nb::object();
    } else {
      break_callback() = std::move(callback);
      pending::set_break_observer(call_break_callback);
    }
  }, nb::arg("callback").none());
  m.def("gpu_pending_stats", [](int device) {
    LUCID_CHECK(device >= 0 && device < pending::kMaxDevices, RuntimeError, "invalid GPU index ", device);
    return pending_stats_dict(pending::stats(device));
  });
  // The CPU's list (Note [Compiled CPU chains], ops/fusion.h): ops, bytes, flushes, fused_calls.
  m.def("cpu_pending_stats", [] { return pending_stats_dict(pending::stats(pending::kCpu)); });
  // Note [Flush graphs] (backend/cuda/flush_graphs.h).
  m.def("gpu_graph_replay", [] { return pending::graphs_enabled(); });
  m.def("gpu_set_graph_replay", [](bool enabled) { pending::set_graphs_enabled(enabled); });
  // Note [Elementwise fusion] (ops/fusion.h).
  m.def("gpu_fusion", [] { return pending::fusion_enabled(); });
  m.def("gpu_set_fusion", [](bool enabled) { pending::set_fusion_enabled(enabled); });
  m.def("gpu_norm_fusion", [] { return ops::norm_fusion_enabled(); });
  m.def("gpu_set_norm_fusion", [](bool enabled) { ops::set_norm_fusion_enabled(enabled); });
  // Note [Generated kernels] (backend/cuda/generated_kernels.h); a build without CUDA
  // has none to compile.
  m.def("gpu_kernel_compile", [] {
#ifdef LUCID_WITH_CUDA
    switch (cuda::compile_mode()) {
      case cuda::CompileMode::Background: return "background";
      case cuda::CompileMode::Sync: return "sync";
      case cuda::CompileMode::Off: break;
    }
#endif
    return "off";
  });
  m.def("gpu_stop_compiler", [] {
#ifdef LUCID_WITH_CUDA
    nb::gil_scoped_release unlocked;  // (the thread never takes the GIL; other Python threads may want it)
    cuda::stop_compiler_thread();
#endif
  });
  m.def("gpu_set_kernel_compile", [](const std::string& mode) {
    LUCID_CHECK(mode == "background" || mode == "sync" || mode == "off", ValueError,
                "set_kernel_compile: mode must be 'background', 'sync' or 'off', got '", mode, "'");
#ifdef LUCID_WITH_CUDA
    cuda::set_compile_mode(mode == "background" ? cuda::CompileMode::Background
                           : mode == "sync"     ? cuda::CompileMode::Sync
                                                : cuda::CompileMode::Off);
#endif
  });
  m.def("gpu_generated_kernel_stats", [] {
    nb::dict d;
#ifdef LUCID_WITH_CUDA
    const cuda::GeneratedStats s = cuda::generated_stats();
    d["compiled"] = s.compiled;
    d["loaded"] = s.loaded;
    d["failed"] = s.failed;
    d["compiling"] = s.compiling;
    d["last_error"] = s.last_error;
    d["fused_launches"] = cuda::generated_fused_launches();
    d["fused_norm_launches"] = cuda::fused_rows_launches();
    d["fused_norm_backward_launches"] = cuda::fused_rows_backward_launches();
    d["fused_softmax_launches"] = cuda::fused_softmax_launches();
    d["fused_reduce_launches"] = cuda::fused_reduce_launches();
#else
    for (const char* k : {"compiled", "loaded", "failed", "compiling", "fused_launches", "fused_norm_launches",
                          "fused_norm_backward_launches", "fused_softmax_launches", "fused_reduce_launches"})
      d[k] = 0;
    d["last_error"] = "";
#endif
    return d;
  });
  // lucid.fast.cuda_kernel (python/lucid/fast.py writes the source): the compiled
  // kernel for a device (compiled now; the compiler's message in a RuntimeError), then
  // its launches, recorded like any op.
  m.def("gpu_compile_kernel", [](const std::string& source, const std::string& entry,
                                 const std::vector<std::string>& options, int device) -> uintptr_t {
#ifdef LUCID_WITH_CUDA
    gpu_runtime(device);  // (checks the device)
    nb::gil_scoped_release release;
    return reinterpret_cast<uintptr_t>(cuda::compile_now(cuda::generated_kernel(source, entry.c_str(), options), device));
#else
    (void)source, (void)entry, (void)options, (void)device;
    fail<RuntimeError>("fast.cuda_kernel needs lucid built with CUDA");
#endif
  });
  m.def("gpu_custom_kernel", [](uintptr_t kernel, const std::vector<TensorPtr>& outputs,
                                const std::vector<TensorPtr>& inputs, const std::vector<std::pair<int, int>>& params,
                                std::array<unsigned, 3> grid, std::array<unsigned, 3> block, unsigned shared_memory) {
    ops::CustomKernel prim;
    prim.kernel = reinterpret_cast<const void*>(kernel);
    for (int d = 0; d < 3; ++d) prim.grid[d] = grid[d], prim.block[d] = block[d];
    prim.shared_memory = shared_memory;
    for (auto [kind, tensor] : params)
      prim.params.push_back({ops::CustomKernelParam::Kind(kind), uint8_t(tensor)});
    std::vector<TensorImpl*> outs;
    std::vector<const TensorImpl*> ins;
    for (const TensorPtr& t : outputs) outs.push_back(t.get());
    for (const TensorPtr& t : inputs) ins.push_back(t.get());
    ops::launch(prim, ops::Outputs(outs.data(), outs.size()), ops::Inputs(ins.data(), ins.size()));
  });
  // NVRTC without a GPU: a source's CUBIN for `arch` (tests of generated sources on CI).
  m.def("nvrtc_compile", [](const std::string& source, const std::string& name, int arch,
                            const std::vector<std::string>& options) {
#ifdef LUCID_WITH_CUDA
    std::string cubin;
    {
      nb::gil_scoped_release release;
      cubin = cuda::nvrtc::compile(source, name.c_str(), arch, options);
    }
    return nb::bytes(cubin.data(), cubin.size());
#else
    (void)source, (void)name, (void)arch, (void)options;
    fail<RuntimeError>("NVRTC needs lucid built with CUDA");
#endif
  });
  m.def("nvrtc_include_dirs", [] {
#ifdef LUCID_WITH_CUDA
    return cuda::nvrtc::toolkit_include_dirs();
#else
    return std::vector<std::string>{};
#endif
  });
  // lucid.gpu.Event's handle operations (python/lucid/gpu.py).
  m.def("gpu_event_create", [](int device, bool timing) { return gpu_runtime(device).event_create(device, timing); });
  m.def("gpu_event_destroy", [](uintptr_t e, int device) {
    if (GpuRuntime* rt = gpu_runtime_or_null()) rt->event_destroy(e, device);
  });
  m.def("gpu_event_record", [](uintptr_t e, int device) { gpu_runtime(device).event_record(e, device); });
  m.def("gpu_event_wait", [](uintptr_t e, int device) { gpu_runtime(device).event_wait(e, device); });
  m.def("gpu_event_query", [](uintptr_t e, int device) { return gpu_runtime(device).event_query(e, device); });
  m.def("gpu_event_synchronize", [](uintptr_t e, int device) {
    nb::gil_scoped_release release;
    gpu_runtime(device).event_synchronize(e, device);
  });
  m.def("gpu_event_elapsed_ms", [](uintptr_t start, uintptr_t end, int device) {
    return gpu_runtime(device).event_elapsed_ms(start, end, device);
  });
  m.def("gpu_reset_peak_memory_stats", [](int device) { gpu_runtime(device).reset_peak_memory_stats(device); });
  m.def("gpu_empty_cache", [] {
    if (GpuRuntime* rt = gpu_runtime_or_null()) rt->empty_cache();
  });
}

}  // namespace lucid::bindings
