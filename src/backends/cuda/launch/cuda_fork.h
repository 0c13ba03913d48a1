// Independent kernels of one op on streams of their own: the caller's
// stream forks to side streams and they join it again, so that kernels too
// small to fill the GPU alone (the channel slices of a Hopper convolution,
// cuda_conv_tf32_sm90.cu) run at once. Inside a graph capture the fork and
// the join become the graph's branches. Plain CUDA runtime calls, so the
// sm_90a kernel files can use it.
#pragma once

#include <cuda_runtime_api.h>

namespace aotirt {

// The most streams one fork gives, the caller's included.
constexpr int kCudaMaxForks = 16;

// Makes this thread's side streams and events for the current device, if
// not made yet: a thread's own, so that two threads' forks (or a capture on
// one and direct launches on another) never share them. Call it outside
// graph captures (a kernel's check does); cuda_fork makes them too where
// they are missing.
cudaError_t cuda_fork_prepare();

// streams[0] = |stream|; streams[1 .. count - 1] = this thread's side
// streams for the current device, each made to wait for the work queued on
// |stream| so far. |count| is 1 to kCudaMaxForks. The side streams are
// borrowed: valid until this thread ends.
cudaError_t cuda_fork(cudaStream_t stream, int count, cudaStream_t* streams);

// Makes |stream| wait for the work queued so far on streams[1 .. count - 1]
// (as cuda_fork gave them). Call it even after a failed launch on one of
// them: a capture with a branch left unjoined is invalid.
cudaError_t cuda_join(cudaStream_t stream, int count, const cudaStream_t* streams);

}  // namespace aotirt
