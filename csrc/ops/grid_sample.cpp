// ops/grid_sample.h: checks, layout and autograd around the GridSample primitives
// (ops/prims/spatial.h).
#include "ops/grid_sample.h"

#include "autograd/record.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/elementwise.h"
#include "ops/prims/spatial.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

// The primitives' options, checked with input and grid.
GridSampleOptions options_of(const TensorPtr& input, const TensorPtr& grid, int mode, int padding, bool align) {
  op_device("grid_sample", {input.get(), grid.get()});
  LUCID_CHECK(input->ndim() == 4 && grid->ndim() == 4 && grid->shape()[3] == 2 &&
                  grid->shape()[0] == input->shape()[0],
              RuntimeError, "grid_sampler_2d(): expected input [N, C, H, W] and grid [N, H_out, W_out, 2], but got "
              "input with sizes ", shape_str(input->shape()), " and grid with sizes ", shape_str(grid->shape()));
  LUCID_CHECK((input->dtype() == Dtype::F32 || input->dtype() == Dtype::F64) && grid->dtype() == input->dtype(),
              RuntimeError, "grid_sampler_2d(): expected float32 or float64 input and grid of the same dtype, but got ",
              dtype_name(input->dtype()), " and ", dtype_name(grid->dtype()));
  LUCID_CHECK(mode == 0 || mode == 1, ValueError, "grid_sampler_2d(): mode must be 0 (bilinear) or 1 (nearest), got ",
              mode);
  LUCID_CHECK(padding >= 0 && padding <= 2, ValueError, "grid_sampler_2d(): padding must be 0, 1 or 2, got ", padding);
  LUCID_CHECK(input->shape()[2] > 0 && input->shape()[3] > 0, RuntimeError, "grid_sampler_2d(): expected input to "
              "have non-empty spatial dimensions, but input has sizes ", shape_str(input->shape()));
  return {mode, padding, align};
}

}  // namespace

TensorPtr grid_sample2d(const TensorPtr& input, const TensorPtr& grid, int mode, int padding, bool align_corners) {
  GridSample p;
  p.options = options_of(input, grid, mode, padding, align_corners);
  TensorPtr out = TensorImpl::empty({input->shape()[0], input->shape()[1], grid->shape()[1], grid->shape()[2]},
                                    input->dtype(), input->device());
  TensorPtr in = contiguous(input), gr = contiguous(grid);
  if (out->numel() > 0) launch(p, {out.get()}, {in.get(), gr.get()});
  if (autograd::needs_grad({&input, &grid})) {
    auto node = autograd::record("GridSampler2DBackward0", {input, grid}, {out},
                                 [mode, padding, align_corners](const Node& n, const autograd::Grads& g) {
      // The kernel's gradients are not differentiable again; nn.functional.grid_sample
      // differentiates its composition instead when create_graph asks for that.
      LUCID_CHECK(!autograd::grad_enabled(), NotImplementedError, "grid_sampler_2d: double backward through the "
                  "engine kernel is not supported; use nn.functional.grid_sample, which provides it");
      auto [gi, gg] = grid_sample2d_backward(g[0], n.saved(0), n.saved(1), mode, padding, align_corners);
      return autograd::Grads{gi, gg};
    });
    node->save(in);
    node->save(gr);
  }
  return out;
}

std::pair<TensorPtr, TensorPtr> grid_sample2d_backward(const TensorPtr& grad_out, const TensorPtr& input,
                                                       const TensorPtr& grid, int mode, int padding,
                                                       bool align_corners) {
  GridSampleBackward p;
  p.options = options_of(input, grid, mode, padding, align_corners);
  LUCID_CHECK(grad_out->ndim() == 4 && grad_out->shape()[0] == input->shape()[0] &&
                  grad_out->shape()[1] == input->shape()[1] &&
                  grad_out->shape()[2] * grad_out->shape()[3] == grid->shape()[1] * grid->shape()[2],
              RuntimeError, "grid_sampler_2d_backward(): grad_output has sizes ", shape_str(grad_out->shape()));
  TensorPtr gin = TensorImpl::full(input->shape(), Scalar(0.0), input->dtype(), input->device());
  TensorPtr ggrid = TensorImpl::empty(grid->shape(), grid->dtype(), grid->device());
  TensorPtr go = contiguous(grad_out->dtype() == input->dtype() ? grad_out : grad_out->clone(input->dtype()));
  TensorPtr in = contiguous(input), gr = contiguous(grid);
  if (ggrid->numel() > 0 || gin->numel() > 0) launch(p, {gin.get(), ggrid.get()}, {go.get(), in.get(), gr.get()});
  return {gin, ggrid};
}

}  // namespace lucid::ops
