// Tests of the CUDA backend through the lucid::GpuRuntime interface.
//
// Every test that needs a GPU skips when CUDA reports no device (CI has nvcc but no
// GPU). The CudaStridedCopyPlan tests need no GPU: they check the host-side planner
// of strided_copy by running the kernel's own index arithmetic on the CPU, so the
// collapsing logic is exercised on CI too.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "backend/cuda/register.h"
#include "backend/cuda/strided_copy.h"
#include "core/error.h"
#include "core/gpu_runtime.h"

namespace {

using lucid::CopyKind;
using lucid::GpuRuntime;
using lucid::Shape;
using lucid::Stride;

// A strided copy case: both sides address their own buffer of *_bytes bytes,
// starting *_off bytes in (to test misaligned views).
struct CopyCase {
  std::string name;
  Shape shape;
  size_t itemsize;
  Stride dst_stride;
  size_t dst_off, dst_bytes;
  Stride src_stride;
  size_t src_off, src_bytes;
};

std::vector<std::byte> pattern(size_t n) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte((i * 131 + 7) % 251);
  return v;
}

// Reference: walks the multi-index with plain loops (independent of the planner).
void reference_copy(const CopyCase& c, std::byte* dst, const std::byte* src) {
  int64_t numel = 1;
  for (int64_t s : c.shape) numel *= s;
  if (numel == 0) return;
  std::vector<int64_t> idx(c.shape.size(), 0);
  for (int64_t n = 0; n < numel; ++n) {
    int64_t doff = 0, soff = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      doff += idx[d] * c.dst_stride[d];
      soff += idx[d] * c.src_stride[d];
    }
    std::memcpy(dst + doff, src + soff, c.itemsize);
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < c.shape[d]) break;
      idx[d] = 0;
    }
  }
}

Stride dense(const Shape& shape, size_t itemsize) {
  Stride st(shape.size());
  int64_t acc = static_cast<int64_t>(itemsize);
  for (size_t d = shape.size(); d-- > 0;) {
    st[d] = acc;
    acc *= shape[d];
  }
  return st;
}

std::vector<CopyCase> copy_cases() {
  std::vector<CopyCase> cases;
  for (size_t is : {1, 2, 4, 8, 16}) {
    const auto i = static_cast<int64_t>(is);
    const int64_t R = 37, C = 53;
    const size_t n = R * C * is;
    const std::string s = "_is" + std::to_string(is);
    // dst[j][i] = src[i][j]: a transposed view made contiguous.
    cases.push_back({"transpose" + s, {C, R}, is, {R * i, i}, 0, n, {i, C * i}, 0, n});
    // A contiguous copy, with a size-1 dim thrown in: must become one memcpy.
    cases.push_back({"contiguous" + s, {R, 1, C}, is, {C * i, 7, i}, 0, n, {C * i, 3, i}, 0, n});
    // Row broadcast: a length-C vector repeated R times (stride 0).
    cases.push_back({"bcast_row" + s, {R, C}, is, {C * i, i}, 0, n, {0, i}, 0, C * is});
    // Column broadcast: each of R values repeated C times.
    cases.push_back({"bcast_col" + s, {R, C}, is, {C * i, i}, 0, n, {i, 0}, 0, R * is});
    // A scalar broadcast to 3-d.
    cases.push_back({"bcast_all" + s, {4, 5, 6}, is, dense({4, 5, 6}, is), 0, 120 * is,
                     {0, 0, 0}, 0, is});
    // A permuted, sliced 4-d source (every other element of the last dim) into a
    // strided destination (every third row of a wider buffer).
    const Shape sh{3, 4, 5, 6};
    const Stride base = dense({5, 3, 6, 12}, is);  // source buffer (5,3,6,12)
    const Stride src_st{base[1], base[2], base[0], 2 * base[3]};
    const Stride dst_st{4 * 5 * 6 * 3 * i, 5 * 6 * 3 * i, 6 * 3 * i, 3 * i};
    cases.push_back({"permuted" + s, sh, is, dst_st, 0, 360 * 3 * is, src_st, 0, 1080 * is});
  }
  // Misaligned views: 8-byte items at 4-byte offsets must fall back to 4-byte moves.
  cases.push_back({"misaligned_is8", {10, 9}, 8, {72, 8}, 4, 724, {8, 80}, 4, 724});
  // Odd item sizes are copied as byte (or 2/4-byte) pieces.
  cases.push_back({"itemsize12", {7, 5}, 12, {60, 12}, 0, 420, {12, 84}, 0, 420});
  cases.push_back({"itemsize3", {7, 5}, 3, {15, 3}, 0, 105, {3, 21}, 0, 105});
  // A 0-d tensor (one element) and an empty one.
  cases.push_back({"zero_dim", {}, 8, {}, 0, 8, {}, 0, 8});
  cases.push_back({"empty", {3, 0, 2}, 4, {0, 8, 4}, 0, 0, {0, 8, 4}, 0, 0});
  return cases;
}

// ---- Host-only tests of the planner (run everywhere, CI included) -----------------

// Executes a plan on the host with the kernel's own index function.
void emulate(const lucid::cuda::StridedCopyPlan& p, std::byte* dst, const std::byte* src) {
  for (int64_t i = 0; i < p.numel; ++i) {
    int64_t doff = 0, soff = 0;
    lucid::cuda::strided_offsets(i, p.params, &doff, &soff);
    std::memcpy(dst + doff, src + soff, p.elem_size);
  }
}

TEST(CudaStridedCopyPlan, KernelIndexingMatchesReference) {
  for (const CopyCase& c : copy_cases()) {
    SCOPED_TRACE(c.name);
    // 16-byte aligned host buffers, so the alignment the planner sees is the offset's.
    std::vector<uint64_t> src_buf((c.src_bytes + 15) / 8 + 2), dst_buf((c.dst_bytes + 15) / 8 + 2);
    auto* src = reinterpret_cast<std::byte*>(src_buf.data());
    auto* dst = reinterpret_cast<std::byte*>(dst_buf.data());
    src += (16 - reinterpret_cast<uintptr_t>(src) % 16) % 16;
    dst += (16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16;
    const auto data = pattern(c.src_bytes);
    if (!data.empty()) std::memcpy(src, data.data(), data.size());
    std::vector<std::byte> want(c.dst_bytes), got(c.dst_bytes);
    reference_copy(c, want.data() + (c.dst_bytes ? c.dst_off : 0), data.data() + c.src_off);
    const auto plan = lucid::cuda::plan_strided_copy(dst + c.dst_off, c.dst_stride, src + c.src_off,
                                                     c.src_stride, c.shape, c.itemsize);
    std::memset(dst, 0, c.dst_bytes);
    emulate(plan, dst + c.dst_off, src + c.src_off);
    if (c.dst_bytes) std::memcpy(got.data(), dst, c.dst_bytes);
    EXPECT_EQ(got, want);
  }
}

TEST(CudaStridedCopyPlan, CollapsesDims) {
  std::vector<std::byte> buf(4096);
  std::byte* p = buf.data() + (16 - reinterpret_cast<uintptr_t>(buf.data()) % 16) % 16;
  // Contiguous 3-d: one memcpy.
  auto plan = lucid::cuda::plan_strided_copy(p, {48, 16, 4}, p, {48, 16, 4}, {2, 3, 4}, 4);
  EXPECT_TRUE(plan.contiguous);
  EXPECT_EQ(plan.params.ndim, 1);
  EXPECT_EQ(plan.numel, 24);
  EXPECT_EQ(plan.elem_size, 4u);
  // Transposed 2-d stays 2-d and is not contiguous.
  plan = lucid::cuda::plan_strided_copy(p, {12, 4}, p, {4, 20}, {5, 3}, 4);
  EXPECT_FALSE(plan.contiguous);
  EXPECT_EQ(plan.params.ndim, 2);
  // A scalar broadcast over 3 dims collapses to 1-d with source stride 0.
  plan = lucid::cuda::plan_strided_copy(p, {48, 16, 4}, p, {0, 0, 0}, {2, 3, 4}, 4);
  EXPECT_EQ(plan.params.ndim, 1);
  EXPECT_EQ(plan.params.src_strides[0], 0);
  EXPECT_EQ(plan.params.dst_strides[0], 4);
  // A transpose of rows of eight 16-bit items ([4, 8, 8] from [8, 4, 8] memory) moves
  // each row as one 16-byte element.
  plan = lucid::cuda::plan_strided_copy(p, {128, 16, 2}, p + 1024, {16, 64, 2}, {4, 8, 8}, 2);
  EXPECT_FALSE(plan.contiguous);
  EXPECT_EQ(plan.elem_size, 16u);
  EXPECT_EQ(plan.numel, 32);
  // ... but not rows whose starts are only 8-byte aligned: 8-byte elements there.
  plan = lucid::cuda::plan_strided_copy(p, {64, 8, 2}, p + 1024, {8, 32, 2}, {4, 8, 4}, 2);
  EXPECT_EQ(plan.elem_size, 8u);
  EXPECT_EQ(plan.numel, 32);
  // A misaligned 8-byte copy moves 4-byte pieces.
  plan = lucid::cuda::plan_strided_copy(p + 4, {8}, p + 4, {8}, {10}, 8);
  EXPECT_EQ(plan.elem_size, 4u);
  EXPECT_TRUE(plan.contiguous);
  EXPECT_EQ(plan.numel, 20);
  // Mismatched stride counts are rejected.
  EXPECT_THROW(lucid::cuda::plan_strided_copy(p, {4}, p, {4, 4}, {2, 2}, 4), lucid::RuntimeError);
}

// Without a device (the CI machine) the runtime must report 0 devices and turn
// every request into a catchable RuntimeError, not a crash.
TEST(CudaNoDevice, RequestsThrowRuntimeError) {
  lucid::cuda::register_runtime();
  GpuRuntime* rt = lucid::gpu_runtime_or_null();
  ASSERT_NE(rt, nullptr);
  if (rt->device_count() != 0) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_THROW(rt->allocate(16, 0), lucid::RuntimeError);
  EXPECT_THROW(rt->allocate_shared(16, 0), lucid::RuntimeError);
  EXPECT_THROW(rt->memory_stats(0), lucid::RuntimeError);
  EXPECT_THROW(lucid::gpu_runtime(0), lucid::RuntimeError);
  rt->empty_cache();  // nothing cached: a no-op
}

// ---- GPU tests ------------------------------------------------------------------

class CudaRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    lucid::cuda::register_runtime();
    rt_ = lucid::gpu_runtime_or_null();
    ASSERT_NE(rt_, nullptr);
    if (rt_->device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }

  template <typename T>
  lucid::GpuStorage upload(const std::vector<T>& v) {
    auto s = rt_->allocate(v.size() * sizeof(T), 0);
    rt_->copy(s.ptr(), v.data(), v.size() * sizeof(T), CopyKind::HostToDevice, 0);
    return s;
  }
  template <typename T>
  std::vector<T> download(const void* src, size_t n) {
    std::vector<T> out(n);
    rt_->copy(out.data(), src, n * sizeof(T), CopyKind::DeviceToHost, 0);
    return out;
  }

  GpuRuntime* rt_ = nullptr;
};

TEST_F(CudaRuntimeTest, AllocateGivesDeviceMemory) {
  auto s = rt_->allocate(1000, 0);
  EXPECT_NE(s.ptr(), nullptr);
  EXPECT_EQ(s.nbytes, 1000u);
  EXPECT_EQ(s.device, 0);
  auto empty = rt_->allocate(0, 0);  // an empty tensor still owns a real block
  EXPECT_NE(empty.ptr(), nullptr);
  EXPECT_EQ(empty.nbytes, 0u);
}

TEST_F(CudaRuntimeTest, InvalidDeviceThrows) {
  const int n = rt_->device_count();
  EXPECT_THROW(rt_->allocate(16, n), lucid::RuntimeError);
  EXPECT_THROW(rt_->allocate(16, -1), lucid::RuntimeError);
  EXPECT_THROW(rt_->memory_stats(n), lucid::RuntimeError);
}

TEST_F(CudaRuntimeTest, FreedBlockIsReused) {
  rt_->empty_cache();
  for (size_t n : {size_t(1000), size_t(3u << 20) + 123}) {
    void* first = nullptr;
    {
      auto a = rt_->allocate(n, 0);
      first = a.ptr();
    }
    const size_t reserved = rt_->memory_stats(0).reserved;
    auto b = rt_->allocate(n, 0);
    EXPECT_EQ(b.ptr(), first) << n;
    EXPECT_EQ(rt_->memory_stats(0).reserved, reserved) << n;
  }
}

TEST_F(CudaRuntimeTest, StatsTrackLiveBytesPeakAndReserved) {
  rt_->empty_cache();
  const auto base = rt_->memory_stats(0);
  EXPECT_EQ(base.reserved, base.allocated);
  const size_t four_mib = size_t(4) << 20;  // a multiple of the 2 MiB large-block size
  {
    auto a = rt_->allocate(four_mib, 0);
    auto b = rt_->allocate(1000, 0);  // rounded to 1024
    const auto s = rt_->memory_stats(0);
    EXPECT_EQ(s.allocated, base.allocated + four_mib + 1024);
    EXPECT_EQ(s.reserved, base.reserved + four_mib + 1024);
    EXPECT_GE(s.max_allocated, s.allocated);
  }
  auto s = rt_->memory_stats(0);
  EXPECT_EQ(s.allocated, base.allocated);
  EXPECT_GE(s.max_allocated, base.allocated + four_mib + 1024);
  EXPECT_EQ(s.reserved, base.reserved + four_mib + 1024);  // cached, not returned
  rt_->reset_peak_memory_stats(0);
  EXPECT_EQ(rt_->memory_stats(0).max_allocated, base.allocated);
  rt_->empty_cache();
  s = rt_->memory_stats(0);
  EXPECT_EQ(s.reserved, s.allocated);
  EXPECT_EQ(s.reserved, base.reserved);
}

TEST_F(CudaRuntimeTest, EmptyCacheKeepsLiveBlocks) {
  auto live = rt_->allocate(size_t(6) << 20, 0);
  { auto dead = rt_->allocate(size_t(8) << 20, 0); }
  auto s = rt_->memory_stats(0);
  EXPECT_GT(s.reserved, s.allocated);
  rt_->empty_cache();
  s = rt_->memory_stats(0);
  EXPECT_EQ(s.reserved, s.allocated);
  EXPECT_GE(s.allocated, size_t(6) << 20);
}

TEST_F(CudaRuntimeTest, HostDeviceRoundTrip) {
  std::vector<float> v((1 << 20) + 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.5f - 7.0f;
  auto a = upload(v);
  auto b = rt_->allocate(v.size() * sizeof(float), 0);
  rt_->copy(b.ptr(), a.ptr(), v.size() * sizeof(float), CopyKind::DeviceToDevice, 0);
  EXPECT_EQ(download<float>(b.ptr(), v.size()), v);
  rt_->fill(b.ptr(), {4}, {int64_t(v.size())}, 0, sizeof(float), 0);
  EXPECT_EQ(download<float>(b.ptr(), v.size()), std::vector<float>(v.size(), 0.0f));
  // A pattern the bytes of which differ takes the kernel, not a memset; every other
  // element of a strided view only.
  const float x = 2.5f;
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  rt_->fill(b.ptr(), {8}, {int64_t(v.size() / 2)}, bits, sizeof(float), 0);
  const auto got = download<float>(b.ptr(), v.size());
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(got[i], i % 2 == 0 && i / 2 < v.size() / 2 ? x : 0.0f) << i;
  rt_->synchronize(0);
}

TEST_F(CudaRuntimeTest, StridedCopyMatchesReference) {
  for (const CopyCase& c : copy_cases()) {
    SCOPED_TRACE(c.name);
    const auto data = pattern(c.src_bytes);
    auto src = rt_->allocate(c.src_bytes, 0);
    auto dst = rt_->allocate(c.dst_bytes, 0);
    rt_->copy(src.ptr(), data.data(), c.src_bytes, CopyKind::HostToDevice, 0);
    rt_->fill(dst.ptr(), {1}, {int64_t(c.dst_bytes)}, 0, 1, 0);
    rt_->strided_copy(dst.ptr() + c.dst_off, c.dst_stride, src.ptr() + c.src_off, c.src_stride,
                      c.shape, c.itemsize, 0);
    std::vector<std::byte> want(c.dst_bytes);
    reference_copy(c, want.data() + (c.dst_bytes ? c.dst_off : 0), data.data() + c.src_off);
    EXPECT_EQ(download<std::byte>(dst.ptr(), c.dst_bytes), want);
  }
}

TEST_F(CudaRuntimeTest, StridedCopyLargeBroadcast) {
  // More elements (2^29 + 12 Ki bytes) than the kernel's capped grid has threads
  // (2^20 blocks x 256), so each thread goes round the grid-stride loop.
  const int64_t rows = (int64_t(1) << 17) + 3, cols = 4096;
  std::vector<uint8_t> row(cols);
  for (int64_t j = 0; j < cols; ++j) row[j] = static_cast<uint8_t>((j * 37 + 11) % 253);
  auto src = upload(row);
  auto dst = rt_->allocate(size_t(rows * cols), 0);
  rt_->strided_copy(dst.ptr(), {cols, 1}, src.ptr(), {0, 1}, {rows, cols}, 1, 0);
  const auto out = download<uint8_t>(dst.ptr(), size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    ASSERT_EQ(std::memcmp(out.data() + r * cols, row.data(), size_t(cols)), 0) << "row " << r;
}

TEST_F(CudaRuntimeTest, SharedStorageIsVisibleFromBothSides) {
  const size_t n = 4096;
  const auto before = rt_->memory_stats(0);
  auto sh = rt_->allocate_shared(n * sizeof(int32_t), 0);
  ASSERT_NE(sh.ptr(), nullptr);
  ASSERT_NE(sh.device_ptr, nullptr);
  EXPECT_EQ(sh.device, 0);
  const auto after = rt_->memory_stats(0);  // pinned host memory is no device memory
  EXPECT_EQ(after.allocated, before.allocated);
  EXPECT_EQ(after.reserved, before.reserved);

  auto* host = reinterpret_cast<int32_t*>(sh.ptr());
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i) host[i] = v[i] = static_cast<int32_t>(i * 3 - 100);
  // Host writes, device reads (a copy from the mapped device pointer).
  auto g = rt_->allocate(n * sizeof(int32_t), 0);
  rt_->copy(g.ptr(), sh.device_ptr, n * sizeof(int32_t), CopyKind::DeviceToDevice, 0);
  EXPECT_EQ(download<int32_t>(g.ptr(), n), v);
  // Device writes (a kernel through the mapped pointer), host reads: reversed order.
  rt_->strided_copy(sh.device_ptr, {4}, g.ptr() + (n - 1) * 4, {-4}, {int64_t(n)}, 4, 0);
  rt_->synchronize(0);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(host[i], v[n - 1 - i]) << i;
}

TEST_F(CudaRuntimeTest, OutOfMemoryThrowsAndRecovers) {
  const auto before = rt_->memory_stats(0);
  try {
    auto s = rt_->allocate(size_t(1) << 50, 0);
    FAIL() << "allocating 1 PiB succeeded";
  } catch (const lucid::RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("GPU out of memory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rt_->memory_stats(0).allocated, before.allocated);
  // The runtime still works: no sticky error was left behind.
  std::vector<int64_t> v{1, -2, 3, -4, 5};
  auto s = upload(v);
  EXPECT_EQ(download<int64_t>(s.ptr(), v.size()), v);
}

TEST_F(CudaRuntimeTest, ConcurrentAllocationsKeepStatsConsistent) {
  rt_->empty_cache();
  const auto base = rt_->memory_stats(0);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < 200; ++i) {
          auto a = rt_->allocate(size_t(512) * (1 + (i + t) % 7), 0);
          auto b = rt_->allocate(size_t(3) << 20, 0);
          if (a.ptr() == nullptr || b.ptr() == nullptr) ++failures;
        }
      } catch (...) {
        ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(rt_->memory_stats(0).allocated, base.allocated);
  rt_->empty_cache();
  EXPECT_EQ(rt_->memory_stats(0).reserved, base.reserved);
}

TEST_F(CudaRuntimeTest, SecondDeviceWorksWhenPresent) {
  if (rt_->device_count() < 2) GTEST_SKIP() << "needs 2 GPUs";
  std::vector<int32_t> v{4, 5, 6};
  auto s = rt_->allocate(v.size() * 4, 1);
  EXPECT_EQ(s.device, 1);
  rt_->copy(s.ptr(), v.data(), 12, CopyKind::HostToDevice, 1);
  std::vector<int32_t> out(3);
  rt_->copy(out.data(), s.ptr(), 12, CopyKind::DeviceToHost, 1);
  EXPECT_EQ(out, v);
  EXPECT_GT(rt_->memory_stats(1).allocated, 0u);
}

}  // namespace
