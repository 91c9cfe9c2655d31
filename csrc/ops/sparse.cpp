// The sparse-times-dense product op (ops/sparse.h): operand checks, the output, and
// the launch on dense operands.
#include "ops/sparse.h"

#include "core/error.h"
#include "ops/elementwise.h"
#include "ops/prims/sparse.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

void check_index(const char* op, const TensorImpl& t, const char* what, int64_t length) {
  LUCID_CHECK(t.dtype() == Dtype::I64 && t.ndim() == 1 && t.shape()[0] == length, RuntimeError, op, ": ", what,
              " must be a 1-d int64 tensor of ", length, " entries, got ", dtype_name(t.dtype()), " ",
              shape_str(t.shape()));
}

}  // namespace

TensorPtr csr_matmul(const TensorPtr& crow, const TensorPtr& col, const TensorPtr& values, const TensorPtr& b,
                     int64_t rows) {
  const char* op = "sparse.mm";
  LUCID_CHECK(rows >= 0, RuntimeError, op, ": a sparse matrix of ", rows, " rows");
  LUCID_CHECK(values->ndim() == 1, RuntimeError, op, ": the sparse operand's values must be 1-d (a sparse ",
              "matrix without dense dims), got ", shape_str(values->shape()));
  check_index(op, *crow, "crow_indices", rows + 1);
  check_index(op, *col, "col_indices", values->shape()[0]);
  LUCID_CHECK(b->ndim() == 2, RuntimeError, op, ": the dense operand must be a matrix, got ", b->ndim(), "-d");
  LUCID_CHECK(values->dtype() == Dtype::F32 || values->dtype() == Dtype::F64, NotImplementedError, op,
              ": sparse products are implemented for float32 and float64, got ", dtype_name(values->dtype()));
  LUCID_CHECK(b->dtype() == values->dtype(), RuntimeError, op, ": expected the dense operand in ",
              dtype_name(values->dtype()), " (the sparse operand's dtype), got ", dtype_name(b->dtype()));
  const Device device = op_device(op, {crow.get(), col.get(), values.get(), b.get()});
  TensorPtr out = TensorImpl::empty({rows, b->shape()[1]}, values->dtype(), device);
  if (out->numel() == 0) return out;
  TensorPtr dense = contiguous(b), crow_c = contiguous(crow), col_c = contiguous(col), vals = contiguous(values);
  launch(CsrMatmul{}, {out.get()}, {crow_c.get(), col_c.get(), vals.get(), dense.get()});
  return out;
}

}  // namespace lucid::ops
