// Python data <-> tensors without NumPy: nested sequences and scalars (with
// PyTorch's dtype inference), buffer-protocol objects (NumPy arrays, memoryview,
// array.array), and tolist().
#include <cstring>
#include <optional>

#include <nanobind/stl/shared_ptr.h>

#include "bindings/common.h"
#include "core/copy.h"

namespace lucid::bindings {

namespace {

std::string py_type_name(nb::handle h) {
  return nb::cast<std::string>(nb::handle((PyObject*)Py_TYPE(h.ptr())).attr("__name__"));
}

bool is_sequence(nb::handle h) {
  PyObject* o = h.ptr();
  return !PyUnicode_Check(o) && !PyBytes_Check(o) && PySequence_Check(o);
}

// A lucid.Tensor inside a list stands for its values (as torch.tensor accepts).
nb::object unwrap_tensor(nb::handle h) {
  if (nb::hasattr(h, "_impl")) return h.attr("tolist")();
  return nb::borrow(h);
}

// First pass: the shape (from the first element along each dimension, checked
// against every other) and the widest kind of scalar seen.
struct Inferred {
  Shape shape;
  DtypeKind kind = DtypeKind::Bool;
  bool any_scalar = false;
};

void infer(nb::handle h, size_t depth, Inferred& out) {
  nb::object o = unwrap_tensor(h);
  if (is_sequence(o)) {
    Py_ssize_t n = PySequence_Size(o.ptr());
    LUCID_CHECK(n >= 0, TypeError, "could not determine the length of a ", py_type_name(o));
    if (depth == out.shape.size()) {
      LUCID_CHECK(!out.any_scalar || depth == 0, ValueError,
                  "expected a number at dim ", depth, " but found a sequence");
      out.shape.push_back(n);
    } else {
      LUCID_CHECK(depth < out.shape.size(), ValueError, "expected a number at dim ", depth,
                  " but found a sequence (ragged nested sequence)");
      LUCID_CHECK(out.shape[depth] == n, ValueError, "expected sequence of length ", out.shape[depth],
                  " at dim ", depth, " (got ", n, ")");
    }
    for (Py_ssize_t i = 0; i < n; ++i) infer(nb::steal(PySequence_GetItem(o.ptr(), i)), depth + 1, out);
    return;
  }
  LUCID_CHECK(depth == out.shape.size(), ValueError, "expected sequence of length ",
              depth < out.shape.size() ? out.shape[depth] : 0, " at dim ", depth,
              " (got a number): nested sequences must be rectangular");
  out.any_scalar = true;
  PyObject* p = o.ptr();
  DtypeKind k;
  if (PyBool_Check(p)) k = DtypeKind::Bool;
  else if (PyLong_Check(p)) k = DtypeKind::Integer;
  else if (PyFloat_Check(p)) k = DtypeKind::Floating;
  else if (PyComplex_Check(p)) k = DtypeKind::Complex;
  else if (PyObject_HasAttrString(p, "__index__")) k = DtypeKind::Integer;
  else if (PyObject_HasAttrString(p, "__float__")) k = DtypeKind::Floating;
  else fail<TypeError>("new(): invalid data type '", py_type_name(o), "'");
  if (k > out.kind) out.kind = k;
}

template <typename T>
T convert_scalar(nb::handle h) {
  PyObject* p = h.ptr();
  Scalar s;
  if (PyBool_Check(p) || PyLong_Check(p) || PyFloat_Check(p) || PyComplex_Check(p)) {
    s = scalar_from_python(h);
  } else if (PyObject_HasAttrString(p, "__index__")) {
    s = scalar_from_python(nb::steal(PyNumber_Index(p)));
  } else {
    nb::object f = nb::steal(PyNumber_Float(p));
    if (!f.is_valid()) throw nb::python_error();
    s = Scalar(PyFloat_AS_DOUBLE(f.ptr()));
  }
  return std::visit(
      [](auto v) -> T {
        using V = decltype(v);
        if constexpr (std::is_same_v<T, complex64>) {
          if constexpr (std::is_same_v<V, std::complex<double>>) return complex64(float(v.real()), float(v.imag()));
          else return complex64(float(v), 0.f);
        } else if constexpr (std::is_same_v<V, std::complex<double>>) {
          if constexpr (std::is_same_v<T, bool>) return v != std::complex<double>(0, 0);
          else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(float(v.real()));
          else return static_cast<T>(v.real());
        } else if constexpr (std::is_same_v<T, bool>) {
          return v != V(0);
        } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
          return T(float(v));
        } else {
          return static_cast<T>(v);
        }
      },
      s);
}

template <typename T>
void fill(nb::handle h, T*& out) {
  nb::object o = unwrap_tensor(h);
  if (is_sequence(o)) {
    Py_ssize_t n = PySequence_Size(o.ptr());
    for (Py_ssize_t i = 0; i < n; ++i) fill(nb::steal(PySequence_GetItem(o.ptr(), i)), out);
    return;
  }
  *out++ = convert_scalar<T>(o);
}

// ---- buffer protocol ------------------------------------------------------------

std::optional<Dtype> dtype_from_format(const char* fmt, Py_ssize_t itemsize) {
  std::string f = fmt ? fmt : "B";
  if (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@')) f = f.substr(1);
  if (f == "?") return Dtype::Bool;
  if (f == "B") return Dtype::U8;
  if (f == "b") return Dtype::I8;
  if (f == "h") return Dtype::I16;
  if ((f == "i" || f == "l") && itemsize == 4) return Dtype::I32;
  if ((f == "l" || f == "q") && itemsize == 8) return Dtype::I64;
  if (f == "e") return Dtype::F16;
  if (f == "f") return Dtype::F32;
  if (f == "d") return Dtype::F64;
  if (f == "Zf") return Dtype::C64;
  return std::nullopt;
}

struct BufferView {
  Py_buffer view{};
  bool held = false;
  ~BufferView() { if (held) PyBuffer_Release(&view); }
};

[[noreturn]] void unsupported_buffer(const char* fmt) {
  fail<TypeError>("can't convert a buffer of format '", fmt ? fmt : "B",
                  "'. The only supported types are: float64, float32, float16, complex64, int64, "
                  "int32, int16, int8, uint8, and bool.");
}

// Wraps (copy=false) or copies (copy=true) a buffer-protocol object. Read-only
// buffers are always copied: writing through a tensor must never mutate an
// immutable Python object.
TensorPtr from_buffer(nb::handle obj, bool copy) {
  auto buf = std::make_shared<BufferView>();
  if (PyObject_GetBuffer(obj.ptr(), &buf->view, PyBUF_RECORDS_RO) != 0) throw nb::python_error();
  buf->held = true;
  const Py_buffer& v = buf->view;
  auto dtype = dtype_from_format(v.format, v.itemsize);
  if (!dtype) unsupported_buffer(v.format);
  Shape shape(v.shape, v.shape + v.ndim);
  Stride stride = v.strides ? Stride(v.strides, v.strides + v.ndim) : contiguous_strides(shape, v.itemsize);
  bool negative = false, misaligned = false;
  for (int64_t s : stride) {
    negative |= s < 0;
    misaligned |= s % v.itemsize != 0;
  }
  if (!copy && !v.readonly) {
    LUCID_CHECK(!negative, ValueError,
                "At least one stride in the given numpy array is negative, and tensors with negative "
                "strides are not currently supported. (You can probably work around this by making a "
                "copy of your array with array.copy().)");
    LUCID_CHECK(!misaligned, ValueError, "given numpy array strides not a multiple of the element byte size. "
                "Copy the numpy array to reallocate the memory.");
    CpuStorage storage;
    storage.nbytes = size_t(view_extent_bytes(shape, stride, v.itemsize));
    // The storage keeps the exporter's buffer (and so the exporter) alive.
    storage.data = DataPtr(static_cast<std::byte*>(v.buf), [buf](std::byte*) mutable {
      nb::gil_scoped_acquire gil;
      buf.reset();
    });
    TensorMeta meta{shape, stride, *dtype, Device::cpu(), 0};
    return std::make_shared<TensorImpl>(std::move(storage), std::move(meta));
  }
  TensorPtr out = TensorImpl::empty(shape, *dtype, Device::cpu());
  host_strided_copy(out->host_ptr(), out->stride(), *dtype, static_cast<const std::byte*>(v.buf), stride,
                    *dtype, shape);
  return out;
}

bool has_buffer(nb::handle h) {
  return PyObject_CheckBuffer(h.ptr()) && !PyBytes_Check(h.ptr()) && !PyUnicode_Check(h.ptr());
}

// ---- tolist ------------------------------------------------------------------------

template <typename T>
PyObject* element_to_python(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::is_same_v<T, bool>) return PyBool_FromLong(v);
  else if constexpr (std::is_same_v<T, complex64>) return PyComplex_FromDoubles(v.real(), v.imag());
  else if constexpr (std::is_integral_v<T>) return PyLong_FromLongLong(v);
  else return PyFloat_FromDouble(double(v));
}

// Nested lists over row-major bytes, built with the CPython API directly: this is
// the hot loop of tolist() and repr-free printing of large tensors.
template <typename T>
PyObject* build_list(const std::byte*& p, const Shape& shape, size_t depth) {
  if (depth == shape.size()) {
    PyObject* o = element_to_python<T>(p);
    p += sizeof(T);
    return o;
  }
  PyObject* l = PyList_New(shape[depth]);
  if (!l) throw nb::python_error();
  for (int64_t i = 0; i < shape[depth]; ++i) {
    PyObject* item = build_list<T>(p, shape, depth + 1);
    if (!item) {
      Py_DECREF(l);
      throw nb::python_error();
    }
    PyList_SET_ITEM(l, i, item);  // steals the reference
  }
  return l;
}

}  // namespace

void init_convert(nb::module_& m) {
  // Builds a new CPU tensor from Python data. dtype < 0 infers it; default_float is
  // the dtype code for Python floats (lucid.get_default_dtype()).
  m.def("from_data", [](nb::handle data, int dtype, int default_float) -> TensorPtr {
    if (has_buffer(data)) {
      TensorPtr t = from_buffer(data, /*copy=*/true);
      return dtype < 0 || dtype_from_code(dtype) == t->dtype() ? t : t->clone(dtype_from_code(dtype));
    }
    Inferred inf;
    infer(data, 0, inf);
    Dtype d;
    if (dtype >= 0) {
      d = dtype_from_code(dtype);
    } else {
      switch (inf.kind) {
        case DtypeKind::Bool: d = inf.any_scalar ? Dtype::Bool : dtype_from_code(default_float); break;
        case DtypeKind::Integer: d = Dtype::I64; break;
        case DtypeKind::Floating: d = dtype_from_code(default_float); break;
        default: d = Dtype::C64; break;
      }
    }
    TensorPtr t = TensorImpl::empty(inf.shape, d, Device::cpu());
    visit_dtype(d, [&]<typename T>() {
      T* out = reinterpret_cast<T*>(t->host_ptr());
      fill<T>(data, out);
    });
    return t;
  });
  m.def("from_buffer", [](nb::handle obj, bool copy) { return from_buffer(obj, copy); });
  m.def("has_buffer", &has_buffer);
  m.def("tolist", [](const TensorImpl& t) {
    std::vector<std::byte> bytes = t.to_bytes();
    const std::byte* p = bytes.data();
    return visit_dtype(t.dtype(), [&]<typename T>() { return nb::steal(build_list<T>(p, t.shape(), 0)); });
  });
}

}  // namespace lucid::bindings
