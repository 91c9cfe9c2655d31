// cuBLASLt, loaded when the first GPU product runs (dlopen), so that `import lucid`
// needs no CUDA library on machines without a GPU: the extension links only the static
// CUDA runtime (docs/ENGINE.md, "Core knows no CUDA").
#pragma once

#include <cublasLt.h>

namespace lucid::cuda {

struct CublasLtApi {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtMatmulDescCreate) desc_create;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set;
  decltype(&cublasLtMatrixLayoutCreate) layout_create;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
  decltype(&cublasLtMatmulAlgoCheck) algo_check;
  decltype(&cublasLtMatmul) matmul;
};

// The library's entry points; RuntimeError naming the file when it cannot be loaded.
const CublasLtApi& cublaslt();
// The handle of `device` (one per device, made on first use).
cublasLtHandle_t cublaslt_handle(int device);
// Throws RuntimeError naming the call when status is not CUBLAS_STATUS_SUCCESS.
void check_cublas(cublasStatus_t status, const char* call);

}  // namespace lucid::cuda
