// Shared plumbing for the CPU fallback ops: argument checks whose messages
// name the offending tensors and shapes (the shim wrapper prefixes the op's
// name), dtype staging (bfloat16/float16 are computed in float32), and thin
// wrappers over OpenBLAS GEMM that accept arbitrary strided matrices.
#pragma once

#include <cstdint>
#include <string>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace cpu_ops {

// "[2, 3]" for |t|'s sizes.
std::string shape_str(const TensorImpl& t);
// "sizes [2, 3] strides [3, 1]".
std::string layout_str(const TensorImpl& t);

// Resolves a required handle; INVALID_ARGUMENT naming |what| when null.
Result<const TensorImpl*> require_tensor(AtenTensorHandle h, const char* what);
// Resolves an optional tensor argument (AtenTensorHandle* that may be null or
// point to null); returns null when absent.
const TensorImpl* optional_tensor(AtenTensorHandle* h);

// Fails unless |t| lives in host memory.
Status check_cpu(const TensorImpl& t, const char* what);
// Fails unless |t| has |dim| dimensions.
Status check_dim(const TensorImpl& t, int64_t dim, const char* what);
// Fails unless |a| and |b| share a dtype.
Status check_same_dtype(const TensorImpl& a, const char* a_name, const TensorImpl& b, const char* b_name);
// Fails (UNIMPLEMENTED) unless |dtype| is float32, float64, bfloat16 or float16.
Status check_float_dtype(DType dtype, const char* what);

// The dtype arithmetic runs in: float64 stays, everything else uses float32.
inline DType compute_dtype(DType dtype) {
  return dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
}

// Returns |t| itself when it is already contiguous and of |dtype|, else a new
// contiguous host tensor holding |t|'s values converted to |dtype|.
Result<TensorImpl> contiguous_as(const TensorImpl& t, DType dtype);

// A view of |t| with |sizes| and contiguous strides; |t| must be contiguous
// with the same element count.
TensorImpl reshape_contiguous(const TensorImpl& t, const DimVector& sizes);

// True when |t|'s elements occupy exactly numel() consecutive slots in some
// order, as PyTorch's is_non_overlapping_and_dense.
bool is_non_overlapping_and_dense(const TensorImpl& t);

// Strides of a fresh dense tensor laid out like |t|, as torch.empty_like:
// |t|'s own strides (size-1 dims included) when it is dense, else dense
// strides that keep the order of |t|'s strides.
DimVector empty_like_strides(const TensorImpl& t);

// The strides PyTorch gives a channels-last tensor of |sizes| (rank 3 to 5:
// channels innermost, then the spatial dims, batch outermost). Unlike
// contiguous strides they multiply plain sizes, so an empty dim zeroes the
// strides outside it, as in PyTorch.
DimVector channels_last_strides(const DimVector& sizes);

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
