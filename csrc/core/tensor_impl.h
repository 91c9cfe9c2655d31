// TensorImpl: metadata (shape, byte strides, dtype, device, byte offset) over a
// Storage, plus autograd metadata built only when a tensor joins the graph.
// The contract is shared/reference/000_*.txt; docs/ENGINE.md explains the choices.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/storage.h"

namespace lucid {

struct Node;  // an autograd graph node (csrc/autograd)
class TensorImpl;
using TensorPtr = std::shared_ptr<TensorImpl>;

// A single element read out of a tensor. Half/bfloat16/float32 widen to double,
// complex64 to complex<double>, every integer to int64.
using Scalar = std::variant<bool, int64_t, double, std::complex<double>>;
// Whether a number is 0 (1) in its own type: a coefficient that drops a term (a multiply).
inline bool is_zero(const Scalar& s) {
  return std::visit([](auto v) { return v == decltype(v)(0); }, s);
}
inline bool is_one(const Scalar& s) {
  return std::visit([](auto v) { return v == decltype(v)(1); }, s);
}

// The most dimensions a tensor may have (NumPy's limit).
inline constexpr size_t kMaxDims = 64;

struct TensorMeta {
  Shape shape;
  Stride stride;  // bytes
  Dtype dtype = Dtype::F32;
  Device device;
  int64_t offset = 0;  // bytes from the start of the storage
};

struct AutogradMeta {
  bool requires_grad = false;
  bool is_leaf = true;
  bool retains_grad = false;
  std::optional<Storage> grad;  // accumulated gradient (plain bytes, same meta as the tensor)
  TensorPtr grad_impl;          // graph-mode gradient, set by backward(create_graph=True)
  std::shared_ptr<Node> grad_fn;
  std::shared_ptr<Node> grad_accumulator;  // a leaf's AccumulateGrad, made on first use
  TensorPtr view_base;  // for a view made in grad mode: the tensor it is a view of
  // for such a base: the views made of it in grad mode (Note [Views learn of writes])
  std::vector<std::weak_ptr<TensorImpl>> views;
  bool is_param = false;  // made by nn.Parameter (isinstance(t, nn.Parameter))
  uint32_t output_nr = 0;
};

class TensorImpl : public std::enable_shared_from_this<TensorImpl> {
 public:
  TensorImpl(Storage storage, TensorMeta meta);

  // A new tensor with fresh, uninitialised storage and contiguous strides.
  // `pinned` asks for SharedStorage (host memory the GPU also addresses).
  static TensorPtr empty(Shape shape, Dtype dtype, Device device, bool pinned = false);
  // Like empty(), with the given dense byte strides (see dense_strides_like).
  static TensorPtr empty_strided(const Shape& shape, const Stride& stride, Dtype dtype, Device device);
  // A new tensor with every element `value` (checked as fill() checks). Version 0.
  static TensorPtr full(const Shape& shape, const Scalar& value, Dtype dtype, Device device,
                        bool pinned = false);
  // A view of `base`'s storage with other metadata (same device; base's dtype unless
  // `dtype` reinterprets the bytes, as view_as_real and view_as_complex do).
  static TensorPtr view_of(const TensorImpl& base, Shape shape, Stride stride, int64_t offset,
                           std::optional<Dtype> dtype = std::nullopt);

  // Tensor.data = other: this tensor now shows other's bytes and metadata; its
  // autograd metadata stays.
  void set_data(const TensorImpl& other) {
    storage_ = other.storage_;
    meta_ = other.meta_;
  }

  // The tensor this one is a view of, made by any view op in any grad mode, or null:
  // PyTorch's Tensor._base, the first tensor of a chain of views (a view of a view
  // has the chain's root). Autograd's own view base (AutogradMeta::view_base) is the
  // base of views made in grad mode only, which the in-place rules read.
  const TensorPtr& base() const { return base_; }
  void set_base(TensorPtr base) { base_ = std::move(base); }

  // ---- metadata -------------------------------------------------------------
  const TensorMeta& meta() const { return meta_; }
  const Shape& shape() const { return meta_.shape; }
  const Stride& stride() const { return meta_.stride; }
  Stride& mutable_stride() { return meta_.stride; }
  Dtype dtype() const { return meta_.dtype; }
  Dtype& mutable_dtype() { return meta_.dtype; }
  const Device& device() const { return meta_.device; }
  Device& mutable_device() { return meta_.device; }
  void set_dtype(Dtype d) { meta_.dtype = d; }
  void set_device(Device d) { meta_.device = d; }
  int64_t storage_offset() const { return meta_.offset; }
  int64_t ndim() const { return int64_t(meta_.shape.size()); }
  int64_t numel() const;
  size_t itemsize() const { return dtype_size(meta_.dtype); }
  // numel() * itemsize(); RuntimeError when that overflows (a broadcast view can
  // have more elements than memory has bytes).
  size_t nbytes() const;
  bool is_contiguous() const;

  // ---- storage ----------------------------------------------------------------
  const Storage& storage() const { return storage_; }
  Storage& mutable_storage() { return storage_; }
  bool is_cpu_storage() const { return std::holds_alternative<CpuStorage>(storage_); }
  bool is_gpu_storage() const { return std::holds_alternative<GpuStorage>(storage_); }
  bool is_shared_storage() const { return std::holds_alternative<SharedStorage>(storage_); }
  // Is this tensor's storage aliased by another tensor (a view, or a NumPy array)?
  bool storage_is_shared() const;
  // Address of element 0 as seen by the tensor's own device.
  std::byte* data_ptr() const;
  // Marks the bytes as reachable outside lucid (VersionCounter::reached_outside): for
  // memory lucid imports or hands out to another library.
  void mark_reached_outside() const;
  bool reached_outside() const;
  // Address of element 0 as seen by the host; only for CPU and shared storage.
  std::byte* host_ptr() const;

  // ---- versions (Note [Version counter] in tensor_impl.cpp) ---------------------
  uint64_t version() const;
  void bump_version();

  // ---- data movement ------------------------------------------------------------
  // Copies `src` into this tensor, broadcasting src's shape to ours and casting its
  // dtype, across every pair of storage kinds. Bumps the version counter.
  void copy_from(const TensorImpl& src);
  // Writes `value` (cast to our dtype) into every element. Bumps the version counter.
  void fill(const Scalar& value);
  // fill() for a tensor being created, which nobody can have saved yet: no version
  // bump, so factory functions return tensors at version 0, as PyTorch does.
  void initialize(const Scalar& value);
  // A copy on `device` with `dtype`; shares nothing with this tensor. Contiguous,
  // or, with preserve_layout, in this tensor's memory order (PyTorch's
  // preserve_format, what Tensor.clone() and Tensor.to() do).
  TensorPtr clone(std::optional<Dtype> dtype = std::nullopt,
                  std::optional<Device> device = std::nullopt, bool preserve_layout = false) const;
  // This tensor on `device`: itself when already there; a relabelled alias when the
  // storage is shared (no copy); otherwise a copy.
  TensorPtr transfer_to_device(Device device);
  // Waits until every queued write to this tensor's storage is done (GPU); no-op on CPU.
  void eval() const;

  // ---- reading out (NumPy-free) ------------------------------------------------------
  std::vector<std::byte> to_bytes() const;  // row-major, dtype-sized elements
  Scalar item() const;                       // RuntimeError unless numel() == 1
  std::string to_string() const;             // the data part of repr (core/format.cpp)

  // ---- autograd metadata (built lazily) ------------------------------------------------
  bool has_autograd_meta() const { return autograd_.has_value(); }
  AutogradMeta* autograd_meta();  // constructs on first call
  bool requires_grad() const { return autograd_ && autograd_->requires_grad; }
  void set_requires_grad(bool v);
  bool is_leaf() const { return !autograd_ || autograd_->is_leaf; }
  void set_leaf(bool v) { autograd_meta()->is_leaf = v; }
  bool retains_grad() const { return autograd_ && autograd_->retains_grad; }
  void set_retains_grad(bool v) { autograd_meta()->retains_grad = v; }
  const std::shared_ptr<Node>& grad_fn() const;
  void set_grad_fn(std::shared_ptr<Node> fn) { autograd_meta()->grad_fn = std::move(fn); }
  void clear_grad_fn() { if (autograd_) autograd_->grad_fn.reset(); }
  uint32_t output_nr() const { return autograd_ ? autograd_->output_nr : 0; }
  void set_output_nr(uint32_t n) { autograd_meta()->output_nr = n; }
  const std::optional<Storage>& grad_storage() const;
  std::optional<Storage>& mutable_grad_storage() { return autograd_meta()->grad; }
  void set_grad_storage(Storage s) { autograd_meta()->grad = std::move(s); }
  const TensorPtr& grad_as_impl() const;
  void set_grad_impl(TensorPtr g) { autograd_meta()->grad_impl = std::move(g); }
  // The gradient as a tensor: grad_impl when graph-mode, else a fresh TensorImpl over
  // the grad storage with this tensor's contiguous layout. nullptr when no gradient.
  TensorPtr grad_to_tensor() const;
  void zero_grad();  // drops the gradient; keeps the AutogradMeta
  const TensorPtr& view_base() const;

 private:
  // copy_from without the version bump: clone() and the staging of transfers.
  void write_from(const TensorImpl& src);

  Storage storage_;
  TensorMeta meta_;
  std::optional<AutogradMeta> autograd_;
  TensorPtr base_;  // (base())
};

// Scalars: the dtype a Scalar holds natively (bool, int64, float64, complex128), a
// 0-d host tensor holding it in that dtype, and one element of `dtype` read back.
Dtype scalar_dtype(const Scalar& s);
TensorPtr scalar_tensor(const Scalar& s);
Scalar scalar_from_bytes(const std::byte* p, Dtype dtype);
// `s` as one element of `dtype` written to `out` (16 bytes, aligned), converted as a cast
// converts (unchecked: 300 into uint8 wraps to 44), through the copy kernel on the stack:
// no tensor is made (number operands pay this on every op: issue 22's host time per op).
void scalar_to_bytes(const Scalar& s, Dtype dtype, std::byte* out);

// The number of bytes of storage a view spans from its offset (0 for no elements),
// used to validate views and to size transfers of strided GPU data.
int64_t view_extent_bytes(const Shape& shape, const Stride& stride, size_t itemsize);

// A host tensor's elements as T* (T matching its dtype) for a kernel's raw loop;
// null for a null tensor (an absent weight or bias).
template <typename T>
T* host_data(const TensorPtr& t) {
  return t ? reinterpret_cast<T*>(t->host_ptr()) : nullptr;
}

}  // namespace lucid
