// CPU kernels of the creation primitives (ops/prims/creation.h): each fills a fresh
// contiguous tensor from its parameters.
#pragma once

#include <optional>

#include "core/tensor_impl.h"

namespace lucid::cpu {

// out[i] = start + i * step: in int64 when both are integers, else in double.
void fill_arange(TensorImpl& out, const Scalar& start, const Scalar& step);
// out = linspace(start, end, out.numel()) in out's dtype; with log_base, log_base ** it.
void fill_linspace(TensorImpl& out, double start, double end, std::optional<double> log_base);
// out (2-d) = the identity: ones on the main diagonal.
void fill_eye(TensorImpl& out);

}  // namespace lucid::cpu
