// Note [The last block's ticket]
// A kernel whose blocks each leave a partial result in global memory used to need a
// second launch to combine them (a few microseconds of a small step: the cross
// entropy's total). Instead each block takes a ticket when its partials are written;
// the block that takes the last one knows every other block's partials are visible
// and combines them itself, in the same fixed order the second kernel used, so the
// bits do not change. That block also returns the counter to zero, which makes the
// counter reusable by the next launch and by every replay of a captured graph without
// a memset. A launch gets its counter from a per-device ring (block_ticket()): one
// stream a device (stream.h) runs launches one after another, so a counter is never
// shared by two running kernels unless kTickets launches are in flight at once.
#pragma once

namespace lucid::cuda {

// A zeroed counter of `device` for the launch about to be made; the kernel's last
// block must leave it at zero again (last_block()).
unsigned* block_ticket(int device);

#if defined(__CUDACC__)
// Called by every thread of every block after writing its block's partials; true in
// every thread of the one block that finished last, after which it may read every
// block's partials (with __ldcg: past L1, which other SMs' writes do not update).
__device__ inline bool last_block(unsigned* ticket) {
  __shared__ bool last;
  __threadfence();  // this thread's partials are visible to the device before the ticket
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    if (last) *ticket = 0;  // every block has taken its ticket: ready for the next launch
  }
  __syncthreads();
  if (last) __threadfence();
  return last;
}
#endif

}  // namespace lucid::cuda
