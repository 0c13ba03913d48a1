// Declarations of the CPU random-number ops (rand, randn, randint, randperm,
// uniform, normal, exponential, bernoulli_, native_dropout) and the FFTs
// (_fft_c2c, _fft_r2c, and the device-generic deprecated aoti_torch__fft_c2c),
// with torch's signatures (generated/c_shim_cpu.h, c/shim_deprecated.h).
// AtenGeneratorHandle is declared by shim/shim_abi.h, as torch's c/macros.h does.
#pragma once

#include "shim/shim_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_rand(const int64_t* size, int64_t size_len_, int32_t* dtype,
                                                      int32_t* layout, int32_t* device, int32_t device_index_,
                                                      int32_t* pin_memory, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_rand_generator(const int64_t* size, int64_t size_len_,
                                                                AtenGeneratorHandle* generator, int32_t* dtype,
                                                                int32_t* layout, int32_t* device,
                                                                int32_t device_index_, int32_t* pin_memory,
                                                                AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randn(const int64_t* size, int64_t size_len_, int32_t* dtype,
                                                       int32_t* layout, int32_t* device, int32_t device_index_,
                                                       int32_t* pin_memory, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randn_generator(const int64_t* size, int64_t size_len_,
                                                                 AtenGeneratorHandle* generator, int32_t* dtype,
                                                                 int32_t* layout, int32_t* device,
                                                                 int32_t device_index_, int32_t* pin_memory,
                                                                 AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randint(int64_t high, const int64_t* size, int64_t size_len_,
                                                         int32_t* dtype, int32_t* layout, int32_t* device,
                                                         int32_t device_index_, int32_t* pin_memory,
                                                         AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randint_generator(int64_t high, const int64_t* size,
                                                                   int64_t size_len_, AtenGeneratorHandle* generator,
                                                                   int32_t* dtype, int32_t* layout, int32_t* device,
                                                                   int32_t device_index_, int32_t* pin_memory,
                                                                   AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randint_low(int64_t low, int64_t high, const int64_t* size,
                                                             int64_t size_len_, int32_t* dtype, int32_t* layout,
                                                             int32_t* device, int32_t device_index_,
                                                             int32_t* pin_memory,
                                                             AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randint_low_out(AtenTensorHandle out, int64_t low, int64_t high,
                                                                 const int64_t* size,
                                                                 int64_t size_len_) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_randperm(int64_t n, int32_t* dtype, int32_t* layout, int32_t* device,
                                                          int32_t device_index_, int32_t* pin_memory,
                                                          AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_uniform(AtenTensorHandle self, double from, double to,
                                                         AtenGeneratorHandle* generator,
                                                         AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_normal_functional(AtenTensorHandle self, double mean, double std,
                                                                   AtenGeneratorHandle* generator,
                                                                   AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_exponential(AtenTensorHandle self, double lambd,
                                                             AtenGeneratorHandle* generator,
                                                             AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_bernoulli__Tensor(AtenTensorHandle self, AtenTensorHandle p,
                                                                   AtenGeneratorHandle* generator) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_bernoulli__float(AtenTensorHandle self, double p,
                                                                  AtenGeneratorHandle* generator) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_native_dropout(AtenTensorHandle input, double p, int32_t* train,
                                                                AtenTensorHandle* ret0,
                                                                AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;

// FFTs (FFTW underneath, loaded on first use).
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__fft_c2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                                          int64_t normalization, int32_t forward,
                                                          AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__fft_r2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                                          int64_t normalization, int32_t onesided,
                                                          AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
// The device-generic form (c/shim_deprecated.h), in shim_generic_ops.cpp: it
// forwards to the tensor's device's own _fft_c2c.
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch__fft_c2c(AtenTensorHandle self, const int64_t* dim_ptr, int64_t dim_size,
                                                      int64_t normalization, int32_t forward,
                                                      AtenTensorHandle* ret) AOTIRT_NOEXCEPT;

#ifdef __cplusplus
}  // extern "C"
#endif
