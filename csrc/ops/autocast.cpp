#include "ops/autocast.h"

#include <array>
#include <string_view>
#include <unordered_map>

#include "core/error.h"
#include "ops/copy_ops.h"

namespace lucid::ops::autocast {

namespace {

thread_local std::array<Mode, 2> t_modes{};
thread_local int t_enabled = 0;  // how many device types have autocast on

// PyTorch's lists (autocast_mode.cpp), restricted to the names a lucid entry point
// consults (a binding's autocast_args, or the `policy` decorator in Python). A name
// absent from both lists of a device type runs in its inputs' dtypes there.
constexpr std::string_view kLowerBoth[] = {
    "matmul", "mm", "bmm", "addmm", "baddbmm", "linear", "einsum", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu", "scaled_dot_product_attention",
    // the recurrent modules (nn.LSTM / RNN, consulted by name in nn/modules/rnn.py): torch
    // lowers their cells on CUDA and the whole LSTM (mkldnn_rnn_layer) on the CPU, whose
    // RNN comes out in the lower dtype too
    "lstm", "rnn_tanh", "rnn_relu", "rnn_tanh_cell", "rnn_relu_cell"};
// (torch's CPU GRU, LSTMCell and GRUCell are listed nowhere: their float32 state promotes
// the lowered products back, so they run, and come out, in float32)
constexpr std::string_view kLowerGpuOnly[] = {"mv", "addmv", "gru", "lstm_cell", "gru_cell"};
// (tensordot is a product of mm inside torch, which its CPU autocast lowers, while
// on CUDA torch measures float32 out of it; outer is a broadcast multiply, listed nowhere)
constexpr std::string_view kLowerCpuOnly[] = {"tensordot"};
constexpr std::string_view kFloat32Both[] = {
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy", "kl_div",
    "binary_cross_entropy_with_logits", "soft_margin_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "poisson_nll_loss", "cosine_embedding_loss", "multilabel_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "ctc_loss", "prod"};
constexpr std::string_view kFloat32GpuOnly[] = {
    "softmax", "log_softmax", "layer_norm", "group_norm", "rms_norm", "norm", "cumsum", "cumprod", "sum",
    "logsumexp", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt", "pow", "acos",
    "asin", "cosh", "sinh", "tan", "erfinv", "softplus", "cosine_similarity", "pdist"};
// (Policy::None is 0: a name listed for one device type only has None for the other)
constexpr std::string_view kFloat32CpuOnly[] = {"binary_cross_entropy", "grid_sample", "avg_pool3d",
                                                "max_pool3d", "adaptive_avg_pool3d", "gru", "lstm_cell", "gru_cell"};

// name -> (CPU policy, GPU policy), built once from the lists: one lookup an op
// (every elementwise op asks while autocast is on).
using Table = std::unordered_map<std::string_view, std::array<Policy, 2>>;

const Table& table() {
  static const Table t = [] {
    Table m;
    auto put = [&m](const auto& list, bool cpu, bool gpu, Policy p) {
      for (std::string_view n : list) {
        if (cpu) m[n][size_t(DeviceType::CPU)] = p;
        if (gpu) m[n][size_t(DeviceType::GPU)] = p;
      }
    };
    put(kLowerBoth, true, true, Policy::Lower);
    put(kLowerGpuOnly, false, true, Policy::Lower);
    put(kLowerCpuOnly, true, false, Policy::Lower);
    put(kFloat32Both, true, true, Policy::Float32);
    put(kFloat32GpuOnly, false, true, Policy::Float32);
    put(kFloat32CpuOnly, true, false, Policy::Float32);
    m["binary_cross_entropy"][size_t(DeviceType::GPU)] = Policy::Banned;
    return m;
  }();
  return t;
}

TensorPtr cast_one(Policy p, const TensorPtr& t, Dtype low) {
  if (!t || !is_floating(t->dtype()) || t->dtype() == Dtype::F64) return t;
  if (p == Policy::Lower && t->dtype() != low) return copy_to(t, low, std::nullopt);
  if (p == Policy::Float32 && (t->dtype() == Dtype::F16 || t->dtype() == Dtype::BF16))
    return copy_to(t, Dtype::F32, std::nullopt);
  return t;
}

}  // namespace

Mode mode(DeviceType device) { return t_modes[size_t(device)]; }

void set_mode(DeviceType device, Mode m) {
  LUCID_CHECK(m.dtype == Dtype::F16 || m.dtype == Dtype::BF16 || !m.enabled, RuntimeError,
              "autocast: the low-precision dtype must be float16 or bfloat16, got ", dtype_name(m.dtype));
  Mode& slot = t_modes[size_t(device)];
  t_enabled += int(m.enabled) - int(slot.enabled);
  slot = m;
}

bool any_enabled() { return t_enabled > 0; }

Policy policy(const char* name, DeviceType device) {
  const auto it = table().find(std::string_view(name));
  return it == table().end() ? Policy::None : it->second[size_t(device)];
}

std::vector<TensorPtr> cast(const char* name, std::vector<TensorPtr> tensors) {
  if (!any_enabled()) return tensors;
  for (TensorPtr& t : tensors) {
    if (!t) continue;
    const DeviceType d = t->device().type;
    const Mode m = mode(d);
    if (!m.enabled) continue;
    const Policy p = policy(name, d);
    LUCID_CHECK(p != Policy::Banned, RuntimeError, "lucid.nn.functional.", name,
                " and lucid.nn.BCELoss are unsafe to autocast.\nMany models use a sigmoid layer right before the "
                "binary cross entropy layer.\nIn this case, combine the two layers using "
                "lucid.nn.functional.binary_cross_entropy_with_logits\nor lucid.nn.BCEWithLogitsLoss.  "
                "binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.");
    t = cast_one(p, t, m.dtype);
  }
  return tensors;
}

TensorPtr cast(const char* name, const TensorPtr& t) { return cast(name, std::vector<TensorPtr>{t})[0]; }

}  // namespace lucid::ops::autocast
