// GPU kernel of the sparse-times-dense product (ops/prims/sparse.h): cuSPARSE's SpMM,
// opened with dlopen at the first GPU sparse product (library.h), on the device's
// stream with its work area from the caching allocator.
//
// CSR_ALG2 takes the row-major dense operands as they are and gives the same bits on
// every run (the non-transposed sparse operand: a transposed one would add with atomics,
// so the op takes A^T's own CSR instead, which python/lucid/_sparse.py builds once per
// sparse tensor). The descriptors are host-side structs, made per call.
#include <cusparse.h>

#include <algorithm>
#include <mutex>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/library.h"
#include "backend/cuda/register.h"
#include "backend/cuda/runtime.h"
#include "backend/cuda/stream.h"
#include "core/error.h"
#include "ops/prims/sparse.h"

namespace lucid::cuda {

namespace {

constexpr const char* kCusparse = "libcusparse.so.12";

struct CusparseApi {
  decltype(&cusparseCreate) create;
  decltype(&cusparseSetStream) set_stream;
  decltype(&cusparseCreateConstCsr) create_csr;
  decltype(&cusparseCreateConstDnMat) create_const_dense;
  decltype(&cusparseCreateDnMat) create_dense;
  decltype(&cusparseDestroySpMat) destroy_sparse;
  decltype(&cusparseDestroyDnMat) destroy_dense;
  decltype(&cusparseSpMM_bufferSize) spmm_size;
  decltype(&cusparseSpMM) spmm;
};

const CusparseApi& cusparse() {
  static const CusparseApi api = [] {
    void* lib = open_library({kCusparse, "libcusparse.so.11", "libcusparse.so"}, "GPU sparse products need cuSPARSE",
                             "Install the CUDA toolkit's cuSPARSE or add its folder to LD_LIBRARY_PATH.");
    CusparseApi a{};
    bind_symbol(lib, kCusparse, a.create, "cusparseCreate");
    bind_symbol(lib, kCusparse, a.set_stream, "cusparseSetStream");
    bind_symbol(lib, kCusparse, a.create_csr, "cusparseCreateConstCsr");
    bind_symbol(lib, kCusparse, a.create_const_dense, "cusparseCreateConstDnMat");
    bind_symbol(lib, kCusparse, a.create_dense, "cusparseCreateDnMat");
    bind_symbol(lib, kCusparse, a.destroy_sparse, "cusparseDestroySpMat");
    bind_symbol(lib, kCusparse, a.destroy_dense, "cusparseDestroyDnMat");
    bind_symbol(lib, kCusparse, a.spmm_size, "cusparseSpMM_bufferSize");
    bind_symbol(lib, kCusparse, a.spmm, "cusparseSpMM");
    return a;
  }();
  return api;
}

void check_cusparse(cusparseStatus_t status, const char* call) {
  LUCID_CHECK(status == CUSPARSE_STATUS_SUCCESS, RuntimeError, "cuSPARSE error ", int(status), " in ", call);
}

cusparseHandle_t cusparse_handle(int device) {
  static std::mutex mu;
  static cusparseHandle_t handles[kMaxDevices] = {};  // never destroyed, as the streams
  std::lock_guard<std::mutex> lock(mu);
  if (!handles[device]) {
    DeviceGuard guard(device);
    check_cusparse(cusparse().create(&handles[device]), "cusparseCreate");
  }
  check_cusparse(cusparse().set_stream(handles[device], stream(device)), "cusparseSetStream");
  return handles[device];
}

// The descriptors of one call, destroyed with it (also when a call throws).
struct Descriptors {
  cusparseConstSpMatDescr_t a = nullptr;
  cusparseConstDnMatDescr_t b = nullptr;
  cusparseDnMatDescr_t c = nullptr;
  ~Descriptors() {
    if (a) cusparse().destroy_sparse(a);
    if (b) cusparse().destroy_dense(b);
    if (c) cusparse().destroy_dense(c);
  }
};

void csr_matmul_kernel(const ops::Primitive&, ops::Outputs outs, ops::Inputs ins) {
  const TensorImpl *crow = ins[0], *col = ins[1], *values = ins[2], *b = ins[3], *out = outs[0];
  const int64_t m = out->shape()[0], n = out->shape()[1], k = b->shape()[0], nnz = values->shape()[0];
  const int device = out->device().index;
  DeviceGuard guard(device);
  if (nnz == 0 || k == 0) {  // (an empty sparse operand: a zero product)
    LUCID_CUDA_CHECK(cudaMemsetAsync(out->data_ptr(), 0, out->nbytes(), stream(device)));
    return;
  }
  const CusparseApi& api = cusparse();
  const cudaDataType type = values->dtype() == Dtype::F64 ? CUDA_R_64F : CUDA_R_32F;
  Descriptors d;
  check_cusparse(api.create_csr(&d.a, m, k, nnz, crow->data_ptr(), col->data_ptr(), values->data_ptr(),
                                CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO, type),
                 "cusparseCreateConstCsr");
  check_cusparse(api.create_const_dense(&d.b, k, n, n, b->data_ptr(), type, CUSPARSE_ORDER_ROW),
                 "cusparseCreateConstDnMat");
  check_cusparse(api.create_dense(&d.c, m, n, n, out->data_ptr(), type, CUSPARSE_ORDER_ROW), "cusparseCreateDnMat");
  const double one64 = 1, zero64 = 0;
  const float one32 = 1, zero32 = 0;
  const void* alpha = type == CUDA_R_64F ? static_cast<const void*>(&one64) : &one32;
  const void* beta = type == CUDA_R_64F ? static_cast<const void*>(&zero64) : &zero32;
  cusparseHandle_t h = cusparse_handle(device);
  const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t bytes = 0;
  check_cusparse(api.spmm_size(h, op, op, alpha, d.a, d.b, beta, d.c, type, CUSPARSE_SPMM_CSR_ALG2, &bytes),
                 "cusparseSpMM_bufferSize");
  GpuStorage work = CachingAllocator::instance().allocate(std::max<size_t>(bytes, 1), device);
  check_cusparse(api.spmm(h, op, op, alpha, d.a, d.b, beta, d.c, type, CUSPARSE_SPMM_CSR_ALG2, work.ptr()),
                 "cusparseSpMM");
}

}  // namespace

void register_sparse_kernels() { ops::register_kernel(ops::Prim::CsrMatmul, DeviceType::GPU, csr_matmul_kernel); }

}  // namespace lucid::cuda
