#include "core/tensor_impl.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include "core/copy.h"
#include "core/error.h"
#include "core/gpu_runtime.h"
#include "core/pending.h"

namespace lucid {

// Note [Version counter]
// The counter lives in the storage, so every view of the same bytes shares it.
// The reference text makes bump_version a no-op for tensors without AutogradMeta;
// we always bump (one relaxed atomic add) because a view that never joined the
// graph can still mutate bytes that another view saved for backward, and that
// write must be caught.

TensorImpl::TensorImpl(Storage storage, TensorMeta meta) : storage_(std::move(storage)), meta_(std::move(meta)) {
  // Printing, tolist and indexing walk the dims recursively or in ndim^2 steps: a
  // tensor of 70,000 dims would overflow the stack. NumPy's limit.
  LUCID_CHECK(meta_.shape.size() <= kMaxDims, RuntimeError, "tensors have at most ", kMaxDims,
              " dimensions, got ", meta_.shape.size());
}

TensorPtr TensorImpl::empty(Shape shape, Dtype dtype, Device device, bool pinned) {
  int64_t n = numel_of(shape);
  size_t itemsize = dtype_size(dtype);
  LUCID_CHECK(n <= int64_t(INT64_MAX / int64_t(itemsize)), RuntimeError, "tensor of shape ",
              shape_str(shape), " is too large to allocate");
  size_t nbytes = size_t(n) * itemsize;
  // Built in place: a default-constructed Storage would allocate a version counter
  // only to drop it.
  Storage storage = [&]() -> Storage {
    if (pinned) return gpu_runtime(device.is_gpu() ? device.index : 0).allocate_shared(nbytes, device.index);
    if (device.is_gpu()) return gpu_runtime(device.index).allocate(nbytes, device.index);
    return allocate_cpu(nbytes);
  }();
  Stride stride = contiguous_strides(shape, int64_t(itemsize));
  TensorMeta meta{std::move(shape), std::move(stride), dtype, device, 0};
  return std::make_shared<TensorImpl>(std::move(storage), std::move(meta));
}

TensorPtr TensorImpl::empty_strided(const Shape& shape, const Stride& stride, Dtype dtype, Device device) {
  TensorPtr t = empty(shape, dtype, device);  // dense strides span exactly numel * itemsize
  t->meta_.stride = stride;
  return t;
}

int64_t view_extent_bytes(const Shape& shape, const Stride& stride, size_t itemsize) {
  for (int64_t s : shape)
    if (s == 0) return 0;
  int64_t extent = int64_t(itemsize);
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t span;
    if (__builtin_mul_overflow(shape[d] - 1, stride[d], &span) ||
        __builtin_add_overflow(extent, span, &extent))
      fail<RuntimeError>("Storage size calculation overflowed with sizes=", shape_str(shape),
                         " and byte strides=", shape_str(stride));
  }
  return extent;
}

TensorPtr TensorImpl::view_of(const TensorImpl& base, Shape shape, Stride stride, int64_t offset,
                              std::optional<Dtype> dtype) {
  const Dtype as = dtype.value_or(base.dtype());
  LUCID_CHECK(shape.size() == stride.size(), RuntimeError, "view: shape ", shape_str(shape),
              " and stride ", shape_str(stride), " must have the same length");
  numel_of(shape);  // rejects negative sizes
  for (int64_t s : stride)
    LUCID_CHECK(s >= 0, RuntimeError, "view: negative strides are not supported (got ",
                shape_str(stride), ")");
  int64_t extent = view_extent_bytes(shape, stride, dtype_size(as));
  int64_t storage_bytes = int64_t(storage_base(base.storage_).nbytes);
  LUCID_CHECK(offset >= 0 && (extent == 0 || (offset <= storage_bytes && extent <= storage_bytes - offset)),
              RuntimeError,
              "view with sizes ", shape_str(shape), ", byte strides ", shape_str(stride),
              " and byte offset ", offset, " spans ", extent,  // (offset + extent may overflow)
              " bytes from that offset, but the storage holds ", storage_bytes, " bytes");
  TensorMeta meta{std::move(shape), std::move(stride), as, base.device(), offset};
  return std::make_shared<TensorImpl>(base.storage_, std::move(meta));
}

int64_t TensorImpl::numel() const {
  int64_t n = 1;
  for (int64_t s : meta_.shape) n *= s;
  return n;
}

size_t TensorImpl::nbytes() const {
  int64_t n;
  LUCID_CHECK(!__builtin_mul_overflow(numel(), int64_t(itemsize()), &n), RuntimeError, "a tensor of shape ",
              shape_str(meta_.shape), " has more bytes than can be addressed");
  return size_t(n);
}

bool TensorImpl::is_contiguous() const {
  // Tensors without elements are contiguous, and dimensions of size 1 may carry any
  // stride, as in PyTorch.
  if (numel() == 0) return true;
  int64_t expected = int64_t(itemsize());
  for (size_t d = meta_.shape.size(); d-- > 0;) {
    if (meta_.shape[d] == 1) continue;
    if (meta_.stride[d] != expected) return false;
    expected *= meta_.shape[d];
  }
  return true;
}

bool TensorImpl::storage_is_shared() const {
  // Each Storage copy holds the DataPtr and the counter; when both point into one
  // block (Note [One block per storage]), every copy counts twice.
  // The copies that recorded GPU calls hold (core/pending.h) are not sharers.
  const StorageBase& s = storage_base(storage_);
  bool one_block = !s.data.owner_before(s.version) && !s.version.owner_before(s.data);
  const long copies = 1 + long(s.version->pending_uses.load(std::memory_order_relaxed));
  return s.data.use_count() > (one_block ? 2 : 1) * copies;
}

namespace {
// The CPU's list holds a compiled region's elementwise calls (Note [Compiled CPU chains],
// ops/fusion.h): it runs before anyone touches bytes that one of its calls holds. Only
// then: a new tensor's fill (a number's, say) must not cut the chain being recorded.
void flush_cpu_calls_holding(const Storage& s) {
  if (pending::has_pending(pending::kCpu) && storage_base(s).version->pending_uses.load(std::memory_order_relaxed))
    pending::flush(pending::kCpu);
}
}  // namespace

std::byte* TensorImpl::data_ptr() const {
  // Whoever asks for the address may read or hand out the bytes: the GPU's recorded
  // calls run first (Note [Lazy GPU execution]). Inside a flush it is the kernel asking.
  if (is_cpu_storage()) flush_cpu_calls_holding(storage_);
  else pending::flush(gpu_device_of(storage_));
  if (auto* s = std::get_if<SharedStorage>(&storage_); s && meta_.device.is_gpu())
    return s->device_ptr + meta_.offset;
  return storage_base(storage_).ptr() + meta_.offset;
}

std::byte* TensorImpl::host_ptr() const {
  LUCID_CHECK(!is_gpu_storage(), RuntimeError,
              "internal: host access to GPU memory; copy the tensor to the CPU first");
  if (is_shared_storage()) pending::flush(gpu_device_of(storage_));
  else flush_cpu_calls_holding(storage_);
  return storage_base(storage_).ptr() + meta_.offset;
}

void TensorImpl::mark_reached_outside() const {
  storage_base(storage_).version->reached_outside.store(true, std::memory_order_relaxed);
}

bool TensorImpl::reached_outside() const {
  return storage_base(storage_).version->reached_outside.load(std::memory_order_relaxed);
}

uint64_t TensorImpl::version() const {
  return storage_base(storage_).version->value.load(std::memory_order_relaxed);
}

void TensorImpl::bump_version() {
  storage_base(storage_).version->value.fetch_add(1, std::memory_order_relaxed);
}

// ---- data movement ------------------------------------------------------------------

namespace {

// Byte strides that present `t` broadcast to `shape` (0 for broadcast dimensions).
Stride broadcast_strides(const TensorImpl& t, const Shape& shape, const char* op) {
  const Shape& ts = t.shape();
  LUCID_CHECK(ts.size() <= shape.size(), RuntimeError, op, ": source of shape ", shape_str(ts),
              " cannot be broadcast to destination shape ", shape_str(shape));
  Stride out(shape.size(), 0);
  size_t lead = shape.size() - ts.size();
  for (size_t d = 0; d < ts.size(); ++d) {
    if (ts[d] == shape[lead + d]) out[lead + d] = t.stride()[d];
    else LUCID_CHECK(ts[d] == 1, RuntimeError, op, ": source of shape ", shape_str(ts),
                     " cannot be broadcast to destination shape ", shape_str(shape));
  }
  return out;
}

bool host_addressable(const TensorImpl& t) { return !t.is_gpu_storage(); }
bool device_addressable(const TensorImpl& t) { return !t.is_cpu_storage(); }

int gpu_index_of(const TensorImpl& t) { return std::max(0, gpu_device_of(t.storage())); }

// Device address of element 0 for a tensor whose storage the GPU can address.
std::byte* device_ptr(const TensorImpl& t) {
  if (auto* s = std::get_if<SharedStorage>(&t.storage())) return s->device_ptr + t.storage_offset();
  return storage_base(t.storage()).ptr() + t.storage_offset();
}

// A fill or a copy between two tensors of one GPU, recorded on a lazy GPU (Note [Lazy
// GPU execution]) like a kernel: it runs at the flush, in order with the recorded
// kernels, rather than flushing them first, so that zeros(), ones(), copy_() and the
// gradients' zero fills inside a step do not cut its list (nor a compiled call's
// region). Its snapshots count as the list's copies of their storages, as a
// RecordedLaunch's do (ops/recorded_launch.h).
class RecordedWrite final : public pending::Work {
 public:
  static constexpr const char* kCopyName = "copy_";  // (the write copy_from records: a copy or a cast)
  using Write = std::function<void(const TensorImpl& dst, const TensorImpl* src)>;
  RecordedWrite(const char* name, const TensorImpl& dst, const TensorImpl* src, Write write)
      : name_(name), dst_(snapshot(dst)), src_(src ? snapshot(*src) : nullptr), write_(std::move(write)) {}
  ~RecordedWrite() override {
    release(dst_);
    if (src_ && &src_->storage() != &dst_->storage()) release(src_);
  }
  void run() override { write_(*dst_, src_.get()); }
  const char* name() const override { return name_; }
  bool copy_operands(const TensorImpl** dst, const TensorImpl** src) const override {
    if (!src_ || name_ != kCopyName) return false;
    *dst = dst_.get(), *src = src_.get();
    return true;
  }
  uint64_t signature() const override {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ uint64_t(name_[0]);
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
    for (const TensorPtr& t : {dst_, src_}) {
      if (!t) continue;
      mix(uint64_t(t->dtype()) << 8 | uint64_t(t->ndim()));
      for (int64_t n : t->shape()) mix(uint64_t(n));
    }
    return h;
  }
  // The destination's bytes, when this write is the first of the list to keep them alive.
  size_t new_bytes() const {
    const StorageBase& s = storage_base(dst_->storage());
    return s.version->pending_uses.load(std::memory_order_relaxed) == 1 ? s.nbytes : 0;
  }

 private:
  static TensorPtr snapshot(const TensorImpl& t) {
    storage_base(t.storage()).version->pending_uses.fetch_add(1, std::memory_order_relaxed);
    return std::make_shared<TensorImpl>(t.storage(), t.meta());
  }
  static void release(const TensorPtr& t) {
    storage_base(t->storage()).version->pending_uses.fetch_sub(1, std::memory_order_relaxed);
  }
  const char* name_;
  TensorPtr dst_, src_;
  Write write_;
};

// Records write(dst, src) on dst's lazy GPU; false when that GPU runs work at once.
bool record_write(const char* name, const TensorImpl& dst, const TensorImpl* src, RecordedWrite::Write write) {
  const int dev = gpu_index_of(dst);
  if (!dst.is_gpu_storage() || !pending::recording(dev)) return false;
  auto work = std::make_unique<RecordedWrite>(name, dst, src, std::move(write));
  const size_t bytes = work->new_bytes();
  pending::record(dev, std::move(work), bytes);
  return true;
}

// Shared storage may have GPU writes in flight; wait for them before the host reads
// or writes the same bytes.
void sync_if_shared(const TensorImpl& t) {
  if (t.is_shared_storage()) gpu_runtime(gpu_index_of(t)).synchronize(gpu_index_of(t));
}

}  // namespace

void TensorImpl::copy_from(const TensorImpl& src) {
  write_from(src);
  if (numel() > 0) bump_version();
}

void TensorImpl::write_from(const TensorImpl& src) {
  const Shape& shape = meta_.shape;
  Stride src_stride = broadcast_strides(src, shape, "copy_");
  if (numel() == 0) return;

  if (host_addressable(*this) && host_addressable(src)) {
    sync_if_shared(*this);
    sync_if_shared(src);
    host_strided_copy(host_ptr(), meta_.stride, dtype(), src.host_ptr(), src_stride, src.dtype(),
                      shape);
    return;
  }
  if (device_addressable(*this) && device_addressable(src)) {
    int dev = is_gpu_storage() ? gpu_index_of(*this) : gpu_index_of(src);
    int src_dev = gpu_index_of(src);
    GpuRuntime& rt = gpu_runtime(dev);
    // Note [Copies between GPUs]: the copy runs on the destination's stream, so it
    // first waits for the source's producers on the other GPU's stream; afterwards that
    // stream waits for the copy, so the source's block is not reused while it is read.
    if (src_dev == dev && is_gpu_storage() && src.is_gpu_storage() &&
        record_write(RecordedWrite::kCopyName, *this, &src, [src_stride, dev](const TensorImpl& d, const TensorImpl* from) {
          GpuRuntime& run = gpu_runtime(dev);
          if (d.dtype() == from->dtype())
            run.strided_copy(device_ptr(d), d.stride(), device_ptr(*from), src_stride, d.shape(), d.itemsize(), dev);
          else
            run.cast_copy(device_ptr(d), d.stride(), d.dtype(), device_ptr(*from), src_stride, from->dtype(),
                          d.shape(), dev);
        }))
      return;
    if (src_dev != dev) rt.order_after(dev, src_dev);
    if (dtype() == src.dtype())
      rt.strided_copy(device_ptr(*this), meta_.stride, device_ptr(src), src_stride, shape, itemsize(), dev);
    else
      rt.cast_copy(device_ptr(*this), meta_.stride, dtype(), device_ptr(src), src_stride, src.dtype(), shape, dev);
    if (src_dev != dev) rt.order_after(src_dev, dev);
    return;
  }
  // One side is GPU-only memory, the other host-only memory. Casts happen on the host
  // side; the bytes cross once, directly into the destination when it is contiguous
  // and no broadcast is needed.
  bool same_shape = src.shape() == shape;
  if (is_gpu_storage()) {  // upload
    int dev = gpu_index_of(*this);
    TensorPtr packed;  // src as contiguous host bytes of our dtype, if src is not already
    if (!(src.is_contiguous() && src.dtype() == dtype())) packed = src.clone(dtype(), Device::cpu());
    else sync_if_shared(src);
    const std::byte* host = packed ? packed->host_ptr() : src.host_ptr();
    if (same_shape && is_contiguous()) {
      gpu_runtime(dev).copy(data_ptr(), host, nbytes(), CopyKind::HostToDevice, dev);
      return;
    }
    TensorPtr staged = empty(src.shape(), dtype(), meta_.device);
    gpu_runtime(dev).copy(staged->data_ptr(), host, staged->nbytes(), CopyKind::HostToDevice, dev);
    write_from(*staged);  // GPU strided copy with broadcast
    return;
  }
  // Download: src lives in GPU memory; this tensor is in host memory.
  int dev = gpu_index_of(src);
  TensorPtr dense = src.is_contiguous() ? std::const_pointer_cast<TensorImpl>(src.shared_from_this())
                                        : src.clone();  // contiguous, still on the GPU
  if (same_shape && is_contiguous() && dtype() == src.dtype()) {
    sync_if_shared(*this);
    gpu_runtime(dev).copy(host_ptr(), dense->data_ptr(), nbytes(), CopyKind::DeviceToHost, dev);
    return;
  }
  TensorPtr host = empty(src.shape(), src.dtype(), Device::cpu());
  gpu_runtime(dev).copy(host->host_ptr(), dense->data_ptr(), host->nbytes(), CopyKind::DeviceToHost,
                        dev);
  write_from(*host);  // host strided copy with cast and broadcast
}

namespace {

// PyTorch's checked scalar conversion for fill_: anything converts to bool;
// otherwise the value must be representable in the target (integers in range, no
// NaN into an integer, no imaginary part into a real type, finite floats within
// the type's range; inf and NaN pass to floats).
Scalar checked_for(const Scalar& value, Dtype target) {
  auto overflow = [&] {
    fail<RuntimeError>("value cannot be converted to type ", dtype_name(target), " without overflow");
  };
  if (target == Dtype::Bool) return value;  // anything converts to bool: "!= 0"
  Scalar v = value;
  if (auto* c = std::get_if<std::complex<double>>(&v); c && !is_complex(target)) {
    if (c->imag() != 0) overflow();
    v = c->real();
  }
  if (is_complex(target)) return v;
  double lo, hi;
  switch (target) {
    case Dtype::U8: lo = 0, hi = 255; break;
    case Dtype::I8: lo = -128, hi = 127; break;
    case Dtype::I16: lo = -32768, hi = 32767; break;
    case Dtype::I32: lo = -2147483648.0, hi = 2147483647.0; break;
    case Dtype::I64: lo = -9223372036854775808.0, hi = 9223372036854775807.0; break;
    case Dtype::F16:
    case Dtype::BF16: return v;  // saturate to inf, as PyTorch's fill_ does
    case Dtype::F32: lo = -3.4028234663852886e38, hi = 3.4028234663852886e38; break;
    default: return v;  // float64 holds every double
  }
  if (auto* d = std::get_if<double>(&v)) {
    if (is_floating(target)) {
      if (std::isfinite(*d) && (*d < lo || *d > hi)) overflow();
    } else if (!(*d >= lo && *d < hi + 1.0)) {  // NaN fails too
      overflow();
    }
  } else if (auto* i = std::get_if<int64_t>(&v); i && target != Dtype::I64) {
    // Negative integers wrap into uint8 down to -255, as c10's checked conversion allows.
    double low = target == Dtype::U8 ? -255.0 : lo;
    if (double(*i) < low || double(*i) > hi) overflow();
  }
  return v;
}

}  // namespace

void TensorImpl::fill(const Scalar& value) {
  initialize(value);
  if (numel() > 0) bump_version();
}

TensorPtr TensorImpl::full(const Shape& shape, const Scalar& value, Dtype dtype, Device device, bool pinned) {
  TensorPtr t = empty(shape, dtype, device, pinned);
  t->initialize(value);
  return t;
}

void TensorImpl::initialize(const Scalar& unchecked) {
  Scalar value = checked_for(unchecked, dtype());
  // The value in the dtype's bytes, converted on the host by the one cast routine.
  TensorPtr one = scalar_tensor(value);
  if (is_gpu_storage()) {
    // Written on the device with the value as a kernel argument: an upload of one
    // element from pageable memory would wait for the whole stream.
    const TensorPtr typed = one->clone(dtype());
    const int dev = meta_.device.index;
    if (itemsize() == 16) {  // complex128: its real parts, then its imaginary parts, as 8-byte items
      uint64_t parts[2];
      std::memcpy(parts, typed->host_ptr(), sizeof parts);
      for (int k = 0; k < 2; ++k) gpu_runtime(dev).fill(data_ptr() + 8 * k, stride(), shape(), parts[k], 8, dev);
      return;
    }
    uint64_t bits = 0;
    std::memcpy(&bits, typed->host_ptr(), itemsize());
    const size_t item = itemsize();
    if (numel() > 0 && record_write("fill_", *this, nullptr, [bits, item, dev](const TensorImpl& d, const TensorImpl*) {
          gpu_runtime(dev).fill(device_ptr(d), d.stride(), d.shape(), bits, item, dev);
        }))
      return;
    gpu_runtime(dev).fill(data_ptr(), stride(), shape(), bits, itemsize(), dev);
    return;
  }
  write_from(*one);  // a copy from a one-element source broadcast with stride 0
}

TensorPtr TensorImpl::clone(std::optional<Dtype> dtype, std::optional<Device> device,
                            bool preserve_layout) const {
  Dtype d = dtype.value_or(meta_.dtype);
  Device dev = device.value_or(meta_.device);
  TensorPtr out = preserve_layout && !is_contiguous()
                      ? empty_strided(meta_.shape,
                                      dense_strides_like(meta_.shape, meta_.stride, int64_t(dtype_size(d))),
                                      d, dev)
                      : empty(meta_.shape, d, dev);
  out->write_from(*this);
  return out;
}

TensorPtr TensorImpl::transfer_to_device(Device device) {
  if (device == meta_.device) return shared_from_this();
  if (is_shared_storage()) {
    // Note [Storage kinds]: both devices address shared storage, so this is a relabel.
    // Wait for GPU work on it first so the host never sees a half-written buffer.
    if (device.is_cpu()) sync_if_shared(*this);
    TensorMeta meta = meta_;
    meta.device = device;
    return std::make_shared<TensorImpl>(storage_, std::move(meta));
  }
  if (device.is_gpu()) gpu_runtime(device.index);  // validates the index before allocating
  return clone(std::nullopt, device, /*preserve_layout=*/true);
}

void TensorImpl::eval() const {
  if (!is_cpu_storage()) gpu_runtime(gpu_index_of(*this)).synchronize(gpu_index_of(*this));
}

// ---- reading out ------------------------------------------------------------------------

std::vector<std::byte> TensorImpl::to_bytes() const {
  std::vector<std::byte> out(nbytes());
  if (out.empty()) return out;
  if (host_addressable(*this)) {
    sync_if_shared(*this);
    Stride dense = contiguous_strides(meta_.shape, int64_t(itemsize()));
    host_strided_copy(out.data(), dense, dtype(), host_ptr(), meta_.stride, dtype(), meta_.shape);
    return out;
  }
  TensorPtr host = clone(std::nullopt, Device::cpu());
  std::memcpy(out.data(), host->host_ptr(), out.size());
  return out;
}

Scalar TensorImpl::item() const {
  LUCID_CHECK(numel() == 1, RuntimeError, "a Tensor with ", numel(),
              " elements cannot be converted to Scalar");
  TensorPtr one = std::make_shared<TensorImpl>(storage_, TensorMeta{{}, {}, dtype(), device(), meta_.offset});
  return scalar_from_bytes(one->to_bytes().data(), dtype());
}

Dtype scalar_dtype(const Scalar& s) {
  constexpr Dtype kByIndex[] = {Dtype::Bool, Dtype::I64, Dtype::F64, Dtype::C128};  // Scalar's order
  return kByIndex[s.index()];
}

TensorPtr scalar_tensor(const Scalar& s) {
  TensorPtr t = TensorImpl::empty({}, scalar_dtype(s), Device::cpu());
  std::visit([&](auto v) { std::memcpy(t->host_ptr(), &v, sizeof v); }, s);
  return t;
}

void scalar_to_bytes(const Scalar& s, Dtype dtype, std::byte* out) {
  alignas(16) std::byte from[sizeof(Scalar)];
  std::visit([&](auto v) { std::memcpy(from, &v, sizeof v); }, s);
  static const Shape kOneElement;
  static const Stride kNoStrides;
  host_strided_copy(out, kNoStrides, dtype, from, kNoStrides, scalar_dtype(s), kOneElement);
}

Scalar scalar_from_bytes(const std::byte* p, Dtype dtype) {
  return visit_dtype(dtype, [&]<typename T>() -> Scalar {
    T v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::is_same_v<T, bool>) return v;
    else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>)
      return std::complex<double>(v.real(), v.imag());
    else if constexpr (std::is_integral_v<T>) return int64_t(v);
    else return double(v);
  });
}

// ---- autograd metadata -------------------------------------------------------------------

AutogradMeta* TensorImpl::autograd_meta() {
  if (!autograd_) autograd_.emplace();
  return &*autograd_;
}

void TensorImpl::set_requires_grad(bool v) {
  // A view made a leaf that requires grad is its own base from then on, so in-place
  // writes through its views meet the leaf check (as in PyTorch).
  if (v) {
    autograd_meta()->requires_grad = true;
    autograd_->view_base.reset();
  }
  else if (autograd_) {
    autograd_->requires_grad = false;  // keep the meta: see the contract
  }
}

const std::shared_ptr<Node>& TensorImpl::grad_fn() const {
  static const std::shared_ptr<Node> none;
  return autograd_ ? autograd_->grad_fn : none;
}

const std::optional<Storage>& TensorImpl::grad_storage() const {
  static const std::optional<Storage> none;
  return autograd_ ? autograd_->grad : none;
}

const TensorPtr& TensorImpl::grad_as_impl() const {
  static const TensorPtr none;
  return autograd_ ? autograd_->grad_impl : none;
}

TensorPtr TensorImpl::grad_to_tensor() const {
  if (!autograd_) return nullptr;
  if (autograd_->grad_impl) return autograd_->grad_impl;
  if (!autograd_->grad) return nullptr;
  TensorMeta meta{meta_.shape, contiguous_strides(meta_.shape, int64_t(itemsize())), dtype(),
                  device(), 0};
  return std::make_shared<TensorImpl>(*autograd_->grad, std::move(meta));
}

const TensorPtr& TensorImpl::view_base() const {
  static const TensorPtr none;
  return autograd_ ? autograd_->view_base : none;
}

void TensorImpl::zero_grad() {
  if (!autograd_) return;
  autograd_->grad.reset();
  autograd_->grad_impl.reset();
}

}  // namespace lucid
