// Launchers for the small kernels of the CUDA linear-algebra ops
// (cuda_linalg.cu): batched identities (cholesky_inverse solves against
// one), and lu_unpack's triangle extraction and pivot permutation, which
// need no library. Plain C++ types only, so the .cu file needs none of
// aotirt's headers. Elements are moved as raw bytes of |elem_size| (1, 2, 4
// or 8), so one kernel serves every dtype; |one| is the dtype's 1 as those
// bytes (low bytes first).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace aotirt {

// |batch| n x n identities, densely, at |data|.
cudaError_t cuda_linalg_eye(void* data, size_t elem_size, uint64_t one, int64_t batch, int64_t n,
                            cudaStream_t stream);

// From |batch| row-major m x n matrices |lu|: L (m x k, unit lower, strictly
// lower part of lu) and U (k x n, upper part of lu), both row-major, k =
// min(m, n).
cudaError_t cuda_lu_unpack_data(const void* lu, void* l, void* u, size_t elem_size, uint64_t one, int64_t batch,
                                int64_t m, int64_t n, int64_t k, cudaStream_t stream);

// P (|batch| m x m, row-major, zeroed here) from |batch| rows of k 1-based
// LAPACK pivots: P[perm[i], i] = 1 where perm applies the row swaps in
// order. |perm| is scratch of batch * m int64. A pivot outside [1, m] is
// skipped and stored in |*bad| (which the caller zeroes first).
cudaError_t cuda_lu_unpack_pivots(const int32_t* pivots, int64_t* perm, void* p, size_t elem_size, uint64_t one,
                                  int64_t batch, int64_t m, int64_t k, int32_t* bad, cudaStream_t stream);

}  // namespace aotirt
