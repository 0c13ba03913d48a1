// Shared plumbing for the CUDA fallback ops: the device and stream an op runs
// on, device temporaries, and the small kernels the ops need besides
// cuBLASLt and cuDNN (cuda_op_kernels.cu). Argument and layout rules common
// to every backend are the op layer's (src/ops).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/runtime/cuda_stream.h"
#include "backends/cuda/ops/cuda_op_kernels.h"
#include "core/tensor.h"

namespace aotirt {

class CudaDevice;

// Where an op runs: the device of its first tensor and that device's current
// stream. Keeps the device current while the op runs.
class CudaOpScope {
 public:
  static Result<std::unique_ptr<CudaOpScope>> enter(const TensorImpl& first, const char* what);
  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  // Fails unless |t| is a CUDA tensor on this op's device.
  Status check_same_device(const TensorImpl& t, const char* what) const;

 private:
  CudaOpScope(int device, cudaStream_t stream) : device_(device), stream_(stream), scope_(device) {}
  int device_;
  cudaStream_t stream_;
  CudaDeviceScope scope_;
};

// Whether an op's kernels on |dev| are launched as dependent launches
// (programmatic stream serialization, so that a kernel's loads of what the
// kernel ahead does not write start before that kernel ends): Hopper and
// later, unless switched off (CudaFeature::kPdl, AOTIRT_CUDA_DISABLE=pdl).
bool cuda_dependent_launches(const CudaDevice& dev);

// A new tensor on CUDA device |device|.
Result<TensorImpl> cuda_empty(const DimVector& sizes, const DimVector& strides, DType dtype, int device);
Result<TensorImpl> cuda_empty_contiguous(const DimVector& sizes, DType dtype, int device);

// Whether float32 work may use TF32 tensor cores. The defaults are PyTorch's
// (torch.backends.cudnn.allow_tf32 = True, torch.backends.cuda.matmul.
// allow_tf32 = False), so aotirt and libtorch run a package with the same
// math: convolutions yes, matmuls no. AOTIRT_CUDA_ALLOW_TF32=1 allows both,
// =0 neither (bit-for-bit float32 checks).
bool cuda_conv_allow_tf32();
bool cuda_matmul_allow_tf32();

// Scratch memory for one cuBLASLt or cuDNN call on |stream|: a buffer per
// device and stream that grows and is kept (allocating per call cost as much
// as the small GEMMs and convolutions), or, while a graph is recorded,
// memory from the graph's pool held in |hold| (so a replay on any stream
// shares no scratch with work outside the graph). Null for 0 bytes.
Result<void*> cuda_op_workspace(int device, cudaStream_t stream, size_t bytes, TensorImpl* hold);

// |ints| zeroed ints on |stream| for the serial k slices of aotirt's own
// kernels (each slice waits on a per-tile counter that the last one resets
// to zero): a buffer per device and stream, zeroed once and kept; while a
// graph is recorded, zeroed memory of the graph's own.
Result<int*> cuda_op_semaphores(int device, cudaStream_t stream, size_t ints);

// Column-major D[m, n] (ld ldd) = alpha * op(A)[m, k] @ op(B)[k, n] + beta * D
// (+ bias[m] broadcast along n), |batch| times with the given element strides.
// Pointers are borrowed for the call.
struct CudaGemm {
  DType dtype;
  int64_t batch = 1;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  bool ta = false;
  int64_t lda = 1, stride_a = 0;
  const void* b = nullptr;
  bool tb = false;
  int64_t ldb = 1, stride_b = 0;
  void* d = nullptr;
  int64_t ldd = 1, stride_d = 0;
  double alpha = 1.0, beta = 0.0;
  const void* bias = nullptr;
};

// Queues |g| on |stream| through cuBLASLt: plans are cached by shape, and
// calls whose pointers repeat are replayed (cuda_op_replay.h).
Status cuda_gemm(int device, cudaStream_t stream, const CudaGemm& g);

// Queues |g| on aotirt's own GEMM kernels (cuda_gemm_f32x3.h) when one takes
// it, and answers false, with nothing queued, when none does; with
// |dry_run| it only answers. For callers that would rather use another
// library than load cuBLASLt for a GEMM (the patch convolutions).
Result<bool> cuda_gemm_own(int device, cudaStream_t stream, const CudaGemm& g, bool dry_run);

// Load cuBLASLt and make its handle for |device|, ahead of the first GEMM
// (the backend's prewarm hook).
Status cuda_matmul_prewarm(int device);
// Whether a library importing |imported| is likely to run GEMMs on cuBLASLt:
// not when the 3xTF32 kernels are on and it names no floating dtype but
// float32 (cuBLASLt, and the host memory it holds, then loads at a first
// GEMM that needs it, if any).
bool cuda_matmul_prewarm_useful(const std::vector<std::string>& imported);

// Largest power of two (up to 256) that divides |p|'s address.
int cuda_pointer_alignment(const void* p);

}  // namespace aotirt
