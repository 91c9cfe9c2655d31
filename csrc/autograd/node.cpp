#include "autograd/node.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "autograd/anomaly.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "core/error.h"
#include "core/parallel.h"
#include "ops/copy_ops.h"
#include "ops/elementwise.h"
#include "ops/op_tally.h"

namespace lucid {

namespace {

std::atomic<uint64_t> g_next_sequence_nr{0};

// A second handle on t's bytes and metadata, without autograd history.
TensorPtr alias_without_history(const TensorImpl& t) { return std::make_shared<TensorImpl>(t.storage(), t.meta()); }

std::string tensor_description(const TensorImpl& t) {
  return str_cat("[lucid.", dtype_name(t.dtype()), " ", shape_str(t.shape()), "]");
}

}  // namespace

Node::Node()
    : sequence_nr(g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed)),
      forward_stack(autograd::capture_forward_stack()) {}

// Note [Deep graphs]
// Freeing a node frees the nodes only it kept alive, through its edges and through
// the history of the tensors it saved; done by plain destructors that recursion is as
// deep as the graph (an RNN unrolled over 100k steps overflows the stack). So a
// destructor moves those references onto a per-thread list, and the outermost one
// drains the list in a loop.
Node::~Node() {
  thread_local bool draining = false;
  thread_local std::vector<std::shared_ptr<Node>> pending;
  for (Edge& e : next_edges)
    if (e.fn) pending.push_back(std::move(e.fn));
  // A saved tensor nobody else holds takes its history with it: hand that over too.
  // (One tensor may be saved twice, as in x * x: count references per tensor.)
  std::vector<TensorPtr> held;
  for (SavedTensor& t : saved_tensors)
    if (TensorPtr p = t.take()) held.push_back(std::move(p));
  saved_tensors.clear();
  std::sort(held.begin(), held.end());
  for (size_t i = 0; i < held.size();) {
    size_t j = i;
    while (j < held.size() && held[j] == held[i]) ++j;
    if (held[i].use_count() == long(j - i) && held[i]->grad_fn()) {
      pending.push_back(held[i]->grad_fn());
      held[i]->clear_grad_fn();
    }
    i = j;
  }
  if (draining) return;
  draining = true;
  while (!pending.empty()) {
    std::shared_ptr<Node> next = std::move(pending.back());
    pending.pop_back();
    next.reset();  // may run ~Node, which only appends to `pending`
  }
  draining = false;
}


int64_t Node::next_hook_id() {
  static std::atomic<int64_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void Node::remove_hook(int64_t id) {
  std::erase_if(tensor_hooks, [id](const TensorHookEntry& h) { return h.id == id; });
  std::erase_if(post_accumulate_hooks, [id](const TensorHookEntry& h) { return h.id == id; });
  std::erase_if(pre_hooks, [id](const auto& h) { return h.first == id; });
  std::erase_if(post_hooks, [id](const auto& h) { return h.first == id; });
}

void Node::release_saved() {
  if (saved_tensors.empty()) return;
  saved_tensors.clear();
  released = true;
}

size_t Node::save(const TensorPtr& t, bool is_output) {
  saved_tensors.emplace_back(t, is_output);
  return saved_tensors.size() - 1;
}

TensorPtr Node::saved(size_t i) const {
  LUCID_CHECK(!released, RuntimeError,
              "Trying to backward through the graph a second time (or directly access saved tensors after they "
              "have already been freed). Saved intermediate values of the graph are freed when you call "
              ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
              "graph a second time or if you need to access saved tensors after calling backward.");
  LUCID_CHECK(i < saved_tensors.size(), RuntimeError, "internal: ", name(), " has no saved tensor ", i);
  return saved_tensors[i].unpack(*this);
}

// Note [Saved tensor hooks]
// torch.autograd.graph.saved_tensors_hooks(pack, unpack) (and save_on_cpu, built on
// it) lets a program choose how tensors saved for backward are kept: pack runs when a
// node saves a tensor, unpack each time backward reads it. The packers form a stack
// per thread (the innermost applies), as torch's do. A SavedTensor made under one
// keeps the unpacker instead of the tensor, and the tensor's place in the graph:
// backward through the unpacked tensor (create_graph) must reach the same grad_fn, or
// the same leaf's AccumulateGrad. The unpacked tensor is a new handle on the hook's
// result carrying that history. Releasing the node (backward without retain_graph)
// drops the unpacker and whatever pack returned.
namespace {
thread_local std::vector<SavedTensorPacker> t_packers;
thread_local std::optional<std::string> t_hooks_disabled;
}  // namespace

void push_saved_tensor_hooks(SavedTensorPacker pack) {
  if (t_hooks_disabled) fail<RuntimeError>(*t_hooks_disabled);
  t_packers.push_back(std::move(pack));
}

void pop_saved_tensor_hooks() {
  LUCID_CHECK(!t_packers.empty(), RuntimeError, "saved tensor hooks popped more often than pushed");
  t_packers.pop_back();
}

std::optional<std::string> set_saved_tensor_hooks_disabled(std::optional<std::string> message) {
  if (message && !t_packers.empty()) fail<RuntimeError>(*message);  // (torch's rule: hooks are in use)
  std::swap(message, t_hooks_disabled);
  return message;
}

SavedTensor::SavedTensor(const TensorPtr& t, bool is_output)
    : version_(t ? t->version() : 0), is_output_(is_output), requires_grad_(t && t->requires_grad()) {
  if (!t) return;  // custom Functions may save None
  if (is_output) {
    grad_fn_ = t->grad_fn();
    output_nr_ = t->output_nr();
  }
  if (!t_packers.empty()) {
    if (requires_grad_ && !is_output) {
      producer_ = t->grad_fn() ? t->grad_fn() : autograd::grad_accumulator(t);
      output_nr_ = t->output_nr();
    }
    // Without grad mode, the hook's own ops record nothing, so they save nothing and
    // cannot re-enter it. (A copy: the hook may push or pop hooks.)
    SavedTensorPacker pack = t_packers.back();
    {
      autograd::GradModeGuard no_grad(false);
      unpacker_ = pack(t);
    }
    LUCID_CHECK(t->version() == version_, RuntimeError,
                "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
                "can not be modified by in-place operations as this can lead to unexpected side-effects. Please "
                "open an issue if you need to perform in-place operations on the input to a pack hook.");
    return;
  }
  data_ = is_output ? alias_without_history(*t) : t;
}

TensorPtr SavedTensor::unpack(const Node& saved_by) const {
  if (unpacker_) return with_history(unpacker_());
  if (!data_) return nullptr;
  if (data_->version() != version_) {
    const std::shared_ptr<Node>& producer = is_output_ ? grad_fn_.lock() : data_->grad_fn();
    std::string origin = producer ? str_cat(", which is output ", is_output_ ? output_nr_ : data_->output_nr(),
                                            " of ", producer->name(), ",")
                                  : std::string(",");
    fail<RuntimeError>("one of the variables needed for gradient computation has been modified by an inplace "
                       "operation: ", tensor_description(*data_), origin, " is at version ", data_->version(),
                       "; expected version ", version_, " instead (the tensor was saved by ", saved_by.name(),
                       "). Hint: the operation that failed to compute its gradient is ", saved_by.name(),
                       "; look for an in-place op on that tensor after the forward call.");
  }
  if (!is_output_) return data_;
  return with_history(data_);
}

// t (the saved bytes) with the saved tensor's history: its grad_fn and output slot,
// or, for a leaf saved under hooks, the leaf's AccumulateGrad.
TensorPtr SavedTensor::with_history(const TensorPtr& t) const {
  LUCID_CHECK(t, RuntimeError, "internal: a saved tensor unpacked to nothing");
  std::shared_ptr<Node> fn = is_output_ ? grad_fn_.lock() : producer_;
  if (!fn || !requires_grad_) return unpacker_ ? alias_without_history(*t) : t;
  // (create_graph differentiates through it)
  TensorPtr out = alias_without_history(*t);
  out->set_requires_grad(true);
  if (dynamic_cast<AccumulateGrad*>(fn.get())) {
    out->autograd_meta()->grad_accumulator = std::move(fn);
    return out;
  }
  out->set_leaf(false);
  out->set_grad_fn(std::move(fn));
  out->set_output_nr(output_nr_);
  return out;
}

AccumulateGrad::AccumulateGrad(const TensorPtr& leaf) : variable_(leaf) {
  sequence_nr = UINT64_MAX;  // run as soon as ready: frees the gradient early
  inputs.push_back(TensorSpec::of(*leaf));
  outputs.push_back(TensorSpec::of(*leaf));
}

std::vector<TensorPtr> AccumulateGrad::apply(const std::vector<TensorPtr>& grads) {
  TensorPtr leaf = variable_.lock();
  if (!leaf || !grads[0]) return {};
  accumulate_grad(*leaf, grads[0]);
  // (a copy: a hook may remove itself)
  if (!post_accumulate_hooks.empty())
    for (const TensorHookEntry& h : std::vector<TensorHookEntry>(post_accumulate_hooks)) h.fn(leaf);
  return {};
}

void accumulate_grad(TensorImpl& t, const TensorPtr& grad) {
  ops::count_grad_sink();
  // Backward may run in several threads at once (each its own graph over shared
  // parameters), and the add below runs without the GIL: one accumulation at a
  // time. The lock is waited for with the GIL released, since its holder may need
  // the GIL back to finish (only when it is taken: the usual backward finds it free).
  static std::mutex accumulating;
  std::unique_lock<std::mutex> one_at_a_time(accumulating, std::try_to_lock);
  if (!one_at_a_time.owns_lock()) {
    cpu::LetOthersRun unlocked;
    one_at_a_time.lock();
  }
  TensorPtr old = t.grad_to_tensor();
  if (autograd::grad_enabled()) {  // create_graph: the gradient keeps its history
    TensorPtr sum = old ? ops::binary(ops::BinaryOp::Add, {old, {}}, {grad, {}})
                        : (grad.use_count() > 1 ? ops::clone(grad) : grad);
    t.mutable_grad_storage().reset();
    t.set_grad_impl(std::move(sum));
    return;
  }
  if (old) {
    ops::binary_inplace(ops::BinaryOp::Add, old, {grad, {}});
    return;
  }
  // The first gradient: take its bytes when nobody else can see them (the engine
  // hands over its only reference), otherwise copy.
  bool stealable = grad.use_count() <= 1 && !grad->storage_is_shared() && grad->storage_offset() == 0 &&
                   grad->is_contiguous() && grad->dtype() == t.dtype() && grad->shape() == t.shape() &&
                   !grad->requires_grad();
  TensorPtr owned = stealable ? grad : grad->clone(t.dtype());
  t.set_grad_storage(owned->storage());
}

}  // namespace lucid
