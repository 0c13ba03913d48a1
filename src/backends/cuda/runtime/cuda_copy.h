// Copies between CUDA tensors and between host and CUDA tensors, for every
// dtype: strided layouts, broadcasting of the source (numpy rules) and dtype
// conversion, all done on the device where a kernel supports the dtypes.
// Pairs the kernels cannot convert (complex, float8 fnuz) go through the
// host's converting copy.
#pragma once

#include <cuda_runtime_api.h>

#include "backends/cuda/runtime/cuda_copy_kernels.h"
#include "core/tensor.h"

namespace aotirt {

// Copies |src| into |dst|; each is on CUDA device |device| or on the CPU, and
// at least one is on the device. Work goes to |stream|. Copies that read or
// write host memory have finished when this returns, except a plain
// host-to-device upload with |non_blocking| set. Device-to-device copies are
// only queued.
Status cuda_copy(int device, cudaStream_t stream, const TensorImpl& dst, const TensorImpl& src, bool non_blocking);

// Sets every element of |dst| (on |device|) to zero bytes, queued on |stream|.
Status cuda_zero(int device, cudaStream_t stream, const TensorImpl& dst);

// The iteration space for copying |src_strides| (already broadcast to
// |sizes|) into |dst_strides|: size-1 dims dropped and dims that are
// contiguous in both merged. UNIMPLEMENTED past kCudaCopyMaxDims dims.
Result<CudaCopyLayout> cuda_copy_layout(const DimVector& sizes, const DimVector& dst_strides,
                                        const DimVector& src_strides);

}  // namespace aotirt
