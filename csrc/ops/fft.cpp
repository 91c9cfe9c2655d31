// The discrete Fourier transform op (ops/fft.h): operand checks, the output's shape,
// and the launch on dense operands.
#include "ops/fft.h"

#include <mutex>

#include "core/error.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

const char* kind_name(FftKind kind) {
  switch (kind) {
    case FftKind::C2C: return "c2c";
    case FftKind::R2C: return "r2c";
    case FftKind::C2R: return "c2r";
  }
  return "?";
}

std::mutex g_library_mutex;
std::string g_library;

}  // namespace

TensorPtr fft(const TensorPtr& x, FftKind kind, bool inverse, int rank, int64_t last_size) {
  const char* op = "fft";
  LUCID_CHECK(rank >= 1 && rank <= 3 && x->ndim() >= rank, RuntimeError, op, ": a ", kind_name(kind),
              " transform of ", rank, " dims needs 1 to 3 dims of a tensor that has them; got a ", x->ndim(),
              "-d tensor");
  const bool real_in = kind == FftKind::R2C;
  const bool f64 = x->dtype() == Dtype::F64 || x->dtype() == Dtype::C128;
  const Dtype want = real_in ? (f64 ? Dtype::F64 : Dtype::F32) : (f64 ? Dtype::C128 : Dtype::C64);
  LUCID_CHECK(x->dtype() == want, NotImplementedError, op, ": a ", kind_name(kind), " transform takes ",
              real_in ? "float32 or float64" : "complex64 or complex128", " input, got ", dtype_name(x->dtype()));
  Shape out = x->shape();
  const int64_t r = x->ndim();
  if (kind == FftKind::R2C) out[r - 1] = x->shape()[r - 1] / 2 + 1;
  if (kind == FftKind::C2R) {
    LUCID_CHECK(last_size >= 1 && x->shape()[r - 1] == last_size / 2 + 1, RuntimeError, op,
                ": a c2r transform to a signal of ", last_size, " needs ", last_size / 2 + 1,
                " entries along the last dim, got ", x->shape()[r - 1]);
    out[r - 1] = last_size;
  }
  for (int64_t d = r - rank; d < r; ++d)
    LUCID_CHECK((kind == FftKind::C2R ? out : x->shape())[d] >= 1, RuntimeError, op,
                ": Invalid number of data points (0) specified");
  const Dtype out_dtype = kind == FftKind::C2R ? (f64 ? Dtype::F64 : Dtype::F32) : (f64 ? Dtype::C128 : Dtype::C64);
  TensorPtr y = TensorImpl::empty(out, out_dtype, x->device());
  if (y->numel() == 0) return y;
  TensorPtr in = contiguous(x);
  Fft prim;
  prim.kind = kind, prim.inverse = inverse, prim.rank = rank;
  launch(prim, {y.get()}, {in.get()});
  return y;
}

void set_mkl_library(std::string path) {
  std::lock_guard<std::mutex> lock(g_library_mutex);
  g_library = std::move(path);
}

std::string mkl_library_path() {
  std::lock_guard<std::mutex> lock(g_library_mutex);
  return g_library;
}

}  // namespace lucid::ops
