// Kernels of the CUDA linear-algebra ops that need no library: batched
// identities, and lu_unpack's triangles and permutation matrices.
// Grid-stride loops over 64-bit indices, one element per step, so every
// size fits one launch.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "backends/cuda/ops/linalg/cuda_linalg_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535LL * 8;

unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks)));
}

__device__ __forceinline__ int64_t first_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_step() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

template <class E>
__global__ void eye_kernel(E* data, E one, int64_t total, int64_t n) {
  for (int64_t i = first_index(); i < total; i += grid_step()) {
    const int64_t within = i % (n * n);
    data[i] = within / n == within % n ? one : E(0);
  }
}

template <class E>
__global__ void lower_kernel(const E* lu, E* l, E one, int64_t total, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = first_index(); i < total; i += grid_step()) {
    const int64_t col = i % k, row = (i / k) % m, b = i / (k * m);
    l[i] = col < row ? lu[(b * m + row) * n + col] : (col == row ? one : E(0));
  }
}

template <class E>
__global__ void upper_kernel(const E* lu, E* u, int64_t total, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = first_index(); i < total; i += grid_step()) {
    const int64_t col = i % n, row = (i / n) % k, b = i / (n * k);
    u[i] = col >= row ? lu[(b * m + row) * n + col] : E(0);
  }
}

// One thread per batch: the row swaps are sequential.
__global__ void permutation_kernel(const int32_t* pivots, int64_t* perm, int64_t batch, int64_t m, int64_t k,
                                   int32_t* bad) {
  for (int64_t b = first_index(); b < batch; b += grid_step()) {
    int64_t* p = perm + b * m;
    for (int64_t i = 0; i < m; ++i) p[i] = i;
    for (int64_t i = 0; i < k; ++i) {
      const int32_t t = pivots[b * k + i];
      if (t < 1 || t > m) {
        atomicExch(bad, t == 0 ? -1 : t);  // nonzero marks a refusal; 0 itself is shown as -1
        continue;
      }
      const int64_t x = p[i];
      p[i] = p[t - 1];
      p[t - 1] = x;
    }
  }
}

// Row i of L @ U is row perm[i] of A, so P[perm[i], i] = 1.
template <class E>
__global__ void scatter_kernel(const int64_t* perm, E* p, E one, int64_t total, int64_t m) {
  for (int64_t i = first_index(); i < total; i += grid_step()) {
    const int64_t b = i / m, col = i % m;
    p[(b * m + perm[i]) * m + col] = one;
  }
}

template <class E>
E narrow(uint64_t bits) {
  return static_cast<E>(bits);
}

template <class F>
cudaError_t by_size(size_t elem_size, F&& f) {
  switch (elem_size) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    case 8: f(uint64_t{}); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t cuda_linalg_eye(void* data, size_t elem_size, uint64_t one, int64_t batch, int64_t n,
                            cudaStream_t stream) {
  const int64_t total = batch * n * n;
  if (total == 0) return cudaSuccess;
  return by_size(elem_size, [&](auto e) {
    using E = decltype(e);
    eye_kernel<E><<<blocks_for(total), kThreads, 0, stream>>>(static_cast<E*>(data), narrow<E>(one), total, n);
  });
}

cudaError_t cuda_lu_unpack_data(const void* lu, void* l, void* u, size_t elem_size, uint64_t one, int64_t batch,
                                int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  const int64_t l_total = batch * m * k, u_total = batch * k * n;
  if (l_total == 0 && u_total == 0) return cudaSuccess;
  return by_size(elem_size, [&](auto e) {
    using E = decltype(e);
    const E* src = static_cast<const E*>(lu);
    if (l_total > 0)
      lower_kernel<E><<<blocks_for(l_total), kThreads, 0, stream>>>(src, static_cast<E*>(l), narrow<E>(one),
                                                                     l_total, m, n, k);
    if (u_total > 0)
      upper_kernel<E><<<blocks_for(u_total), kThreads, 0, stream>>>(src, static_cast<E*>(u), u_total, m, n, k);
  });
}

cudaError_t cuda_lu_unpack_pivots(const int32_t* pivots, int64_t* perm, void* p, size_t elem_size, uint64_t one,
                                  int64_t batch, int64_t m, int64_t k, int32_t* bad, cudaStream_t stream) {
  const int64_t total = batch * m;
  if (total == 0) return cudaSuccess;
  cudaError_t err = cudaMemsetAsync(p, 0, static_cast<size_t>(total * m) * elem_size, stream);
  if (err != cudaSuccess) return err;
  permutation_kernel<<<blocks_for(batch), kThreads, 0, stream>>>(pivots, perm, batch, m, k, bad);
  err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  return by_size(elem_size, [&](auto e) {
    using E = decltype(e);
    scatter_kernel<E><<<blocks_for(total), kThreads, 0, stream>>>(perm, static_cast<E*>(p), narrow<E>(one), total, m);
  });
}

}  // namespace aotirt
