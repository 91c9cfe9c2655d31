#include "autograd/engine.h"

#include <algorithm>
#include <atomic>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd/anomaly.h"
#include "autograd/record.h"
#include "core/error.h"
#include "core/pending.h"
#include "ops/copy_ops.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace lucid::autograd {

// Note [Engine]
// 1. A GraphRoot node hands the seed gradients to the outputs' edges.
// 2. One walk counts, for every reachable node, the edges that lead into it.
// 3. Nodes run from a ready queue ordered by sequence number, latest first (a node
//    created later can only feed nodes created earlier); a node is ready when every
//    edge into it has delivered. Gradients arriving at the same slot are summed.
// 4. Each result is reduced to its input's shape (broadcasting) and cast to its
//    dtype before it travels on, so VJPs need not do either.
// With `inputs`, only nodes from which an input is reachable run, and the gradients
// reaching the inputs' edges are captured there (after the tensors' hooks). Tensor
// hooks run at the nodes that run and at those capture points, as in PyTorch: a
// tensor whose gradient this backward does not need sees no call.
// Grad mode during the walk is create_graph: VJPs are written with ops, so their
// results carry history exactly when the user asked for it.

namespace {

struct GraphRoot final : Node {
  explicit GraphRoot(std::vector<TensorPtr> seeds) : seeds_(std::move(seeds)) {}
  const char* name() const override { return "GraphRoot"; }
  std::vector<TensorPtr> apply(const std::vector<TensorPtr>&) override { return seeds_; }

 private:
  std::vector<TensorPtr> seeds_;
};

struct ByLatest {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr < b->sequence_nr; }
};

TensorPtr zeros_like_spec(const TensorSpec& spec) { return TensorImpl::full(spec.shape, Scalar(int64_t(0)), spec.dtype, spec.device); }

// Sums `grad` down to `shape` (the inverse of broadcasting).
TensorPtr sum_to(const TensorPtr& grad, const Shape& shape) {
  const Shape& from = grad->shape();
  size_t lead = from.size() - shape.size();
  std::vector<int64_t> dims;
  for (size_t i = 0; i < from.size(); ++i)
    if (i < lead || (shape[i - lead] == 1 && from[i] != 1)) dims.push_back(int64_t(i));
  if (dims.empty()) return grad;
  TensorPtr summed = ops::sum(grad, dims, true, std::nullopt);
  return lead ? ops::reshape(summed, shape) : summed;
}

bool expandable_to(const Shape& shape, const Shape& target) {
  if (shape.size() < target.size()) return false;
  size_t lead = shape.size() - target.size();
  for (size_t i = 0; i < target.size(); ++i)
    if (target[i] != shape[i + lead] && target[i] != 1) return false;
  return true;
}

// Makes a node's result fit the input it belongs to, or says what was wrong.
TensorPtr fit_gradient(const Node& node, size_t index, TensorPtr grad) {
  const TensorSpec& spec = node.inputs[index];
  if (grad->shape() != spec.shape) {
    LUCID_CHECK(expandable_to(grad->shape(), spec.shape), RuntimeError, "Function ", node.name(),
                " returned an invalid gradient at index ", index, " - got ", shape_str(grad->shape()),
                " but expected shape compatible with ", shape_str(spec.shape));
    grad = sum_to(grad, spec.shape);
  }
  if (grad->dtype() != spec.dtype || grad->device() != spec.device) grad = ops::copy_to(grad, spec.dtype, spec.device);
  return grad;
}

TensorPtr seed_for(const TensorPtr& output, TensorPtr grad, size_t i) {
  if (!grad) {
    LUCID_CHECK(output->numel() == 1, RuntimeError, "grad can be implicitly created only for scalar outputs");
    LUCID_CHECK(is_floating(output->dtype()), RuntimeError,
                "grad can be implicitly created only for real scalar outputs but got ", dtype_name(output->dtype()));
    return TensorImpl::full(output->shape(), Scalar(1.0), output->dtype(), output->device());
  }
  LUCID_CHECK(grad->shape() == output->shape(), RuntimeError, "Mismatch in shape: grad_output[", i,
              "] has a shape of ", shape_str(grad->shape()), " and output[", i, "] has a shape of ",
              shape_str(output->shape()), ".");
  LUCID_CHECK(grad->device() == output->device(), RuntimeError, "invalid gradient at index ", i,
              " - expected device ", output->device().str(), " but got ", grad->device().str());
  return grad;
}

// Runs the tensor hooks and retain_grad targets of every slot of `node`.
// The backwards running on this thread, innermost last (a hook may run a backward).
struct GraphTask {
  int64_t id;
  const std::unordered_set<const Node*>* in_graph;
  const std::unordered_set<const Node*>* execute;  // empty: every node in the graph
  const std::unordered_set<const Node*>* captures;
};
thread_local std::vector<GraphTask> t_tasks;
std::atomic<int64_t> g_next_task_id{0};

struct TaskScope {
  explicit TaskScope(GraphTask task) { t_tasks.push_back(task); }
  ~TaskScope() { t_tasks.pop_back(); }
  TaskScope(const TaskScope&) = delete;
  TaskScope& operator=(const TaskScope&) = delete;
};

bool runs_in(const GraphTask& task, const Node* node) {
  return task.in_graph->count(node) &&
         (task.execute->empty() || task.execute->count(node) || task.captures->count(node));
}

void run_tensor_hooks(Node& node, std::vector<TensorPtr>& grads) {
  for (size_t i = 0; i < node.tensor_hooks.size(); ++i) {  // by index: a hook may add hooks
    uint32_t slot = node.tensor_hooks[i].slot;
    if (!grads[slot]) continue;
    TensorHook hook = node.tensor_hooks[i].fn;
    if (TensorPtr replaced = hook(grads[slot])) grads[slot] = std::move(replaced);
  }
  for (auto& [slot, weak] : node.retained) {
    TensorPtr t = weak.lock();
    if (!t || !grads[slot]) continue;
    TensorPtr old = t->grad_to_tensor();
    TensorPtr value = old ? ops::binary(ops::BinaryOp::Add, {old, {}}, {grads[slot], {}}) : ops::clone(grads[slot]);
    if (grad_enabled()) {
      t->mutable_grad_storage().reset();
      t->set_grad_impl(value);
    } else {
      t->set_grad_impl(nullptr);
      t->set_grad_storage(value->storage());
    }
  }
}

struct SlotKey {
  const Node* node;
  uint32_t slot;
  bool operator==(const SlotKey& o) const { return node == o.node && slot == o.slot; }
};
struct SlotHash {
  size_t operator()(const SlotKey& k) const { return std::hash<const void*>()(k.node) * 31 + k.slot; }
};

// The node's gradients, after its post-hooks (which may replace them).
std::vector<TensorPtr> call_node(Node& node, const std::vector<TensorPtr>& grads) {
  std::vector<TensorPtr> results = node.apply(grads);
  for (auto& [id, hook] : node.post_hooks) {
    std::vector<TensorPtr> replaced = hook(results, grads);
    if (!replaced.empty()) results = std::move(replaced);
  }
  return results;
}

}  // namespace

std::vector<TensorPtr> run_backward(const std::vector<TensorPtr>& outputs, std::vector<TensorPtr> grad_outputs,
                                    const std::vector<TensorPtr>& inputs, const BackwardOptions& options) {
  LUCID_CHECK(grad_outputs.size() == outputs.size(), RuntimeError, "grad requires one grad_output per output (got ",
              grad_outputs.size(), " for ", outputs.size(), " outputs)");
  std::vector<Edge> root_edges;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Edge e = gradient_edge(outputs[i]);
    LUCID_CHECK(e.valid(), RuntimeError, "element ", i, " of tensors does not require grad and does not have a grad_fn");
    grad_outputs[i] = seed_for(outputs[i], std::move(grad_outputs[i]), i);
    root_edges.push_back(std::move(e));
  }
  auto root = std::make_shared<GraphRoot>(std::move(grad_outputs));
  root->next_edges = std::move(root_edges);
  for (const TensorPtr& out : outputs) root->inputs.push_back(TensorSpec::of(*out));

  // Capture points: the edge each input's gradient arrives on.
  std::unordered_map<SlotKey, std::vector<size_t>, SlotHash> captures;
  std::vector<Edge> input_edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Edge e = gradient_edge(inputs[i]);
    LUCID_CHECK(e.valid(), RuntimeError, "One of the differentiated Tensors does not require grad");
    captures[{e.fn.get(), e.input_nr}].push_back(i);
    input_edges.push_back(std::move(e));
  }

  // Dependency counts, and a post-order (every node after the nodes it leads to).
  std::unordered_map<const Node*, int> deps;
  std::vector<Node*> post_order;
  std::unordered_set<const Node*> seen{root.get()};
  {
    std::vector<std::pair<Node*, size_t>> stack{{root.get(), 0}};  // node, next edge to visit
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next == n->next_edges.size()) {
        post_order.push_back(n);
        stack.pop_back();
        continue;
      }
      const Edge& e = n->next_edges[next++];
      if (!e.valid()) continue;
      ++deps[e.fn.get()];
      if (seen.insert(e.fn.get()).second) stack.emplace_back(e.fn.get(), 0);
    }
  }
  std::unordered_set<const Node*> execute;  // empty without inputs: run everything
  if (!inputs.empty()) {
    // With inputs, a node runs when some input's edge is reachable from it.
    std::unordered_set<const Node*> reaches;
    for (const Edge& e : input_edges) reaches.insert(e.fn.get());
    for (Node* n : post_order)
      for (const Edge& e : n->next_edges)
        if (e.valid() && reaches.count(e.fn.get())) {
          execute.insert(n);
          reaches.insert(n);
          break;
        }
    if (options.accumulate)  // backward(inputs=...): the leaves' accumulators run
      for (const Edge& e : input_edges)
        if (dynamic_cast<AccumulateGrad*>(e.fn.get())) execute.insert(e.fn.get());
  }

  std::unordered_set<const Node*> capture_nodes;
  for (const Edge& e : input_edges) capture_nodes.insert(e.fn.get());
  TaskScope task({g_next_task_id.fetch_add(1), &seen, &execute, &capture_nodes});

  GradModeGuard grad_mode(options.create_graph);
  std::vector<TensorPtr> captured(inputs.size());
  std::unordered_map<const Node*, std::vector<TensorPtr>> buffers;
  std::priority_queue<Node*, std::vector<Node*>, ByLatest> ready;
  ready.push(root.get());
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    std::vector<TensorPtr> grads;
    if (auto it = buffers.find(node); it != buffers.end()) {
      grads = std::move(it->second);
      buffers.erase(it);
    }
    grads.resize(node->outputs.size());
    const bool run = node == root.get() || execute.empty() || execute.count(node);
    // A node that does not run gets no hooks (PyTorch's rule), unless an input's
    // gradient is captured there: hooks see it first.
    if (node != root.get() && (run || capture_nodes.count(node))) run_tensor_hooks(*node, grads);
    if (!captures.empty())
      for (uint32_t slot = 0; slot < grads.size(); ++slot)
        if (auto it = captures.find({node, slot}); it != captures.end())
          for (size_t i : it->second) captured[i] = grads[slot];

    bool any = std::any_of(grads.begin(), grads.end(), [](const TensorPtr& g) { return bool(g); });
    std::vector<TensorPtr> results;
    if (run && (any || node == root.get())) {
      for (auto& [id, hook] : node->pre_hooks) {
        std::vector<TensorPtr> replaced = hook(grads);
        if (!replaced.empty()) grads = std::move(replaced);
      }
      for (size_t slot = 0; slot < grads.size(); ++slot)
        if (!grads[slot]) grads[slot] = zeros_like_spec(node->outputs[slot]);
      if (autograd::anomaly_enabled()) {
        // Anomaly mode: a node that fails (or, with check_nan, returns NaN) has the
        // forward call that made it reported before the error propagates.
        try {
          results = call_node(*node, grads);
          if (autograd::anomaly_check_nan()) autograd::check_no_nan(node->name(), results);
        } catch (...) {
          autograd::report_anomaly(node->name(), node->forward_stack.get());
          throw;
        }
      } else {
        results = call_node(*node, grads);
      }
      grads.clear();  // AccumulateGrad may take the bytes of a gradient nobody else holds
      if (!options.keep_graph) node->release_saved();
      LUCID_CHECK(results.size() == node->next_edges.size() || dynamic_cast<AccumulateGrad*>(node), RuntimeError,
                  "function ", node->name(), " returned an incorrect number of gradients (expected ",
                  node->next_edges.size(), ", got ", results.size(), ")");
    }
    for (size_t i = 0; i < node->next_edges.size(); ++i) {
      const Edge& e = node->next_edges[i];
      if (!e.valid()) continue;
      if (i < results.size() && results[i]) {
        TensorPtr g = fit_gradient(*node, i, std::move(results[i]));
        std::vector<TensorPtr>& buf = buffers[e.fn.get()];
        if (buf.size() < e.fn->outputs.size()) buf.resize(e.fn->outputs.size());
        TensorPtr& slot = buf[e.input_nr];
        slot = slot ? ops::binary(ops::BinaryOp::Add, {slot, {}}, {g, {}}) : std::move(g);
      }
      if (--deps[e.fn.get()] == 0) ready.push(e.fn.get());
    }
  }

  // The end of a backward is a flush point of the lazy GPU (Note [Lazy GPU execution]):
  // a program that never reads a value still runs each step's work, with bounded memory
  // (except inside a compiled call, whose end flushes).
  if (options.accumulate) {  // backward(inputs=[non-leaf]): into that tensor's .grad
    for (size_t i = 0; i < inputs.size(); ++i)
      if (captured[i] && !dynamic_cast<AccumulateGrad*>(input_edges[i].fn.get()))
        accumulate_grad(*inputs[i], captured[i]);
    pending::flush_at_boundary();
    return {};
  }
  pending::flush_at_boundary();
  for (size_t i = 0; i < inputs.size(); ++i)
    LUCID_CHECK(captured[i] || options.allow_unused, RuntimeError,
                "One of the differentiated Tensors appears to not have been used in the graph. Set "
                "allow_unused=True if this is the desired behavior.");
  return captured;
}

int64_t current_graph_task_id() { return t_tasks.empty() ? -1 : t_tasks.back().id; }

bool will_execute(const Node& node) {
  LUCID_CHECK(!t_tasks.empty(), RuntimeError,
              "_will_engine_execute_node should only be called during the backward pass");
  return runs_in(t_tasks.back(), &node);
}

}  // namespace lucid::autograd
