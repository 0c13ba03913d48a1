// The fixture of aotirt's bfloat16 GEMM cases, shared by their tests
// (cuda_gemm_bf16_test.cpp) and their timing case
// (bench/cuda/gemm_bench.cpp).
#pragma once

#include "cuda_test_util.h"

namespace aotirt {
namespace cuda_test {

// The bfloat16 GEMM suite: skipped without a GPU.
class CudaBf16Test : public CudaTest {};

}  // namespace cuda_test
}  // namespace aotirt
