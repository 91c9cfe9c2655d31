// TensorImpl as `_C.TensorImpl`: metadata, views, copies and reading out. The
// Python class lucid.Tensor (python/lucid/_tensor.py) wraps one of these.
#include <cstring>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/common.h"
#include "core/format.h"
#include "ops/copy_ops.h"
#include "ops/creation.h"
#include "ops/linalg.h"
#include "ops/views.h"

namespace lucid::bindings {

namespace {

nb::tuple to_tuple(const std::vector<int64_t>& v) {
  nb::list l;
  for (int64_t x : v) l.append(x);
  return nb::tuple(l);
}

std::vector<int64_t> element_strides(const TensorImpl& t) {
  std::vector<int64_t> s = t.stride();
  for (int64_t& x : s) x /= int64_t(t.itemsize());
  return s;
}

const char* storage_kind(const TensorImpl& t) {
  return t.is_cpu_storage() ? "cpu" : t.is_gpu_storage() ? "gpu" : "shared";
}

}  // namespace

nb::object scalar_to_python(const Scalar& s) {
  return std::visit(
      [](auto v) -> nb::object {
        using V = decltype(v);
        if constexpr (std::is_same_v<V, bool>) return nb::bool_(v);
        else if constexpr (std::is_same_v<V, int64_t>) return nb::int_(v);
        else if constexpr (std::is_same_v<V, double>) return nb::float_(v);
        else return nb::steal(PyComplex_FromDoubles(v.real(), v.imag()));
      },
      s);
}

nb::object numpy_number(nb::handle h) {
  PyTypeObject* type = Py_TYPE(h.ptr());
  if (std::strncmp(type->tp_name, "numpy.", 6) != 0 || !type->tp_mro) return {};
  bool scalar = false;  // (numpy.generic: the scalars' base class, whose item() takes no index)
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(type->tp_mro) && !scalar; ++i)
    scalar = std::strcmp(reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(type->tp_mro, i))->tp_name,
                         "numpy.generic") == 0;
  if (!scalar) return {};
  nb::object v = h.attr("item")();
  PyObject* o = v.ptr();
  return PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o) ? v : nb::object();
}

Scalar scalar_from_python(nb::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    LUCID_CHECK(!overflow, ValueError, "Overflow when unpacking long long: ", nb::str(h).c_str(),
                " does not fit in int64");
    return Scalar(int64_t(v));
  }
  if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
  if (PyComplex_Check(o)) return Scalar(std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
  if (nb::object v = numpy_number(h); v.is_valid()) return scalar_from_python(v);
  fail<TypeError>("expected a number (bool, int, float or complex), but got ",
                  type_name_of(h));
}

PyTypeObject* tensor_type = nullptr;

TensorClass init_tensor(nb::module_& m) {
  using T = TensorImpl;
  // The Python class lucid.Tensor itself: the methods below are the engine's, and
  // python/lucid/_tensor.py adds the PyTorch-facing API onto the same class.
  static std::vector<PyType_Slot> slots = [] {
    std::vector<PyType_Slot> all;
    for (PyType_Slot* list : {tensor_operator_slots(), tensor_gc_slots()})
      for (PyType_Slot* s = list; s->slot; ++s) all.push_back(*s);
    all.push_back({0, nullptr});
    return all;
  }();
  TensorClass cls(m, "Tensor", nb::is_weak_referenceable(), nb::type_slots(slots.data()));
  tensor_type = (PyTypeObject*)cls.ptr();
  // lucid.Tensor(...), torch's legacy constructor: nanobind intercepts calls of the
  // class before any Python __new__, so it is bound here and forwards to Python
  // (Note [Legacy constructor] in python/lucid/_legacy.py).
  cls.def(nb::new_([](nb::args args, nb::kwargs kwargs) {
    return nb::module_::import_("lucid._legacy").attr("tensor_new")(*args, **kwargs);
  }));
  cls
      // metadata
      .def_prop_ro("_shape", [](const T& t) { return to_tuple(t.shape()); })
      .def_prop_ro("_strides", [](const T& t) { return to_tuple(element_strides(t)); })
      .def_prop_ro("_byte_strides", [](const T& t) { return to_tuple(t.stride()); })
      .def_prop_ro("_storage_offset", [](const T& t) { return t.storage_offset() / int64_t(t.itemsize()); })
      .def_prop_ro("_dtype", [](const T& t) { return int(t.dtype()); })
      .def_prop_ro("_device", [](const T& t) { return device_code(t.device()); })
      .def_prop_ro("ndim", &T::ndim)
      .def_prop_ro("_numel", &T::numel)
      .def_prop_ro("itemsize", &T::itemsize)
      .def_prop_ro("nbytes", &T::nbytes)
      .def_prop_ro("_version", &T::version)
      .def_prop_ro("_storage_kind", &storage_kind)
      .def_prop_ro("_storage_nbytes", [](const T& t) { return storage_base(t.storage()).nbytes; })
      // The storage's identity, read without flushing a lazy GPU: what a replayed step
      // checks its tensors by (Note [Replayed steps], core/pending.h).
      .def_prop_ro("_storage_key",
                   [](const T& t) { return reinterpret_cast<uintptr_t>(storage_base(t.storage()).version.get()); })
      .def_prop_ro("_storage_is_shared", &T::storage_is_shared)
      .def_prop_ro("_data_ptr", [](const T& t) {
        t.mark_reached_outside();  // (the address may be written through: ctypes, a C extension)
        return uintptr_t(t.data_ptr());
      })
      .def_prop_ro("_storage_data_ptr", [](const T& t) { return uintptr_t(storage_base(t.storage()).ptr()); })
      .def("_is_contiguous", &T::is_contiguous)
      .def_prop_ro("_base", [](const T& t) { return t.base(); })  // (None for a tensor that is no view)
      .def("_is_view", [](const T& t) { return bool(t.base()); })
      .def("_bump_version", &T::bump_version)
      // autograd flags (the engine itself arrives with the autograd issue)
      .def_prop_rw("_requires_grad", &T::requires_grad, &T::set_requires_grad)
      .def_prop_ro("is_leaf", &T::is_leaf)
      .def_prop_rw("_is_param", [](T& t) { return t.has_autograd_meta() && t.autograd_meta()->is_param; },
                   [](T& t, bool v) { t.autograd_meta()->is_param = v; })
      .def_prop_rw("retains_grad", &T::retains_grad, &T::set_retains_grad)
      .def_prop_ro("_has_autograd_meta", &T::has_autograd_meta)
      .def_prop_ro("_grad", &T::grad_to_tensor)
      // Tensor.grad = g: the gradient must match the tensor's shape, dtype and device.
      // It is kept as plain storage in the tensor's contiguous layout, shared with g
      // when g already has that layout.
      .def("_set_grad", [](T& t, std::shared_ptr<T> g) {
        if (!g) return t.zero_grad();
        LUCID_CHECK(g->shape() == t.shape(), RuntimeError, "assigned grad has data of a different size: ",
                    shape_str(g->shape()), " vs the tensor's ", shape_str(t.shape()));
        LUCID_CHECK(g->dtype() == t.dtype(), RuntimeError, "assigned grad has data of a different type: ",
                    dtype_name(g->dtype()), " vs the tensor's ", dtype_name(t.dtype()));
        LUCID_CHECK(g->device() == t.device(), RuntimeError, "assigned grad has data located on a different "
                    "device: ", g->device().str(), " vs the tensor's ", t.device().str());
        if (!(g->is_contiguous() && g->storage_offset() == 0)) g = g->clone();
        t.set_grad_impl(nullptr);
        t.set_grad_storage(g->storage());
      }, nb::arg("grad").none())
      // views
      .def("_view", [](std::shared_ptr<T> t, std::vector<int64_t> s) { return ops::view(t, s); })
      .def("_view_as_real", [](std::shared_ptr<T> t) { return ops::view_as_real(t); })
      .def("_view_as_complex", [](std::shared_ptr<T> t) { return ops::view_as_complex(t); })
      .def("_view_dtype", [](std::shared_ptr<T> t, int dtype) { return ops::view_dtype(t, dtype_from_code(dtype)); })
      .def("_conj", [](std::shared_ptr<T> t) { return ops::conj(t); })
      .def("_reshape", [](std::shared_ptr<T> t, std::vector<int64_t> s) { return ops::reshape(t, s); })
      .def("_permute", [](std::shared_ptr<T> t, std::vector<int64_t> d) { return ops::permute(t, d); })
      .def("_transpose", [](std::shared_ptr<T> t, int64_t a, int64_t b) { return ops::transpose(t, a, b); })
      .def("_expand", [](std::shared_ptr<T> t, std::vector<int64_t> s) { return ops::expand(t, s); })
      .def("_squeeze", [](std::shared_ptr<T> t, std::vector<int64_t> d) { return ops::squeeze(t, d); })
      .def("_unsqueeze", [](std::shared_ptr<T> t, int64_t d) { return ops::unsqueeze(t, d); })
      .def("_flatten", [](std::shared_ptr<T> t, int64_t a, int64_t b) { return ops::flatten(t, a, b); })
      .def("_unflatten", [](std::shared_ptr<T> t, int64_t d, std::vector<int64_t> s) { return ops::unflatten(t, d, s); })
      .def("_slice", [](std::shared_ptr<T> t, int64_t d, std::optional<int64_t> b, std::optional<int64_t> e,
                       int64_t step) { return ops::slice(t, d, b, e, step); })
      .def("_narrow", [](std::shared_ptr<T> t, int64_t d, int64_t s, int64_t n) { return ops::narrow(t, d, s, n); })
      .def("_select", [](std::shared_ptr<T> t, int64_t d, int64_t i) { return ops::select(t, d, i); })
      .def("_as_strided", [](std::shared_ptr<T> t, std::vector<int64_t> size, std::vector<int64_t> stride,
                            std::optional<int64_t> off) { return ops::as_strided(t, size, stride, off); })
      .def("_contiguous", [](std::shared_ptr<T> t) { return ops::contiguous(t); })
      // Tensor.data = other. The gradient is kept as plain storage read with the tensor's
      // metadata (grad_to_tensor), so it follows a new dtype or device (converted, as
      // torch's Module._apply converts it) and is dropped for a new shape: it is never
      // read with metadata it was not written with.
      .def("_set_data", [](T& t, const T& other) {
        const bool plain_grad = t.has_autograd_meta() && t.autograd_meta()->grad && !t.autograd_meta()->grad_impl;
        const TensorPtr grad = plain_grad ? t.grad_to_tensor() : nullptr;
        t.set_data(other);
        if (!grad || (grad->dtype() == t.dtype() && grad->device() == t.device() && grad->shape() == t.shape()))
          return;
        if (grad->shape() != t.shape()) return t.zero_grad();
        t.set_grad_storage(ops::copy_to(grad, t.dtype(), t.device())->storage());
      })
      .def("_become_view", [](std::shared_ptr<T> t, std::shared_ptr<T> view) { ops::become_view(t, view); })
      // copies
      // Python's clone()/to() keep the memory order (preserve_format); the engine's
      // default is contiguous.
      .def("_clone", [](const std::shared_ptr<T>& t, std::optional<int> dtype, std::optional<int> device,
                        bool preserve) {
             std::optional<Device> dev;
             if (device) dev = device_from_code(*device);
             std::optional<Dtype> dt;
             if (dtype) dt = dtype_from_code(*dtype);
             if (!preserve) return t->clone(dt, dev, false);  // internal staging: no history
             return dt || dev ? ops::copy_to(t, dt, dev) : ops::clone(t);
           }, nb::arg("dtype").none() = nb::none(), nb::arg("device").none() = nb::none(),
           nb::arg("preserve") = true)
      .def("_copy", [](const std::shared_ptr<T>& t, const std::shared_ptr<T>& src) { ops::copy_(t, src); })
      .def("_fill", [](const std::shared_ptr<T>& t, nb::handle v) { ops::fill_(t, scalar_from_python(v)); })
      .def("_to_device", [](std::shared_ptr<T> t, int code) { return t->transfer_to_device(device_from_code(code)); })
      .def("_eval", &T::eval)
      // reading out
      .def("to_bytes", [](const T& t) {
        std::vector<std::byte> b = t.to_bytes();
        return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size());
      })
      .def("_item", [](const T& t) { return scalar_to_python(t.item()); })
      .def("_to_string", [](const T& t, int64_t indent) { return format_tensor_data(t, indent); },
           nb::arg("indent") = 7);

  m.def("set_print_options", &set_print_options);
  m.def("get_print_options", [] {
    PrintOptions o = get_print_options();
    nb::dict d;
    d["precision"] = o.precision;
    d["threshold"] = o.threshold;
    d["edgeitems"] = o.edgeitems;
    d["linewidth"] = o.linewidth;
    d["sci_mode"] = o.sci_mode;
    return d;
  });

  m.def("empty", [](std::vector<int64_t> shape, int dtype, int device, bool pinned) {
    return T::empty(shape, dtype_from_code(dtype), device_from_code(device), pinned);
  });
  m.def("full", [](std::vector<int64_t> shape, nb::handle value, int dtype, int device, bool pinned) {
    return T::full(shape, scalar_from_python(value), dtype_from_code(dtype), device_from_code(device), pinned);
  });
  // Fills a tensor that was just created (version 0 stays 0): the *_like functions.
  m.def("full_like", [](std::shared_ptr<T> fresh, nb::handle value) {
    fresh->initialize(scalar_from_python(value));
    return fresh;
  });
  // torch.empty_like's preserve_format: the memory order of `t`, dense.
  m.def("empty_like", [](const T& t, int dtype, int device) {
    Dtype d = dtype_from_code(dtype);
    return T::empty_strided(t.shape(), dense_strides_like(t.shape(), t.stride(), int64_t(dtype_size(d))), d,
                            device_from_code(device));
  });
  m.def("arange", [](double start, double end, double step, int dtype, int device) {
    return ops::arange(start, end, step, dtype_from_code(dtype), device_from_code(device));
  });
  m.def("arange_int", [](int64_t start, int64_t end, int64_t step, int dtype, int device) {
    return ops::arange_int(start, end, step, dtype_from_code(dtype), device_from_code(device));
  });
  m.def("linspace", [](double start, double end, int64_t steps, int dtype, int device) {
    return ops::linspace(start, end, steps, dtype_from_code(dtype), device_from_code(device));
  });
  m.def("logspace", [](double start, double end, int64_t steps, double base, int dtype, int device) {
    return ops::logspace(start, end, steps, base, dtype_from_code(dtype), device_from_code(device));
  });
  m.def("eye", [](int64_t n, int64_t mm, int dtype, int device) {
    return ops::eye(n, mm, dtype_from_code(dtype), device_from_code(device));
  });
  m.def("_cpu_cached_bytes", &cpu_cached_bytes);  // Note [Large-block cache] in core/storage.cpp
  m.def("_cpu_empty_cache", &cpu_empty_cache);
  m.def("promote_types", [](int a, int b) { return int(promote_types(dtype_from_code(a), dtype_from_code(b))); });
  return cls;
}

}  // namespace lucid::bindings
