// Convolution and pooling kernels on raw contiguous float/double buffers. Every
// spatial rank (1-3) runs as 3-d with size-1 leading dims, so one kernel serves
// conv1d/2d/3d, their transposes, unfold/fold and all pools.
//
// Convolution vocabulary (shared by conv, conv_transpose and the weight gradient):
// the "big" image is the one the kernel slides over (conv's input, conv_transpose's
// output), the "small" one has one value per window (conv's output). The weight is
// [C_small, C_big / groups, k0, k1, k2] for both conv and conv_transpose, so per
// group it is one [C_small/g, C_big/g * K] matrix.
#pragma once

#include <cstdint>
#include <vector>

namespace lucid::cpu {

struct ConvGeom {
  int64_t big[3] = {1, 1, 1}, small[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
  int64_t groups = 1;
  int64_t big_numel() const { return big[0] * big[1] * big[2]; }
  int64_t small_numel() const { return small[0] * small[1] * small[2]; }
  int64_t kernel_numel() const { return k[0] * k[1] * k[2]; }
  // A 1x1 window, stride 1, no padding: the column matrix is the image itself.
  bool is_pointwise() const;
};

// col [C * K, L] <- the windows of img [C, big] (zeros where they cross the padding).
template <typename T>
void im2col(const T* img, T* col, int64_t channels, const ConvGeom& g);
// img [C, big] += the windows of col [C * K, L] (the adjoint of im2col); with
// overwrite, img's old values are not read (it starts from zeros).
template <typename T>
void col2im(const T* col, T* img, int64_t channels, const ConvGeom& g, bool overwrite = false);
// The same for `count` images img + i * img_stride side by side: col is
// [C * K, count * L], image i's columns at offset i * L of every row.
template <typename T>
void im2col_batch(const T* img, int64_t img_stride, int64_t count, T* col, int64_t channels, const ConvGeom& g);
template <typename T>
void col2im_batch(const T* col, int64_t count, T* img, int64_t img_stride, int64_t channels, const ConvGeom& g,
                  bool overwrite);

// x [channels, len] += bias [channels], one value per row.
template <typename T>
void add_channel_bias(T* x, const T* bias, int64_t channels, int64_t len) {
  for (int64_t c = 0; c < channels; ++c) {
    const T v = bias[c];
    T* row = x + c * len;
    for (int64_t l = 0; l < len; ++l) row[l] += v;
  }
}

// small [N, Cs, L] = conv(big [N, Cb, big], w) (+ bias [Cs] when given).
template <typename T>
void conv_forward(const T* big, const T* w, const T* bias, T* small, int64_t n, int64_t c_big, int64_t c_small,
                  const ConvGeom& g);
// big [N, Cb, big] = conv_transpose(small [N, Cs, L], w) (+ bias [Cb]); overwrites big.
template <typename T>
void conv_transpose_forward(const T* small, const T* w, const T* bias, T* big, int64_t n, int64_t c_big,
                            int64_t c_small, const ConvGeom& g);
// gw [Cs, Cb/g, K] = sum over the batch of small @ im2col(big)^T; overwrites gw.
template <typename T>
void conv_weight_grad(const T* big, const T* small, T* gw, int64_t n, int64_t c_big, int64_t c_small,
                      const ConvGeom& g);

// Pooling windows, per spatial dim d and output index o: the input positions
// start[o] + j * step for 0 <= j < len[o] that lie inside [0, in) take part.
struct PoolDim {
  int64_t in = 1, out = 1, step = 1;
  std::vector<int64_t> start, len;
  std::vector<double> size;  // avg pools: this dim's factor of the divisor
};

// out/idx [NC, out] = max over each window of x [NC, in]; idx is the flat spatial
// position of the max (NaN wins, as PyTorch). A window with no valid position
// gives -inf and index -1 (never happens for validated geometry).
template <typename T>
void max_pool(const T* x, T* out, int64_t* idx, int64_t nc, const PoolDim* dims);
// out [NC, out] = sum over each window / divisor (the product of the dims' sizes,
// or `divisor` when > 0).
template <typename T>
void avg_pool(const T* x, T* out, int64_t nc, const PoolDim* dims, double divisor);
// gx [NC, in] = the adjoint of avg_pool applied to gy [NC, out]; overwrites gx.
template <typename T>
void avg_pool_adjoint(const T* gy, T* gx, int64_t nc, const PoolDim* dims, double divisor);

}  // namespace lucid::cpu
