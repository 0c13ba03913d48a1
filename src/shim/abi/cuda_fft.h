// Declarations of the CUDA FFT shims of c_shim_cuda.h (_fft_c2c, _fft_r2c),
// on cuFFT. Defined only in CUDA builds (src/backends/cuda/ops/fft); the
// device-generic aoti_torch__fft_c2c forwards to aoti_torch_cuda__fft_c2c
// for CUDA tensors.
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__fft_c2c(AtenTensorHandle self, const int64_t* dim,
    int64_t dim_len_, int64_t normalization, int32_t forward, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__fft_r2c(AtenTensorHandle self, const int64_t* dim,
    int64_t dim_len_, int64_t normalization, int32_t onesided, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;

}  // extern "C"
