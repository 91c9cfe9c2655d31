// CUDA kernels of the random primitives (ops/prims/random.h). Each thread makes one
// Philox block of the draw the op reserved and writes the elements that block serves
// (Note [Philox stream layout] in core/generator.h), with the CPU's mapping from words
// to values (backend/cpu/random.cpp): the same seed gives the same uniform, integer,
// bernoulli and permutation values on both devices, and normal values that differ
// only by the last bits of CUDA's log/cos/sin.
#include "backend/common/gamma_grads.h"
#include "backend/common/random_values.h"
#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/register.h"
#include "core/philox.h"
#include "ops/prims/random.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;
using ops::prim_cast;

using backend::cast_to;  // the CPU's word-to-value rules (backend/common/random_values.h)
using backend::to_double;

// f(block, first element, count) for every Philox block of the draw serving n elements.
template <int kPer, typename F>
__global__ void blocks_kernel(int64_t n, PhiloxDraw draw, F f) {
  const int64_t blocks = (n + kPer - 1) / kPer;
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += int64_t(gridDim.x) * blockDim.x) {
    const int64_t first = b * kPer;
    f(draw.block(uint64_t(b)), first, int(n - first < kPer ? n - first : kPer));
  }
}

template <int kPer, typename F>
void launch_blocks(const TensorImpl& t, int64_t n, const PhiloxDraw& draw, F f) {
  if (n <= 0) return;
  const int device = t.device().index;
  DeviceGuard guard(device);
  const int64_t blocks = (n + kPer - 1) / kPer;
  blocks_kernel<kPer><<<ew_grid(blocks), kEwThreads, 0, stream(device)>>>(n, draw, f);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

// Acc float: a 24-bit uniform per word, 4 per block; double: 53 bits, 2 per block.
template <typename T, typename Acc>
struct Uniform {
  T* p;
  Acc from, to;
  __device__ void put(int64_t i, Acc u) const { p[i] = backend::uniform_value<T>(u, from, to); }
  __device__ void operator()(const Philox4& r, int64_t first, int count) const {
    for (int k = 0; k < count; ++k) {
      if constexpr (std::is_same_v<Acc, float>) put(first + k, uniform_f32(r.x[k]));
      else put(first + k, uniform_f64(r.x[2 * k], r.x[2 * k + 1]));
    }
  }
};

// Box-Muller, two normals per pair of uniforms; optional per-element mean and std
// (float64, torch.normal(Tensor, Tensor)).
template <typename T, typename Acc>
struct Normal {
  T* p;
  Acc mean, stdv;
  const double* means;
  const double* stds;
  __device__ void pair(int64_t i, int left, Acc u1, Acc u2) const {
    Acc z0, z1;
    backend::normal_pair(u1, u2, means ? Acc(0) : mean, means ? Acc(1) : stdv, z0, z1);
    write(i, z0);
    if (left > 1) write(i + 1, z1);
  }
  // With per-element mean and std (the CPU draws N(0, 1), then scales).
  __device__ void write(int64_t i, Acc z) const {
    p[i] = means ? cast_to<T>(means[i] + stds[i] * double(z)) : cast_to<T>(z);
  }
  __device__ void operator()(const Philox4& r, int64_t first, int count) const {
    if constexpr (std::is_same_v<Acc, float>) {
      pair(first, count, uniform_f32(r.x[0]), uniform_f32(r.x[1]));
      if (count > 2) pair(first + 2, count - 2, uniform_f32(r.x[2]), uniform_f32(r.x[3]));
    } else {
      pair(first, count, uniform_f64(r.x[0], r.x[1]), uniform_f64(r.x[2], r.x[3]));
    }
  }
};

template <typename T>
struct Integers {
  T* p;
  int64_t low;
  uint64_t range;
  __device__ void operator()(const Philox4& r, int64_t first, int count) const {
    for (int k = 0; k < count; ++k) {
      const uint64_t w = (uint64_t(r.x[2 * k]) << 32) | r.x[2 * k + 1];
      p[first + k] = cast_to<T>(int64_t(uint64_t(low) + bounded_u64(w, range)));
    }
  }
};

template <typename T, typename P>
struct Bernoulli {
  T* p;
  double prob;
  const P* probs;  // per element, or null
  __device__ void operator()(const Philox4& r, int64_t first, int count) const {
    for (int k = 0; k < count; ++k) {
      const double q = probs ? to_double(probs[first + k]) : prob;
      p[first + k] = cast_to<T>(uniform_f64(r.x[2 * k], r.x[2 * k + 1]) < q ? 1 : 0);
    }
  }
};

template <typename T>
T* out_data(TensorImpl* t) {
  LUCID_CHECK(t->is_contiguous(), RuntimeError, "internal: a random fill needs a contiguous output");
  return reinterpret_cast<T*>(t->data_ptr());
}

void uniform_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = prim_cast<ops::RandomUniform>(prim);
  TensorImpl& t = *outs[0];
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, complex64>)  // torch: uniform_ on view_as_real(self)
      launch_blocks<4>(t, 2 * t.numel(), p.draw, Uniform<float, float>{out_data<float>(&t), float(p.from), float(p.to)});
    else if constexpr (std::is_same_v<T, complex128>)
      launch_blocks<2>(t, 2 * t.numel(), p.draw, Uniform<double, double>{out_data<double>(&t), p.from, p.to});
    else if constexpr (std::is_same_v<T, double>)
      launch_blocks<2>(t, t.numel(), p.draw, Uniform<double, double>{out_data<double>(&t), p.from, p.to});
    else if constexpr (kIsHalfFloat<T> || std::is_same_v<T, float>)
      launch_blocks<4>(t, t.numel(), p.draw, Uniform<T, float>{out_data<T>(&t), float(p.from), float(p.to)});
  });
}

void normal_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::RandomNormal>(prim);
  TensorImpl& t = *outs[0];
  if (!ins.empty()) {  // float64 output, per-element mean and std
    launch_blocks<2>(t, t.numel(), p.draw,
                     Normal<double, double>{out_data<double>(&t), 0.0, 1.0, reinterpret_cast<const double*>(ins[0]->data_ptr()),
                                            reinterpret_cast<const double*>(ins[1]->data_ptr())});
    return;
  }
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, complex64>)  // torch: each part ~ N(mean, std^2 / 2)
      launch_blocks<4>(t, 2 * t.numel(), p.draw,
                       Normal<float, float>{out_data<float>(&t), float(p.mean), float(p.std / std::sqrt(2.0)), nullptr,
                                            nullptr});
    else if constexpr (std::is_same_v<T, complex128>)
      launch_blocks<2>(t, 2 * t.numel(), p.draw,
                       Normal<double, double>{out_data<double>(&t), p.mean, p.std / std::sqrt(2.0), nullptr, nullptr});
    else if constexpr (std::is_same_v<T, double>)
      launch_blocks<2>(t, t.numel(), p.draw, Normal<double, double>{out_data<double>(&t), p.mean, p.std, nullptr, nullptr});
    else if constexpr (kIsHalfFloat<T> || std::is_same_v<T, float>)
      launch_blocks<4>(t, t.numel(), p.draw,
                       Normal<T, float>{out_data<T>(&t), float(p.mean), float(p.std), nullptr, nullptr});
  });
}

void integers_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = prim_cast<ops::RandomIntegers>(prim);
  TensorImpl& t = *outs[0];
  const uint64_t range = uint64_t(p.high) - uint64_t(p.low);  // exact even for the full int64 span
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (!kIsComplexValue<T>)
      launch_blocks<2>(t, t.numel(), p.draw, Integers<T>{out_data<T>(&t), p.low, range});
  });
}

void bernoulli_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::RandomBernoulli>(prim);
  TensorImpl& t = *outs[0];
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (!kIsComplexValue<T>) {
      if (ins.empty()) return launch_blocks<2>(t, t.numel(), p.draw, Bernoulli<T, float>{out_data<T>(&t), p.p, nullptr});
      visit_dtype(ins[0]->dtype(), [&]<typename P>() {
        if constexpr (kIsRealFloat<P>)
          launch_blocks<2>(t, t.numel(), p.draw,
                           Bernoulli<T, P>{out_data<T>(&t), 0.0, reinterpret_cast<const P*>(ins[0]->data_ptr())});
      });
    }
  });
}

// Fisher-Yates is sequential: one thread walks it (as the CPU does), so the
// permutation equals the CPU's for the same seed.
template <typename T>
__global__ void permutation_kernel_(T* p, int64_t n, PhiloxDraw draw) {
  backend::fisher_yates(p, n, draw);
}

void permutation_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  TensorImpl& t = *outs[0];
  const PhiloxDraw draw = prim_cast<ops::RandomPermutation>(prim).draw;
  if (t.numel() == 0) return;
  const int device = t.device().index;
  DeviceGuard guard(device);
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (!kIsComplexValue<T> && !std::is_same_v<T, bool>)
      permutation_kernel_<T><<<1, 1, 0, stream(device)>>>(out_data<T>(&t), t.numel(), draw);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

template <typename P>
__global__ void per_element_kernel_(P* out, const P* a, const P* b, int64_t n, ops::ElementLaw law, PhiloxDraw draw) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = backend::element_sample<P>(law, draw, uint64_t(i), to_double(a[i]), b ? to_double(b[i]) : 0.0);
}

void per_element_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  TensorImpl& t = *outs[0];
  const auto& p = prim_cast<ops::RandomPerElement>(prim);
  if (t.numel() == 0) return;
  const int device = t.device().index;
  DeviceGuard guard(device);
  visit_dtype(t.dtype(), [&]<typename P>() {
    if constexpr (kIsRealFloat<P>)
      per_element_kernel_<P><<<ew_grid(t.numel()), kEwThreads, 0, stream(device)>>>(
          out_data<P>(&t), reinterpret_cast<const P*>(ins[0]->data_ptr()),
          ins.size() > 1 ? reinterpret_cast<const P*>(ins[1]->data_ptr()) : nullptr, t.numel(), p.law, p.draw);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

template <typename P>
__global__ void reparam_grad_kernel_(P* g, const P* a, const P* b, const P* c, int64_t n, bool dirichlet) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    g[i] = cast_to<P>(dirichlet ? backend::dirichlet_grad(to_double(a[i]), to_double(b[i]), to_double(c[i]))
                                : backend::standard_gamma_grad(to_double(a[i]), to_double(b[i])));
}

void reparam_grad_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  TensorImpl& g = *outs[0];
  const bool dirichlet = prim_cast<ops::ReparamGrad>(prim).dirichlet;
  if (g.numel() == 0) return;
  const int device = g.device().index;
  DeviceGuard guard(device);
  visit_dtype(g.dtype(), [&]<typename P>() {
    if constexpr (kIsRealFloat<P>) {
      auto in = [&](size_t k) { return k < ins.size() ? reinterpret_cast<const P*>(ins[k]->data_ptr()) : nullptr; };
      reparam_grad_kernel_<P><<<ew_grid(g.numel()), kEwThreads, 0, stream(device)>>>(out_data<P>(&g), in(0), in(1),
                                                                                      in(2), g.numel(), dirichlet);
    }
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

// The first bad value's flat index (or -1) of a probability, std or rate tensor.
template <typename P>
__global__ void check_kernel_(const P* v, int64_t n, bool probabilities, unsigned long long* first_bad) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const double q = to_double(v[i]);
    const bool ok = probabilities ? (q >= 0.0 && q <= 1.0) : q >= 0.0;
    if (!ok) atomicMin(first_bad, (unsigned long long)i);  // the smallest bad index: order-independent
  }
}

// The checks run before the op draws (so a bad value consumes no randomness), which
// needs their answer on the host: one 8-byte read back.
void check_kernel(const ops::Primitive& prim, Outputs, Inputs ins) {
  const ops::RandomArgument what = prim_cast<ops::RandomCheck>(prim).what;
  const bool probabilities = what == ops::RandomArgument::Probabilities;
  const TensorImpl& v = *ins[0];
  if (v.numel() == 0) return;
  TensorPtr dense = v.is_contiguous() ? nullptr : v.clone();
  const TensorImpl& x = dense ? *dense : v;
  const int device = x.device().index;
  TensorPtr flag = TensorImpl::full({}, Scalar(int64_t(-1)), Dtype::I64, x.device());
  auto* first_bad = reinterpret_cast<unsigned long long*>(flag->data_ptr());
  {
    DeviceGuard guard(device);
    visit_dtype(x.dtype(), [&]<typename P>() {
      if constexpr (kIsRealFloat<P>)
        check_kernel_<P><<<ew_grid(x.numel()), kEwThreads, 0, stream(device)>>>(
            reinterpret_cast<const P*>(x.data_ptr()), x.numel(), probabilities, first_bad);
    });
    LUCID_CUDA_CHECK(cudaGetLastError());
  }
  const int64_t bad = std::get<int64_t>(flag->item());
  if (bad < 0) return;
  const double value = std::visit([](auto s) -> double {
    if constexpr (std::is_same_v<decltype(s), std::complex<double>>) return s.real();
    else return double(s);
  }, TensorImpl::view_of(x, {}, {}, x.storage_offset() + bad * int64_t(x.itemsize()))->item());
  if (probabilities)
    fail<RuntimeError>("Expected p_in >= 0 && p_in <= 1 to be true, but got false (probability ", value,
                       " at flat index ", bad, ")");
  if (what == ops::RandomArgument::PoissonRates)
    fail<RuntimeError>("invalid Poisson rate, expected rate to be non-negative, but got ", value);
  fail<RuntimeError>("normal expects all elements of std >= 0.0, but found std ", value);
}

}  // namespace

void register_random_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::RandomUniform, DeviceType::GPU, uniform_kernel);
  ops::register_kernel(Prim::RandomNormal, DeviceType::GPU, normal_kernel);
  ops::register_kernel(Prim::RandomIntegers, DeviceType::GPU, integers_kernel);
  ops::register_kernel(Prim::RandomBernoulli, DeviceType::GPU, bernoulli_kernel);
  ops::register_kernel(Prim::RandomPermutation, DeviceType::GPU, permutation_kernel);
  ops::register_kernel(Prim::RandomCheck, DeviceType::GPU, check_kernel);
  ops::register_kernel(Prim::RandomPerElement, DeviceType::GPU, per_element_kernel);
  ops::register_kernel(Prim::ReparamGrad, DeviceType::GPU, reparam_grad_kernel);
}

}  // namespace lucid::cuda
