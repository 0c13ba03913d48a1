// Launchers for the CUDA scans along one dimension (cuda_scan.cu): cumsum,
// cumprod, logcumsumexp, cummax and cummin over a contiguous tensor viewed as
// [outer, length, inner]. Plain C++ types only, so the .cu file needs none of
// aotirt's headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace aotirt {

enum class CudaScanOp : int { kSum = 0, kProd = 1, kLogSumExp = 2, kMax = 3, kMin = 4 };

struct CudaScanShape {
  int64_t outer = 1, length = 1, inner = 1;
};

// Whether the scan of |s| runs one line per thread (lines along a strided
// dimension, with enough of them to fill the GPU) rather than as a
// device-wide segmented scan, which needs the dimension innermost.
bool cuda_scan_per_thread(const CudaScanShape& s);

// Device scratch bytes cuda_launch_scan needs for |s| (innermost dimension
// only; 0 for the per-thread path).
cudaError_t cuda_scan_temp_bytes(CudaScanOp op, int dtype, const CudaScanShape& s, size_t* bytes);

// Scans |in| into |out| (both contiguous, |dtype|, a c10 number) and, for
// kMax and kMin, the positions into |indices| (int64, contiguous). Lines
// along a strided dimension (inner > 1) need cuda_scan_per_thread(s);
// otherwise s.inner must be 1. Accumulates as torch's CUDA kernels do: the
// half types in float32, integers in 64 bits (wrapping on store).
cudaError_t cuda_launch_scan(CudaScanOp op, int dtype, const void* in, void* out, int64_t* indices,
                             const CudaScanShape& s, void* temp, size_t temp_bytes, cudaStream_t stream);

}  // namespace aotirt
