// Host launchers of the CUDA kernels of the sequence layers (ops/prims/seq.h): the
// pointwise LSTM / GRU cells and their backward (seq_cells.cu), which the cell
// primitives run once and the layer loops (seq_layers.cpp) run once per time step
// between their cuBLASLt products. Pointers are device pointers of contiguous
// float32 (f64 = false) or float64 arrays; every launch goes on `s`, the device's
// stream, with the device current.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace lucid::cuda {

// gates [B, 4H] pre-activations (i, f, g, o) and c_prev [B, H] -> h, c [B, H] and the
// activated gates act [B, 4H]. act may be gates itself (in place).
void lstm_cell(bool f64, const void* gates, const void* c_prev, void* h, void* c, void* act, int64_t B, int64_t H,
               cudaStream_t s);

// d gates [B, 4H] and d c_prev [B, H] from the gradients of h (dh, plus dh_add when
// not null: the layer adds the step's output gradient here) and of c (dc). dc_prev
// may be dc itself (in place).
void lstm_cell_backward(bool f64, const void* dh, const void* dh_add, const void* dc, const void* act,
                        const void* c, const void* c_prev, void* dgates, void* dc_prev, int64_t B, int64_t H,
                        cudaStream_t s);

// gx, gh [B, 3H] projections (r, z, n) and h_prev [B, H] -> h [B, H], act [B, 3H].
// With b_hh not null, gh is the bare product h_prev @ w_hh^T: b_hh [3H] is added and
// the sum written back to gh (the layer keeps it for the backward).
void gru_cell(bool f64, const void* gx, void* gh, const void* b_hh, const void* h_prev, void* h, void* act,
              int64_t B, int64_t H, cudaStream_t s);

// d gx, d gh [B, 3H] and d h_prev [B, H] (the direct part, dh * z) from dh (plus dh_add
// when not null). dh_prev may be dh itself (in place).
void gru_cell_backward(bool f64, const void* dh, const void* dh_add, const void* act, const void* gh,
                       const void* h_prev, void* dgx, void* dgh, void* dh_prev, int64_t B, int64_t H,
                       cudaStream_t s);

// Registers the GPU kernels of CtcLoss and CtcLossBackward (ctc.cu); called by
// register_seq_kernels (seq_layers.cpp).
void register_ctc_kernels();

}  // namespace lucid::cuda
