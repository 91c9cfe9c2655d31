// CPU kernel of OptimStep (ops/prims/optim.h): every parameter's elements cut into
// chunks, all chunks of all parameters in one pool dispatch, each chunk one call of
// the rule's element loop (optim_kernels.h).
#include <algorithm>
#include <variant>
#include <vector>

#include "backend/cpu/optim_kernels.h"
#include "backend/cpu/register.h"
#include "core/parallel.h"

namespace lucid::cpu {

namespace {

namespace k = cpu::optim;
using namespace ops::optim;

// Elements per chunk of the one dispatch that covers every tensor of a step: big
// enough that a chunk's loop dwarfs its scheduling, small enough that a few large
// tensors still spread over the threads.
constexpr int64_t kChunk = 1 << 16;

// One chunk of one parameter: its elements [begin, begin + n) in the parameter, the
// gradient and the states (state[j] null past the states the step has).
template <typename T>
struct Chunk {
  T* p;
  const T* g;
  T* state[3];
  int64_t n;
};

template <typename T>
void run_rule(const SgdArgs& a, const Chunk<T>& c) {
  k::sgd<T>(a, c.p, c.g, a.momentum != 0 ? c.state[0] : nullptr, c.n);
}
template <typename T>
void run_rule(const AdamArgs& a, const Chunk<T>& c) {
  k::adam<T>(a, c.p, c.g, c.state[0], c.state[1], a.amsgrad ? c.state[2] : nullptr, c.n);
}
template <typename T>
void run_rule(const AdamaxArgs& a, const Chunk<T>& c) {
  k::adamax<T>(a, c.p, c.g, c.state[0], c.state[1], c.n);
}
template <typename T>
void run_rule(const NadamArgs& a, const Chunk<T>& c) {
  k::nadam<T>(a, c.p, c.g, c.state[0], c.state[1], c.n);
}
template <typename T>
void run_rule(const RadamArgs& a, const Chunk<T>& c) {
  k::radam<T>(a, c.p, c.g, c.state[0], c.state[1], c.n);
}
template <typename T>
void run_rule(const AdagradArgs& a, const Chunk<T>& c) {
  k::adagrad<T>(a, c.p, c.g, c.state[0], c.n);
}
template <typename T>
void run_rule(const AdadeltaArgs& a, const Chunk<T>& c) {
  k::adadelta<T>(a, c.p, c.g, c.state[0], c.state[1], c.n);
}
template <typename T>
void run_rule(const RmspropArgs& a, const Chunk<T>& c) {
  T* grad_avg = a.centered ? c.state[1] : nullptr;
  T* buf = a.momentum > 0 ? c.state[a.centered ? 2 : 1] : nullptr;
  k::rmsprop<T>(a, c.p, c.g, c.state[0], grad_avg, buf, c.n);
}
template <typename T>
void run_rule(const RpropArgs& a, const Chunk<T>& c) {
  k::rprop<T>(a, c.p, c.g, c.state[0], c.state[1], c.n);
}
template <typename T>
void run_rule(const AsgdArgs& a, const Chunk<T>& c) {
  k::asgd<T>(a, c.p, c.g, c.state[0], c.n);
}

template <typename T>
T* at(const TensorImpl* t, int64_t offset) {
  return reinterpret_cast<T*>(t->host_ptr()) + offset;
}

void optim_step_kernel(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<OptimStep>(prim);
  const size_t n = p.args.size(), states = outs.size() / n - 1;
  struct Piece {
    size_t tensor;
    int64_t begin, end;
  };
  std::vector<Piece> pieces;
  int64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t numel = outs[i]->numel();
    total += numel;
    for (int64_t b = 0; b < numel; b += kChunk) pieces.push_back({i, b, std::min(numel, b + kChunk)});
  }
  auto chunk = [&](size_t i, int64_t b, int64_t e) {
    auto run = [&](auto z) {
      using T = decltype(z);
      Chunk<T> c{at<T>(outs[i], b), at<T>(ins[i], b), {nullptr, nullptr, nullptr}, e - b};
      for (size_t j = 0; j < states; ++j) c.state[j] = at<T>(outs[(1 + j) * n + i], b);
      std::visit([&](const auto& a) { run_rule<T>(a, c); }, p.args[i]);
    };
    if (outs[i]->dtype() == Dtype::F32) run(float{});
    else run(double{});
  };
  auto body = [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) chunk(pieces[q].tensor, pieces[q].begin, pieces[q].end);
  };
  if (total < 2 * kParallelGrain) body(0, int64_t(pieces.size()));
  else parallel_for(int64_t(pieces.size()), 1, body);
}

}  // namespace

void register_optim_kernels() { ops::register_kernel(ops::Prim::OptimStep, DeviceType::CPU, optim_step_kernel); }

}  // namespace lucid::cpu
