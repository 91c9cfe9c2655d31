// Python data <-> tensors without importing NumPy: nested sequences and scalars
// (with PyTorch's dtype inference and checked conversions), NumPy arrays and other
// buffer-protocol objects (read through the buffer protocol), and tolist().
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include <nanobind/stl/shared_ptr.h>

#include "bindings/common.h"
#include "core/bool_bytes.h"
#include "core/copy.h"

namespace lucid::bindings {

namespace {

bool is_sequence(nb::handle h) {
  PyObject* o = h.ptr();
  return !PyUnicode_Check(o) && !PyBytes_Check(o) && PySequence_Check(o);
}

// A lucid.Tensor inside a list stands for its values (as torch.tensor accepts).
nb::object unwrap_tensor(nb::handle h) {
  if (is_tensor(h)) return h.attr("tolist")();
  return nb::borrow(h);
}

std::optional<Dtype> dtype_from_format(const char* fmt, Py_ssize_t itemsize);

// NumPy arrays and scalars expose __array_interface__; torch.tensor treats them (and
// only them) as typed data. Other buffer objects (bytearray, memoryview,
// array.array) are plain sequences of Python numbers, as in PyTorch.
bool is_numpy_like(nb::handle h) {
  return PyObject_CheckBuffer(h.ptr()) && PyObject_HasAttrString(h.ptr(), "__array_interface__");
}

// One element of the data: its value, and the dtype PyTorch infers for it alone.
struct PyScalar {
  Scalar value;
  Dtype dtype;
  bool int_overflow = false;  // a Python int beyond int64 (value holds it as a double)
};

PyScalar read_numpy_scalar(nb::handle h) {
  Py_buffer view;
  if (PyObject_GetBuffer(h.ptr(), &view, PyBUF_RECORDS_RO) != 0) throw nb::python_error();
  auto dtype = dtype_from_format(view.format, view.itemsize);
  std::string fmt = view.format ? view.format : "B";
  std::vector<std::byte> bytes(size_t(view.itemsize));
  std::memcpy(bytes.data(), view.buf, bytes.size());
  PyBuffer_Release(&view);
  LUCID_CHECK(dtype, TypeError, "can't convert a NumPy scalar of format '", fmt,
              "'. The only supported types are: float64, float32, float16, complex64, complex128, "
              "int64, int32, int16, int8, uint8, and bool.");
  return {scalar_from_bytes(bytes.data(), *dtype), *dtype};
}

PyScalar read_scalar(nb::handle h, Dtype default_float) {
  PyObject* p = h.ptr();
  if (PyBool_Check(p)) return {Scalar(p == Py_True), Dtype::Bool};
  if (is_numpy_like(h)) return read_numpy_scalar(h);
  if (PyFloat_Check(p)) return {Scalar(PyFloat_AS_DOUBLE(p)), default_float};
  if (PyComplex_Check(p))
    return {Scalar(std::complex<double>(PyComplex_RealAsDouble(p), PyComplex_ImagAsDouble(p))),
            default_float == Dtype::F64 ? Dtype::C128 : Dtype::C64};  // torch's default complex dtype
  nb::object as_int;
  if (PyLong_Check(p)) as_int = nb::borrow(h);
  else if (PyObject_HasAttrString(p, "__index__")) as_int = nb::steal(PyNumber_Index(p));
  if (as_int.is_valid()) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
    if (!overflow) return {Scalar(int64_t(v)), Dtype::I64};
    double d = PyLong_AsDouble(as_int.ptr());  // inf when beyond double's range
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      d = _PyLong_Sign(as_int.ptr()) < 0 ? -INFINITY : INFINITY;
    }
    return {Scalar(d), Dtype::I64, true};
  }
  if (PyObject_HasAttrString(p, "__float__")) {
    nb::object f = nb::steal(PyNumber_Float(p));
    if (!f.is_valid()) throw nb::python_error();
    return {Scalar(PyFloat_AS_DOUBLE(f.ptr())), default_float};
  }
  if (h.is_none()) fail<RuntimeError>("Could not infer dtype of NoneType: tensor data must be numbers");
  fail<TypeError>("new(): invalid data type '", type_name_of(h), "'");
}

// First pass: the shape (from the first element along each dimension, checked
// against every other) and the promoted dtype of all elements.
struct Inferred {
  Shape shape;
  std::optional<Dtype> dtype;
  bool any_scalar = false;
};

// Item i of a sequence; its __getitem__ may raise (the error propagates).
nb::object sequence_item(const nb::object& seq, Py_ssize_t i) {
  PyObject* item = PySequence_GetItem(seq.ptr(), i);
  if (!item) throw nb::python_error();
  return nb::steal(item);
}

void infer(nb::handle h, size_t depth, Dtype default_float, Inferred& out) {
  nb::object o = unwrap_tensor(h);
  if (is_sequence(o)) {
    Py_ssize_t n = PySequence_Size(o.ptr());
    if (n < 0) {
      PyErr_Clear();
      if (is_numpy_like(o)) goto scalar;  // a 0-d NumPy array
      fail<TypeError>("could not determine the length of a ", type_name_of(o));
    }
    if (depth == out.shape.size()) {
      LUCID_CHECK(!out.any_scalar || depth == 0, TypeError, "expected a number at dim ", depth,
                  " but found a sequence (nested sequences must be rectangular)");
      out.shape.push_back(n);
      // Before walking them: more elements than the machine has bytes cannot be held
      // (a range(2**62) raises here instead of iterating for years).
      static const double kHostBytes = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
      double elements = 1;
      for (int64_t e : out.shape) elements *= double(e);
      LUCID_CHECK(elements <= kHostBytes, RuntimeError, "out of host memory: data of shape ",
                  shape_str(out.shape), " needs at least ", elements, " bytes; this machine has ", kHostBytes);
    } else {
      LUCID_CHECK(depth < out.shape.size(), TypeError, "expected a number at dim ", depth,
                  " but found a sequence (nested sequences must be rectangular)");
      LUCID_CHECK(out.shape[depth] == n, ValueError, "expected sequence of length ", out.shape[depth],
                  " at dim ", depth, " (got ", n, ")");
    }
    for (Py_ssize_t i = 0; i < n; ++i)
      infer(sequence_item(o, i), depth + 1, default_float, out);
    return;
  }
scalar:
  LUCID_CHECK(depth == out.shape.size(), TypeError, "not a sequence: expected a sequence of length ",
              depth < out.shape.size() ? out.shape[depth] : 0, " at dim ", depth,
              " but got a number (nested sequences must be rectangular)");
  out.any_scalar = true;
  Dtype d = read_scalar(o, default_float).dtype;
  out.dtype = out.dtype ? promote_types(*out.dtype, d) : d;
}

[[noreturn]] void overflow(Dtype d) {
  fail<RuntimeError>("value cannot be converted to type ", dtype_name(d), " without overflow");
}

// PyTorch's checked conversion: integers must fit the target (NaN never does);
// floating targets saturate to inf; complex data needs a complex target.
template <typename T>
T convert_scalar(const PyScalar& s, Dtype target) {
  return std::visit(
      [&](auto v) -> T {
        using V = decltype(v);
        if constexpr (std::is_same_v<T, complex64>) {
          if constexpr (std::is_same_v<V, std::complex<double>>) return complex64(float(v.real()), float(v.imag()));
          else return complex64(float(v), 0.f);
        } else if constexpr (std::is_same_v<T, complex128>) {
          if constexpr (std::is_same_v<V, std::complex<double>>) return v;
          else return complex128(double(v), 0.0);
        } else if constexpr (std::is_same_v<V, std::complex<double>>) {
          fail<TypeError>("must be real number, not complex (the target dtype is ", dtype_name(target), ")");
        } else if constexpr (std::is_same_v<T, bool>) {
          return v != V(0);
        } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
          return T(float(v));
        } else if constexpr (std::is_floating_point_v<T>) {
          return static_cast<T>(v);
        } else {  // integer target
          if (s.int_overflow) fail<ValueError>("Overflow when unpacking long long: the value does not fit in int64");
          using L = std::numeric_limits<T>;
          if constexpr (std::is_same_v<V, double>) {
            if (!(v >= double(L::min()) && v < double(L::max()) + 1.0)) overflow(target);
          } else if constexpr (std::is_same_v<V, int64_t>) {
            // Negative integers wrap into uint8 down to -255, as c10's checked conversion allows.
            int64_t low = std::is_same_v<T, uint8_t> ? -255 : int64_t(L::min());
            if (v < low || (std::is_same_v<T, int64_t> ? false : v > int64_t(L::max()))) overflow(target);
          }
          return static_cast<T>(v);
        }
      },
      s.value);
}

template <typename T>
void fill(nb::handle h, T*& out, Dtype target, Dtype default_float) {
  nb::object o = unwrap_tensor(h);
  if (is_sequence(o)) {
    Py_ssize_t n = PySequence_Size(o.ptr());
    if (n >= 0) {
      for (Py_ssize_t i = 0; i < n; ++i)
        fill(sequence_item(o, i), out, target, default_float);
      return;
    }
    PyErr_Clear();  // a 0-d NumPy array: a scalar
  }
  *out++ = convert_scalar<T>(read_scalar(o, default_float), target);
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
  if (f == "Zd") return Dtype::C128;
  return std::nullopt;
}

struct BufferView {
  Py_buffer view{};
  bool held = false;
  ~BufferView() { if (held) PyBuffer_Release(&view); }
};

[[noreturn]] void unsupported_buffer(const char* fmt) {
  fail<TypeError>("can't convert a buffer of format '", fmt ? fmt : "B",
                  "'. The only supported types are: float64, float32, float16, complex64, complex128, "
                  "int64, int32, int16, int8, uint8, and bool.");
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
  if (*dtype == Dtype::Bool) check_bool_bytes(static_cast<const std::byte*>(v.buf), shape, stride, "tensor");
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
    auto t = std::make_shared<TensorImpl>(std::move(storage), std::move(meta));
    t->mark_reached_outside();  // (the exporter may write its buffer)
    return t;
  }
  TensorPtr out = TensorImpl::empty(shape, *dtype, Device::cpu());
  host_strided_copy(out->host_ptr(), out->stride(), *dtype, static_cast<const std::byte*>(v.buf), stride,
                    *dtype, shape);
  return out;
}

// torch.frombuffer: a 1-d tensor over the raw bytes of any buffer object, sharing
// its memory (copied when the buffer is read-only, see from_buffer).
TensorPtr frombuffer(nb::handle obj, Dtype dtype, int64_t count, int64_t offset) {
  auto buf = std::make_shared<BufferView>();
  if (PyObject_GetBuffer(obj.ptr(), &buf->view, PyBUF_SIMPLE) != 0) throw nb::python_error();
  buf->held = true;
  int64_t len = buf->view.len, item = int64_t(dtype_size(dtype));
  LUCID_CHECK(offset >= 0 && offset <= len, ValueError, "offset (", offset,
              " bytes) must be non-negative and no greater than buffer length (", len, " bytes) minus 1");
  if (count < 0) {
    LUCID_CHECK((len - offset) % item == 0, ValueError, "buffer length (", len - offset,
                " bytes) after offset (", offset, " bytes) must be a multiple of element size (", item, ")");
    count = (len - offset) / item;
  }
  LUCID_CHECK(count > 0 || len - offset > 0, ValueError, "both buffer length (", len, ") and count (",
              count, ") must not be 0");
  LUCID_CHECK(count <= (len - offset) / item, ValueError, "requested buffer length (", count, " * ", item,
              " bytes) after offset (", offset, " bytes) must not be greater than actual buffer length (",
              len, " bytes)");
  auto* base = static_cast<std::byte*>(buf->view.buf) + offset;
  if (dtype == Dtype::Bool) check_bool_bytes(base, {count}, {1}, "frombuffer");
  TensorMeta meta{{count}, {item}, dtype, Device::cpu(), 0};
  if (buf->view.readonly) {
    TensorPtr out = TensorImpl::empty({count}, dtype, Device::cpu());
    std::memcpy(out->host_ptr(), base, size_t(count * item));
    return out;
  }
  CpuStorage storage;
  storage.nbytes = size_t(count * item);
  storage.data = DataPtr(base, [buf](std::byte*) mutable {
    nb::gil_scoped_acquire gil;
    buf.reset();
  });
  auto t = std::make_shared<TensorImpl>(std::move(storage), std::move(meta));
  t->mark_reached_outside();
  return t;
}

template <typename T>
PyObject* element_to_python(const std::byte* p) {
  // a bool's byte from foreign memory (frombuffer, DLPack) may be neither 0 nor 1
  if constexpr (std::is_same_v<T, bool>) return PyBool_FromLong(std::to_integer<uint8_t>(*p) != 0);
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>)
    return PyComplex_FromDoubles(v.real(), v.imag());
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

// ---- bool bytes of foreign memory (common.h) -------------------------------------

void check_bool_bytes(const std::byte* base, const Shape& shape, const Stride& stride, const char* who) {
  const int64_t at = find_non_bool_byte(base, shape, stride);
  LUCID_CHECK(at < 0, ValueError, who, ": a bool tensor's bytes must be 0 or 1, but the byte at offset ", at, " is ",
              std::to_integer<unsigned>(base[at]),
              " (import the buffer as uint8 and compare with 0 to read any nonzero byte as True)");
}

void init_convert(nb::module_& m) {
  // Builds a new CPU tensor from Python data. dtype < 0 infers it; default_float is
  // the dtype code for Python floats (lucid.get_default_dtype()).
  m.def("from_data", [](nb::handle data, int dtype, int default_float) -> TensorPtr {
    Dtype dflt = dtype_from_code(default_float);
    if (is_numpy_like(data)) {
      TensorPtr t = from_buffer(data, /*copy=*/true);
      return dtype < 0 || dtype_from_code(dtype) == t->dtype() ? t : t->clone(dtype_from_code(dtype));
    }
    Inferred inf;
    infer(data, 0, dflt, inf);
    Dtype d = dtype >= 0 ? dtype_from_code(dtype) : inf.dtype.value_or(dflt);
    TensorPtr t = TensorImpl::empty(inf.shape, d, Device::cpu());
    visit_dtype(d, [&]<typename T>() {
      T* out = reinterpret_cast<T*>(t->host_ptr());
      fill<T>(data, out, d, dflt);
    });
    return t;
  });
  m.def("from_buffer", [](nb::handle obj, bool copy) { return from_buffer(obj, copy); });
  m.def("is_numpy_like", &is_numpy_like);
  m.def("frombuffer", [](nb::handle obj, int dtype, int64_t count, int64_t offset) {
    return frombuffer(obj, dtype_from_code(dtype), count, offset);
  });
  m.def("tolist", [](const TensorImpl& t) {
    std::vector<std::byte> bytes = t.to_bytes();
    const std::byte* p = bytes.data();
    return visit_dtype(t.dtype(), [&]<typename T>() { return nb::steal(build_list<T>(p, t.shape(), 0)); });
  });
}

}  // namespace lucid::bindings
