// The `lucid._C` extension: registers the engine's error types as Python
// exceptions and pulls in each binding area.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <new>
#include <stdexcept>
#include <typeinfo>

#include "backend/cpu/register.h"
#include "bindings/common.h"
#include "core/error.h"
#include "core/isa.h"
#include "core/parallel.h"
#include "ops/primitive.h"
#ifdef LUCID_WITH_CUDA
#include "backend/cuda/register.h"
#endif

namespace nb = nanobind;

namespace lucid::bindings {

namespace {
// lucid.OutOfMemoryError: a RuntimeError, as torch.OutOfMemoryError (made at import,
// leaked: it lives as long as the interpreter).
PyObject* g_out_of_memory = nullptr;
}  // namespace

void set_python_error(const std::exception_ptr& p) {
  try {
    std::rethrow_exception(p);
  } catch (const lucid::OutOfMemoryError& e) {
    PyErr_SetString(g_out_of_memory, e.what());
  } catch (const lucid::TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const lucid::ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const lucid::IndexError& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const lucid::NotImplementedError& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what());
  } catch (const lucid::RuntimeError& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (const std::bad_cast&) {  // nanobind's cast_error: an argument nanobind could not convert
    PyErr_SetString(PyExc_TypeError,
                    "an argument has the wrong type: it cannot be converted to what this lucid operation takes "
                    "(see the function's signature)");
  } catch (const std::bad_alloc&) {  // as lucid's own allocator reports it
    PyErr_SetString(PyExc_RuntimeError, "out of host memory: an allocation the operation needs failed");
  } catch (const std::length_error&) {  // a std::vector asked for more than it can hold
    PyErr_SetString(PyExc_RuntimeError, "out of host memory: a requested size is too large to allocate");
  }
}

}  // namespace lucid::bindings

NB_MODULE(_C, m) {
  lucid::bindings::g_out_of_memory = PyErr_NewExceptionWithDoc(
      "lucid.OutOfMemoryError", "A device allocation failed after lucid released its cached memory.",
      PyExc_RuntimeError, nullptr);
  m.attr("OutOfMemoryError") = nb::borrow(lucid::bindings::g_out_of_memory);
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void*) { lucid::bindings::set_python_error(p); });
  lucid::cpu::register_kernels();
#ifdef LUCID_WITH_CUDA
  lucid::cuda::register_runtime();
  lucid::cuda::register_kernels();
  m.attr("_built_with_cuda") = true;
  m.def("_cudnn_version", &lucid::cuda::cudnn_version);
  m.attr("_cuda_version") = lucid::cuda::cuda_runtime_version();
#else
  m.attr("_built_with_cuda") = false;
  m.def("_cudnn_version", [] { return 0; });
  m.attr("_cuda_version") = 0;
#endif
  // The (primitive, device) pairs of the kernel table, as [("Unary", "cpu"), ...];
  // _primitives lists every primitive (tests check each has its kernels).
  m.def("_kernels", [] { return lucid::ops::registered_kernels(); });
  m.def("_primitives", [] {
    std::vector<std::string> names;
    for (size_t i = 0; i < lucid::ops::kPrimCount; ++i) names.emplace_back(lucid::ops::prim_name(lucid::ops::Prim(i)));
    return names;
  });
  // lucid.backends.cpu.get_cpu_capability(): the kernels' instruction set, in torch's names
  m.def("_cpu_capability", [] {
    switch (lucid::cpu::cpu_isa()) {
      case lucid::cpu::Isa::Avx512: return "AVX512";
      case lucid::cpu::Isa::Avx2: return "AVX2";
      default: return "DEFAULT";
    }
  });
  // Parallel regions (the long kernels) run without the GIL, so the caller's other
  // Python threads run meanwhile; a thread that does not hold it (a pool worker, a
  // region inside an optimizer step that released it) has nothing to release.
  lucid::cpu::set_blocking_hooks({[]() -> void* { return PyGILState_Check() ? PyEval_SaveThread() : nullptr; },
                                  [](void* state) { PyEval_RestoreThread(static_cast<PyThreadState*>(state)); }});
  auto tensor_class = lucid::bindings::init_tensor(m);
  lucid::bindings::init_ops(m, tensor_class);
  lucid::bindings::init_elementwise_extra(m, tensor_class);
  lucid::bindings::init_reduce(m, tensor_class);
  lucid::bindings::init_autograd(m, tensor_class);
  lucid::bindings::init_convert(m);
  lucid::bindings::init_dlpack(m);
  lucid::bindings::init_random(m);
  lucid::bindings::init_gpu(m);
  lucid::bindings::init_indexing(m, tensor_class);
  lucid::bindings::init_linalg(m, tensor_class);
  lucid::bindings::init_fft(m);
  lucid::bindings::init_sparse(m);
  lucid::bindings::init_shape(m);
  lucid::bindings::init_norm(m);
  lucid::bindings::init_seq(m);
  lucid::bindings::init_resample(m);
  lucid::bindings::init_conv(m);
  lucid::bindings::init_optim(m);
  lucid::bindings::init_amp(m);
}
