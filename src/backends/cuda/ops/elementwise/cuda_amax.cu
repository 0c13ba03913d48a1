// amax on CUDA: the maximum over the reduced dims for each output element,
// NaN winning as in torch. Short reductions run one output per thread
// (neighbouring threads on neighbouring outputs); long ones one output per
// block, the threads striding over the reduced elements (innermost dim
// fastest, so a warp reads consecutive memory) and combining in shared
// memory. max is exact in any order, so the split does not change results.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/ops/elementwise/cuda_elementwise_kernels.h"
#include "backends/cuda/ops/elementwise/cuda_elementwise_types.cuh"

namespace aotirt {
namespace {

using namespace cuda_ew;

constexpr int kThreads = 256;
// Reductions at least this long take a block per output.
constexpr int64_t kBlockReduction = 256;

template <class C>
__device__ __forceinline__ C max_of(C acc, C v) {
  if constexpr (std::is_floating_point_v<C>) {
    if (acc != acc) return acc;
    if (v != v) return v;
    return v > acc ? v : acc;
  } else if constexpr (std::is_same_v<C, bool>) {
    return acc || v;
  } else {
    return v > acc ? v : acc;
  }
}

// Input element offset of output |o|'s first reduced element.
__device__ __forceinline__ int64_t kept_offset(int64_t o, const CudaAmaxLaunch& l) {
  int64_t off = 0;
  for (int d = l.kept_ndim - 1; d >= 0; --d) {
    off += (o % l.kept_sizes[d]) * l.kept_strides[d];
    o /= l.kept_sizes[d];
  }
  return off;
}

// Input element offset of reduced element |r| (row-major over red_sizes).
__device__ __forceinline__ int64_t reduced_offset(int64_t r, const CudaAmaxLaunch& l) {
  int64_t off = 0;
  for (int d = l.red_ndim - 1; d >= 0; --d) {
    off += (r % l.red_sizes[d]) * l.red_strides[d];
    r /= l.red_sizes[d];
  }
  return off;
}

template <class T>
__global__ void __launch_bounds__(kThreads) amax_per_thread(const __grid_constant__ CudaAmaxLaunch l) {
  using C = typename T::C;
  const char* in = static_cast<const char*>(l.in);
  constexpr int64_t kSize = sizeof(typename T::S);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < l.outputs; o += step) {
    const int64_t base = kept_offset(o, l);
    C acc = T::load(in + base * kSize);
    for (int64_t r = 1; r < l.count; ++r) acc = max_of(acc, T::load(in + (base + reduced_offset(r, l)) * kSize));
    T::store(static_cast<char*>(l.out) + o * kSize, acc);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) amax_per_block(const __grid_constant__ CudaAmaxLaunch l) {
  using C = typename T::C;
  __shared__ C partial[kThreads];
  const char* in = static_cast<const char*>(l.in);
  constexpr int64_t kSize = sizeof(typename T::S);
  const int tid = threadIdx.x;
  for (int64_t o = blockIdx.x; o < l.outputs; o += gridDim.x) {
    const int64_t base = kept_offset(o, l);
    // count >= kBlockReduction >= blockDim.x: every thread sees an element.
    C acc = T::load(in + (base + reduced_offset(tid, l)) * kSize);
    for (int64_t r = tid + static_cast<int64_t>(blockDim.x); r < l.count; r += blockDim.x)
      acc = max_of(acc, T::load(in + (base + reduced_offset(r, l)) * kSize));
    partial[tid] = acc;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (tid < half) partial[tid] = max_of(partial[tid], partial[tid + half]);
      __syncthreads();
    }
    if (tid == 0) T::store(static_cast<char*>(l.out) + o * kSize, partial[0]);
    // The next output reuses |partial|.
    __syncthreads();
  }
}

template <class T>
cudaError_t launch(const CudaAmaxLaunch& l, cudaStream_t stream) {
  if (l.count >= kBlockReduction) {
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(l.outputs, int64_t{1} << 20));
    amax_per_block<T><<<blocks, kThreads, 0, stream>>>(l);
  } else {
    const int64_t need = (l.outputs + kThreads - 1) / kThreads;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(need, int64_t{1} << 20));
    amax_per_thread<T><<<blocks, kThreads, 0, stream>>>(l);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t cuda_launch_amax(const CudaAmaxLaunch& l, cudaStream_t stream) {
  if (l.outputs <= 0 || l.count <= 0) return cudaSuccess;
  if (l.kept_ndim > kCudaEwMaxDims || l.red_ndim > kCudaEwMaxDims) return cudaErrorInvalidValue;
  cudaError_t err = cudaErrorInvalidValue;
  dispatch(l.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (!kIsComplex<T>) err = launch<T>(l, stream);
  });
  return err;
}

}  // namespace aotirt
