#include "ops/linalg.h"

#include <atomic>

#include "autograd/record.h"
#include "ops/elementwise.h"
#include "ops/prims/linalg.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {
std::atomic<bool> g_allow_tf32{false};
}  // namespace

void set_matmul_allow_tf32(bool allow) { g_allow_tf32.store(allow, std::memory_order_relaxed); }
bool matmul_allow_tf32() { return g_allow_tf32.load(std::memory_order_relaxed); }


namespace {

using autograd::Grads;

// ---- checks ------------------------------------------------------------------------

// The checks every product makes on its two matrix operands.
void check_operands(const char* op, const char* kernel, const TensorPtr& a, const TensorPtr& b) {
  op_device(op, {a.get(), b.get()});
  LUCID_CHECK(a->dtype() == b->dtype(), RuntimeError, "expected m1 and m2 to have the same dtype, but got: ",
              dtype_name(a->dtype()), " != ", dtype_name(b->dtype()));
  LUCID_CHECK(a->dtype() != Dtype::Bool, NotImplementedError, "\"", kernel, "\" not implemented for 'Bool'");
}

// alpha/beta must be representable in the product's dtype.
void check_coefficient(const Scalar& s, Dtype d) {
  LUCID_CHECK(!(std::holds_alternative<std::complex<double>>(s) && !is_complex(d)), RuntimeError,
              "value cannot be converted to type ", dtype_name(d), " without overflow");
}

std::string dims_str(const Shape& s, size_t from) {
  std::string r;
  for (size_t i = from; i < s.size(); ++i) {
    if (i > from) r += 'x';
    r += std::to_string(s[i]);
  }
  return r;
}

Scalar conj_scalar(const Scalar& s) {
  if (auto* c = std::get_if<std::complex<double>>(&s)) return std::conj(*c);
  return s;
}
TensorPtr scaled(const TensorPtr& t, const Scalar& s) { return is_one(s) ? t : mul(t, s); }

// The conjugate transpose of the last two dims (a view for real dtypes).
TensorPtr mH(const TensorPtr& t) { return transpose(conj(t), -2, -1); }

TensorPtr mT(const TensorPtr& t) { return transpose(t, -2, -1); }

// Whether t is a matrix stored column by column: the transpose of a contiguous one, as
// a linear layer's weight.T is.
bool column_major(const TensorImpl& t) {
  if (t.ndim() != 2 || t.shape()[0] < 2 || t.shape()[1] < 2) return false;
  const int64_t item = int64_t(t.itemsize());
  return t.stride()[0] == item && t.stride()[1] == t.shape()[0] * item;
}

// ---- the product -----------------------------------------------------------------------

// When a's batch and row dims can merge into one strided dim (a contiguous batch of
// matrices, the usual input of a linear layer), the element stride of that dim;
// a @ b with a 2-D b is then one large gemm instead of a loop of small ones.
std::optional<int64_t> merged_row_stride(const TensorImpl& a) {
  const int64_t nd = a.ndim();
  std::optional<int64_t> row_stride;
  int64_t expected = 0;
  for (int64_t d = nd - 2; d >= 0; --d) {
    if (a.shape()[d] == 1) continue;
    if (!row_stride) row_stride = a.stride()[d];
    else if (a.stride()[d] != expected) return std::nullopt;
    expected = a.stride()[d] * a.shape()[d];
  }
  return row_stride.value_or(a.shape()[nd - 1] * int64_t(a.itemsize()));
}

// Note [A linear layer's bias in its products]
// A linear layer's product adds its bias to every row of the result, and its weight's
// gradient comes with the bias's, the sum of the output gradient's rows. Both ride in
// the product (Gemm's bias and row_sums): cuBLASLt adds a bias and sums an operand
// over k in the product's epilogue (CUBLASLT_EPILOGUE_BIAS, BGRADB), so a layer's
// step loses the copy that spread the bias over the result and the column reduction
// of its gradient: on the GPU, a launch each, two fifths of the MLP step's
// non-product kernels. The CPU's kernel does the same work after its product.
// Only for what the epilogues take: a 2-D product of a real floating dtype (a
// batch, float64 and complex keep the copy and the sum). plain: the product is 2-D and
// not empty.
bool is_row_bias(const TensorImpl& input, const Shape& out_shape, bool plain) {
  const Dtype d = input.dtype();
  if (!plain || !(d == Dtype::F32 || d == Dtype::F16 || d == Dtype::BF16)) return false;
  const int64_t n = out_shape.back(), item = int64_t(input.itemsize());
  if (input.numel() != n || out_shape[0] < 1 || n < 1) return false;
  // [n] or [1, n], its elements adjacent
  if (input.ndim() == 1) return n == 1 || input.stride()[0] == item;
  return input.ndim() == 2 && input.shape()[0] == 1 && (n == 1 || input.stride()[1] == item);
}

// alpha * a @ b (+ beta * input), computed without recording: a [..., m, k] and
// b [..., k, n] (at least 2-D, one dtype, k checked by the caller) with broadcast
// batch dims; input (optional) broadcasts to the result and is not read when beta is 0.
TensorPtr product_forward(const TensorPtr& a, const TensorPtr& b, const TensorPtr& input, const Scalar& beta,
                          const Scalar& alpha) {
  autograd::GradModeGuard no_grad(false);
  const int64_t na = a->ndim(), nb = b->ndim();
  Shape batch = broadcast_shapes(Shape(a->shape().begin(), a->shape().end() - 2),
                                 Shape(b->shape().begin(), b->shape().end() - 2));
  const int64_t m = a->shape()[na - 2], k = a->shape()[na - 1], n = b->shape()[nb - 1];
  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  TensorPtr out = TensorImpl::empty(out_shape, a->dtype(), a->device());
  Gemm gemm;
  gemm.alpha = alpha;
  gemm.allow_tf32 = matmul_allow_tf32();
  if (input) {
    TensorPtr spread = expand(input, out_shape);  // raises PyTorch's message when it cannot
    if (is_one(beta) && is_row_bias(*input, out_shape, a->ndim() == 2 && b->ndim() == 2 && a->numel() > 0)) {
      gemm.bias = true;
      launch(gemm, {out.get()}, {a.get(), b.get(), TensorImpl::view_of(*input, {n}, {int64_t(input->itemsize())},
                                                                         input->storage_offset()).get()});
      return out;
    }
    if (!is_zero(beta)) {
      out->copy_from(*spread);
      gemm.beta = beta;
    }
  }
  if (nb == 2 && na > 2) {
    // A batch whose rows do not merge (the [S, B, D] input of attention seen as
    // [B, S, D]) is copied to contiguous rows first: one large gemm packs b once,
    // where a loop of small products packed it again for every batch entry (128
    // products of 8 rows in a Transformer layer's input projection). Not for a
    // few output columns: there the copy would cost as much as the products.
    TensorPtr rows_of = a;
    std::optional<int64_t> rs = merged_row_stride(*a);
    if (!rs && n >= 8) {
      rows_of = a->clone();
      rs = merged_row_stride(*rows_of);
    }
    if (rs) {
      const int64_t rows = numel_of(Shape(a->shape().begin(), a->shape().end() - 1));
      TensorPtr a2 = TensorImpl::view_of(*rows_of, {rows, k}, {*rs, rows_of->stride()[na - 1]},
                                         rows_of->storage_offset());
      TensorPtr out2 = TensorImpl::view_of(*out, {rows, n}, contiguous_strides({rows, n}, int64_t(out->itemsize())), 0);
      launch(gemm, {out2.get()}, {a2.get(), b.get()});
      return out;
    }
  }
  Shape a_shape = batch, b_shape = batch;
  a_shape.insert(a_shape.end(), {m, k});
  b_shape.insert(b_shape.end(), {k, n});
  launch(gemm, {out.get()}, {expand(a, a_shape).get(), expand(b, b_shape).get()});
  return out;
}

// {a @ b, the sums of a's rows} for 2-D a and b of a real floating dtype, computed
// without recording: a linear layer's weight and bias gradients in one product (Note
// [A linear layer's bias in its products]).
std::pair<TensorPtr, TensorPtr> product_with_row_sums(const TensorPtr& a, const TensorPtr& b) {
  const int64_t m = a->shape()[0], n = b->shape()[1];
  TensorPtr out = TensorImpl::empty({m, n}, a->dtype(), a->device());
  TensorPtr sums = TensorImpl::empty({m}, a->dtype(), a->device());
  Gemm gemm;
  gemm.allow_tf32 = matmul_allow_tf32();
  gemm.row_sums = true;
  launch(gemm, {out.get(), sums.get()}, {a.get(), b.get()});
  return {out, sums};
}

// The recorded product: out = alpha * a @ b (+ beta * input). The gradients are
// products again (g @ b^H and a^H @ g), so double backward works; the engine sums
// gradients of broadcast batch dims down to each input's shape.
TensorPtr product(const char* name, const TensorPtr& a, const TensorPtr& b, const TensorPtr& input = nullptr,
                  const Scalar& beta = Scalar(int64_t(1)), const Scalar& alpha = Scalar(int64_t(1))) {
  TensorPtr out = product_forward(a, b, input, beta, alpha);
  std::vector<TensorPtr> inputs = input ? std::vector<TensorPtr>{input, a, b} : std::vector<TensorPtr>{a, b};
  if (autograd::needs_grad(inputs)) {
    const size_t off = input ? 1 : 0;
    // a batched a times a 2-D b: b's gradient is one gemm over the merged rows.
    const bool merge_rows = b->ndim() == 2 && a->ndim() > 2;
    const bool a_columns = column_major(*a), b_columns = column_major(*b);
    // a linear layer's bias: its gradient comes with the weight's (Note [A linear
    // layer's bias in its products])
    const bool row_bias =
        input && is_one(beta) && b_columns && is_row_bias(*input, out->shape(), a->ndim() == 2 && a->numel() > 0);
    const Shape input_shape = input ? input->shape() : Shape{};
    Scalar cb = conj_scalar(beta), ca = conj_scalar(alpha);
    auto node = autograd::record(name, inputs, {out}, [=](const Node& nd, const Grads& g) {
      Grads r(off + 2);
      TensorPtr sa = nd.saved(0), sb = nd.saved(1);
      const bool with_bias = row_bias && nd.next_edges[0].valid() && nd.next_edges[2].valid() &&
                             !autograd::grad_enabled();  // (create_graph: the sum, differentiable)
      if (with_bias) {
        auto [gt, gbias] = product_with_row_sums(mT(g[0]), sa);  // g^T @ a: b's gradient, transposed
        r[0] = reshape(gbias, input_shape);
        r[2] = scaled(mT(gt), ca);
      } else if (off && nd.next_edges[0].valid()) {
        r[0] = scaled(g[0], cb);  // (a bias: beta 1, no multiply)
      }
      // A column-major operand's gradient is computed column-major too, as the
      // transpose of the transposed product (torch's mm_mat1/mat2_backward): the
      // gradient of a linear layer's weight.T then reaches the weight contiguous,
      // with no transposing cast and copy on the way.
      if (nd.next_edges[off].valid()) {
        const bool by_columns = a_columns && g[0]->ndim() == 2;
        TensorPtr ga = by_columns ? mT(batched_product(conj(sb), mT(g[0]))) : batched_product(g[0], mH(sb));
        r[off] = scaled(ga, ca);
      }
      if (nd.next_edges[off + 1].valid() && !with_bias) {
        TensorPtr a2 = merge_rows ? flatten(sa, 0, -2) : sa, g2 = merge_rows ? flatten(g[0], 0, -2) : g[0];
        const bool by_columns = b_columns && a2->ndim() == 2 && g2->ndim() == 2;
        TensorPtr gb = by_columns ? mT(batched_product(mT(g2), conj(a2))) : batched_product(mH(a2), g2);
        r[off + 1] = scaled(gb, ca);
      }
      return r;
    });
    node->save(a);
    node->save(b);
  }
  return out;
}

void check_matrix(const TensorPtr& t, const char* what) {
  LUCID_CHECK(t->ndim() == 2, RuntimeError, what, " must be a matrix, got ", t->ndim(), "-D tensor");
}

void check_mm_shapes(const TensorPtr& a, const TensorPtr& b) {
  LUCID_CHECK(a->shape().back() == b->shape()[b->ndim() - 2], RuntimeError,
              "mat1 and mat2 shapes cannot be multiplied (", dims_str(a->shape(), a->ndim() - 2), " and ",
              dims_str(b->shape(), b->ndim() - 2), ")");
}

void check_bmm(const TensorPtr& a, const TensorPtr& b) {
  LUCID_CHECK(a->ndim() == 3, RuntimeError, "batch1 must be a 3D tensor");
  LUCID_CHECK(b->ndim() == 3, RuntimeError, "batch2 must be a 3D tensor");
  LUCID_CHECK(b->shape()[0] == a->shape()[0] && b->shape()[1] == a->shape()[2], RuntimeError,
              "Expected size for first two dimensions of batch2 tensor to be: [", a->shape()[0], ", ",
              a->shape()[2], "] but got: [", b->shape()[0], ", ", b->shape()[1], "].");
}

void check_input(const char* op, const TensorPtr& input, const TensorPtr& m) {
  op_device(op, {input.get(), m.get()});
  LUCID_CHECK(input->dtype() == m->dtype(), RuntimeError, "self and mat2 must have the same dtype, but got ",
              scalar_type_name(input->dtype()), " and ", scalar_type_name(m->dtype()));
}

}  // namespace

TensorPtr conj(const TensorPtr& t) {
  if (!is_complex(t->dtype())) return t;
  TensorPtr out = t->clone();  // contiguous, conjugated in place
  launch(Conj{}, {out.get()}, {out.get()});
  if (autograd::needs_grad({&t}))
    autograd::record("ConjBackward0", {t}, {out}, [](const Node&, const Grads& g) { return Grads{conj(g[0])}; });
  return out;
}

TensorPtr batched_product(const TensorPtr& a, const TensorPtr& b) {
  check_operands("matmul", "addmm_impl_cpu_", a, b);
  LUCID_CHECK(a->ndim() >= 2 && b->ndim() >= 2, RuntimeError, "internal: batched_product needs matrices");
  check_mm_shapes(a, b);
  return product(a->ndim() == 2 && b->ndim() == 2 ? "MmBackward0" : "BmmBackward0", a, b);
}

TensorPtr mm(const TensorPtr& a, const TensorPtr& b) {
  check_matrix(a, "self");
  check_matrix(b, "mat2");
  check_operands("mm", "addmm_impl_cpu_", a, b);
  check_mm_shapes(a, b);
  return product("MmBackward0", a, b);
}

TensorPtr bmm(const TensorPtr& a, const TensorPtr& b) {
  check_bmm(a, b);
  check_operands("bmm", "bmm", a, b);
  return product("BmmBackward0", a, b);
}

TensorPtr matmul(const TensorPtr& a, const TensorPtr& b) {
  const int64_t na = a->ndim(), nb = b->ndim();
  LUCID_CHECK(na >= 1 && nb >= 1, RuntimeError, "both arguments to matmul need to be at least 1D, but they are ",
              na, "D and ", nb, "D");
  if (na == 1 && nb == 1) return dot(a, b);
  if (na == 2 && nb == 1) return mv(a, b);
  if (na == 2 && nb == 2) return mm(a, b);
  check_operands("matmul", "addmm_impl_cpu_", a, b);
  // A vector operand becomes a one-row (left) or one-column (right) matrix, and
  // that dim is dropped from the result, as in torch.matmul.
  TensorPtr a2 = na == 1 ? unsqueeze(a, 0) : a;
  TensorPtr b2 = nb == 1 ? unsqueeze(b, 1) : b;
  check_mm_shapes(a2, b2);
  TensorPtr out = product(a2->ndim() == 2 && b2->ndim() == 2 ? "MmBackward0" : "BmmBackward0", a2, b2);
  if (na == 1) return squeeze(out, {out->ndim() - 2});
  if (nb == 1) return squeeze(out, {out->ndim() - 1});
  return out;
}

TensorPtr mv(const TensorPtr& mat, const TensorPtr& vec) {
  LUCID_CHECK(mat->ndim() == 2 && vec->ndim() == 1, RuntimeError, "vector + matrix @ vector expected, got 1, ",
              mat->ndim(), ", ", vec->ndim());
  check_operands("mv", "addmv_impl_cpu", mat, vec);
  LUCID_CHECK(mat->shape()[1] == vec->shape()[0], RuntimeError, "size mismatch, got input (", mat->shape()[0],
              "), mat (", dims_str(mat->shape(), 0), "), vec (", vec->shape()[0], ")");
  TensorPtr out;
  {
    autograd::GradModeGuard no_grad(false);
    out = view(product_forward(mat, unsqueeze(vec, 1), nullptr, Scalar(int64_t(0)), Scalar(int64_t(1))),
               {mat->shape()[0]});
  }
  if (autograd::needs_grad({&mat, &vec})) {
    auto node = autograd::record("MvBackward0", {mat, vec}, {out}, [](const Node& nd, const Grads& g) {
      TensorPtr m = nd.saved(0), v = nd.saved(1);
      return Grads{nd.next_edges[0].valid() ? outer(g[0], conj(v)) : nullptr,
                   nd.next_edges[1].valid() ? mv(mH(m), g[0]) : nullptr};
    });
    node->save(mat);
    node->save(vec);
  }
  return out;
}

TensorPtr dot(const TensorPtr& a, const TensorPtr& b) {
  LUCID_CHECK(a->ndim() == 1 && b->ndim() == 1, RuntimeError, "1D tensors expected, but got ", a->ndim(), "D and ",
              b->ndim(), "D tensors");
  op_device("dot", {a.get(), b.get()});
  LUCID_CHECK(a->dtype() == b->dtype(), RuntimeError, "dot : expected both vectors to have same dtype, but found ",
              scalar_type_name(a->dtype()), " and ", scalar_type_name(b->dtype()));
  LUCID_CHECK(a->dtype() != Dtype::Bool, NotImplementedError, "\"dot\" not implemented for 'Bool'");
  LUCID_CHECK(a->shape()[0] == b->shape()[0], RuntimeError, "inconsistent tensor size, expected tensor [",
              a->shape()[0], "] and src [", b->shape()[0], "] to have the same number of elements, but got ",
              a->shape()[0], " and ", b->shape()[0], " elements respectively");
  TensorPtr out;
  {
    autograd::GradModeGuard no_grad(false);
    out = view(product_forward(unsqueeze(a, 0), unsqueeze(b, 1), nullptr, Scalar(int64_t(0)), Scalar(int64_t(1))),
               {});
  }
  if (autograd::needs_grad({&a, &b})) {
    auto node = autograd::record("DotBackward0", {a, b}, {out}, [](const Node& nd, const Grads& g) {
      TensorPtr sa = nd.saved(0), sb = nd.saved(1);
      return Grads{nd.next_edges[0].valid() ? mul(g[0], conj(sb)) : nullptr,
                   nd.next_edges[1].valid() ? mul(g[0], conj(sa)) : nullptr};
    });
    node->save(a);
    node->save(b);
  }
  return out;
}

TensorPtr vdot(const TensorPtr& a, const TensorPtr& b) { return dot(conj(a), b); }

TensorPtr outer(const TensorPtr& a, const TensorPtr& b) {
  LUCID_CHECK(a->ndim() == 1, RuntimeError, "outer: Expected 1-D argument self, but got ", a->ndim(), "-D");
  LUCID_CHECK(b->ndim() == 1, RuntimeError, "outer: Expected 1-D argument vec2, but got ", b->ndim(), "-D");
  return mul(unsqueeze(a, 1), unsqueeze(b, 0));
}

TensorPtr addmm(const TensorPtr& input, const TensorPtr& m1, const TensorPtr& m2, const Scalar& beta,
                const Scalar& alpha) {
  check_matrix(m1, "mat1");
  check_matrix(m2, "mat2");
  check_operands("addmm", "addmm_impl_cpu_", m1, m2);
  check_input("addmm", input, m2);
  check_mm_shapes(m1, m2);
  check_coefficient(beta, m1->dtype());
  check_coefficient(alpha, m1->dtype());
  return product("AddmmBackward0", m1, m2, input, beta, alpha);
}

TensorPtr addmv(const TensorPtr& input, const TensorPtr& mat, const TensorPtr& vec, const Scalar& beta,
                const Scalar& alpha) {
  LUCID_CHECK(mat->ndim() == 2 && vec->ndim() == 1 && input->ndim() <= 1, RuntimeError,
              "vector + matrix @ vector expected, got ", input->ndim(), ", ", mat->ndim(), ", ", vec->ndim());
  check_operands("addmv", "addmv_impl_cpu", mat, vec);
  check_input("addmv", input, mat);
  LUCID_CHECK(mat->shape()[1] == vec->shape()[0], RuntimeError, "size mismatch, got input (",
              input->ndim() ? input->shape()[0] : 1, "), mat (", dims_str(mat->shape(), 0), "), vec (",
              vec->shape()[0], ")");
  check_coefficient(beta, mat->dtype());
  check_coefficient(alpha, mat->dtype());
  TensorPtr column = input->ndim() ? unsqueeze(input, 1) : input;
  return squeeze(product("AddmvBackward0", mat, unsqueeze(vec, 1), column, beta, alpha), {1});
}

TensorPtr baddbmm(const TensorPtr& input, const TensorPtr& b1, const TensorPtr& b2, const Scalar& beta,
                  const Scalar& alpha) {
  check_bmm(b1, b2);
  check_operands("baddbmm", "baddbmm_cpu", b1, b2);
  check_input("baddbmm", input, b2);
  check_coefficient(beta, b1->dtype());
  check_coefficient(alpha, b1->dtype());
  return product("BaddbmmBackward0", b1, b2, input, beta, alpha);
}

TensorPtr linear(const TensorPtr& input, const TensorPtr& weight, const TensorPtr& bias) {
  LUCID_CHECK(weight->ndim() == 1 || weight->ndim() == 2, RuntimeError,
              "linear(): weight must be 1-D or 2-D, got ", weight->ndim(), "-D");
  if (weight->ndim() == 2 && input->ndim() == 2 && bias)  // one fused gemm, like PyTorch
    return addmm(bias, input, transpose(weight, 0, 1), Scalar(int64_t(1)), Scalar(int64_t(1)));
  // An input of more dims whose rows merge into one strided dim (a contiguous [B, S, D])
  // is that matrix, a view: the same fused gemm, the bias in the product's epilogue and
  // its gradient with the weight's (torch's _flatten_nd_linear), where matmul and add
  // took a pass over the output each way for the bias.
  if (weight->ndim() == 2 && input->ndim() > 2 && bias && merged_row_stride(*input)) {
    Shape out_shape = input->shape();
    out_shape.back() = weight->shape()[0];
    return reshape(linear(flatten(input, 0, -2), weight, bias), out_shape);
  }
  TensorPtr out = matmul(input, weight->ndim() == 2 ? transpose(weight, 0, 1) : weight);
  return bias ? add(out, bias) : out;
}

namespace {

CpuSettings& settings() {
  static CpuSettings s;  // written at import, read-only afterwards
  return s;
}

}  // namespace

void register_cpu_settings(const CpuSettings& s) { settings() = s; }

const CpuSettings& cpu_settings() { return settings(); }

}  // namespace lucid::ops
