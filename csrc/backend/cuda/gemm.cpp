// The Gemm primitive on the GPU through cuBLASLt (Note [Products through cuBLASLt]).
//
// Note [Products through cuBLASLt]
// cuBLASLt is column-major; lucid's out is a row-major [m, n], which read column-major
// is out^T [n, m] = x^T a^T. So cuBLASLt's first operand is x (read as x^T: op N when
// x's rows are contiguous, op T when its columns are) and its second is a. Views whose
// rows and columns are both strided are copied to a contiguous layout first; broadcast
// batches (stride 0) are read in place as strided batches. Each distinct shape, layout
// and dtype gets its descriptors and algorithm once (the heuristic costs ~200 us; a hit
// in the cache ~2 us), keyed by everything that decides them, pointer alignment
// included. float32 is exact by default (CUBLAS_COMPUTE_32F), as PyTorch's matmul;
// lucid.backends.cuda.matmul.allow_tf32 selects TF32 tensor cores. float16 and
// bfloat16 use tensor cores with float accumulation.
//
// Gemm's bias and row_sums (Note [A linear layer's bias in its products], ops/linalg.cpp)
// are cuBLASLt epilogues: out^T's rows are out's columns, so a bias over out's columns
// is CUBLASLT_EPILOGUE_BIAS (one value a row of D), and the sums of a's rows, of
// cuBLASLt's B over k, are CUBLASLT_EPILOGUE_BGRADB (one a column of D). Where the
// heuristic has no algorithm with the epilogue, the kernel does without: the bias
// spread into C, the row sums as a second product with a column of ones. Gemm's relu
// (Note [Product epilogues], ops/fusion_products.cpp) is CUBLASLT_EPILOGUE_RELU or
// RELU_BIAS by the algorithm the product without relu runs, and otherwise the relu
// kernel run on out in place.
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/check.h"
#include "backend/cuda/cublaslt.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/gemm.h"
#include "backend/cuda/gemm_tuning.h"
#include "backend/cuda/register.h"
#include "backend/cuda/stream.h"
#include "core/copy.h"
#include "ops/prims/elementwise.h"
#include "ops/prims/linalg.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

constexpr size_t kWorkspaceBytes = size_t(32) << 20;

// One persistent workspace per device (never freed, like the streams and handles).
void* workspace(int device) {
  static std::mutex mu;
  static GpuStorage* spaces = new GpuStorage[kMaxDevices];  // leaked: no teardown at exit
  std::lock_guard<std::mutex> lock(mu);
  if (!spaces[device].ptr()) spaces[device] = CachingAllocator::instance().allocate(kWorkspaceBytes, device);
  return spaces[device].ptr();
}

// A [rows, cols] matrix operand as cuBLASLt sees it (column-major).
struct MatrixView {
  bool transposed;  // op T
  int64_t rows, cols, ld;  // of the stored (column-major) matrix
};

// x^T of a row-major [r, c] matrix with element strides (rs, cs), or nothing when
// neither its rows nor its columns are contiguous.
std::optional<MatrixView> as_transposed(int64_t r, int64_t c, int64_t rs, int64_t cs) {
  if (c == 1) cs = 1;  // a size-1 dim's stride is never used
  if (r == 1) rs = std::max<int64_t>(c, 1);
  if (cs == 1 && rs >= std::max<int64_t>(c, 1)) return MatrixView{false, c, r, rs};  // rows contiguous: x^T stored
  if (c == 1 && r >= 1) return MatrixView{false, 1, r, 1};
  if (rs == 1 && cs >= std::max<int64_t>(r, 1)) return MatrixView{true, r, c, cs};  // columns contiguous: x stored
  return std::nullopt;
}

struct Types {
  cudaDataType_t data, scale;
  cublasComputeType_t compute;
};

Types types_of(Dtype d, bool tf32) {
  switch (d) {
    case Dtype::F32: return {CUDA_R_32F, CUDA_R_32F, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
    case Dtype::F64: return {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case Dtype::F16: return {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case Dtype::BF16: return {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case Dtype::C128: return {CUDA_C_64F, CUDA_C_64F, CUBLAS_COMPUTE_64F};
    default: return {CUDA_C_32F, CUDA_C_32F, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
  }
}

int alignment(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  for (int b = 16; b > 1; b /= 2)
    if (a % b == 0) return b;
  return 1;
}

// Everything that decides the descriptors and the algorithm.
using PlanKey = std::tuple<int, int, bool, bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                           int64_t, int64_t, int64_t, int, int, int, int>;

struct Plan {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a, b, c;  // cuBLASLt's A (our x), B (our a), C/D (out)
  // the heuristic's candidates, its pick first (none: an epilogue it cannot do)
  std::vector<cublasLtMatmulAlgo_t> algos;
  size_t chosen = 0;   // the one run (Note [Tuned products], gemm_tuning.h)
  bool tuned = false;  // chosen is final
};

void set_batch(const CublasLtApi& lt, cublasLtMatrixLayout_t layout, int64_t count, int64_t stride) {
  const int32_t count32 = int32_t(count);
  check_cublas(lt.layout_set(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count32, sizeof count32), "layout batch");
  check_cublas(lt.layout_set(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
               "layout batch stride");
}

// The plan of a product: its descriptors, and the heuristic's candidates for them, or,
// given `only`, that one algorithm if it can run them (none otherwise).
Plan& plan_for(const PlanKey& key, int device, const Types& t, const MatrixView& xa, const MatrixView& aa,
                     int64_t n, int64_t m, int64_t k, int64_t batch, int64_t sx, int64_t sa, int64_t sc,
                     int align_x, int align_a, int align_c, cublasLtEpilogue_t epilogue,
                     const cublasLtMatmulAlgo_t* only = nullptr) {
  static std::mutex mu;
  static std::map<PlanKey, Plan> plans;  // descriptors live for the process
  std::lock_guard<std::mutex> lock(mu);
  auto it = plans.find(key);
  if (it != plans.end()) return it->second;
  const CublasLtApi& lt = cublaslt();
  Plan p{};
  check_cublas(lt.desc_create(&p.desc, t.compute, t.scale), "cublasLtMatmulDescCreate");
  const cublasOperation_t op_x = xa.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = aa.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  check_cublas(lt.desc_set(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_x, sizeof op_x), "desc transa");
  check_cublas(lt.desc_set(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_a, sizeof op_a), "desc transb");
  check_cublas(lt.desc_set(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue), "desc epilogue");
  check_cublas(lt.layout_create(&p.a, t.data, uint64_t(xa.rows), uint64_t(xa.cols), xa.ld), "layout x");
  check_cublas(lt.layout_create(&p.b, t.data, uint64_t(aa.rows), uint64_t(aa.cols), aa.ld), "layout a");
  check_cublas(lt.layout_create(&p.c, t.data, uint64_t(n), uint64_t(m), n), "layout out");
  if (batch > 1) {
    set_batch(lt, p.a, batch, sx);
    set_batch(lt, p.b, batch, sa);
    set_batch(lt, p.c, batch, sc);
  }
  if (only) {
    cublasLtMatmulHeuristicResult_t r{};
    if (lt.algo_check(cublaslt_handle(device), p.desc, p.a, p.b, p.c, p.c, only, &r) == CUBLAS_STATUS_SUCCESS &&
        r.workspaceSize <= kWorkspaceBytes)
      p.algos.push_back(*only);
    return plans.emplace(key, std::move(p)).first->second;
  }
  cublasLtMatmulPreference_t pref;
  check_cublas(lt.pref_create(&pref), "cublasLtMatmulPreferenceCreate");
  const uint64_t ws = kWorkspaceBytes;
  const uint32_t ax = uint32_t(align_x), aa32 = uint32_t(align_a), ac = uint32_t(align_c);
  check_cublas(lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws), "pref workspace");
  check_cublas(lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &ax, sizeof ax), "pref align a");
  check_cublas(lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &aa32, sizeof aa32), "pref align b");
  check_cublas(lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &ac, sizeof ac), "pref align c");
  check_cublas(lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &ac, sizeof ac), "pref align d");
  cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
  int found = 0;
  const cublasStatus_t status = lt.heuristic(cublaslt_handle(device), p.desc, p.a, p.b, p.c, p.c, pref, kCandidates,
                                             results, &found);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED && epilogue != CUBLASLT_EPILOGUE_DEFAULT) found = 0;
  else check_cublas(status, "cublasLtMatmulAlgoGetHeuristic");
  lt.pref_destroy(pref);
  LUCID_CHECK(found > 0 || epilogue != CUBLASLT_EPILOGUE_DEFAULT, RuntimeError, "cuBLASLt has no algorithm for a ",
              m, "x", k, " @ ", k, "x", n, " product of this dtype and layout");
  for (int i = 0; i < found; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS) p.algos.push_back(results[i].algo);
  return plans.emplace(key, std::move(p)).first->second;
}

// alpha / beta in the scale type, as bytes cuBLASLt reads through a host pointer.
struct ScaleValue {
  alignas(16) unsigned char bytes[16];
};
ScaleValue scale_value(const Scalar& s, cudaDataType_t type) {
  ScaleValue v{};
  const std::complex<double> z = std::visit([](auto x) -> std::complex<double> {
    if constexpr (std::is_same_v<decltype(x), std::complex<double>>) return x;
    else return std::complex<double>(double(x), 0.0);
  }, s);
  if (type == CUDA_R_64F) {
    const double d = z.real();
    std::memcpy(v.bytes, &d, sizeof d);
  } else if (type == CUDA_C_32F) {
    const float c[2] = {float(z.real()), float(z.imag())};
    std::memcpy(v.bytes, c, sizeof c);
  } else if (type == CUDA_C_64F) {
    std::memcpy(v.bytes, &z, sizeof z);
  } else {
    const float f = float(z.real());
    std::memcpy(v.bytes, &f, sizeof f);
  }
  return v;
}

// out = relu(out) by the unary kernel: Gemm's relu where no epilogue did it.
void relu_in_place(TensorImpl& out) {
  ops::Unary relu;
  relu.op = ops::UnaryOp::Relu;
  TensorImpl* const o[] = {&out};
  const TensorImpl* const i[] = {&out};
  ops::kernel_of(ops::Prim::Unary, DeviceType::GPU)(relu, Outputs(o, 1), Inputs(i, 1));
}

void gemm_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::Gemm>(prim);
  TensorImpl& out = *outs[0];
  const Dtype dtype = out.dtype();
  const int64_t nd = out.ndim();
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = ins[0]->shape()[nd - 1];
  if (out.numel() == 0) return;
  const int64_t item = int64_t(out.itemsize());
  // The batch dims, merged where a, x and out all allow it.
  Shape batch(out.shape().begin(), out.shape().end() - 2);
  auto batch_strides = [&](const TensorImpl& t) { return Stride(t.stride().begin(), t.stride().end() - 2); };
  Stride sa = batch_strides(*ins[0]), sx = batch_strides(*ins[1]), sc = batch_strides(out);
  batch = collapse_dims(batch, {&sa, &sx, &sc});
  TensorPtr a_dense, x_dense;
  const TensorImpl* a = ins[0];
  const TensorImpl* x = ins[1];
  auto matrix = [&](const TensorImpl& t, int64_t r, int64_t c) {
    return as_transposed(r, c, t.stride()[nd - 2] / item, t.stride()[nd - 1] / item);
  };
  const bool floating = dtype == Dtype::F32 || dtype == Dtype::F64 || dtype == Dtype::F16 || dtype == Dtype::BF16 ||
                        is_complex(dtype);
  if (!floating || k == 0 || batch.size() > 1) {
    // The plain kernel: integers, empty sums, and batches that do not merge into one
    // strided batch.
    LUCID_CHECK(batch.size() <= 8, RuntimeError, "matmul on gpu: more than 8 batch dimensions that do not merge");
    NaiveGemm g{m, n, k, int(batch.size()), {}, {}, {}, {},
                a->stride()[nd - 2] / item, a->stride()[nd - 1] / item, x->stride()[nd - 2] / item,
                x->stride()[nd - 1] / item};
    for (size_t d = 0; d < batch.size(); ++d) {
      g.batch[d] = batch[d];
      g.a_batch[d] = sa[d] / item;
      g.b_batch[d] = sx[d] / item;
      g.c_batch[d] = sc[d] / item;
    }
    naive_gemm(g, out, *a, *x, p.alpha, p.beta);
    if (p.relu) relu_in_place(out);
    return;
  }
  std::optional<MatrixView> xa = matrix(*x, k, n), aa = matrix(*a, m, k);
  if (!xa) {  // neither rows nor columns contiguous: a contiguous copy
    x_dense = x->clone();
    x = x_dense.get();
    sx = batch.empty() ? Stride{} : Stride{k * n * item};
    xa = matrix(*x, k, n);
  }
  if (!aa) {
    a_dense = a->clone();
    a = a_dense.get();
    sa = batch.empty() ? Stride{} : Stride{m * k * item};
    aa = matrix(*a, m, k);
  }
  const int64_t count = batch.empty() ? 1 : batch[0];
  const int64_t bx = batch.empty() ? 0 : sx[0] / item, ba = batch.empty() ? 0 : sa[0] / item,
                bc = batch.empty() ? 0 : sc[0] / item;
  const int device = out.device().index;
  const Types t = types_of(dtype, p.allow_tf32);
  const int al_x = alignment(x->data_ptr()), al_a = alignment(a->data_ptr()), al_c = alignment(out.data_ptr());
  DeviceGuard guard(device);
  const ScaleValue alpha = scale_value(p.alpha, t.scale);
  // out = alpha * a @ x + beta * c, with the epilogue writing or reading `vector`;
  // false when cuBLASLt has no algorithm for the epilogue (nothing is run). With `relu`,
  // the epilogue's relu form (RELU, RELU_BIAS) by the algorithm the plain epilogue runs:
  // the same sums in the same order, so the bits of the product and then relu's kernel
  // (Note [Product epilogues]); false when that algorithm cannot take it, or when tuning
  // may still change it.
  auto product = [&](cublasLtEpilogue_t epilogue, void* vector, const void* c, const Scalar& beta,
                     bool relu = false) {
    if (vector && alignment(vector) < 16) return false;
    auto plan_of = [&](cublasLtEpilogue_t e, const cublasLtMatmulAlgo_t* only) -> Plan& {
      const PlanKey key{int(dtype), device, p.allow_tf32, xa->transposed, aa->transposed, m, n, k, xa->ld, aa->ld,
                        count, bx, ba, bc, al_x, al_a, al_c, int(e)};
      return plan_for(key, device, t, *xa, *aa, n, m, k, count, bx, ba, bc, al_x, al_a, al_c, e, only);
    };
    Plan* chosen_plan = &plan_of(epilogue, nullptr);
    if (chosen_plan->algos.empty()) return false;
    if (relu) {
      if (gemm_tuning_enabled()) return false;
      const Plan& plain = *chosen_plan;
      chosen_plan = &plan_of(epilogue == CUBLASLT_EPILOGUE_BIAS ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU,
                             &plain.algos[plain.chosen]);
      if (chosen_plan->algos.empty()) return false;
    }
    Plan& plan = *chosen_plan;
    const ScaleValue b = scale_value(beta, t.scale);
    const CublasLtApi& lt = cublaslt();
    const cudaStream_t s = stream(device);
    // One product into d by `algo`, the epilogue's vector v. (With beta == 0 cuBLASLt
    // does not read C: out may hold anything, as BLAS allows.)
    auto enqueue = [&](const cublasLtMatmulAlgo_t& algo, void* d, void* v) {
      if (v) check_cublas(lt.desc_set(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &v, sizeof v), "desc bias");
      return lt.matmul(cublaslt_handle(device), plan.desc, alpha.bytes, x->data_ptr(), plan.a, a->data_ptr(), plan.b,
                       b.bytes, c, plan.c, d, plan.c, &algo, workspace(device), kWorkspaceBytes, s);
    };
    // The epilogue's vector is an attribute of the cached descriptor, and the choice
    // of algorithm is made once: both under one lock.
    static std::mutex plan_mu;
    std::lock_guard<std::mutex> lock(plan_mu);
    if (!plan.tuned && !capturing(s)) {
      if (gemm_tuning_enabled() && plan.algos.size() > 1) {
        // trials write scratch outputs, never out or its vector (Note [Tuned products])
        const TensorPtr scratch = TensorImpl::empty(out.shape(), dtype, out.device());
        const TensorPtr scratch_sums =
            epilogue == CUBLASLT_EPILOGUE_BGRADB ? TensorImpl::empty({m}, dtype, out.device()) : nullptr;
        void* v = scratch_sums ? scratch_sums->data_ptr() : vector;
        plan.chosen = size_t(fastest_candidate(int(plan.algos.size()), s, [&](int i) {
          return enqueue(plan.algos[size_t(i)], scratch->data_ptr(), v) == CUBLAS_STATUS_SUCCESS;
        }));
      }
      plan.tuned = true;
    }
    check_cublas(enqueue(plan.algos[plan.chosen], out.data_ptr(), vector), "cublasLtMatmul");
    return true;
  };
  if (p.bias) {
    void* bias = ins[2]->data_ptr();
    if (p.relu && product(CUBLASLT_EPILOGUE_BIAS, bias, out.data_ptr(), Scalar(int64_t(0)), true)) return;
    if (!product(CUBLASLT_EPILOGUE_BIAS, bias, out.data_ptr(), Scalar(int64_t(0)))) {
      const TensorPtr spread = TensorImpl::view_of(*ins[2], {m, n}, {0, item}, ins[2]->storage_offset())->clone();
      product(CUBLASLT_EPILOGUE_DEFAULT, nullptr, spread->data_ptr(), Scalar(int64_t(1)));
    }
    if (p.relu) relu_in_place(out);
    return;
  }
  if (p.row_sums) {
    if (product(CUBLASLT_EPILOGUE_BGRADB, outs[1]->data_ptr(), out.data_ptr(), p.beta)) return;
    product(CUBLASLT_EPILOGUE_DEFAULT, nullptr, out.data_ptr(), p.beta);
    // the sums as a second product, a @ ones
    const TensorPtr ones = TensorImpl::empty({k, 1}, dtype, out.device());
    ones->initialize(Scalar(int64_t(1)));
    const TensorPtr sums = TensorImpl::view_of(*outs[1], {m, 1}, {item, item}, outs[1]->storage_offset());
    TensorImpl* const sums_out[] = {sums.get()};
    const TensorImpl* const sums_in[] = {ins[0], ones.get()};
    ops::Gemm plain;
    plain.allow_tf32 = p.allow_tf32;
    gemm_kernel(plain, sums_out, sums_in);
    return;
  }
  if (p.relu && product(CUBLASLT_EPILOGUE_DEFAULT, nullptr, out.data_ptr(), p.beta, true)) return;
  product(CUBLASLT_EPILOGUE_DEFAULT, nullptr, out.data_ptr(), p.beta);
  if (p.relu) relu_in_place(out);
}

}  // namespace

void register_linalg_kernels() { ops::register_kernel(ops::Prim::Gemm, DeviceType::GPU, gemm_kernel); }

}  // namespace lucid::cuda
