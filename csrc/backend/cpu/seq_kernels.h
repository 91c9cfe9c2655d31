// Fused CPU kernels of the sequence layers (issue 5): the pointwise part of the LSTM and GRU cells
// (gates -> states) with their backward. All inputs are contiguous; T is float or double.
#pragma once

#include <cstdint>

namespace lucid::cpu {

// LSTM: gates [B, 4H] (pre-activation i, f, g, o), c_prev [B, H] -> h, c [B, H];
// act [B, 4H] receives the activated gates (for the backward).
template <class T>
void lstm_cell_forward(const T* gates, const T* c_prev, T* h, T* c, T* act, int64_t batch, int64_t hidden);
// gh, gc: gradients of h and c; -> d gates [B, 4H], d c_prev [B, H].
template <class T>
void lstm_cell_backward(const T* gh, const T* gc, const T* act, const T* c, const T* c_prev, T* dgates,
                        T* dc_prev, int64_t batch, int64_t hidden);

// GRU: gx, gh [B, 3H] (r, z, n projections of input and hidden, biases included),
// h_prev [B, H] -> h [B, H]; act [B, 3H] receives r, z, n.
template <class T>
void gru_cell_forward(const T* gx, const T* gh, const T* h_prev, T* h, T* act, int64_t batch, int64_t hidden);
// -> d gx, d gh [B, 3H], d h_prev [B, H].
template <class T>
void gru_cell_backward(const T* dh, const T* act, const T* gh, const T* h_prev, T* dgx, T* dgh, T* dh_prev,
                       int64_t batch, int64_t hidden);

}  // namespace lucid::cpu

namespace lucid::cpu {

// CTC (Graves et al. 2006) in log space, one batch entry per task. lp: [T, N, C]
// log-probabilities; targets: [N, smax] (row b's first tl[b] entries are its labels).
// Forward: nll[b] and alpha [N, T, 2 * smax + 1] (kept for the backward).
template <class T>
void ctc_forward(const T* lp, const int64_t* targets, const int64_t* il, const int64_t* tl, int64_t Tn,
                 int64_t N, int64_t C, int64_t smax, int64_t blank, double* alpha, double* nll);
// grad [T, N, C] of sum_b g[b] * nll[b], as torch returns it: the gradient for logits
// that go through log_softmax first, exp(lp) - (posterior of each class); zero for
// t >= il[b] and for impossible alignments (nll = inf).
template <class T>
void ctc_backward(const T* lp, const int64_t* targets, const int64_t* il, const int64_t* tl, int64_t Tn, int64_t N,
                  int64_t C, int64_t smax, int64_t blank, const double* alpha, const double* nll, const T* g,
                  T* grad);

}  // namespace lucid::cpu
