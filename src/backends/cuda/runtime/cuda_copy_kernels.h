// Launchers for the strided copy kernels in cuda_copy.cu. Plain C++ types only,
// so the .cu file needs none of aotirt's headers; cuda_copy.cpp prepares the
// layouts and turns the cudaError_t into a Status.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace aotirt {

constexpr int kCudaCopyMaxDims = 16;

// One iteration space shared by source and destination, outermost dim first.
// Strides count elements; a source stride of 0 broadcasts.
struct CudaCopyLayout {
  int ndim = 0;
  int64_t sizes[kCudaCopyMaxDims];
  int64_t dst_strides[kCudaCopyMaxDims];
  int64_t src_strides[kCudaCopyMaxDims];
};

// Copies |numel| elements of |elem_size| bytes (1, 2, 4, 8 or 16) without
// looking at their values.
cudaError_t cuda_launch_copy_strided(void* dst, const void* src, int elem_size, const CudaCopyLayout& layout,
                                     int64_t numel, cudaStream_t stream);

// Copies with a dtype conversion; dtypes are c10 ScalarType numbers. Only
// dtypes for which cuda_convert_supported() holds may be passed.
cudaError_t cuda_launch_convert_strided(void* dst, int dst_dtype, const void* src, int src_dtype,
                                        const CudaCopyLayout& layout, int64_t numel, cudaStream_t stream);
// bool, the integer types, float16/32/64, bfloat16, float8_e4m3fn and float8_e5m2.
bool cuda_convert_supported(int dtype);

}  // namespace aotirt
