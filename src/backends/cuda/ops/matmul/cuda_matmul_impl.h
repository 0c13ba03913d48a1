// The implementations behind the CUDA matmul shims, as the dispatch
// (cuda_matmul.cpp) sees them: aotirt's float32 kernels
// (cuda_matmul_f32x3.cpp) and bfloat16 kernels (cuda_matmul_bf16.cpp), which
// take a GEMM or answer false with nothing queued, and cuBLASLt
// (cuda_matmul_cublaslt.cpp), which takes the rest; plus what the first two
// share: a GEMM in their row-major terms and its replay key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "aotirt/status.h"
#include "backends/cuda/launch/cuda_op_replay.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/runtime/cuda_device.h"

namespace aotirt {

using LtGemm = CudaGemm;

// Plans kept per device and cache; the least recently used go first.
constexpr size_t kMatmulMaxPlans = 4096;

// cuBLASLt: every GEMM of a supported dtype (kUnimplemented "no algorithm"
// when its heuristic has none for the strides or alignment).
Status cublaslt_check_dtype(DType dtype);
Status cublaslt_gemm(int device, cudaStream_t stream, const CudaGemm& g);
// Makes the device's cuBLASLt handle (loading the library) ahead of a run.
Status cublaslt_prewarm(int device);

// aotirt's float32 kernels; with |dry_run| nothing is queued and the answer
// says whether a kernel would take |g|.
Result<bool> f32x3_gemm(int device, cudaStream_t stream, const CudaGemm& g, bool dry_run);
// False under AOTIRT_CUDA_GEMM=cublaslt.
bool f32x3_enabled();

// aotirt's bfloat16 kernels, as f32x3_gemm.
Result<bool> bf16_gemm(int device, cudaStream_t stream, const CudaGemm& g, bool dry_run);
// Whether bfloat16 GEMMs of more than eight rows go to cuBLASLt.
bool bf16_on_cublaslt();
// Whether |g| should go to cuBLASLt ahead of aotirt's kernels: a single
// bfloat16 product of kCudaBf16VendorRows rows or more under
// AOTIRT_CUDA_GEMM=auto. The caller still falls back to aotirt's kernels
// when cuBLASLt cannot be opened or has no algorithm for |g|.
bool bf16_prefers_cublaslt(const CudaGemm& g);

// out = beta * self + alpha * (a @ b) for 2-D CUDA tensors, as
// aoti_torch_cuda_addmm_out (self null: out = a @ b, as mm_out, beta and
// alpha unused), with its
// argument checks; for the ops that reduce to one GEMM
// (cuda_matmul_extra.cpp).
Status cuda_addmm_tensors(const TensorImpl& out, const TensorImpl* self, const TensorImpl& a, const TensorImpl& b,
                          double beta, double alpha);

// A GEMM whose operands and output differ in type (float8 or int8 inputs),
// in cuBLASLt's column-major terms: D[m, n] (ld ldd) = op(A) @ op(B), with
// unit scales, no bias and beta 0 (callers apply scales in their own
// epilogue). Descriptors are made per call: these products are rare
// enough in a model that a plan cache is not worth its memory.
// kUnimplemented "no algorithm" when cuBLASLt has none for the layout.
struct LtTypedGemm {
  cudaDataType_t a_type = CUDA_R_8F_E4M3, b_type = CUDA_R_8F_E4M3, d_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale_type = CUDA_R_32F;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  bool ta = false;
  int64_t lda = 1;
  const void* b = nullptr;
  bool tb = false;
  int64_t ldb = 1;
  void* d = nullptr;
  int64_t ldd = 1;
  bool fast_accum = false;  // float8 only
};
Status cublaslt_typed_gemm(int device, cudaStream_t stream, const LtTypedGemm& g);

inline bool aligned16(const void* p) { return cuda_pointer_alignment(p) >= 16; }

// In cuBLASLt's column-major terms D = op(A) op(B) is the row-major
// D^T[n, m] = op(B)^T[n, k] @ op(A)^T[k, m] that aotirt's kernels take when
// op(B)^T is k-contiguous (tb false); op(A)^T is then their B, column-major
// (k contiguous) when ta, row-major when not. The bias runs along m: one
// row of D^T, repeated. Fills the fields CudaF32x3Problem and
// CudaBf16Problem share.
template <class P, class T>
P own_problem(const LtGemm& g) {
  P p;
  p.m = static_cast<int>(g.n);
  p.n = static_cast<int>(g.m);
  p.k = static_cast<int>(g.k);
  p.a = static_cast<const T*>(g.b);
  p.lda = g.ldb;
  p.b = static_cast<const T*>(g.a);
  p.ldb = g.lda;
  p.b_row_major = !g.ta;
  p.d = static_cast<T*>(g.d);
  p.ldd = g.ldd;
  p.alpha = static_cast<float>(g.alpha);
  if (g.bias) {
    p.c = static_cast<const T*>(g.bias);
    p.ldc = 0;
    p.beta = 1.f;
  } else if (g.beta != 0.0) {
    p.c = p.d;
    p.ldc = p.ldd;
    p.beta = static_cast<float>(g.beta);
  }
  return p;
}

// A launch of aotirt's GEMM kernels for replays: the operands, the scratch
// memory (|extra|) and the scalars.
template <class P>
CudaReplayKey own_replay_key(const P& p, const void* extra) {
  uint32_t alpha_bits = 0, beta_bits = 0;
  std::memcpy(&alpha_bits, &p.alpha, sizeof(alpha_bits));
  std::memcpy(&beta_bits, &p.beta, sizeof(beta_bits));
  return {reinterpret_cast<uintptr_t>(p.a), reinterpret_cast<uintptr_t>(p.b), reinterpret_cast<uintptr_t>(p.c),
          reinterpret_cast<uintptr_t>(p.d), reinterpret_cast<uintptr_t>(extra),
          (static_cast<uint64_t>(alpha_bits) << 32) | beta_bits};
}

inline bool fits_int(const LtGemm& g) {
  return g.m <= INT32_MAX && g.n <= INT32_MAX && g.k <= INT32_MAX && g.batch <= INT32_MAX;
}

}  // namespace aotirt
