// The backward pass: a reverse topological walk over the graph with dependency
// counts (Note [Engine] in engine.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/node.h"

namespace lucid::autograd {

struct BackwardOptions {
  bool keep_graph = false;    // retain_graph
  bool create_graph = false;  // gradients get history (grad mode on during backward)
  bool accumulate = true;     // backward(): into .grad; autograd.grad(): returned
  bool allow_unused = false;  // autograd.grad(): an input the outputs do not reach gives None
};

// Gradients of `outputs` (seeded with grad_outputs; nullptr entries mean "ones" for
// one-element outputs) with respect to `inputs`. accumulate=true adds them to .grad
// (of every leaf reached, or only of `inputs` when given) and returns nothing;
// accumulate=false returns one gradient per input (nullptr: unused).
std::vector<TensorPtr> run_backward(const std::vector<TensorPtr>& outputs, std::vector<TensorPtr> grad_outputs,
                                    const std::vector<TensorPtr>& inputs, const BackwardOptions& options);

// While a backward runs on this thread (in its hooks): its id, distinct for every
// backward of the process (-1 outside one), and whether `node` runs in it (is in its
// graph and, with inputs, leads to one or captures one's gradient). For
// register_multi_grad_hook, which waits for the gradients this backward will compute.
int64_t current_graph_task_id();
bool will_execute(const Node& node);  // RuntimeError outside a backward

}  // namespace lucid::autograd
