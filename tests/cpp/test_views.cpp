// View ops (lucid::ops) against PyTorch's shapes, strides and offsets (PyTorch's
// element strides times the item size), their errors, and the creation ops.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "ops/creation.h"
#include "ops/views.h"

using namespace lucid;
using namespace lucid::ops;

namespace {

// torch.arange(n, dtype=float32).reshape(shape)
TensorPtr arange_f32(const Shape& shape) {
  TensorPtr t = TensorImpl::empty(shape, Dtype::F32, Device::cpu());
  auto* p = reinterpret_cast<float*>(t->host_ptr());
  std::iota(p, p + t->numel(), 0.0f);
  return t;
}

template <typename T = float>
std::vector<T> values(const TensorImpl& t) {
  std::vector<std::byte> b = t.to_bytes();
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

// Checks shape, byte strides and byte offset against PyTorch's element strides and
// offset for a float32 tensor.
void expect_layout(const TensorPtr& t, const Shape& shape, Stride elem_stride, int64_t elem_offset) {
  for (auto& x : elem_stride) x *= 4;
  EXPECT_EQ(t->shape(), shape);
  EXPECT_EQ(t->stride(), elem_stride);
  EXPECT_EQ(t->storage_offset(), 4 * elem_offset);
}
#define EXPECT_LAYOUT(...)   \
  do {                       \
    SCOPED_TRACE("layout");  \
    expect_layout(__VA_ARGS__); \
  } while (0)

bool same_storage(const TensorPtr& a, const TensorPtr& b) {
  return storage_base(a->storage()).data == storage_base(b->storage()).data;
}

TEST(Views, WrapDim) {
  EXPECT_EQ(wrap_dim(0, 3), 0);
  EXPECT_EQ(wrap_dim(2, 3), 2);
  EXPECT_EQ(wrap_dim(-1, 3), 2);
  EXPECT_EQ(wrap_dim(-3, 3), 0);
  EXPECT_THROW(wrap_dim(3, 3), IndexError);
  EXPECT_THROW(wrap_dim(-4, 3), IndexError);
  EXPECT_EQ(wrap_dim(0, 0), 0);  // a 0-d tensor accepts 0 and -1
  EXPECT_EQ(wrap_dim(-1, 0), 0);
  EXPECT_THROW(wrap_dim(1, 0), IndexError);
  EXPECT_THROW(wrap_dim(-2, 0), IndexError);
}

TEST(Views, InferSize) {
  EXPECT_EQ(infer_size({-1, 4}, 24), (Shape{6, 4}));
  EXPECT_EQ(infer_size({2, -1, 3}, 24), (Shape{2, 4, 3}));
  EXPECT_EQ(infer_size({2, 3}, 6), (Shape{2, 3}));
  EXPECT_EQ(infer_size({-1}, 0), (Shape{0}));
  EXPECT_EQ(infer_size({-1, 5}, 0), (Shape{0, 5}));
  EXPECT_EQ(infer_size({}, 1), (Shape{}));
  EXPECT_THROW(infer_size({-1, -1}, 24), RuntimeError);
  EXPECT_THROW(infer_size({5, -1}, 24), RuntimeError);
  EXPECT_THROW(infer_size({2, 3}, 7), RuntimeError);
  EXPECT_THROW(infer_size({-2, 12}, 24), RuntimeError);
  EXPECT_THROW(infer_size({0, -1}, 0), RuntimeError);  // -1 would be ambiguous
  EXPECT_THROW(infer_size({}, 2), RuntimeError);
}

TEST(Views, ViewStridesMatchTorch) {
  TensorPtr x = arange_f32({2, 3, 4});
  EXPECT_LAYOUT(view(x, {6, 4}), {6, 4}, {4, 1}, 0);
  EXPECT_LAYOUT(view(x, {4, -1}), {4, 6}, {6, 1}, 0);
  EXPECT_LAYOUT(view(x, {2, 1, 12}), {2, 1, 12}, {12, 12, 1}, 0);
  EXPECT_LAYOUT(view(x, {24}), {24}, {1}, 0);
  EXPECT_LAYOUT(view(x, {1, 2, 3, 1, 4}), {1, 2, 3, 1, 4}, {24, 12, 4, 4, 1}, 0);
  EXPECT_TRUE(same_storage(view(x, {24}), x));
  // Non-contiguous but viewable: x.permute(1, 0, 2) has strides (4, 12, 1).
  TensorPtr p = permute(x, {1, 0, 2});
  EXPECT_LAYOUT(view(p, {3, 2, 2, 2}), {3, 2, 2, 2}, {4, 12, 2, 1}, 0);
  EXPECT_THROW(view(p, {3, 8}), RuntimeError);
  // x[:, :, ::2] -> (6, 2) with strides (4, 2).
  TensorPtr s = slice(x, 2, std::nullopt, std::nullopt, 2);
  EXPECT_LAYOUT(view(s, {6, 2}), {6, 2}, {4, 2}, 0);
  // x[:, 1:, :] -> (2, 8) strides (12, 1); (2, 2, 2, 2) strides (12, 4, 2, 1); offset kept.
  TensorPtr t = slice(x, 1, 1, std::nullopt, 1);
  EXPECT_LAYOUT(view(t, {2, 8}), {2, 8}, {12, 1}, 4);
  EXPECT_LAYOUT(view(t, {2, 2, 2, 2}), {2, 2, 2, 2}, {12, 4, 2, 1}, 4);
  // An expanded tensor: arange(3).expand(4, 3).view(2, 2, 3) strides (0, 0, 1).
  TensorPtr e = expand(arange_f32({3}), {4, 3});
  EXPECT_LAYOUT(view(e, {2, 2, 3}), {2, 2, 3}, {0, 0, 1}, 0);
  // zeros(4, 6)[:, 1:4]: strides (6, 1), offset 1; view(2, 2, 3) -> (12, 6, 1).
  TensorPtr a = slice(arange_f32({4, 6}), 1, 1, 4, 1);
  EXPECT_LAYOUT(view(a, {4, 3, 1}), {4, 3, 1}, {6, 1, 1}, 1);
  EXPECT_LAYOUT(view(a, {2, 2, 3}), {2, 2, 3}, {12, 6, 1}, 1);
  // Empty: zeros(0, 3).view(3, 0) strides (1, 1); view(0, 5) strides (5, 1).
  TensorPtr z = arange_f32({0, 3});
  EXPECT_LAYOUT(view(z, {3, 0}), {3, 0}, {1, 1}, 0);
  EXPECT_LAYOUT(view(z, {-1, 5}), {0, 5}, {5, 1}, 0);
  EXPECT_LAYOUT(view(arange_f32({1, 1}), {}), {}, {}, 0);
  EXPECT_LAYOUT(view(arange_f32({1, 1}), {1}), {1}, {1}, 0);
  EXPECT_THROW(view(x, {5, 5}), RuntimeError);
}

// torch.tensor(1.).view(1, 1).stride() == (1, 1); reshape(1) and flatten() are views.
TEST(Views, ViewReshapeFlattenOfZeroDim) {
  TensorPtr one = arange_f32({});
  EXPECT_NO_THROW(EXPECT_LAYOUT(view(one, {1, 1}), {1, 1}, {1, 1}, 0));
  EXPECT_NO_THROW(EXPECT_LAYOUT(view(one, {-1}), {1}, {1}, 0));
  EXPECT_NO_THROW(EXPECT_TRUE(same_storage(reshape(one, {1}), one)));
  EXPECT_NO_THROW(EXPECT_LAYOUT(flatten(one, 0, -1), {1}, {1}, 0));
}

TEST(Views, ViewOfTransposedThrows) {
  TensorPtr t = transpose(arange_f32({2, 3}), 0, 1);
  EXPECT_THROW(view(t, {6}), RuntimeError);
  EXPECT_THROW(view(t, {2, 3}), RuntimeError);
  EXPECT_NO_THROW(view(t, {3, 2}));
  EXPECT_NO_THROW(view(t, {3, 1, 2}));
}

TEST(Views, ReshapeViewsOrCopies) {
  TensorPtr x = arange_f32({2, 3});
  TensorPtr r = reshape(x, {3, 2});
  EXPECT_TRUE(same_storage(r, x));
  EXPECT_LAYOUT(r, {3, 2}, {2, 1}, 0);
  TensorPtr t = transpose(x, 0, 1);
  TensorPtr c = reshape(t, {6});
  EXPECT_FALSE(same_storage(c, x));
  EXPECT_LAYOUT(c, {6}, {1}, 0);
  EXPECT_EQ(values(*c), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  TensorPtr tv = reshape(t, {3, 1, 2});  // viewable: no copy
  EXPECT_TRUE(same_storage(tv, x));
  EXPECT_THROW(reshape(x, {4, -1}), RuntimeError);
  EXPECT_EQ(contiguous(x), x);
  TensorPtr tc = contiguous(t);
  EXPECT_FALSE(same_storage(tc, x));
  EXPECT_TRUE(tc->is_contiguous());
  EXPECT_EQ(values(*tc), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(Views, PermuteAndTranspose) {
  TensorPtr x = arange_f32({2, 3, 4});
  EXPECT_LAYOUT(permute(x, {2, 0, 1}), {4, 2, 3}, {1, 12, 4}, 0);
  EXPECT_LAYOUT(permute(x, {-1, 0, -2}), {4, 2, 3}, {1, 12, 4}, 0);
  EXPECT_THROW(permute(x, {0, 0, 1}), RuntimeError);
  EXPECT_THROW(permute(x, {0, 1}), RuntimeError);
  EXPECT_THROW(permute(x, {0, 1, 3}), IndexError);
  EXPECT_LAYOUT(transpose(x, 0, 2), {4, 3, 2}, {1, 4, 12}, 0);
  EXPECT_LAYOUT(transpose(x, -1, -2), {2, 4, 3}, {12, 1, 4}, 0);
  EXPECT_LAYOUT(transpose(x, 1, 1), {2, 3, 4}, {12, 4, 1}, 0);
  EXPECT_THROW(transpose(x, 0, 3), IndexError);
  EXPECT_LAYOUT(transpose(arange_f32({}), 0, -1), {}, {}, 0);
  EXPECT_EQ(values(*permute(arange_f32({2, 3}), {1, 0})), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(Views, Expand) {
  EXPECT_LAYOUT(expand(arange_f32({3}), {4, 3}), {4, 3}, {0, 1}, 0);
  EXPECT_LAYOUT(expand(arange_f32({3, 1}), {3, 4}), {3, 4}, {1, 0}, 0);
  EXPECT_LAYOUT(expand(arange_f32({3, 1}), {2, -1, 5}), {2, 3, 5}, {0, 1, 0}, 0);
  EXPECT_LAYOUT(expand(arange_f32({}), {2, 2}), {2, 2}, {0, 0}, 0);
  EXPECT_LAYOUT(expand(arange_f32({3}), {0, 3}), {0, 3}, {0, 1}, 0);
  EXPECT_EQ(values(*expand(arange_f32({2, 1}), {2, 3})), (std::vector<float>{0, 0, 0, 1, 1, 1}));
  EXPECT_THROW(expand(arange_f32({3}), {4}), RuntimeError);
  EXPECT_THROW(expand(arange_f32({2, 3}), {3}), RuntimeError);
  EXPECT_THROW(expand(arange_f32({3}), {-1, 3}), RuntimeError);
}

TEST(Views, SqueezeUnsqueeze) {
  TensorPtr x = arange_f32({2, 1, 3, 1});
  EXPECT_LAYOUT(squeeze(x, {}), {2, 3}, {3, 1}, 0);
  EXPECT_LAYOUT(squeeze(x, {1}), {2, 3, 1}, {3, 1, 1}, 0);
  EXPECT_LAYOUT(squeeze(x, {-1}), {2, 1, 3}, {3, 3, 1}, 0);
  EXPECT_LAYOUT(squeeze(x, {0}), {2, 1, 3, 1}, {3, 3, 1, 1}, 0);  // size 2: kept
  EXPECT_LAYOUT(squeeze(x, {1, 3}), {2, 3}, {3, 1}, 0);
  EXPECT_THROW(squeeze(x, {4}), IndexError);
  EXPECT_LAYOUT(squeeze(arange_f32({}), {0}), {}, {}, 0);
  TensorPtr y = arange_f32({2, 3, 4});
  EXPECT_LAYOUT(unsqueeze(y, 0), {1, 2, 3, 4}, {24, 12, 4, 1}, 0);
  EXPECT_LAYOUT(unsqueeze(y, 1), {2, 1, 3, 4}, {12, 12, 4, 1}, 0);
  EXPECT_LAYOUT(unsqueeze(y, 3), {2, 3, 4, 1}, {12, 4, 1, 1}, 0);
  EXPECT_LAYOUT(unsqueeze(y, -1), {2, 3, 4, 1}, {12, 4, 1, 1}, 0);
  EXPECT_LAYOUT(unsqueeze(y, -4), {1, 2, 3, 4}, {24, 12, 4, 1}, 0);
  EXPECT_THROW(unsqueeze(y, 4), IndexError);
  EXPECT_THROW(unsqueeze(y, -5), IndexError);
  EXPECT_LAYOUT(unsqueeze(arange_f32({}), 0), {1}, {1}, 0);
  EXPECT_TRUE(unsqueeze(y, 2)->is_contiguous());
}

TEST(Views, FlattenUnflatten) {
  TensorPtr x = arange_f32({2, 3, 4});
  EXPECT_LAYOUT(flatten(x, 0, -1), {24}, {1}, 0);
  EXPECT_LAYOUT(flatten(x, 1, 2), {2, 12}, {12, 1}, 0);
  EXPECT_LAYOUT(flatten(x, 1, 1), {2, 3, 4}, {12, 4, 1}, 0);
  EXPECT_THROW(flatten(x, 2, 1), RuntimeError);
  EXPECT_THROW(flatten(x, 0, 3), IndexError);
  TensorPtr f = flatten(permute(x, {2, 0, 1}), 0, 1);  // needs a copy
  EXPECT_FALSE(same_storage(f, x));
  EXPECT_EQ(f->shape(), (Shape{8, 3}));
  EXPECT_EQ(values(*f)[0], 0.0f);
  EXPECT_EQ(values(*f)[3], 12.0f);  // element (0, 1, 0) of x
  EXPECT_LAYOUT(unflatten(x, 2, {2, -1}), {2, 3, 2, 2}, {12, 4, 2, 1}, 0);
  EXPECT_LAYOUT(unflatten(x, -3, {1, 2}), {1, 2, 3, 4}, {24, 12, 4, 1}, 0);
  EXPECT_THROW(unflatten(x, 2, {3, -1}), RuntimeError);
  EXPECT_THROW(unflatten(x, 2, {}), RuntimeError);
  EXPECT_THROW(unflatten(x, 3, {2, 2}), IndexError);
}

TEST(Views, SliceNarrowSelect) {
  TensorPtr x = arange_f32({2, 3, 4});
  EXPECT_LAYOUT(slice(x, 2, 1, std::nullopt, 2), {2, 3, 2}, {12, 4, 2}, 1);
  TensorPtr r = arange_f32({10});
  EXPECT_EQ(values(*slice(r, 0, 1, 8, 3)), (std::vector<float>{1, 4, 7}));
  EXPECT_EQ(values(*slice(r, 0, 1, 9, 3)), (std::vector<float>{1, 4, 7}));
  EXPECT_EQ(values(*slice(r, 0, 1, 10, 3)), (std::vector<float>{1, 4, 7}));
  EXPECT_EQ(values(*slice(r, 0, 1, 11, 3)), (std::vector<float>{1, 4, 7}));  // stop clamped
  EXPECT_EQ(values(*slice(r, 0, 0, 10, 3)), (std::vector<float>{0, 3, 6, 9}));
  EXPECT_LAYOUT(slice(r, 0, -3, std::nullopt, 1), {3}, {1}, 7);
  EXPECT_LAYOUT(slice(r, 0, -100, 100, 1), {10}, {1}, 0);  // clamped
  EXPECT_EQ(slice(r, 0, 5, 2, 1)->numel(), 0);
  EXPECT_EQ(slice(r, 0, 100, std::nullopt, 1)->numel(), 0);
  EXPECT_EQ(values(*slice(r, 0, -4, -1, 2)), (std::vector<float>{6, 8}));
  EXPECT_THROW(slice(r, 0, 0, 5, 0), ValueError);
  EXPECT_THROW(slice(r, 0, 0, 5, -1), ValueError);
  EXPECT_THROW(slice(r, 1, 0, 5, 1), IndexError);
  EXPECT_THROW(slice(arange_f32({}), 0, 0, 1, 1), IndexError);
  // A slice of a slice composes offsets and strides.
  TensorPtr ss = slice(slice(r, 0, 1, std::nullopt, 2), 0, 1, std::nullopt, 2);  // 3, 7
  EXPECT_LAYOUT(ss, {2}, {4}, 3);
  EXPECT_EQ(values(*ss), (std::vector<float>{3, 7}));

  EXPECT_LAYOUT(narrow(x, 1, 1, 2), {2, 2, 4}, {12, 4, 1}, 4);
  EXPECT_LAYOUT(narrow(x, 1, -2, 2), {2, 2, 4}, {12, 4, 1}, 4);
  EXPECT_LAYOUT(narrow(x, -1, 3, 1), {2, 3, 1}, {12, 4, 1}, 3);
  EXPECT_EQ(narrow(x, 1, 3, 0)->numel(), 0);
  EXPECT_THROW(narrow(x, 1, 4, 0), IndexError);
  EXPECT_THROW(narrow(x, 1, -4, 1), IndexError);
  EXPECT_THROW(narrow(x, 1, 2, 2), RuntimeError);
  EXPECT_THROW(narrow(x, 1, 0, -1), RuntimeError);
  EXPECT_THROW(narrow(arange_f32({}), 0, 0, 1), RuntimeError);

  EXPECT_LAYOUT(select(x, 1, -1), {2, 4}, {12, 1}, 8);
  EXPECT_LAYOUT(select(x, 0, 1), {3, 4}, {4, 1}, 12);
  EXPECT_LAYOUT(select(x, -1, 2), {2, 3}, {12, 4}, 2);
  EXPECT_EQ(values(*select(select(x, 0, -1), 0, -1)), (std::vector<float>{20, 21, 22, 23}));
  EXPECT_THROW(select(x, 1, 3), IndexError);
  EXPECT_THROW(select(x, 1, -4), IndexError);
  EXPECT_THROW(select(x, 3, 0), IndexError);
  EXPECT_THROW(select(arange_f32({}), 0, 0), IndexError);
}

TEST(Views, AsStrided) {
  TensorPtr r = arange_f32({9});
  TensorPtr w = as_strided(r, {3, 3}, {1, 1}, 2);
  EXPECT_LAYOUT(w, {3, 3}, {1, 1}, 2);
  EXPECT_EQ(values(*w), (std::vector<float>{2, 3, 4, 3, 4, 5, 4, 5, 6}));
  TensorPtr s = slice(r, 0, 3, std::nullopt, 1);
  EXPECT_EQ(as_strided(s, {2}, {2}, std::nullopt)->storage_offset(), 12);  // keeps s's offset
  EXPECT_EQ(as_strided(s, {2}, {2}, 0)->storage_offset(), 0);  // offsets are absolute
  EXPECT_THROW(as_strided(r, {3, 3}, {3, 1}, 1), RuntimeError);  // past the storage
  EXPECT_THROW(as_strided(r, {3}, {-1}, 4), RuntimeError);
  EXPECT_THROW(as_strided(r, {3}, {1, 1}, 0), RuntimeError);
  EXPECT_THROW(as_strided(r, {3}, {1}, -1), RuntimeError);
  EXPECT_THROW(as_strided(r, {3}, {int64_t(1) << 61}, 0), RuntimeError);  // extent overflows
  // Views see writes through other views.
  select(r, 0, 3)->fill(Scalar(-1.0));
  EXPECT_EQ(values(*w)[1], -1.0f);
}

// ---- creation -----------------------------------------------------------------------

TEST(Creation, ArangeIntIsExactForLargeValues) {
  const int64_t big = int64_t(1) << 62;
  TensorPtr a = arange_int(big, big + 10, 3, Dtype::I64, Device::cpu());
  EXPECT_EQ(values<int64_t>(*a), (std::vector<int64_t>{big, big + 3, big + 6, big + 9}));
  TensorPtr b = arange_int(INT64_MAX - 3, INT64_MAX, 1, Dtype::I64, Device::cpu());
  EXPECT_EQ(values<int64_t>(*b), (std::vector<int64_t>{INT64_MAX - 3, INT64_MAX - 2, INT64_MAX - 1}));
  TensorPtr c = arange_int(INT64_MIN, INT64_MIN + 5, 2, Dtype::I64, Device::cpu());
  EXPECT_EQ(values<int64_t>(*c), (std::vector<int64_t>{INT64_MIN, INT64_MIN + 2, INT64_MIN + 4}));
  TensorPtr d = arange_int(5, -5, -3, Dtype::I32, Device::cpu());
  EXPECT_EQ(values<int32_t>(*d), (std::vector<int32_t>{5, 2, -1, -4}));
  EXPECT_EQ(arange_int(3, 3, 1, Dtype::I64, Device::cpu())->numel(), 0);
  EXPECT_EQ(values(*arange_int(0, 4, 1, Dtype::F32, Device::cpu())), (std::vector<float>{0, 1, 2, 3}));
  EXPECT_THROW(arange_int(0, 5, 0, Dtype::I64, Device::cpu()), RuntimeError);
  EXPECT_THROW(arange_int(0, 5, -1, Dtype::I64, Device::cpu()), RuntimeError);
  EXPECT_THROW(arange_int(0, 5, 1, Dtype::Bool, Device::cpu()), RuntimeError);
}

TEST(Creation, ArangeFloating) {
  TensorPtr a = arange(0, 1, 0.1, Dtype::F64, Device::cpu());
  ASSERT_EQ(a->numel(), 10);  // torch.arange(0, 1, 0.1) has 10 elements
  EXPECT_EQ(values<double>(*a)[9], 0x1.ccccccccccccdp-1);
  EXPECT_EQ(values(*arange(1, 2.5, 0.5, Dtype::F32, Device::cpu())), (std::vector<float>{1, 1.5, 2}));
  EXPECT_EQ(values<int32_t>(*arange(0, 10, 3, Dtype::I32, Device::cpu())),
            (std::vector<int32_t>{0, 3, 6, 9}));
  TensorPtr f = arange(0.1, 1.0, 0.1, Dtype::F32, Device::cpu());  // double accumulate
  ASSERT_EQ(f->numel(), 9);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(values(*f)[i], float(0.1 + i * 0.1)) << i;
  EXPECT_THROW(arange(0, 1, 0, Dtype::F32, Device::cpu()), RuntimeError);
  EXPECT_THROW(arange(1, 0, 0.5, Dtype::F32, Device::cpu()), RuntimeError);
  EXPECT_THROW(arange(0, INFINITY, 1, Dtype::F32, Device::cpu()), RuntimeError);
}

TEST(Creation, LinspaceEndpointsExact) {
  // torch.linspace(-1.3, 7.7, 7, dtype=float64), bit for bit.
  EXPECT_EQ(values<double>(*linspace(-1.3, 7.7, 7, Dtype::F64, Device::cpu())),
            (std::vector<double>{-0x1.4cccccccccccdp+0, 0x1.9999999999998p-3, 0x1.b333333333333p+0,
                                 0x1.999999999999ap+1, 0x1.2cccccccccccdp+2, 0x1.8cccccccccccdp+2,
                                 0x1.ecccccccccccdp+2}));
  EXPECT_EQ(values<double>(*linspace(0, 1, 5, Dtype::F64, Device::cpu())),
            (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  std::vector<float> f = values(*linspace(0.1, 0.7, 4, Dtype::F32, Device::cpu()));
  EXPECT_EQ(f.front(), 0.1f);
  EXPECT_EQ(f.back(), 0.7f);
  EXPECT_EQ(values(*linspace(3, 3, 1, Dtype::F32, Device::cpu())), (std::vector<float>{3}));
  EXPECT_EQ(linspace(0, 1, 0, Dtype::F32, Device::cpu())->numel(), 0);
  EXPECT_EQ(values<int64_t>(*linspace(0, 10, 4, Dtype::I64, Device::cpu())),
            (std::vector<int64_t>{0, 3, 6, 10}));
  EXPECT_THROW(linspace(0, 1, -1, Dtype::F32, Device::cpu()), RuntimeError);
  EXPECT_EQ(values<double>(*logspace(0, 3, 4, 10, Dtype::F64, Device::cpu())),
            (std::vector<double>{1, 10, 100, 1000}));
}

// torch.linspace(2, 5, 1) is [2.] (the start), for every dtype.
TEST(Creation, LinspaceOneStepIsStart) {
  EXPECT_EQ(values(*linspace(2, 5, 1, Dtype::F32, Device::cpu())), (std::vector<float>{2}));
  EXPECT_EQ(values<double>(*linspace(-1, 7, 1, Dtype::F64, Device::cpu())), (std::vector<double>{-1}));
}

// PyTorch computes a float32 linspace in float32: torch.linspace(0.1, 0.7, 4)
// has bits 3dcccccd 3e999999 3f000000 3f333333.
TEST(Creation, LinspaceFloat32MatchesTorchBits) {
  std::vector<float> f = values(*linspace(0.1, 0.7, 4, Dtype::F32, Device::cpu()));
  const uint32_t want[] = {0x3dcccccdu, 0x3e999999u, 0x3f000000u, 0x3f333333u};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(float_bits(f[i]), want[i]) << i;
}

TEST(Creation, Eye) {
  EXPECT_EQ(values(*eye(3, 3, Dtype::F32, Device::cpu())),
            (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(values(*eye(2, 4, Dtype::F32, Device::cpu())),
            (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(values<int64_t>(*eye(4, 2, Dtype::I64, Device::cpu())),
            (std::vector<int64_t>{1, 0, 0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(values<uint8_t>(*eye(2, 2, Dtype::Bool, Device::cpu())),
            (std::vector<uint8_t>{1, 0, 0, 1}));
  std::vector<complex64> c = values<complex64>(*eye(2, 2, Dtype::C64, Device::cpu()));
  EXPECT_EQ(c, (std::vector<complex64>{{1, 0}, {0, 0}, {0, 0}, {1, 0}}));
  TensorPtr e = eye(0, 3, Dtype::F32, Device::cpu());
  EXPECT_EQ(e->shape(), (Shape{0, 3}));
  EXPECT_EQ(eye(3, 0, Dtype::F32, Device::cpu())->numel(), 0);
  EXPECT_THROW(eye(-1, 2, Dtype::F32, Device::cpu()), RuntimeError);
  EXPECT_THROW(eye(2, -1, Dtype::F32, Device::cpu()), RuntimeError);
}

}  // namespace
