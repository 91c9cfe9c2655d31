// Note [Product epilogues] (docs/GPU_LAZY.md has the measurements and what is left)
// A GPU flush's first pass (before the elementwise one, which would take a lone relu
// into the next chain): a product (Gemm) whose next recorded call is a relu of its
// result becomes one product with cuBLASLt's RELU (RELU_BIAS) epilogue writing the
// relu's result, so `relu(fc(x))` writes [m, n] once where two kernels wrote it twice
// and read it once.
//  - float32 and float64 products only, without TF32: the RELU epilogue of the
//    tensor-core kernels (float16, bfloat16, TF32) gave 0 for a NaN in some shapes
//    (measured on an H100), where relu keeps the NaN.
//  - Only when the product's result dies with the two calls (autograd keeps relu's
//    result, not its input) or the relu is in place; when the relu writes none of the
//    product's operands; and when beta is 0 (a product adding its old output reads it
//    from out, which the relu's result is not).
//  - A 3-D linear's product ran on its 2-D rows: it writes the relu's result through a
//    view of its own shape.
//  - Bits: relu commutes with the epilogue's one rounding, and its -0 is +0, as lucid's
//    GPU relu (torch's CUDA relu) gives: fused and unfused results are equal bit for bit.
#include "ops/fusion_internal.h"
#include "ops/prims/elementwise.h"
#include "ops/prims/linalg.h"
#include "ops/recorded_launch.h"

namespace lucid::ops {

namespace {

// The product with its relu as the call at `first` and the next, if they are one.
std::unique_ptr<pending::Work> product_with_relu(pending::Work& first, pending::Work& next) {
  auto* product = dynamic_cast<RecordedLaunch*>(&first);
  auto* relu = dynamic_cast<RecordedLaunch*>(&next);
  if (!product || !relu || product->prim().kind() != Prim::Gemm || relu->prim().kind() != Prim::Unary ||
      prim_cast<Unary>(relu->prim()).op != UnaryOp::Relu)
    return nullptr;
  const auto& gemm = prim_cast<Gemm>(product->prim());
  if (gemm.row_sums || gemm.relu || gemm.allow_tf32 || (!gemm.bias && !is_zero(gemm.beta))) return nullptr;
  const TensorImpl& h = *product->outputs()[0];
  const TensorImpl& x = *relu->inputs()[0];
  const TensorImpl& y = *relu->outputs()[0];
  // (float32 and float64 only: the tensor-core kernels of 16-bit and TF32 products turn
  // a NaN into 0 in their RELU epilogue in some shapes, where relu keeps it)
  if ((h.dtype() != Dtype::F32 && h.dtype() != Dtype::F64) || !same_place(x, h) || !y.is_contiguous() ||
      y.dtype() != h.dtype() || y.numel() != h.numel())
    return nullptr;
  if (!same_place(y, h)) {
    const long held_here = snapshots_holding(*product, bytes_of(h)) + snapshots_holding(*relu, bytes_of(h));
    if (storage_copies(h) > held_here) return nullptr;  // the product's result is read again
    for (const TensorPtr& t : product->inputs())
      if (t && bytes_of(*t) == bytes_of(y)) return nullptr;
  }
  Gemm fused = gemm;
  fused.relu = true;
  const TensorPtr out = TensorImpl::view_of(y, h.shape(), h.stride(), y.storage_offset());
  TensorImpl* const outs[] = {out.get()};
  std::vector<const TensorImpl*> ins;
  for (const TensorPtr& t : product->inputs()) ins.push_back(t.get());
  return std::make_unique<RecordedLaunch>(kernel_of(Prim::Gemm, DeviceType::GPU), fused, Outputs(outs, 1),
                                          Inputs(ins.data(), ins.size()));
}

}  // namespace

size_t fuse_product_epilogues(std::vector<std::unique_ptr<pending::Work>>& list) {
  try {
    std::vector<Replacement> replacements;
    for (size_t i = 0; i + 1 < list.size(); ++i)
      if (std::unique_ptr<pending::Work> fused = product_with_relu(*list[i], *list[i + 1])) {
        replacements.push_back({i, 2, std::move(fused)});
        ++i;
      }
    splice(list, replacements);
    return 2 * replacements.size();
  } catch (...) {
    return 0;  // (out of host memory: the list runs as it was recorded)
  }
}

}  // namespace lucid::ops
