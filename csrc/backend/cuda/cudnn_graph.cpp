#include "backend/cuda/cudnn_graph.h"

#include <string>

#include "backend/cuda/cudnn.h"
#include "core/error.h"

namespace lucid::cuda {

void check_backend(cudnnStatus_t status, const char* call) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  char message[512] = {};
  cudnn().last_error(message, sizeof(message));
  fail<RuntimeError>("cuDNN error ", int(status), " (", cudnn().error_string(status), message[0] ? ": " : "",
                     message, ") in ", call);
}

BackendDescriptor::BackendDescriptor(cudnnBackendDescriptorType_t type) {
  check_backend(cudnn().backend_create(type, &desc_), "cudnnBackendCreateDescriptor");
}

BackendDescriptor::~BackendDescriptor() {
  if (desc_) (void)cudnn().backend_destroy(desc_);
}

void BackendDescriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                            const void* values) {
  const cudnnStatus_t status = cudnn().backend_set(desc_, name, type, count, values);
  if (status != CUDNN_STATUS_SUCCESS) {
    const std::string call = "cudnnBackendSetAttribute(attribute " + std::to_string(int(name)) + ")";
    check_backend(status, call.c_str());
  }
}

void BackendDescriptor::set(cudnnBackendAttributeName_t name, int64_t value) {
  set(name, CUDNN_TYPE_INT64, 1, &value);
}

void BackendDescriptor::set(cudnnBackendAttributeName_t name, const std::vector<int64_t>& values) {
  set(name, CUDNN_TYPE_INT64, int64_t(values.size()), values.data());
}

void BackendDescriptor::set(cudnnBackendAttributeName_t name, const BackendDescriptor& value) {
  cudnnBackendDescriptor_t d = value.get();
  set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d);
}

void BackendDescriptor::set(cudnnBackendAttributeName_t name, cudnnDataType_t value) {
  set(name, CUDNN_TYPE_DATA_TYPE, 1, &value);
}

void BackendDescriptor::finalize(const char* what) {
  check_backend(cudnn().backend_finalize(desc_), what);
}

const BackendDescriptor& GraphBuilder::keep(std::unique_ptr<BackendDescriptor> d) {
  descriptors_.push_back(std::move(d));
  return *descriptors_.back();
}

namespace {

std::unique_ptr<BackendDescriptor> make_tensor(int64_t uid, cudnnDataType_t dtype, const GraphBuilder::Dims& dims,
                                               const GraphBuilder::Dims& strides, bool is_virtual, bool by_value,
                                               int64_t alignment = 16) {
  auto t = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  t->set(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid);
  t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, dtype);
  t->set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, alignment);
  t->set(CUDNN_ATTR_TENSOR_DIMENSIONS, dims);
  t->set(CUDNN_ATTR_TENSOR_STRIDES, strides);
  const bool v = is_virtual, b = by_value;
  t->set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &v);
  if (by_value) t->set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &b);
  t->finalize("cudnnBackendFinalize(tensor)");
  return t;
}

}  // namespace

const BackendDescriptor& GraphBuilder::tensor(int64_t uid, cudnnDataType_t dtype, const Dims& dims,
                                              const Dims& strides, int64_t alignment) {
  return keep(make_tensor(uid, dtype, dims, strides, false, false, alignment));
}

const BackendDescriptor& GraphBuilder::scalar(int64_t uid, cudnnDataType_t dtype) {
  return keep(make_tensor(uid, dtype, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true));
}

const BackendDescriptor& GraphBuilder::virtual_tensor(cudnnDataType_t dtype, const Dims& dims, const Dims& strides) {
  return keep(make_tensor(next_virtual_uid_++, dtype, dims, strides, true, false));
}

void GraphBuilder::matmul(const BackendDescriptor& a, const BackendDescriptor& b, const BackendDescriptor& c) {
  auto desc = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  desc->set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT);
  desc->finalize("cudnnBackendFinalize(matmul)");
  auto op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  op->set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a);
  op->set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b);
  op->set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
  op->set(CUDNN_ATTR_OPERATION_MATMUL_DESC, *desc);
  op->finalize("cudnnBackendFinalize(matmul operation)");
  keep(std::move(desc));
  ops_.push_back(&keep(std::move(op)));
}

namespace {

std::unique_ptr<BackendDescriptor> pointwise_desc(cudnnPointwiseMode_t mode, cudnnDataType_t math,
                                                  const int64_t* axis = nullptr) {
  auto desc = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  desc->set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  desc->set(CUDNN_ATTR_POINTWISE_MATH_PREC, math);
  if (axis) desc->set(CUDNN_ATTR_POINTWISE_AXIS, *axis);
  desc->finalize("cudnnBackendFinalize(pointwise)");
  return desc;
}

}  // namespace

void GraphBuilder::pointwise(cudnnPointwiseMode_t mode, const BackendDescriptor& x, const BackendDescriptor* y,
                             const BackendDescriptor& out, const BackendDescriptor* t, cudnnDataType_t math) {
  auto desc = pointwise_desc(mode, math);
  auto op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op->set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, *desc);
  op->set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
  if (y) op->set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *y);
  if (t) op->set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
  op->set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, out);
  op->finalize("cudnnBackendFinalize(pointwise operation)");
  keep(std::move(desc));
  ops_.push_back(&keep(std::move(op)));
}

void GraphBuilder::bernoulli(double keep_probability, const BackendDescriptor& seed, const BackendDescriptor& offset,
                             const BackendDescriptor& out) {
  auto desc = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_RNG_DESCRIPTOR);
  const cudnnRngDistribution_t distribution = CUDNN_RNG_DISTRIBUTION_BERNOULLI;
  desc->set(CUDNN_ATTR_RNG_DISTRIBUTION, CUDNN_TYPE_RNG_DISTRIBUTION, 1, &distribution);
  desc->set(CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY, CUDNN_TYPE_DOUBLE, 1, &keep_probability);
  desc->finalize("cudnnBackendFinalize(rng)");
  auto op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR);
  op->set(CUDNN_ATTR_OPERATION_RNG_DESC, *desc);
  op->set(CUDNN_ATTR_OPERATION_RNG_YDESC, out);
  op->set(CUDNN_ATTR_OPERATION_RNG_SEED, seed);
  op->set(CUDNN_ATTR_OPERATION_RNG_OFFSET_DESC, offset);
  op->finalize("cudnnBackendFinalize(rng operation)");
  keep(std::move(desc));
  ops_.push_back(&keep(std::move(op)));
}

void GraphBuilder::gen_index(const BackendDescriptor& x, int64_t axis, const BackendDescriptor& out) {
  auto desc = pointwise_desc(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, &axis);
  auto op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op->set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, *desc);
  op->set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
  op->set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, out);
  op->finalize("cudnnBackendFinalize(gen_index operation)");
  keep(std::move(desc));
  ops_.push_back(&keep(std::move(op)));
}

void GraphBuilder::reduction(cudnnReduceTensorOp_t mode, const BackendDescriptor& x, const BackendDescriptor& out) {
  auto desc = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  desc->set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
  desc->set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT);
  desc->finalize("cudnnBackendFinalize(reduction)");
  auto op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  op->set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x);
  op->set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, out);
  op->set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, *desc);
  op->finalize("cudnnBackendFinalize(reduction operation)");
  keep(std::move(desc));
  ops_.push_back(&keep(std::move(op)));
}

void GraphBuilder::reshape(const BackendDescriptor& x, const BackendDescriptor& out) {
  auto op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  op->set(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x);
  op->set(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, out);
  op->finalize("cudnnBackendFinalize(reshape operation)");
  ops_.push_back(&keep(std::move(op)));
}

void GraphBuilder::convolution(ConvPass pass, const BackendDescriptor& x, const BackendDescriptor& w,
                               const BackendDescriptor& y, const Dims& pad, const Dims& stride, const Dims& dilation,
                               cudnnDataType_t compute) {
  auto desc = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  desc->set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, compute);
  desc->set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  desc->set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, int64_t(pad.size()));
  desc->set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, pad);
  desc->set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, pad);
  desc->set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, stride);
  desc->set(CUDNN_ATTR_CONVOLUTION_DILATIONS, dilation);
  desc->finalize("cudnnBackendFinalize(convolution)");
  // (the operation's alpha and beta: doubles for a double computation, else floats)
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const bool d = compute == CUDNN_DATA_DOUBLE;
  const cudnnBackendAttributeType_t scale_type = d ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  const void* one = d ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = d ? static_cast<const void*>(&zero_d) : &zero_f;
  std::unique_ptr<BackendDescriptor> op;
  switch (pass) {
    case ConvPass::Forward:
      op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, scale_type, 1, one);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, scale_type, 1, zero);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, *desc);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y);
      break;
    case ConvPass::Data:
      op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, scale_type, 1, one);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, scale_type, 1, zero);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, *desc);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, x);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, y);
      break;
    case ConvPass::Filter:
      op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, scale_type, 1, one);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, scale_type, 1, zero);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, *desc);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, x);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, w);
      op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, y);
      break;
  }
  op->finalize("cudnnBackendFinalize(convolution operation)");
  keep(std::move(desc));
  ops_.push_back(&keep(std::move(op)));
}

namespace {

// Whether the engine of configuration `config` passes `filter`'s numerical notes.
bool notes_pass(cudnnBackendDescriptor_t config, const EngineFilter& filter) {
  if (!filter.no_tensor_cores && !filter.deterministic && !filter.exact_inputs) return true;
  BackendDescriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  int64_t got = 0;
  if (cudnn().backend_get(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &e) !=
      CUDNN_STATUS_SUCCESS)
    return false;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t count = 0;
  if (cudnn().backend_get(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                          CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes) != CUDNN_STATUS_SUCCESS)
    return false;
  for (int64_t i = 0; i < count; ++i) {
    if (filter.no_tensor_cores && notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE) return false;
    if (filter.deterministic && notes[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC) return false;
    if (filter.exact_inputs && notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) return false;
  }
  return true;
}

// The engine configurations cuDNN's heuristics in `mode` list for `graph`, best first.
std::vector<std::unique_ptr<BackendDescriptor>> heuristic_configs(const BackendDescriptor& graph,
                                                                  cudnnBackendHeurMode_t mode, const char* what) {
  BackendDescriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  heur.finalize(what);
  int64_t count = 0;
  check_backend(cudnn().backend_get(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                    &count, nullptr),
                what);
  std::vector<std::unique_ptr<BackendDescriptor>> configs;
  std::vector<cudnnBackendDescriptor_t> handles;
  for (int64_t i = 0; i < count; ++i) {
    configs.push_back(std::make_unique<BackendDescriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    handles.push_back(configs.back()->get());
  }
  int64_t got = 0;
  if (count > 0)
    check_backend(cudnn().backend_get(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                      count, &got, handles.data()),
                  what);
  configs.resize(size_t(got));
  return configs;
}

}  // namespace

BackendPlan GraphBuilder::plan(cudnnHandle_t handle, const char* what, const EngineFilter& filter) {
  std::vector<cudnnBackendDescriptor_t> ops;
  for (const BackendDescriptor* op : ops_) ops.push_back(op->get());
  auto graph = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(ops.size()), ops.data());
  graph->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  graph->finalize(what);

  std::string reasons;
  int64_t candidates = 0;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    for (const auto& config : heuristic_configs(*graph, mode, what)) {
      ++candidates;
      if (!notes_pass(config->get(), filter)) continue;
      auto plan = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *config);
      const cudnnStatus_t status = cudnn().backend_finalize(plan->get());
      if (status != CUDNN_STATUS_SUCCESS) {  // an engine that cannot run this graph: try the next
        char message[256] = {};
        cudnn().last_error(message, sizeof(message));
        reasons += std::string("; ") + cudnn().error_string(status) + " " + message;
        continue;
      }
      BackendPlan out;
      check_backend(cudnn().backend_get(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                        nullptr, &out.workspace),
                    what);
      if (out.workspace > filter.max_workspace) continue;
      out.plan = std::move(plan);
      out.keep = std::move(descriptors_);
      out.keep.push_back(std::move(graph));
      return out;
    }
  }
  fail<RuntimeError>(what, ": cuDNN has no engine for this graph (", candidates, " candidates", reasons, ")");
}

void execute(cudnnHandle_t handle, const BackendPlan& plan, const std::vector<int64_t>& uids,
             const std::vector<void*>& ptrs, void* workspace) {
  BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, uids);
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, int64_t(ptrs.size()), ptrs.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  pack.finalize("cudnnBackendFinalize(variant pack)");
  check_backend(cudnn().backend_execute(handle, plan.plan->get(), pack.get()), "cudnnBackendExecute");
}

}  // namespace lucid::cuda
