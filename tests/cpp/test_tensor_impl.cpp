// TensorImpl: layout, view bounds, lazy autograd metadata, the shared version
// counter, item()/to_bytes() and device requests without a GPU.
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/gpu_runtime.h"
#include "core/tensor_impl.h"

using namespace lucid;

namespace {

template <typename T>
TensorPtr make(const Shape& shape, Dtype d, const std::vector<T>& v) {
  TensorPtr t = TensorImpl::empty(shape, d, Device::cpu());
  EXPECT_EQ(size_t(t->numel()), v.size());
  EXPECT_EQ(dtype_size(d), sizeof(T));
  std::memcpy(t->host_ptr(), v.data(), v.size() * sizeof(T));
  return t;
}

TensorPtr iota_f32(const Shape& shape) {
  std::vector<float> v(size_t(numel_of(shape)));
  std::iota(v.begin(), v.end(), 0.0f);
  return make(shape, Dtype::F32, v);
}

template <typename T>
std::vector<T> bytes_as(const std::vector<std::byte>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

bool no_gpu() {
  GpuRuntime* rt = gpu_runtime_or_null();
  return rt == nullptr || rt->device_count() == 0;
}

TEST(TensorImpl, EmptyLayoutInBytes) {
  TensorPtr t = TensorImpl::empty({2, 3, 4}, Dtype::F32, Device::cpu());
  EXPECT_EQ(t->numel(), 24);
  EXPECT_EQ(t->nbytes(), 96u);
  EXPECT_EQ(t->itemsize(), 4u);
  EXPECT_EQ(t->ndim(), 3);
  EXPECT_EQ(t->stride(), (Stride{48, 16, 4}));
  EXPECT_EQ(t->storage_offset(), 0);
  EXPECT_TRUE(t->is_contiguous());
  EXPECT_TRUE(t->is_cpu_storage());
  EXPECT_EQ(storage_base(t->storage()).nbytes, 96u);
  EXPECT_EQ(t->device(), Device::cpu());

  TensorPtr l = TensorImpl::empty({5, 3}, Dtype::I64, Device::cpu());
  EXPECT_EQ(l->stride(), (Stride{24, 8}));
  EXPECT_EQ(l->nbytes(), 120u);

  TensorPtr h = TensorImpl::empty({3, 2}, Dtype::F16, Device::cpu());
  EXPECT_EQ(h->stride(), (Stride{4, 2}));

  TensorPtr s = TensorImpl::empty({}, Dtype::C64, Device::cpu());
  EXPECT_EQ(s->numel(), 1);
  EXPECT_EQ(s->nbytes(), 8u);
  EXPECT_TRUE(s->stride().empty());
  EXPECT_TRUE(s->is_contiguous());

  // Zero-size dimensions: torch.empty(2, 0, 3).stride() == (3, 3, 1).
  TensorPtr z = TensorImpl::empty({2, 0, 3}, Dtype::F32, Device::cpu());
  EXPECT_EQ(z->numel(), 0);
  EXPECT_EQ(z->nbytes(), 0u);
  EXPECT_EQ(z->stride(), (Stride{12, 12, 4}));
  EXPECT_TRUE(z->is_contiguous());
}

TEST(TensorImpl, EmptyRejectsBadShapes) {
  EXPECT_THROW(TensorImpl::empty({2, -1}, Dtype::F32, Device::cpu()), RuntimeError);
  EXPECT_THROW(TensorImpl::empty({int64_t(1) << 62, 4}, Dtype::F32, Device::cpu()), RuntimeError);
  EXPECT_THROW(TensorImpl::empty({int64_t(1) << 61}, Dtype::F64, Device::cpu()), RuntimeError);
}

TEST(TensorImpl, IsContiguous) {
  TensorPtr t = iota_f32({2, 3});
  // Size-1 dimensions may carry any stride.
  EXPECT_TRUE(TensorImpl::view_of(*t, {1, 3}, {100, 4}, 0)->is_contiguous());
  EXPECT_TRUE(TensorImpl::view_of(*t, {1, 3}, {4, 4}, 0)->is_contiguous());
  EXPECT_TRUE(TensorImpl::view_of(*t, {3, 1}, {4, 0}, 0)->is_contiguous());
  EXPECT_TRUE(TensorImpl::view_of(*t, {2, 1, 3}, {12, 20, 4}, 0)->is_contiguous());
  EXPECT_TRUE(TensorImpl::view_of(*t, {1, 1}, {4, 4}, 8)->is_contiguous());
  // Transposed and strided views are not.
  EXPECT_FALSE(TensorImpl::view_of(*t, {3, 2}, {4, 12}, 0)->is_contiguous());
  EXPECT_FALSE(TensorImpl::view_of(*t, {2, 2}, {12, 8}, 0)->is_contiguous());
  EXPECT_FALSE(TensorImpl::view_of(*t, {2, 3}, {0, 4}, 0)->is_contiguous());  // broadcast
  // An offset does not matter.
  EXPECT_TRUE(TensorImpl::view_of(*t, {2}, {4}, 8)->is_contiguous());
}

// Tensors with no elements are contiguous whatever their strides, as in PyTorch:
// torch.empty(12).as_strided((0, 3), (1, 25)).is_contiguous() is True.
TEST(TensorImpl, IsContiguousWithNoElements) {
  TensorPtr t = iota_f32({2, 3});
  EXPECT_TRUE(TensorImpl::view_of(*t, {3, 0}, {4, 12}, 0)->is_contiguous());
  EXPECT_TRUE(TensorImpl::view_of(*t, {0, 3}, {4, 4}, 0)->is_contiguous());
  EXPECT_TRUE(TensorImpl::view_of(*t, {0, 3}, {4, 100}, 0)->is_contiguous());
  EXPECT_TRUE(TensorImpl::view_of(*t, {2, 0, 3}, {4, 4, 8}, 0)->is_contiguous());
}

TEST(TensorImpl, ViewOfBoundsChecks) {
  TensorPtr t = iota_f32({6});  // 24 bytes
  EXPECT_NO_THROW(TensorImpl::view_of(*t, {2, 3}, {12, 4}, 0));
  EXPECT_NO_THROW(TensorImpl::view_of(*t, {1}, {4}, 20));   // the last element
  EXPECT_NO_THROW(TensorImpl::view_of(*t, {3}, {8}, 4));    // elements 1, 3, 5
  EXPECT_NO_THROW(TensorImpl::view_of(*t, {4, 6}, {0, 4}, 0));  // broadcast stays inside
  EXPECT_THROW(TensorImpl::view_of(*t, {2, 3}, {12, 4}, 4), RuntimeError);
  EXPECT_THROW(TensorImpl::view_of(*t, {1}, {4}, 21), RuntimeError);
  EXPECT_THROW(TensorImpl::view_of(*t, {1}, {4}, 24), RuntimeError);
  EXPECT_THROW(TensorImpl::view_of(*t, {7}, {4}, 0), RuntimeError);
  EXPECT_THROW(TensorImpl::view_of(*t, {3}, {8}, 8), RuntimeError);
  EXPECT_THROW(TensorImpl::view_of(*t, {2}, {4}, -4), RuntimeError);
  EXPECT_THROW(TensorImpl::view_of(*t, {2}, {-4}, 8), RuntimeError);
  EXPECT_THROW(TensorImpl::view_of(*t, {-1}, {4}, 0), RuntimeError);
  EXPECT_THROW(TensorImpl::view_of(*t, {2, 3}, {4}, 0), RuntimeError);
  // A view with no elements needs no storage.
  EXPECT_NO_THROW(TensorImpl::view_of(*t, {0}, {4}, 24));
  // The view shares storage, dtype and device with its base.
  TensorPtr v = TensorImpl::view_of(*t, {3}, {8}, 4);
  EXPECT_EQ(v->dtype(), Dtype::F32);
  EXPECT_EQ(v->storage_offset(), 4);
  EXPECT_EQ(v->host_ptr(), t->host_ptr() + 4);
  EXPECT_EQ(bytes_as<float>(v->to_bytes()), (std::vector<float>{1, 3, 5}));
}

// Extents that overflow int64 must not wrap around into "fits" (PyTorch raises
// "Storage size calculation overflowed"); a wrapped extent is an out-of-bounds view.
TEST(TensorImpl, ViewOfRejectsOverflowingExtents) {
  TensorPtr t = iota_f32({6});
  EXPECT_THROW(TensorImpl::view_of(*t, {3}, {int64_t(1) << 62}, 0), RuntimeError);
  EXPECT_THROW(TensorImpl::view_of(*t, {2, 2}, {INT64_MAX, 4}, 0), RuntimeError);
  EXPECT_THROW(TensorImpl::view_of(*t, {1}, {4}, INT64_MAX - 2), RuntimeError);
}

TEST(TensorImpl, ViewExtentBytes) {
  EXPECT_EQ(view_extent_bytes({}, {}, 4), 4);
  EXPECT_EQ(view_extent_bytes({2, 3}, {12, 4}, 4), 24);
  EXPECT_EQ(view_extent_bytes({3, 2}, {4, 12}, 4), 24);
  EXPECT_EQ(view_extent_bytes({5, 2}, {0, 8}, 8), 16);
  EXPECT_EQ(view_extent_bytes({2, 0}, {4, 4}, 4), 0);
}

TEST(TensorImpl, AutogradMetaIsLazy) {
  TensorPtr t = iota_f32({2});
  EXPECT_FALSE(t->has_autograd_meta());
  EXPECT_FALSE(t->requires_grad());
  EXPECT_TRUE(t->is_leaf());
  EXPECT_FALSE(t->retains_grad());
  EXPECT_EQ(t->grad_fn(), nullptr);
  EXPECT_EQ(t->output_nr(), 0u);
  EXPECT_FALSE(t->grad_storage().has_value());
  EXPECT_EQ(t->grad_as_impl(), nullptr);
  EXPECT_EQ(t->grad_to_tensor(), nullptr);
  t->clear_grad_fn();
  t->zero_grad();
  t->set_requires_grad(false);  // turning it off needs no meta
  EXPECT_FALSE(t->has_autograd_meta());

  t->set_requires_grad(true);
  EXPECT_TRUE(t->has_autograd_meta());
  EXPECT_TRUE(t->requires_grad());
  EXPECT_TRUE(t->is_leaf());
  t->set_requires_grad(false);  // keeps the existing meta
  EXPECT_TRUE(t->has_autograd_meta());
  EXPECT_FALSE(t->requires_grad());

  TensorPtr u = iota_f32({2});
  AutogradMeta* m = u->autograd_meta();
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(u->has_autograd_meta());
  EXPECT_FALSE(m->requires_grad);
  EXPECT_EQ(u->autograd_meta(), m);  // built once
  u->set_output_nr(3);
  u->set_leaf(false);
  u->set_retains_grad(true);
  EXPECT_EQ(u->output_nr(), 3u);
  EXPECT_FALSE(u->is_leaf());
  EXPECT_TRUE(u->retains_grad());
  // A view does not inherit autograd metadata.
  EXPECT_FALSE(TensorImpl::view_of(*u, {2}, {4}, 0)->has_autograd_meta());
}

TEST(TensorImpl, GradToTensorAndZeroGrad) {
  TensorPtr base = iota_f32({2, 3});
  TensorPtr t = TensorImpl::view_of(*base, {3, 2}, {4, 12}, 0);  // transposed
  TensorPtr g = make<float>({3, 2}, Dtype::F32, {10, 11, 12, 13, 14, 15});
  t->set_grad_storage(g->storage());
  ASSERT_TRUE(t->grad_storage().has_value());
  TensorPtr gt = t->grad_to_tensor();
  ASSERT_NE(gt, nullptr);
  EXPECT_EQ(gt->shape(), (Shape{3, 2}));
  EXPECT_EQ(gt->stride(), (Stride{8, 4}));  // contiguous, not the tensor's own strides
  EXPECT_EQ(gt->storage_offset(), 0);
  EXPECT_EQ(gt->dtype(), Dtype::F32);
  EXPECT_EQ(gt->host_ptr(), g->host_ptr());  // over the grad storage, no copy
  EXPECT_EQ(bytes_as<float>(gt->to_bytes()), (std::vector<float>{10, 11, 12, 13, 14, 15}));

  // A graph-mode gradient takes precedence.
  TensorPtr gi = make<float>({3, 2}, Dtype::F32, {1, 1, 1, 1, 1, 1});
  t->set_grad_impl(gi);
  EXPECT_EQ(t->grad_to_tensor(), gi);
  EXPECT_EQ(t->grad_as_impl(), gi);

  t->set_requires_grad(true);
  t->zero_grad();
  EXPECT_TRUE(t->has_autograd_meta());
  EXPECT_TRUE(t->requires_grad());
  EXPECT_FALSE(t->grad_storage().has_value());
  EXPECT_EQ(t->grad_as_impl(), nullptr);
  EXPECT_EQ(t->grad_to_tensor(), nullptr);
}

TEST(TensorImpl, VersionCounterSharedByViews) {
  TensorPtr t = iota_f32({2, 3});
  uint64_t v0 = t->version();
  t->bump_version();
  EXPECT_EQ(t->version(), v0 + 1);
  TensorPtr v = TensorImpl::view_of(*t, {3}, {4}, 12);
  EXPECT_EQ(v->version(), t->version());
  v->bump_version();  // through the view: the base sees it
  EXPECT_EQ(t->version(), v0 + 2);
  EXPECT_EQ(v->version(), v0 + 2);

  v->fill(Scalar(7.0));
  EXPECT_EQ(t->version(), v0 + 3);
  EXPECT_EQ(bytes_as<float>(t->to_bytes()), (std::vector<float>{0, 1, 2, 7, 7, 7}));
  t->copy_from(*iota_f32({3}));  // broadcast over rows
  EXPECT_EQ(v->version(), v0 + 4);
  EXPECT_EQ(bytes_as<float>(t->to_bytes()), (std::vector<float>{0, 1, 2, 0, 1, 2}));

  // A separate tensor has its own counter; reading does not bump.
  TensorPtr other = iota_f32({2});
  uint64_t o0 = other->version();
  (void)other->to_bytes();
  (void)other->clone();
  EXPECT_EQ(other->version(), o0);
  EXPECT_EQ(t->version(), v0 + 4);
  // A clone starts a fresh counter.
  TensorPtr c = t->clone();
  c->bump_version();
  EXPECT_EQ(t->version(), v0 + 4);
}

TEST(TensorImpl, StorageIsShared) {
  TensorPtr t = iota_f32({4});
  EXPECT_FALSE(t->storage_is_shared());
  {
    TensorPtr v = TensorImpl::view_of(*t, {2}, {4}, 0);
    EXPECT_TRUE(t->storage_is_shared());
    EXPECT_TRUE(v->storage_is_shared());
  }
  EXPECT_FALSE(t->storage_is_shared());
  TensorPtr c = t->clone();
  EXPECT_FALSE(t->storage_is_shared());
  EXPECT_FALSE(c->storage_is_shared());
}

TEST(TensorImpl, ItemEveryDtype) {
  EXPECT_EQ(std::get<bool>(make<uint8_t>({}, Dtype::Bool, {1})->item()), true);
  EXPECT_EQ(std::get<int64_t>(make<uint8_t>({1}, Dtype::U8, {200})->item()), 200);
  EXPECT_EQ(std::get<int64_t>(make<int8_t>({1, 1}, Dtype::I8, {-100})->item()), -100);
  EXPECT_EQ(std::get<int64_t>(make<int16_t>({}, Dtype::I16, {-30000})->item()), -30000);
  EXPECT_EQ(std::get<int64_t>(make<int32_t>({}, Dtype::I32, {-2000000000})->item()), -2000000000);
  EXPECT_EQ(std::get<int64_t>(make<int64_t>({}, Dtype::I64, {INT64_MIN})->item()), INT64_MIN);
  EXPECT_EQ(std::get<double>(make<Half>({}, Dtype::F16, {Half(0.1f)})->item()),
            double(float(Half(0.1f))));
  EXPECT_EQ(std::get<double>(make<Half>({}, Dtype::F16, {Half(-65504.0f)})->item()), -65504.0);
  EXPECT_EQ(std::get<double>(make<BFloat16>({}, Dtype::BF16, {BFloat16(3.0f)})->item()), 3.0);
  EXPECT_EQ(std::get<double>(make<BFloat16>({}, Dtype::BF16, {BFloat16(0.1f)})->item()),
            double(float(BFloat16(0.1f))));
  EXPECT_EQ(std::get<double>(make<float>({}, Dtype::F32, {0.1f})->item()), double(0.1f));
  EXPECT_EQ(std::get<double>(make<double>({}, Dtype::F64, {0.1})->item()), 0.1);
  Scalar c = make<complex64>({}, Dtype::C64, {complex64(1.5f, -2.25f)})->item();
  ASSERT_TRUE(std::holds_alternative<std::complex<double>>(c));
  EXPECT_EQ(std::get<std::complex<double>>(c), std::complex<double>(1.5, -2.25));
}

TEST(TensorImpl, ItemReadsThroughOffsetAndRejectsManyElements) {
  TensorPtr t = make<int32_t>({2, 3}, Dtype::I32, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(std::get<int64_t>(TensorImpl::view_of(*t, {}, {}, 16)->item()), 5);
  EXPECT_EQ(std::get<int64_t>(TensorImpl::view_of(*t, {1, 1}, {12, 4}, 8)->item()), 3);
  EXPECT_THROW(t->item(), RuntimeError);
  EXPECT_THROW(TensorImpl::view_of(*t, {2}, {4}, 0)->item(), RuntimeError);
  EXPECT_THROW(TensorImpl::empty({0}, Dtype::F32, Device::cpu())->item(), RuntimeError);
}

TEST(TensorImpl, ToBytesOfNonContiguousViewIsRowMajor) {
  TensorPtr t = iota_f32({2, 3});
  TensorPtr tt = TensorImpl::view_of(*t, {3, 2}, {4, 12}, 0);
  EXPECT_EQ(bytes_as<float>(tt->to_bytes()), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  TensorPtr b = TensorImpl::view_of(*t, {2, 2}, {0, 8}, 4);  // broadcast rows of [1, 3]
  EXPECT_EQ(bytes_as<float>(b->to_bytes()), (std::vector<float>{1, 3, 1, 3}));
  TensorPtr h = make<int16_t>({2, 2}, Dtype::I16, {1, 2, 3, 4});
  TensorPtr ht = TensorImpl::view_of(*h, {2, 2}, {2, 4}, 0);
  EXPECT_EQ(bytes_as<int16_t>(ht->to_bytes()), (std::vector<int16_t>{1, 3, 2, 4}));
  EXPECT_TRUE(TensorImpl::view_of(*t, {0, 3}, {12, 4}, 0)->to_bytes().empty());
}

TEST(TensorImpl, CloneCopiesAndCasts) {
  TensorPtr t = iota_f32({2, 3});
  TensorPtr tt = TensorImpl::view_of(*t, {3, 2}, {4, 12}, 0);
  TensorPtr c = tt->clone(Dtype::I64);
  EXPECT_EQ(c->dtype(), Dtype::I64);
  EXPECT_EQ(c->shape(), (Shape{3, 2}));
  EXPECT_EQ(c->stride(), (Stride{16, 8}));
  EXPECT_NE(storage_base(c->storage()).data, storage_base(t->storage()).data);
  EXPECT_EQ(bytes_as<int64_t>(c->to_bytes()), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  c->fill(Scalar(int64_t(9)));
  EXPECT_EQ(bytes_as<float>(t->to_bytes()), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(TensorImpl, TransferToCpuIsIdentity) {
  TensorPtr t = iota_f32({3});
  EXPECT_EQ(t->transfer_to_device(Device::cpu()), t);
  EXPECT_EQ(t->transfer_to_device(Device::cpu()).get(), t.get());
  EXPECT_NO_THROW(t->eval());
}

TEST(TensorImpl, GpuRequestsWithoutGpuThrow) {
  if (!no_gpu()) GTEST_SKIP() << "a GPU runtime with devices is registered";
  EXPECT_THROW(TensorImpl::empty({2}, Dtype::F32, Device::gpu()), RuntimeError);
  EXPECT_THROW(TensorImpl::empty({2}, Dtype::F32, Device::gpu(1)), RuntimeError);
  EXPECT_THROW(TensorImpl::empty({2}, Dtype::F32, Device::cpu(), /*pinned=*/true), RuntimeError);
  TensorPtr t = iota_f32({3});
  EXPECT_THROW(t->transfer_to_device(Device::gpu()), RuntimeError);
  EXPECT_THROW(t->clone(std::nullopt, Device::gpu()), RuntimeError);
  EXPECT_THROW(gpu_runtime(0), RuntimeError);
  try {
    gpu_runtime(0);
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("GPU"), std::string::npos) << e.what();
  }
  // The failed requests leave the tensor untouched.
  EXPECT_EQ(bytes_as<float>(t->to_bytes()), (std::vector<float>{0, 1, 2}));
}

}  // namespace
