// Shared plumbing for the CPU fallback ops: the host-memory check, dtype
// staging (bfloat16/float16 are computed in float32), and thin wrappers over
// OpenBLAS GEMM that accept arbitrary strided matrices. Argument and layout
// rules common to every backend are the op layer's (src/ops).
#pragma once

#include <omp.h>

#include <cstdint>
#include <string>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "ops/layout.h"
#include "ops/op_args.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace cpu_ops {

// The op layer's checks and layout rules, used unqualified by the CPU ops.
using ops::check_dim;
using ops::check_float_dtype;
using ops::check_same_dtype;
using ops::channels_last_strides;
using ops::empty_like_strides;
using ops::is_channels_last;
using ops::is_non_overlapping_and_dense;
using ops::layout_str;
using ops::optional_tensor;
using ops::require_tensor;
using ops::reshape_contiguous;
using ops::shape_str;

// Fails unless |t| lives in host memory.
Status check_cpu(const TensorImpl& t, const char* what);

// fn(begin, end) over [0, items) cut into |threads| even ranges, one an
// OpenMP thread (called inline for one thread): the split the few-row
// kernels use, whose work per item is even.
template <class Fn>
void parallel_ranges(int64_t items, int threads, Fn&& fn) {
  if (threads <= 1) {
    fn(int64_t{0}, items);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    fn(items * t / nt, items * (t + 1) / nt);
  }
}

// The dtype arithmetic runs in: float64 stays, everything else uses float32.
inline DType compute_dtype(DType dtype) {
  return dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
}

// Returns |t| itself when it is already contiguous and of |dtype|, else a new
// contiguous host tensor holding |t|'s values converted to |dtype|.
Result<TensorImpl> contiguous_as(const TensorImpl& t, DType dtype);





// Fails when |v| does not fit BLAS's 32-bit integer arguments.
Status check_blas_int(int64_t v, const char* what);

// How one strided matrix is handed to BLAS in row-major terms.
struct BlasMatrix {
  bool transposed = false;  // the memory holds the transpose, row-major
  int64_t ld = 1;
};

// Describes a [rows, cols] matrix with strides (row_stride, col_stride) as a
// BLAS operand, or returns false when BLAS cannot read it in place (for
// example broadcast or overlapping strides) and a copy is needed.
bool blas_matrix(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, BlasMatrix* out);

// Loads OpenBLAS on first use (dlopen, like SLEEF): only CPU models need it,
// so a CUDA deployment can ship without it. UNAVAILABLE, naming the library
// and AOTIRT_BLAS_LIBRARY, when it cannot be loaded. Every op that calls
// gemm() calls this first.
Status ensure_blas();

// Row-major C[M,N] = alpha * op(A)[M,K] @ op(B)[K,N] + beta * C, through
// cblas_sgemm/dgemm (ensure_blas() must have succeeded). Handles empty sizes (K == 0 scales C by beta, writing
// zeros when beta is 0, so garbage in C never leaks through). When
// |c_col_major| is true, C is stored column-major with leading dimension ldc.
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc, bool c_col_major = false);

}  // namespace cpu_ops
}  // namespace aotirt
