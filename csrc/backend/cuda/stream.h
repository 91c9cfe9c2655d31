// The per-device CUDA stream.
//
// lucid queues all of its GPU work for a device (copies, memsets, kernels) on ONE
// non-blocking stream per device. One stream means every operation on a device is
// ordered after the previous one without events, which is what lets the caching
// allocator hand a freed block to the next request immediately (see
// caching_allocator.h). Non-blocking: the stream does not serialise with the legacy
// default stream, so foreign libraries using stream 0 do not stall lucid.
//
// GPU kernels written elsewhere in lucid must launch on stream(device) too, inside a
// DeviceGuard for that device.
#pragma once

#include <cuda_runtime_api.h>

namespace lucid::cuda {

inline constexpr int kMaxDevices = 64;

// The device's stream, created on first use (this is where a device's CUDA context
// is first touched, together with the first allocation). Throws on a bad index.
cudaStream_t stream(int device);

// The device's stream if it was created, else nullptr. Never creates a stream or a
// context and never throws; used by deleters and by synchronize().
cudaStream_t stream_if_created(int device) noexcept;

// Blocks until everything queued on the device's stream has finished; a no-op when
// the stream was never created (then lucid never queued anything there).
void sync_stream(int device);

}  // namespace lucid::cuda
