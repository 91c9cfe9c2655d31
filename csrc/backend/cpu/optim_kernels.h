// Element loops of the optimizers' fused steps (ops/optim.h): one pass over a
// contiguous run of a parameter, its gradient and its state, with the per-tensor
// scalars (step sizes, bias corrections) computed once by the caller (the argument
// structs are in ops/prims/optim.h). T is float or double; 16-bit parameters are
// widened to float by the caller's staging.
#pragma once

#include <cstdint>

#include "ops/prims/optim.h"

namespace lucid::cpu::optim {

using ops::optim::AdadeltaArgs;
using ops::optim::AdagradArgs;
using ops::optim::AdamArgs;
using ops::optim::AdamaxArgs;
using ops::optim::AsgdArgs;
using ops::optim::NadamArgs;
using ops::optim::RadamArgs;
using ops::optim::RmspropArgs;
using ops::optim::RpropArgs;
using ops::optim::SgdArgs;

template <typename T>
void sgd(const SgdArgs& a, T* p, const T* g, T* buf, int64_t n);

template <typename T>
void adam(const AdamArgs& a, T* p, const T* g, T* m, T* v, T* vmax, int64_t n);

template <typename T>
void adamax(const AdamaxArgs& a, T* p, const T* g, T* m, T* u, int64_t n);

template <typename T>
void nadam(const NadamArgs& a, T* p, const T* g, T* m, T* v, int64_t n);

template <typename T>
void radam(const RadamArgs& a, T* p, const T* g, T* m, T* v, int64_t n);

template <typename T>
void adagrad(const AdagradArgs& a, T* p, const T* g, T* sum, int64_t n);

template <typename T>
void adadelta(const AdadeltaArgs& a, T* p, const T* g, T* square_avg, T* acc_delta, int64_t n);

template <typename T>
void rmsprop(const RmspropArgs& a, T* p, const T* g, T* square_avg, T* grad_avg, T* buf, int64_t n);

template <typename T>
void rprop(const RpropArgs& a, T* p, const T* g, T* prev, T* step_size, int64_t n);

template <typename T>
void asgd(const AsgdArgs& a, T* p, const T* g, T* ax, int64_t n);

}  // namespace lucid::cpu::optim
