// Shared helpers of the binding files. Python passes dtypes as integer codes (the
// Dtype enum) and devices as one integer: -1 for the CPU, k >= 0 for gpu:k.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <vector>

#include "core/tensor_impl.h"
#include "ops/autocast.h"

namespace lucid::bindings {

namespace nb = nanobind;

inline Device device_from_code(int code) { return code < 0 ? Device::cpu() : Device::gpu(code); }
inline int device_code(const Device& d) { return d.is_cpu() ? -1 : d.index; }

// The name of h's type, for error messages ("list", "str", "ndarray").
inline std::string type_name_of(nb::handle h) {
  return nb::str(nb::handle((PyObject*)Py_TYPE(h.ptr())).attr("__name__")).c_str();
}

// Foreign memory imported as bool (frombuffer, the buffer protocol) must hold only
// bytes 0 and 1: the kernels load a bool as C++ bool, and any other byte is undefined
// behaviour there (and no meaningful answer). Raises ValueError naming `who` and the
// first other byte. base is the element at index 0, strides in bytes. (DLPack imports
// are not read: a producer's pointer and extent are trusted until the tensor is used,
// and reading at import would crash on one whose metadata lies.)
void check_bool_bytes(const std::byte* base, const Shape& shape, const Stride& stride, const char* who);

nb::object scalar_to_python(const Scalar& s);

// Sets the Python exception that stands for the engine error `p` (TypeError,
// IndexError, lucid.OutOfMemoryError, ...); rethrows what it does not know. The one
// translation of errors: the module's translator and the operator slots use it.
void set_python_error(const std::exception_ptr& p);
// bool, int, float or complex (or a NumPy scalar of one: numpy_number); TypeError otherwise
Scalar scalar_from_python(nb::handle h);
// A NumPy scalar of a number type (np.float32(2), np.int64(3), np.bool_(True)) as the
// Python number its item() gives, as torch takes them; an invalid object for anything else.
nb::object numpy_number(nb::handle h);

using TensorClass = nb::class_<TensorImpl>;

// lucid.Tensor's Python type, set once by init_tensor. Checking against it is a
// pointer compare, where nb::isinstance<TensorImpl> first looks the type up in
// nanobind's type map: 5% of the instructions of a 1-element `a + a`.
extern PyTypeObject* tensor_type;
inline bool is_tensor(nb::handle h) {
  PyTypeObject* t = Py_TYPE(h.ptr());
  return t == tensor_type || PyType_IsSubtype(t, tensor_type);
}

// Under lucid.autocast, the tensors op `name` computes with (Note [Autocast]): each
// argument is replaced by its cast, if it needs one. One thread-local test otherwise.
template <typename... Ts>
void autocast_args(const char* name, Ts&... tensors) {
  if (!ops::autocast::any_enabled()) return;
  std::vector<TensorPtr> cast = ops::autocast::cast(name, std::vector<TensorPtr>{tensors...});
  size_t i = 0;
  ((tensors = cast[i++]), ...);
}

TensorClass init_tensor(nb::module_& m);  // defines lucid.Tensor; others add methods to it
void init_ops(nb::module_& m, TensorClass& cls);
PyType_Slot* tensor_operator_slots();  // Note [Operator slots] in ops.cpp
PyType_Slot* tensor_gc_slots();        // Note [Hook cycles] in autograd.cpp
void init_elementwise_extra(nb::module_& m, TensorClass& cls);
void init_reduce(nb::module_& m, TensorClass& cls);  // bindings/reduce.cpp
void init_autograd(nb::module_& m, TensorClass& cls);
void init_convert(nb::module_& m);
void init_dlpack(nb::module_& m);
void init_random(nb::module_& m);
void init_gpu(nb::module_& m);
void init_indexing(nb::module_& m, TensorClass& cls);
void init_linalg(nb::module_& m, TensorClass& cls);
void init_fft(nb::module_& m);  // bindings/fft.cpp
void init_sparse(nb::module_& m);  // bindings/sparse.cpp (after init_linalg: overloads mm, matmul)
void init_shape(nb::module_& m);
void init_norm(nb::module_& m);  // bindings/norm.cpp
void init_seq(nb::module_& m);  // bindings/seq.cpp
void init_resample(nb::module_& m);  // bindings/resample.cpp
void init_conv(nb::module_& m);  // bindings/conv.cpp
void init_optim(nb::module_& m);  // bindings/optim.cpp
void init_amp(nb::module_& m);  // bindings/amp.cpp

}  // namespace lucid::bindings
