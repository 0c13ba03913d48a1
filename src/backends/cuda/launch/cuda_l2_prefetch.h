// Weights read into the GPU's L2 cache ahead of the GEMM that reads them,
// while a model is recorded into a CUDA graph (`--cuda-graph`). A decode
// step's GEMMs wait on their weights, which come from memory on every replay,
// while the small kernels between two GEMMs leave the memory idle. So the
// recording forks a branch from the point after the previous GEMM or
// convolution (the mark), which prefetches the next GEMM's weights beside the
// kernels in between and joins before that GEMM. Only inside one capture:
// outside one, a branch would cost host time on every call. Convolutions
// mark but prefetch nothing: their kernels are short, and the branch's join
// delayed them by more than their weights' latency cost, so ResNet-50's
// replays got slower (bench/notes.md, row 47). Plain CUDA runtime calls.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace aotirt {

// Whether prefetches are on (unless AOTIRT_CUDA_DISABLE names l2_prefetch).
bool cuda_l2_prefetch_enabled();

// Operands larger than this prefetch nothing: they would push out of L2
// what the kernels between are using.
constexpr size_t kCudaL2PrefetchMaxBytes = size_t(16) << 20;

// Operands smaller than this prefetch nothing: the branch's own cost is not
// repaid.
constexpr size_t kCudaL2PrefetchMinBytes = size_t(64) << 10;

// The id of the capture |stream| is recorded into, or 0 where it is not:
// the |capture| the two calls below take. One query serves an op that also
// launches differently inside a capture (a convolution's dependent launch).
cudaError_t cuda_l2_prefetch_capture(cudaStream_t stream, unsigned long long* capture);

// Marks the point on |stream| after an op's kernels, where the next
// prefetch may begin. Does nothing for |capture| 0 or with prefetches off.
cudaError_t cuda_l2_prefetch_mark(cudaStream_t stream, unsigned long long capture);

// If prefetches are on and this thread marked a point of |capture| (not 0):
// a branch from that
// point reads |bytes| at |p| (borrowed; device memory that outlives the
// graph) into L2, and |stream| waits for it, so that the kernels queued
// next find the bytes in L2. Otherwise nothing. Queues no work that writes
// memory: results are the same either way.
cudaError_t cuda_l2_prefetch(cudaStream_t stream, unsigned long long capture, const void* p, size_t bytes);

}  // namespace aotirt
