// Few-row GEMMs on the CPU that read B (the weights, at inference) in place,
// float32 or bfloat16, for the decode-sized products of language models.
//
// Why not BLAS: OpenBLAS has no GEMM that reads bfloat16 operands on most
// CPUs, so bfloat16 products used to convert both operands, the whole weight
// matrix included, to float32 on every call: several times the weight's bytes
// moved for a product whose cost is reading the weight once. And for float32
// with one to a few rows, sgemm packs all of B before it multiplies, which
// again moves B twice. These kernels stream B once, widening bfloat16 to
// float32 in registers, and sum in float32.
#pragma once

#include <cstdint>

namespace aotirt {
namespace cpu_ops {

// The most rows of A the few-row kernels take: beyond this the product is
// compute-bound and BLAS's blocking wins.
constexpr int64_t kGemmRowsMax = 8;

// How B [K, N] is laid out in memory, by the stride that is 1.
enum class RowsLayout {
  kKContiguous,  // B[k][n] at b[n * ld + k]: an nn.Linear weight [N, K] used transposed
  kNContiguous,  // B[k][n] at b[k * ld + n]: a row-major [K, N] matrix
};

// What the few-row kernels are given. A is float32, contiguous [M, K]
// (the caller widens it: M * K values). B holds float32 (b_bf16 false) or
// bfloat16 bits (b_bf16 true). C is float32 with strides (c_rs, c_cs).
struct RowsProblem {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  const void* b = nullptr;
  bool b_bf16 = false;
  RowsLayout layout = RowsLayout::kKContiguous;
  int64_t ldb = 0;
  float* c = nullptr;
  int64_t c_rs = 0, c_cs = 1;
  float alpha = 1.0f;
  float beta = 0.0f;  // 0: C is written without being read
};

// C = alpha * A @ B + beta * C, columns split over OpenMP threads. M must be
// 1..kGemmRowsMax. Picks AVX-512, AVX2 or portable code by the running CPU.
void gemm_rows(const RowsProblem& p);

}  // namespace cpu_ops
}  // namespace aotirt
