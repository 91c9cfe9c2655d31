// The reductions, scans and softmax as lucid.<op>(input, ...) functions and Tensor
// methods with PyTorch's signatures. Argument parsing that PyTorch does with
// overloads (max(input, other), var(input, unbiased)) happens here.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <cmath>
#include <cstring>

#include "bindings/common.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/sort.h"

namespace lucid::bindings {

namespace {

bool is_int(nb::handle h) { return PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr()); }

// dim=None (every dimension), an int, or a sequence of ints.
std::vector<int64_t> parse_dims(nb::handle dim, const char* op) {
  if (dim.is_none()) return {};
  if (PyLong_Check(dim.ptr()) || is_tensor(dim)) return {nb::cast<int64_t>(nb::int_(dim))};
  LUCID_CHECK(PySequence_Check(dim.ptr()) && !PyUnicode_Check(dim.ptr()), TypeError, op,
              "(): argument 'dim' must be an int, a tuple of ints or None, not ", type_name_of(dim));
  std::vector<int64_t> dims;
  for (nb::handle d : nb::iter(dim)) {
    LUCID_CHECK(PyLong_Check(d.ptr()), TypeError, op, "(): argument 'dim' must contain ints, not ", type_name_of(d));
    dims.push_back(nb::cast<int64_t>(d));
  }
  return dims;
}

// A single dim (an int), or nullopt for None when `optional`.
std::optional<int64_t> parse_dim(nb::handle dim, const char* op, bool optional) {
  if (dim.is_none() && optional) return std::nullopt;
  LUCID_CHECK(is_int(dim), TypeError, op, "(): argument 'dim' must be an int, not ", type_name_of(dim));
  return nb::cast<int64_t>(dim);
}

// dtype=None or a lucid.dtype.
std::optional<Dtype> parse_dtype(nb::handle dtype) {
  if (dtype.is_none()) return std::nullopt;
  LUCID_CHECK(nb::hasattr(dtype, "_code"), TypeError, "dtype must be a lucid.dtype, not ", type_name_of(dtype));
  return dtype_from_code(nb::cast<int>(dtype.attr("_code")));
}

// torch.return_types.<name>(values, indices): a tuple with .values / .indices.
nb::object values_indices(const char* name, const ops::ValuesIndices& r) {
  return nb::module_::import_("lucid.return_types").attr(name)(nb::make_tuple(r.values, r.indices));
}

// max(input), max(input, dim, keepdim=False), max(input, other).
auto extremum_fn(bool is_max) {
  return [is_max](TensorPtr a, nb::handle dim, bool keepdim, nb::handle other) -> nb::object {
    const char* name = is_max ? "max" : "min";
    if (is_tensor(dim) || !other.is_none()) {
      nb::handle b = other.is_none() ? dim : other;
      LUCID_CHECK(is_tensor(b), TypeError, name, "(): argument 'other' must be Tensor, not ",
                  type_name_of(b));
      auto op = is_max ? ops::BinaryOp::Maximum : ops::BinaryOp::Minimum;
      return nb::cast(ops::binary(op, {a, {}}, {nb::cast<TensorPtr>(b), {}}));
    }
    if (dim.is_none()) return nb::cast(is_max ? ops::max(a) : ops::min(a));
    int64_t d = *parse_dim(dim, name, false);
    return values_indices(name, is_max ? ops::max_dim(a, d, keepdim) : ops::min_dim(a, d, keepdim));
  };
}

// Bessel's correction from PyTorch's two spellings: unbiased= (bool) or correction=.
double parse_correction(nb::handle unbiased, nb::handle correction, const char* op) {
  LUCID_CHECK(unbiased.is_none() || correction.is_none(), TypeError, op,
              "(): cannot specify both unbiased and correction");
  if (!correction.is_none()) return nb::cast<double>(correction);
  if (!unbiased.is_none()) return nb::cast<bool>(unbiased) ? 1.0 : 0.0;
  return 1.0;
}

// var(input, dim=None, unbiased=None, keepdim=False, *, correction=None); a bool
// in dim's place is `unbiased` (torch's var(input, unbiased) overload).
template <typename Fn>
auto moments_fn(const char* op, Fn fn) {
  return [op, fn](TensorPtr a, nb::handle dim, nb::handle unbiased, bool keepdim, nb::handle correction) {
    if (PyBool_Check(dim.ptr())) {
      LUCID_CHECK(unbiased.is_none(), TypeError, op, "(): unbiased given twice");
      unbiased = dim;
      dim = nb::none();
    }
    return fn(a, parse_dims(dim, op), parse_correction(unbiased, correction, op), keepdim);
  };
}

// norm's p: a number, or 'fro' (the 2-norm over the dims).
double parse_p(nb::handle p, const char* op) {
  if (p.is_none()) return 2.0;
  if (PyUnicode_Check(p.ptr())) {
    std::string s = nb::cast<std::string>(p);
    if (s == "fro") return 2.0;
    fail<RuntimeError>(op, "(): p must be 'fro', 'nuc' or a number, got '", s, "'");
  }
  LUCID_CHECK(PyLong_Check(p.ptr()) || PyFloat_Check(p.ptr()), TypeError, op,
              "(): p must be a number or a string, not ", type_name_of(p));
  return nb::cast<double>(p);
}

// all(dim=()) / any(dim=()) reduce nothing in PyTorch (unlike sum(dim=())).
bool is_empty_dims(nb::handle dim) {
  return !dim.is_none() && PySequence_Check(dim.ptr()) && !PyUnicode_Check(dim.ptr()) && nb::len(dim) == 0;
}
TensorPtr truth(const TensorPtr& a) {
  TensorPtr t = ops::ne(a, Scalar(int64_t(0)));
  return a->dtype() == Dtype::U8 ? t->clone(Dtype::U8) : t;
}

// NumPy's names for an argument, which torch accepts wherever it takes dim / keepdim
// (its argument parser's numpy_compatibility_arg_names): x.sum(axis=0, keepdims=True).
template <typename Extra>
Extra numpy_named(Extra e) {
  if constexpr (requires { e.name_; }) {
    if (e.name_ && std::strcmp(e.name_, "dim") == 0) e.name_ = "axis";
    if (e.name_ && std::strcmp(e.name_, "keepdim") == 0) e.name_ = "keepdims";
  }
  return e;
}

template <typename Extra>
bool names_dim(const Extra& e) {
  if constexpr (requires { e.name_; }) return e.name_ && std::strcmp(e.name_, "dim") == 0;
  return false;
}

// lucid.<name>(input, ...) and Tensor.<name>(...). A second overload spells dim and
// keepdim as NumPy does; nanobind tries it only after the first refused the call's
// keywords, so a call in torch's spelling costs nothing more.
template <typename Fn, typename... Extra>
void def_both(nb::module_& m, TensorClass& cls, const char* name, Fn fn, const Extra&... extra) {
  m.def(name, fn, nb::arg("input"), extra...);
  cls.def(name, fn, extra...);
  if ((names_dim(extra) || ...)) {
    m.def(name, fn, nb::arg("input"), numpy_named(extra)...);
    cls.def(name, fn, numpy_named(extra)...);
  }
}

}  // namespace

void init_reduce(nb::module_& m, TensorClass& cls) {
  auto none = [] { return nb::none(); };
  // sum / mean: (input, dim=None, keepdim=False, *, dtype=None).
  def_both(m, cls, "sum", [](TensorPtr a, nb::handle dim, bool keepdim, nb::handle dtype) {
    autocast_args("sum", a);  // Note [Autocast]
    return ops::sum(a, parse_dims(dim, "sum"), keepdim, parse_dtype(dtype));
  }, nb::arg("dim") = none(), nb::arg("keepdim") = false, nb::kw_only(), nb::arg("dtype") = none());
  def_both(m, cls, "mean", [](TensorPtr a, nb::handle dim, bool keepdim, nb::handle dtype) {
    return ops::mean(a, parse_dims(dim, "mean"), keepdim, parse_dtype(dtype));
  }, nb::arg("dim") = none(), nb::arg("keepdim") = false, nb::kw_only(), nb::arg("dtype") = none());
  def_both(m, cls, "prod", [](TensorPtr a, nb::handle dim, bool keepdim, nb::handle dtype) {
    autocast_args("prod", a);
    return ops::prod(a, parse_dim(dim, "prod", true), keepdim, parse_dtype(dtype));
  }, nb::arg("dim") = none(), nb::arg("keepdim") = false, nb::kw_only(), nb::arg("dtype") = none());

  def_both(m, cls, "max", extremum_fn(true), nb::arg("dim") = none(), nb::arg("keepdim") = false, nb::kw_only(),
           nb::arg("other") = none());
  def_both(m, cls, "min", extremum_fn(false), nb::arg("dim") = none(), nb::arg("keepdim") = false, nb::kw_only(),
           nb::arg("other") = none());
  def_both(m, cls, "amax", [](TensorPtr a, nb::handle dim, bool keepdim) {
    return ops::amax(a, parse_dims(dim, "amax"), keepdim);
  }, nb::arg("dim") = nb::tuple(), nb::arg("keepdim") = false);
  def_both(m, cls, "amin", [](TensorPtr a, nb::handle dim, bool keepdim) {
    return ops::amin(a, parse_dims(dim, "amin"), keepdim);
  }, nb::arg("dim") = nb::tuple(), nb::arg("keepdim") = false);
  def_both(m, cls, "argmax", [](TensorPtr a, nb::handle dim, bool keepdim) {
    return ops::argmax(a, parse_dim(dim, "argmax", true), keepdim);
  }, nb::arg("dim") = none(), nb::arg("keepdim") = false);
  def_both(m, cls, "argmin", [](TensorPtr a, nb::handle dim, bool keepdim) {
    return ops::argmin(a, parse_dim(dim, "argmin", true), keepdim);
  }, nb::arg("dim") = none(), nb::arg("keepdim") = false);
  def_both(m, cls, "all", [](TensorPtr a, nb::handle dim, bool keepdim) {
    if (is_empty_dims(dim)) return truth(a);
    return ops::all(a, parse_dims(dim, "all"), keepdim);
  }, nb::arg("dim") = none(), nb::arg("keepdim") = false);
  def_both(m, cls, "any", [](TensorPtr a, nb::handle dim, bool keepdim) {
    if (is_empty_dims(dim)) return truth(a);
    return ops::any(a, parse_dims(dim, "any"), keepdim);
  }, nb::arg("dim") = none(), nb::arg("keepdim") = false);
  def_both(m, cls, "count_nonzero", [](TensorPtr a, nb::handle dim) {
    return ops::count_nonzero(a, parse_dims(dim, "count_nonzero"));
  }, nb::arg("dim") = none());

  def_both(m, cls, "var", moments_fn("var", ops::var), nb::arg("dim") = none(), nb::arg("unbiased") = none(),
           nb::arg("keepdim") = false, nb::kw_only(), nb::arg("correction") = none());
  def_both(m, cls, "std", moments_fn("std", ops::std), nb::arg("dim") = none(), nb::arg("unbiased") = none(),
           nb::arg("keepdim") = false, nb::kw_only(), nb::arg("correction") = none());
  // (var, mean) and (std, mean): two recorded ops, so both outputs have gradients.
  m.def("var_mean", moments_fn("var_mean", [](const TensorPtr& a, const std::vector<int64_t>& dims, double c,
                                              bool keepdim) {
    return std::make_pair(ops::var(a, dims, c, keepdim), ops::mean(a, dims, keepdim, std::nullopt));
  }), nb::arg("input"), nb::arg("dim") = none(), nb::arg("unbiased") = none(), nb::arg("keepdim") = false,
     nb::kw_only(), nb::arg("correction") = none());
  m.def("std_mean", moments_fn("std_mean", [](const TensorPtr& a, const std::vector<int64_t>& dims, double c,
                                              bool keepdim) {
    return std::make_pair(ops::std(a, dims, c, keepdim), ops::mean(a, dims, keepdim, std::nullopt));
  }), nb::arg("input"), nb::arg("dim") = none(), nb::arg("unbiased") = none(), nb::arg("keepdim") = false,
     nb::kw_only(), nb::arg("correction") = none());

  // torch.argsort(stable=True); python/lucid/_sort.py builds sort, topk, kthvalue,
  // msort, median and nanmedian on it
  m.def("_argsort", [](TensorPtr x, int64_t dim, bool descending) { return ops::argsort(x, dim, descending); },
        nb::arg("input"), nb::arg("dim"), nb::arg("descending"));
  m.def("_sort", [](TensorPtr x, int64_t dim, bool descending) { return ops::sort(x, dim, descending); },
        nb::arg("input"), nb::arg("dim"), nb::arg("descending"));
  m.def("_topk_positions", [](TensorPtr x, int64_t k, int64_t dim, bool largest) {
    return ops::topk_positions(x, k, dim, largest);
  }, nb::arg("input"), nb::arg("k"), nb::arg("dim"), nb::arg("largest"));
  m.def("_searchsorted", [](TensorPtr boundaries, TensorPtr values, bool right) {
    return ops::searchsorted(boundaries, values, right);
  }, nb::arg("sorted_sequence"), nb::arg("input"), nb::arg("right"));
  def_both(m, cls, "logsumexp", [](TensorPtr a, nb::handle dim, bool keepdim) {
    autocast_args("logsumexp", a);
    return ops::logsumexp(a, parse_dims(dim, "logsumexp"), keepdim);
  }, nb::arg("dim") = none(), nb::arg("keepdim") = false);
  def_both(m, cls, "norm", [](TensorPtr a, nb::handle p, nb::handle dim, bool keepdim, nb::handle dtype) {
    autocast_args("norm", a);
    if (PyUnicode_Check(p.ptr()) && nb::cast<std::string>(p) == "nuc") {
      // torch's: linalg.matrix_norm over the two dims (all of a 2-D input's when dim is None)
      nb::object dims = nb::borrow(dim);
      if (dim.is_none()) {
        LUCID_CHECK(a->ndim() == 2, RuntimeError, "linalg.matrix_norm: dim must be a 2-tuple. Got a ", a->ndim(),
                    "-D input and no dim");
        dims = nb::make_tuple(0, 1);
      }
      return nb::module_::import_("lucid.linalg").attr("matrix_norm")(a, "nuc", dims, keepdim,
                                                                      nb::arg("dtype") = dtype);
    }
    return nb::cast(ops::norm(a, parse_p(p, "norm"), parse_dims(dim, "norm"), keepdim, parse_dtype(dtype)));
  }, nb::arg("p") = "fro", nb::arg("dim") = none(), nb::arg("keepdim") = false, nb::arg("dtype") = none());
  // linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None)
  m.def("vector_norm", [](TensorPtr a, nb::handle ord, nb::handle dim, bool keepdim, nb::handle dtype) {
    LUCID_CHECK(!PyUnicode_Check(ord.ptr()), TypeError, "linalg.vector_norm(): argument 'ord' must be a number");
    return ops::norm(a, parse_p(ord, "linalg.vector_norm"), parse_dims(dim, "linalg.vector_norm"), keepdim,
                     parse_dtype(dtype));
  }, nb::arg("x"), nb::arg("ord") = 2, nb::arg("dim") = none(), nb::arg("keepdim") = false, nb::kw_only(),
     nb::arg("dtype") = none());

  def_both(m, cls, "cumsum", [](TensorPtr a, nb::handle dim, nb::handle dtype) {
    autocast_args("cumsum", a);
    return ops::cumsum(a, *parse_dim(dim, "cumsum", false), parse_dtype(dtype));
  }, nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = none());
  def_both(m, cls, "cumprod", [](TensorPtr a, nb::handle dim, nb::handle dtype) {
    autocast_args("cumprod", a);
    return ops::cumprod(a, *parse_dim(dim, "cumprod", false), parse_dtype(dtype));
  }, nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = none());
  def_both(m, cls, "softmax", [](TensorPtr a, nb::handle dim, nb::handle dtype) {
    autocast_args("softmax", a);
    return ops::softmax(a, *parse_dim(dim, "softmax", false), parse_dtype(dtype));
  }, nb::arg("dim"), nb::arg("dtype") = none());
  def_both(m, cls, "log_softmax", [](TensorPtr a, nb::handle dim, nb::handle dtype) {
    autocast_args("log_softmax", a);
    return ops::log_softmax(a, *parse_dim(dim, "log_softmax", false), parse_dtype(dtype));
  }, nb::arg("dim"), nb::arg("dtype") = none());

  m.attr("_reduction_ops") = nb::make_tuple(
      "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "all", "any", "count_nonzero",
      "var", "std", "var_mean", "std_mean", "logsumexp", "norm", "cumsum", "cumprod", "softmax", "log_softmax");
}

}  // namespace lucid::bindings
