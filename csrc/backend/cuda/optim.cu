// CUDA kernel of OptimStep (ops/prims/optim.h): the optimizers' fused steps, every
// rule's element loop written as the CPU's (backend/cpu/optim_kernels.cpp), operation
// by operation, so that a step matches the CPU's and torch.optim's to rounding.
//
// Note [Multi-tensor steps]
// A step covers every parameter of a group at once. The parameters (with their
// gradients and states) are cut into chunks of kChunk elements and one launch runs the
// chunks of up to kTensorsPerLaunch parameters, as torch's multi_tensor_apply does: a
// model of hundreds of small tensors costs a few launches, not hundreds. Unlike
// torch's (320 blocks a launch, one chunk a block), a launch's blocks are as many as
// the GPU holds at once and each walks the launch's chunks a grid apart: 320 blocks
// of 256 threads filled under a third of an H200's thread slots, and the 1B-parameter
// Adam then took ~190 launches, each ending in a tail; now it takes 5. A step too
// small to give every resident block a chunk of kChunk elements cuts its chunks
// smaller, down to one 16-byte unit a thread: the MLP 784-512-512-10's 670K
// parameters made 45 chunks, so 45 blocks each walked 16 units a thread in turn
// (19.3 us on the H200, a latency chain) where a thousand blocks take one each. What a launch
// needs (pointers, sizes, each parameter's rule constants, where its chunks start) is
// passed by value in the kernel's arguments: no upload, no synchronisation. The rule
// constants are computed on the host from the plain numbers of the step's arguments
// (the op derived them from host step counts), converted to the element type once,
// as the CPU's loops convert them.
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/register.h"
#include "backend/cuda/stream.h"
#include "ops/prims/optim.h"

namespace lucid::cuda {

namespace {

using namespace ops::optim;

constexpr int kThreads = 256;
constexpr int64_t kChunk = int64_t(kThreads) * 64;  // elements, at most
constexpr int kTensorsPerLaunch = 16;

// std::max / std::min as the CPU's loops call them (the first argument on ties and NaN).
template <typename T>
__device__ inline T max_of(T a, T b) {
  return a < b ? b : a;
}
template <typename T>
__device__ inline T min_of(T a, T b) {
  return b < a ? b : a;
}

// torch.lerp's two forms: exact at w = 0 and at w = 1.
template <typename T>
__device__ inline T lerp(T a, T b, T w) {
  return w < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}

// ---- the rules: constants from the arguments (host), one element (device) -----------
// An element's parameter p, gradient g and states s0, s1, s2 (the order ops/prims/optim.h
// lists them; an absent one is a dummy), in registers: the kernel loads and stores them.

template <typename T>
struct SgdRule {
  T lr, mom, damp, wd, sign;
  bool decay, momentum, first, nesterov;
  SgdRule() = default;
  explicit SgdRule(const SgdArgs& a)
      : lr(T(a.lr)), mom(T(a.momentum)), damp(T(1 - a.dampening)), wd(T(a.weight_decay)),
        sign(a.maximize ? T(-1) : T(1)), decay(a.weight_decay != 0), momentum(a.momentum != 0), first(a.first),
        nesterov(a.nesterov) {}
  __device__ void operator()(T& p, T g, T& buf, T&, T&) const {
    T d = sign * g;
    if (decay) d += wd * p;
    if (momentum) {
      const T b = first ? d : mom * buf + damp * d;
      buf = b;
      d = nesterov ? d + mom * b : b;
    }
    p -= lr * d;
  }
};

template <typename T>
struct AdamRule {
  T b1, b2, nb2, eps, step_size, bias2_sqrt, decay, wd, sign;
  bool decoupled, coupled_decay, amsgrad;
  AdamRule() = default;
  explicit AdamRule(const AdamArgs& a)
      : b1(T(1 - a.beta1)), b2(T(a.beta2)), nb2(T(1 - a.beta2)), eps(T(a.eps)), step_size(T(a.step_size)),
        bias2_sqrt(T(a.bias2_sqrt)), decay(T(1 - a.lr * a.weight_decay)), wd(T(a.weight_decay)),
        sign(a.maximize ? T(-1) : T(1)), decoupled(a.decoupled), coupled_decay(!a.decoupled && a.weight_decay != 0),
        amsgrad(a.amsgrad) {}
  __device__ void operator()(T& p, T g, T& m, T& v, T& vmax) const {
    T gi = sign * g;
    T pi = p;
    if (decoupled) pi *= decay;
    else if (coupled_decay) gi += wd * pi;
    const T mi = lerp(m, gi, b1);
    const T vi = b2 * v + nb2 * gi * gi;
    m = mi;
    v = vi;
    T second = vi;
    if (amsgrad) {
      second = max_of(vmax, vi);
      vmax = second;
    }
    const T denom = sqrt(second) / bias2_sqrt + eps;
    p = pi - step_size * (mi / denom);
  }
};

template <typename T>
struct AdamaxRule {
  T b1, b2, eps, wd, clr, sign;
  bool decay;
  AdamaxRule() = default;
  explicit AdamaxRule(const AdamaxArgs& a)
      : b1(T(1 - a.beta1)), b2(T(a.beta2)), eps(T(a.eps)), wd(T(a.weight_decay)), clr(T(a.clr)),
        sign(a.maximize ? T(-1) : T(1)), decay(a.weight_decay != 0) {}
  __device__ void operator()(T& p, T g, T& m, T& u, T&) const {
    T gi = sign * g;
    if (decay) gi += wd * p;
    const T mi = lerp(m, gi, b1);
    const T ui = max_of(u * b2, fabs(gi) + eps);
    m = mi;
    u = ui;
    p -= clr * (mi / ui);
  }
};

template <typename T>
struct NadamRule {
  T b1, b2, nb2, eps, bias2, decay, wd, gc, ac, sign;
  bool decoupled, coupled_decay;
  NadamRule() = default;
  explicit NadamRule(const NadamArgs& a)
      : b1(T(1 - a.beta1)), b2(T(a.beta2)), nb2(T(1 - a.beta2)), eps(T(a.eps)), bias2(T(a.bias2)),
        decay(T(1 - a.lr * a.weight_decay)), wd(T(a.weight_decay)), gc(T(a.grad_coef)), ac(T(a.avg_coef)),
        sign(a.maximize ? T(-1) : T(1)), decoupled(a.decoupled), coupled_decay(!a.decoupled && a.weight_decay != 0) {}
  __device__ void operator()(T& p, T g, T& m, T& v, T&) const {
    T gi = sign * g;
    T pi = p;
    if (decoupled) pi *= decay;
    else if (coupled_decay) gi += wd * pi;
    const T mi = lerp(m, gi, b1);
    const T vi = b2 * v + nb2 * gi * gi;
    m = mi;
    v = vi;
    const T denom = sqrt(vi / bias2) + eps;
    pi -= gc * (gi / denom);
    p = pi - ac * (mi / denom);
  }
};

template <typename T>
struct RadamRule {
  T b1, b2, nb2, eps, lr, decay, wd, bias1, bias2_sqrt, rect, sign;
  bool decoupled, coupled_decay, tractable;
  RadamRule() = default;
  explicit RadamRule(const RadamArgs& a)
      : b1(T(1 - a.beta1)), b2(T(a.beta2)), nb2(T(1 - a.beta2)), eps(T(a.eps)), lr(T(a.lr)),
        decay(T(1 - a.lr * a.weight_decay)), wd(T(a.weight_decay)), bias1(T(a.bias1)), bias2_sqrt(T(a.bias2_sqrt)),
        rect(T(a.rect)), sign(a.maximize ? T(-1) : T(1)), decoupled(a.decoupled),
        coupled_decay(!a.decoupled && a.weight_decay != 0), tractable(a.rect >= 0) {}
  __device__ void operator()(T& p, T g, T& m, T& v, T&) const {
    T gi = sign * g;
    T pi = p;
    if (decoupled) pi *= decay;
    else if (coupled_decay) gi += wd * pi;
    const T mi = lerp(m, gi, b1);
    const T vi = b2 * v + nb2 * gi * gi;
    m = mi;
    v = vi;
    const T m_hat = mi / bias1;
    if (tractable) {
      const T adaptive = bias2_sqrt / (sqrt(vi) + eps);
      p = pi - m_hat * lr * adaptive * rect;
    } else {
      p = pi - m_hat * lr;
    }
  }
};

template <typename T>
struct AdagradRule {
  T clr, eps, wd, sign;
  bool decay;
  AdagradRule() = default;
  explicit AdagradRule(const AdagradArgs& a)
      : clr(T(a.clr)), eps(T(a.eps)), wd(T(a.weight_decay)), sign(a.maximize ? T(-1) : T(1)),
        decay(a.weight_decay != 0) {}
  __device__ void operator()(T& p, T g, T& sum, T&, T&) const {
    T gi = sign * g;
    if (decay) gi += wd * p;
    const T s = sum + gi * gi;
    sum = s;
    p -= clr * (gi / (sqrt(s) + eps));
  }
};

template <typename T>
struct AdadeltaRule {
  T rho, nrho, eps, wd, lr, sign;
  bool decay;
  AdadeltaRule() = default;
  explicit AdadeltaRule(const AdadeltaArgs& a)
      : rho(T(a.rho)), nrho(T(1 - a.rho)), eps(T(a.eps)), wd(T(a.weight_decay)), lr(T(a.lr)),
        sign(a.maximize ? T(-1) : T(1)), decay(a.weight_decay != 0) {}
  __device__ void operator()(T& p, T g, T& square_avg, T& acc_delta, T&) const {
    T gi = sign * g;
    if (decay) gi += wd * p;
    const T sa = rho * square_avg + nrho * gi * gi;
    square_avg = sa;
    const T delta = sqrt(acc_delta + eps) / sqrt(sa + eps) * gi;
    acc_delta = rho * acc_delta + nrho * delta * delta;
    p -= lr * delta;
  }
};

template <typename T>
struct RmspropRule {
  T alpha, nalpha, eps, wd, lr, mom, sign;
  bool decay, centered, momentum;
  RmspropRule() = default;
  explicit RmspropRule(const RmspropArgs& a)
      : alpha(T(a.alpha)), nalpha(T(1 - a.alpha)), eps(T(a.eps)), wd(T(a.weight_decay)), lr(T(a.lr)),
        mom(T(a.momentum)), sign(a.maximize ? T(-1) : T(1)), decay(a.weight_decay != 0), centered(a.centered),
        momentum(a.momentum > 0) {}
  // States: square_avg, then grad_avg when centered, then the momentum buffer.
  __device__ void operator()(T& p, T g, T& square_avg, T& s1, T& s2) const {
    T gi = sign * g;
    if (decay) gi += wd * p;
    const T sa = alpha * square_avg + nalpha * gi * gi;
    square_avg = sa;
    T avg;
    if (centered) {
      const T ga = lerp(s1, gi, nalpha);
      s1 = ga;
      avg = sqrt(sa - ga * ga) + eps;
    } else {
      avg = sqrt(sa) + eps;
    }
    if (momentum) {
      // (no reference to s1 or s2 picked at run time: it would move the kernel's
      // register arrays to the stack)
      const T b = mom * (centered ? s2 : s1) + gi / avg;
      if (centered) s2 = b;
      else s1 = b;
      p -= lr * b;
    } else {
      p -= lr * (gi / avg);
    }
  }
};

template <typename T>
struct RpropRule {
  T up, down, lo, hi, sign;
  RpropRule() = default;
  explicit RpropRule(const RpropArgs& a)
      : up(T(a.eta_plus)), down(T(a.eta_minus)), lo(T(a.step_min)), hi(T(a.step_max)),
        sign(a.maximize ? T(-1) : T(1)) {}
  __device__ void operator()(T& p, T g, T& prev, T& step_size, T&) const {
    T gi = sign * g;
    const T s = gi * prev;
    const T factor = s > 0 ? up : s < 0 ? down : T(1);
    const T step = min_of(max_of(step_size * factor, lo), hi);
    step_size = step;
    if (s < 0) gi = 0;  // a sign change: no step, and no memory of this gradient
    const T dir = gi > 0 ? T(1) : gi < 0 ? T(-1) : T(0);
    p -= dir * step;
    prev = gi;
  }
};

template <typename T>
struct AsgdRule {
  T eta, mu, shrink, wd, sign;
  bool decay, average;
  AsgdRule() = default;
  explicit AsgdRule(const AsgdArgs& a)
      : eta(T(a.eta)), mu(T(a.mu)), shrink(T(1 - a.lambd * a.eta)), wd(T(a.weight_decay)),
        sign(a.maximize ? T(-1) : T(1)), decay(a.weight_decay != 0), average(a.mu != 1) {}
  __device__ void operator()(T& p, T g, T& ax, T&, T&) const {
    T gi = sign * g;
    if (decay) gi += wd * p;
    const T pi = p * shrink - eta * gi;
    p = pi;
    ax = average ? ax + (pi - ax) * mu : pi;
  }
};

// The rule of an argument struct, for element type T.
template <typename T> SgdRule<T> rule_of(const SgdArgs&);
template <typename T> AdamRule<T> rule_of(const AdamArgs&);
template <typename T> AdamaxRule<T> rule_of(const AdamaxArgs&);
template <typename T> NadamRule<T> rule_of(const NadamArgs&);
template <typename T> RadamRule<T> rule_of(const RadamArgs&);
template <typename T> AdagradRule<T> rule_of(const AdagradArgs&);
template <typename T> AdadeltaRule<T> rule_of(const AdadeltaArgs&);
template <typename T> RmspropRule<T> rule_of(const RmspropArgs&);
template <typename T> RpropRule<T> rule_of(const RpropArgs&);
template <typename T> AsgdRule<T> rule_of(const AsgdArgs&);

// ---- the multi-tensor launch (Note [Multi-tensor steps]) ---------------------------------

template <typename T, typename Rule>
struct Pack {
  T* param[kTensorsPerLaunch];
  const T* grad[kTensorsPerLaunch];
  T* state[3][kTensorsPerLaunch];
  int64_t numel[kTensorsPerLaunch];
  Rule rule[kTensorsPerLaunch];
  int64_t first_chunk[kTensorsPerLaunch + 1];  // slot k's chunks are [first_chunk[k], first_chunk[k + 1])
  int64_t chunk;                                // elements a chunk (a multiple of a unit's)
  int slots;
};

// Each thread runs kUnrollOf<U> units at a time, kThreads apart (coalesced), all their
// loads issued before any arithmetic: a step is bound by memory latency, and one
// element's loads in flight at a time left the 1B-parameter Adam at 59% of the copy
// bandwidth. A unit is 16 bytes of elements (Lanes) where a chunk's tensors are all
// 16-byte aligned, else one element. The rules see registers, so the compiler need not
// prove that a store cannot alias a load. With the resident grid, one 16-byte unit at a
// time measured best for Adam over 72 tensors of 14M float32 on the H200: 7.19 ms against
// 7.40 for two and 7.98 for four (more registers, fewer resident blocks to hide latency).
template <typename T>
struct alignas(16) Lanes {
  static constexpr int kCount = 16 / int(sizeof(T));
  T v[kCount];
};

template <typename U>
constexpr bool kIsLanes = false;
template <typename T>
constexpr bool kIsLanes<Lanes<T>> = true;

template <typename U>
constexpr int kUnrollOf = kIsLanes<U> ? 1 : 4;

// rule on units [first, last) of p, g and the states (null: absent).
template <typename U, typename Rule>
__device__ void step_units(const Rule& rule, U* p, const U* g, U* const s[3], int64_t first, int64_t last) {
  constexpr int kUnroll = kUnrollOf<U>;
  for (int64_t base = first + threadIdx.x; base < last; base += int64_t(kThreads) * kUnroll) {
    U rp[kUnroll], rg[kUnroll], rs[3][kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + int64_t(u) * kThreads;
      if (i >= last) continue;
      rp[u] = p[i];
      rg[u] = g[i];
#pragma unroll
      for (int j = 0; j < 3; ++j) rs[j][u] = s[j] ? s[j][i] : U{};
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + int64_t(u) * kThreads;
      if (i >= last) continue;
      if constexpr (kIsLanes<U>) {
#pragma unroll
        for (int l = 0; l < U::kCount; ++l) rule(rp[u].v[l], rg[u].v[l], rs[0][u].v[l], rs[1][u].v[l], rs[2][u].v[l]);
      } else {
        rule(rp[u], rg[u], rs[0][u], rs[1][u], rs[2][u]);
      }
      p[i] = rp[u];
#pragma unroll
      for (int j = 0; j < 3; ++j)
        if (s[j]) s[j][i] = rs[j][u];
    }
  }
}

__device__ inline bool aligned16(const void* a) { return (reinterpret_cast<uintptr_t>(a) & 15) == 0; }

// The chunk'th pk.chunk elements of slot k's tensors.
template <typename T, typename Rule>
__device__ void step_chunk(const Pack<T, Rule>& pk, int k, int64_t chunk) {
  using V = Lanes<T>;
  const int64_t begin = chunk * pk.chunk;  // (a multiple of V::kCount)
  const int64_t end = begin + pk.chunk < pk.numel[k] ? begin + pk.chunk : pk.numel[k];
  const Rule& rule = pk.rule[k];
  T* p = pk.param[k];
  const T* g = pk.grad[k];
  T* const s[3] = {pk.state[0][k], pk.state[1][k], pk.state[2][k]};
  bool vec = aligned16(p) && aligned16(g);
  for (int j = 0; j < 3; ++j) vec = vec && (!s[j] || aligned16(s[j]));
  int64_t scalar_from = begin;
  if (vec) {
    const int64_t units = (end - begin) / V::kCount;
    V* const sv[3] = {s[0] ? reinterpret_cast<V*>(s[0] + begin) : nullptr,
                      s[1] ? reinterpret_cast<V*>(s[1] + begin) : nullptr,
                      s[2] ? reinterpret_cast<V*>(s[2] + begin) : nullptr};
    step_units(rule, reinterpret_cast<V*>(p + begin), reinterpret_cast<const V*>(g + begin), sv, 0, units);
    scalar_from = begin + units * V::kCount;
  }
  step_units(rule, p, g, s, scalar_from, end);
}

// Blocks walk the launch's chunks a grid apart (Note [Multi-tensor steps]).
template <typename T, typename Rule>
__global__ void __launch_bounds__(kThreads) optim_step_kernel(const __grid_constant__ Pack<T, Rule> pk) {
  int k = 0;
  for (int64_t c = blockIdx.x; c < pk.first_chunk[pk.slots]; c += gridDim.x) {
    while (c >= pk.first_chunk[k + 1]) ++k;  // (c only grows)
    step_chunk(pk, k, c - pk.first_chunk[k]);
  }
}

// How many blocks of the kernel `device` runs at once.
template <typename T, typename Rule>
int64_t resident_blocks(int device) {
  static const int per_multiprocessor = [] {
    int blocks = 0;
    LUCID_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, optim_step_kernel<T, Rule>, kThreads, 0));
    return blocks > 0 ? blocks : 1;
  }();
  return int64_t(per_multiprocessor) * multiprocessor_count(device);
}

// The elements of a chunk for a step over the parameters `which` (Note [Multi-tensor
// steps]): kChunk, or fewer, whole units of kThreads x 16 bytes, when kChunk would
// leave some of the max_blocks resident blocks without a chunk.
template <typename T>
int64_t chunk_elements(ops::Outputs outs, const std::vector<size_t>& which, int64_t max_blocks) {
  constexpr int64_t unit = int64_t(kThreads) * (16 / int64_t(sizeof(T)));
  int64_t total = 0;
  for (size_t i : which) total += outs[i]->numel();
  const int64_t per_block = (total + max_blocks - 1) / max_blocks;
  const int64_t units = (per_block + unit - 1) / unit;
  return std::min(kChunk, std::max<int64_t>(units, 1) * unit);
}

// One step over the parameters `which` (all of element type T): outs {params, states
// list by list}, ins {grads}; `count` parameters in all.
template <typename T, typename Args>
void step_tensors(const OptimStep& prim, ops::Outputs outs, ops::Inputs ins, const std::vector<size_t>& which,
                  int device, cudaStream_t s) {
  using Rule = decltype(rule_of<T>(std::declval<const Args&>()));
  using P = Pack<T, Rule>;
  static_assert(sizeof(P) <= 4096, "an OptimStep launch's arguments must fit the 4 KiB kernel parameter space");
  static_assert(std::is_trivially_copyable_v<P>);
  const size_t count = prim.args.size(), states = outs.size() / count - 1;
  if (which.empty()) return;
  const int64_t max_blocks = resident_blocks<T, Rule>(device);
  P pk{};
  pk.chunk = chunk_elements<T>(outs, which, max_blocks);
  auto launch = [&] {
    const int64_t chunks = pk.first_chunk[pk.slots];
    const int64_t blocks = chunks < max_blocks ? chunks : max_blocks;
    optim_step_kernel<T, Rule><<<unsigned(blocks), kThreads, 0, s>>>(pk);
    LUCID_CUDA_CHECK(cudaGetLastError());
    pk.slots = 0;
  };
  for (size_t i : which) {
    const int64_t numel = outs[i]->numel();
    if (numel == 0) continue;
    const int slot = pk.slots++;
    pk.param[slot] = reinterpret_cast<T*>(outs[i]->data_ptr());
    pk.grad[slot] = reinterpret_cast<const T*>(ins[i]->data_ptr());
    for (size_t j = 0; j < 3; ++j)
      pk.state[j][slot] = j < states ? reinterpret_cast<T*>(outs[(1 + j) * count + i]->data_ptr()) : nullptr;
    pk.numel[slot] = numel;
    pk.rule[slot] = Rule(std::get<Args>(prim.args[i]));
    pk.first_chunk[slot + 1] = pk.first_chunk[slot] + (numel + pk.chunk - 1) / pk.chunk;
    if (pk.slots == kTensorsPerLaunch) launch();
  }
  if (pk.slots > 0) launch();
}

void optim_step_prim(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<OptimStep>(prim);
  if (p.args.empty()) return;
  std::vector<size_t> f32, f64;
  for (size_t i = 0; i < p.args.size(); ++i) (outs[i]->dtype() == Dtype::F64 ? f64 : f32).push_back(i);
  const int device = outs[0]->device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  std::visit([&](const auto& first) {
    using Args = std::decay_t<decltype(first)>;
    step_tensors<float, Args>(p, outs, ins, f32, device, s);
    step_tensors<double, Args>(p, outs, ins, f64, device, s);
  }, p.args[0]);
}

}  // namespace

void register_optim_kernels() { ops::register_kernel(ops::Prim::OptimStep, DeviceType::GPU, optim_step_prim); }

}  // namespace lucid::cuda
