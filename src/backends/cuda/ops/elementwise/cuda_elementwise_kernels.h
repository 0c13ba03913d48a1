// Launchers for the CUDA elementwise kernels (cuda_elementwise.cu) and amax
// (cuda_amax.cu). One strided kernel serves every elementwise op: it walks
// an iteration space of up to kCudaEwMaxDims dims (int64 offsets, 32-bit
// ones when everything fits), reads each input in its own dtype, converts
// it to the op's common dtype as Tensor.to would, computes there and stores
// in the output's dtype. Plain C++ types only, so the .cu files need none
// of aotirt's headers; dtypes are c10 ScalarType numbers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace aotirt {

constexpr int kCudaEwMaxDims = 16;

enum class CudaEwOp : int {
  kAdd = 0,     // a + alpha * b
  kMul = 1,     // a * b
  kPow = 2,     // a ** b
  kGcd = 3,     // gcd(a, b), integers
  kPolar = 4,   // complex(a cos b, a sin b); the output is complex
  kAbs = 5,     // |a|; complex inputs give their real dtype
  kAngle = 6,   // arg(a); complex inputs give their real dtype
  kPowExp = 7,  // a ** exponent (a host Scalar)
  kCopy = 8,    // a, converted
  kFill = 9,    // the value in a's scalar bytes, already of the output's dtype
};

// One operand: a device pointer with element strides over the iteration
// space (0 where it broadcasts), or, with |data| null, one value held in
// |scalar| (a host Scalar or a 0-d CPU tensor) in |dtype|.
struct CudaEwOperand {
  const void* data = nullptr;
  int dtype = 0;
  int64_t strides[kCudaEwMaxDims] = {};
  alignas(16) unsigned char scalar[16] = {};
};

// An op over |ndim| dims (outermost first) of |sizes|. |common| is the
// dtype the op computes in (c10 numbers; half types compute in float as
// torch's CUDA kernels do).
struct CudaEwLaunch {
  CudaEwOp op = CudaEwOp::kCopy;
  int common = 0;
  int ndim = 0;
  int64_t sizes[kCudaEwMaxDims] = {};
  int64_t numel = 0;
  void* out = nullptr;
  int out_dtype = 0;
  int64_t out_strides[kCudaEwMaxDims] = {};
  CudaEwOperand a, b;
  double alpha = 1.0;     // kAdd
  double exponent = 1.0;  // kPowExp
};

// Queues |l| on |stream|. cudaErrorInvalidValue for an op and dtype pair
// the kernels have no case for (the op layer refuses those first).
cudaError_t cuda_launch_elementwise(const CudaEwLaunch& l, cudaStream_t stream);

// torch.hann_window(n) (periodic) into contiguous |out| of |dtype| (a
// floating dtype), computed as torch does: arange, * 2 pi / n, cos, * -0.5,
// + 0.5, in the dtype.
cudaError_t cuda_launch_hann_window(void* out, int dtype, int64_t n, cudaStream_t stream);

// amax of |in| (|dtype|: bool, integers, the floating types) into
// contiguous |out|: output element o is the maximum over the reduced dims
// at the kept dims' position o (row-major over kept_sizes). NaN wins.
struct CudaAmaxLaunch {
  const void* in = nullptr;
  void* out = nullptr;
  int dtype = 0;
  int kept_ndim = 0;
  int64_t kept_sizes[kCudaEwMaxDims] = {};
  int64_t kept_strides[kCudaEwMaxDims] = {};  // input element strides
  int red_ndim = 0;                            // innermost (smallest stride) last
  int64_t red_sizes[kCudaEwMaxDims] = {};
  int64_t red_strides[kCudaEwMaxDims] = {};
  int64_t outputs = 0, count = 0;              // output elements, reduced elements per output
};
cudaError_t cuda_launch_amax(const CudaAmaxLaunch& l, cudaStream_t stream);

}  // namespace aotirt
