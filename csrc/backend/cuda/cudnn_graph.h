// cuDNN's backend graph API, the small part lucid uses (attention.cpp): tensors and
// operations as descriptors, an operation graph, an execution plan from cuDNN's
// heuristics, and its execution with a variant pack. No cudnn-frontend: these few
// calls are all a fixed graph needs, and the frontend is a large header library.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace lucid::cuda {

// One backend descriptor, destroyed with its owner. Throws RuntimeError naming `what`
// and cuDNN's own message when a call fails.
class BackendDescriptor {
 public:
  explicit BackendDescriptor(cudnnBackendDescriptorType_t type);
  ~BackendDescriptor();
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return desc_; }
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const void* values);
  void set(cudnnBackendAttributeName_t name, int64_t value);
  void set(cudnnBackendAttributeName_t name, const std::vector<int64_t>& values);
  void set(cudnnBackendAttributeName_t name, const BackendDescriptor& value);
  void set(cudnnBackendAttributeName_t name, cudnnDataType_t value);
  void finalize(const char* what);

 private:
  cudnnBackendDescriptor_t desc_ = nullptr;
};

// Throws RuntimeError "cuDNN error <status> (<name>: <cuDNN's last message>) in <call>".
void check_backend(cudnnStatus_t status, const char* call);

// A plan ready to run: its descriptor (owning what it was made from) and workspace size.
struct BackendPlan {
  std::vector<std::unique_ptr<BackendDescriptor>> keep;  // tensors and ops the graph refers to
  std::unique_ptr<BackendDescriptor> plan;
  int64_t workspace = 0;
};

// Which of cuDNN's engines a plan may run; the plan is the first of the heuristic's
// list that passes. The notes are torch's filters (aten's Conv_v8.cpp): float32 kept
// exact rules out tensor-core engines (TF32), deterministic rules out those that sum
// in a run-dependent order, and exact inputs rules out engines that round the inputs
// to a narrower type first.
struct EngineFilter {
  bool no_tensor_cores = false;
  bool deterministic = false;
  bool exact_inputs = false;
  int64_t max_workspace = INT64_MAX;
};

// Which operand of a convolution a graph computes: y (forward), x (backward data) or w
// (backward filter).
enum class ConvPass { Forward, Data, Filter };

// Builds an operation graph node by node. Tensors are [.. dims ..] with explicit
// strides; data tensors have a caller's uid (bound at execution), virtual ones
// (intermediates that never reach memory) get fresh uids.
class GraphBuilder {
 public:
  using Dims = std::vector<int64_t>;

  // (alignment: the bytes every pointer bound to the tensor is a multiple of, at most 16)
  const BackendDescriptor& tensor(int64_t uid, cudnnDataType_t dtype, const Dims& dims, const Dims& strides,
                                  int64_t alignment = 16);
  // A scalar passed by value at execution (uid bound to a host float, or a host value
  // of `dtype`).
  const BackendDescriptor& scalar(int64_t uid, cudnnDataType_t dtype = CUDNN_DATA_FLOAT);
  const BackendDescriptor& virtual_tensor(cudnnDataType_t dtype, const Dims& dims, const Dims& strides);

  void matmul(const BackendDescriptor& a, const BackendDescriptor& b, const BackendDescriptor& c);
  // out = mode(x[, y[, t]]) elementwise, computed in `math` (float32 by default);
  // broadcasts as cuDNN does. BINARY_SELECT: out = t ? x : y.
  void pointwise(cudnnPointwiseMode_t mode, const BackendDescriptor& x, const BackendDescriptor* y,
                 const BackendDescriptor& out, const BackendDescriptor* t = nullptr,
                 cudnnDataType_t math = CUDNN_DATA_FLOAT);
  // out = 1 with probability `keep`, else 0, each element independently: cuDNN's
  // Philox stream of (seed, offset), two by-value int64 scalars.
  void bernoulli(double keep, const BackendDescriptor& seed, const BackendDescriptor& offset,
                 const BackendDescriptor& out);
  // out = the index of each element along `axis` (out: an int32 tensor).
  void gen_index(const BackendDescriptor& x, int64_t axis, const BackendDescriptor& out);
  void reduction(cudnnReduceTensorOp_t mode, const BackendDescriptor& x, const BackendDescriptor& out);
  // out = x with out's dims and strides (a transpose of a virtual tensor, say).
  void reshape(const BackendDescriptor& x, const BackendDescriptor& out);
  // The cross-correlation of image x [N, C, *spatial] and filter w [K, C / groups,
  // *kernel] into y [N, K, *out] (groups are C over w's dim 1), or one of its two
  // adjoints (`pass`), in `compute` (float, or double for float64 data); padded by
  // `pad` on both sides of each spatial dim.
  void convolution(ConvPass pass, const BackendDescriptor& x, const BackendDescriptor& w, const BackendDescriptor& y,
                   const Dims& pad, const Dims& stride, const Dims& dilation, cudnnDataType_t compute);

  // The graph's plan on `handle`: the first of cuDNN's heuristic engine configurations
  // (mode A, then the fallback list) that passes `filter` and finalizes. Throws
  // RuntimeError when none does (the graph or shape is unsupported here), naming `what`.
  BackendPlan plan(cudnnHandle_t handle, const char* what, const EngineFilter& filter = {});

 private:
  const BackendDescriptor& keep(std::unique_ptr<BackendDescriptor> d);
  std::vector<std::unique_ptr<BackendDescriptor>> descriptors_;
  std::vector<const BackendDescriptor*> ops_;
  int64_t next_virtual_uid_ = 1 << 20;
};

// Runs `plan` with the device pointers of its data tensors (uids[i] -> ptrs[i]) and a
// workspace of plan.workspace bytes.
void execute(cudnnHandle_t handle, const BackendPlan& plan, const std::vector<int64_t>& uids,
             const std::vector<void*>& ptrs, void* workspace);

}  // namespace lucid::cuda
