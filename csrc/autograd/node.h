// The autograd graph: a Node per recorded op, Edges to the nodes that produced its
// inputs, saved tensors with their version checks, and the AccumulateGrad node that
// ends every path at a leaf. docs/ENGINE.md ("Autograd") describes the design.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor_impl.h"

namespace lucid {

// Where a gradient goes: input slot `input_nr` of node `fn` (a forward output index
// of fn). An edge without fn leads nowhere (the input did not require grad).
struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return bool(fn); }
};

// Shape, dtype and device of a tensor a gradient must match.
struct TensorSpec {
  Shape shape;
  Dtype dtype = Dtype::F32;
  Device device;
  static TensorSpec of(const TensorImpl& t) { return {t.shape(), t.dtype(), t.device()}; }
};

// Saved tensor hooks (torch.autograd.graph.saved_tensors_hooks): while a packer is
// pushed on this thread, each tensor saved for backward is handed to it, and what it
// returns, the unpacker, is kept in the tensor's place. Note [Saved tensor hooks].
using SavedTensorUnpacker = std::function<TensorPtr()>;
using SavedTensorPacker = std::function<SavedTensorUnpacker(const TensorPtr&)>;
void push_saved_tensor_hooks(SavedTensorPacker pack);  // RuntimeError while disabled
void pop_saved_tensor_hooks();
// While a message is set, pushing hooks raises it (a feature that cannot work with
// hooks, torch's disable_saved_tensors_hooks); setting one while hooks are pushed raises
// it too. Returns the previous one.
std::optional<std::string> set_saved_tensor_hooks_disabled(std::optional<std::string> message);

// A tensor kept for backward, with the version its storage had when it was saved:
// unpacking it after an in-place write raises, naming the op and both versions.
// A saved *output* of the saving node is stored without its history (the output
// owns the node, so a strong reference back would be a cycle) and gets its history
// back on unpack while the node lives. A tensor saved under hooks is kept as its
// unpacker and the history to give back, without a version check (torch's rule: the
// hooks may keep anything).
class SavedTensor {
 public:
  SavedTensor(const TensorPtr& t, bool is_output);
  TensorPtr unpack(const Node& saved_by) const;
  TensorPtr take() { return std::move(data_); }  // for ~Node

 private:
  TensorPtr with_history(const TensorPtr& t) const;

  TensorPtr data_;
  SavedTensorUnpacker unpacker_;  // saved under hooks (then no data_)
  std::shared_ptr<Node> producer_;  // under hooks: an input's grad_fn, or a leaf's AccumulateGrad
  std::weak_ptr<Node> grad_fn_;  // outputs only
  uint64_t version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool requires_grad_ = false;
};

// A tensor hook: gets the gradient, returns a replacement or nullptr to keep it.
using TensorHook = std::function<TensorPtr(const TensorPtr&)>;
// A node hook (Node.register_hook): gets (grad_inputs, grad_outputs) after apply and
// may return replacement grad_inputs (empty to keep them).
using NodeHook = std::function<std::vector<TensorPtr>(const std::vector<TensorPtr>&, const std::vector<TensorPtr>&)>;
// A node pre-hook (Node.register_prehook): gets grad_outputs before apply.
using NodePreHook = std::function<std::vector<TensorPtr>(const std::vector<TensorPtr>&)>;

struct Node : std::enable_shared_from_this<Node> {
  Node();
  virtual ~Node();  // iterative: a graph a million nodes deep frees without recursion
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual const char* name() const = 0;
  // Gradients of the forward inputs (one per next edge; nullptr where there is none)
  // from the gradients of the forward outputs (one per output; never null here: the
  // engine fills missing ones with zeros).
  virtual std::vector<TensorPtr> apply(const std::vector<TensorPtr>& grads) = 0;
  // Frees what backward needed (retain_graph=False); later unpacks raise.
  virtual void release_saved();

  size_t save(const TensorPtr& t, bool is_output = false);  // returns its index
  TensorPtr saved(size_t i) const;

  std::vector<Edge> next_edges;      // one per forward input
  std::vector<TensorSpec> inputs;    // spec of each forward input (grads are reduced/cast to it)
  std::vector<TensorSpec> outputs;   // spec of each forward output
  std::vector<SavedTensor> saved_tensors;
  bool released = false;
  bool is_view = false;  // the node of a view op: its output aliases its input
  uint64_t sequence_nr;  // creation order: the engine runs later nodes first
  // The stack of the forward call that made this node, recorded in anomaly mode
  // only (autograd/anomaly.h).
  std::unique_ptr<std::string> forward_stack;

  // Hooks on the gradient of forward output `slot` (Tensor.register_hook), then
  // retain_grad targets, which see the gradient after every hook. Hooks carry an
  // id so that their handles can remove them.
  struct TensorHookEntry {
    int64_t id;
    uint32_t slot;
    TensorHook fn;
    void* py_object = nullptr;  // the Python callable fn holds (borrowed), for GC traversal
  };
  std::vector<TensorHookEntry> tensor_hooks;
  // A leaf's AccumulateGrad only: hooks that get the leaf after its .grad is updated
  // (Tensor.register_post_accumulate_grad_hook); slot is unused, fn's result ignored.
  std::vector<TensorHookEntry> post_accumulate_hooks;
  std::vector<std::pair<uint32_t, std::weak_ptr<TensorImpl>>> retained;
  std::vector<std::pair<int64_t, NodePreHook>> pre_hooks;
  std::vector<std::pair<int64_t, NodeHook>> post_hooks;
  static int64_t next_hook_id();
  void remove_hook(int64_t id);
};

// The general node: a name, and the VJP as a function of the node (for its saved
// tensors) and the output gradients. Ops build these (autograd/record.h).
using Vjp = std::function<std::vector<TensorPtr>(const Node& node, const std::vector<TensorPtr>& grads)>;

struct FunctionNode final : Node {
  FunctionNode(const char* name, Vjp vjp) : name_(name), vjp_(std::move(vjp)) {}
  const char* name() const override { return name_; }
  std::vector<TensorPtr> apply(const std::vector<TensorPtr>& grads) override { return vjp_(*this, grads); }
  // For VJPs built after the node exists (they save tensors into it).
  void set_vjp(Vjp vjp) { vjp_ = std::move(vjp); }

 private:
  const char* name_;
  Vjp vjp_;
};

// Ends every path at a leaf that requires grad: adds the gradient into leaf.grad.
// Holds the leaf weakly (the leaf owns this node), so a dropped leaf frees its memory.
struct AccumulateGrad final : Node {
  explicit AccumulateGrad(const TensorPtr& leaf);
  const char* name() const override { return "AccumulateGrad"; }
  std::vector<TensorPtr> apply(const std::vector<TensorPtr>& grads) override;
  TensorPtr variable() const { return variable_.lock(); }

 private:
  std::weak_ptr<TensorImpl> variable_;
};

// Adds `grad` into t.grad as PyTorch does: the first gradient is taken (or copied
// when someone else holds it); later ones are added in place, or out of place with
// history while grad mode is on (create_graph).
void accumulate_grad(TensorImpl& t, const TensorPtr& grad);

}  // namespace lucid
