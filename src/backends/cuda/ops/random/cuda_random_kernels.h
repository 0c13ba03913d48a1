// Launchers for the CUDA random ops (cuda_random.cu): the distributions
// over a flat run of elements, bernoulli, dropout and randperm's shuffle.
// Every launcher draws from cuRAND's header-only Philox4x32-10: the call's
// elements are split into groups of two or four, and group g reads one
// 128-bit block of subsequence g at the call's counter offset, so a value
// depends on its element's index only, never on the launch shape, and one
// block per call is all a call consumes. Plain C++ types only, so the .cu
// file needs none of aotirt's headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace aotirt {

// Where one call draws: the Philox key and the counter offset in 32-bit
// words (a multiple of 4).
struct CudaPhilox {
  uint64_t seed = 0;
  uint64_t offset = 0;
};

// Counter words each launcher consumes per call, whatever the element count.
constexpr uint64_t kCudaRandomWordsPerCall = 4;

enum class CudaRealDist : int { kUniform = 0, kNormal = 1, kExponential = 2 };

// Fills |n| scalars of real c10 dtype |dtype| (float16, bfloat16, float32,
// float64) at |out|: uniform on [a, b) (the top mantissa-width bits of the
// draw, so [0, 1) never rounds to 1), normal with mean a and std b (Box-
// Muller), exponential with rate a.
cudaError_t cuda_random_real(CudaRealDist dist, int dtype, void* out, int64_t n, double a, double b,
                             const CudaPhilox& ph, cudaStream_t stream);

// Fills |n| elements of c10 dtype |dtype| (integers, bool, the four floating
// dtypes) with low + (draw mod range); 32-bit draws when range <= 2^32,
// 64-bit ones above. |range| 0 means 2^64.
cudaError_t cuda_random_int(int dtype, void* out, int64_t n, int64_t low, uint64_t range, const CudaPhilox& ph,
                            cudaStream_t stream);

// out[i] = (u_i < p[i]) for |n| elements of c10 dtype |dtype|; |p| null
// means |p_scalar| everywhere.
cudaError_t cuda_random_bernoulli(int dtype, void* out, int64_t n, const double* p, double p_scalar,
                                  const CudaPhilox& ph, cudaStream_t stream);

// Sets *bad (device memory, zeroed by the caller) to 1 when some p[i] is
// outside [0, 1] or NaN.
cudaError_t cuda_random_check_probs(const double* p, int64_t n, int* bad, cudaStream_t stream);

// Dropout over |n| elements of a floating c10 |dtype| sharing one memory
// order: mask[i] = (u_i < keep), out[i] = in[i] * mask[i] * scale, computed
// in float (double for float64).
cudaError_t cuda_random_dropout(int dtype, const void* in, void* out, uint8_t* mask, int64_t n, double keep,
                                double scale, const CudaPhilox& ph, cudaStream_t stream);

// randperm: device scratch bytes, then the permutation of 0..n-1 into |out|
// (int64): 0..n-1 sorted by random 64-bit keys. |keys| holds 2 * n
// uint64, |order| n int64.
cudaError_t cuda_randperm_temp_bytes(int64_t n, size_t* bytes);
cudaError_t cuda_randperm(int64_t n, uint64_t* keys, int64_t* order, int64_t* out, void* temp, size_t temp_bytes,
                          const CudaPhilox& ph, cudaStream_t stream);

}  // namespace aotirt
