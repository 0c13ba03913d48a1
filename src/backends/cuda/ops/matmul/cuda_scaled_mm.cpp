// CUDA _scaled_mm and _scaled_mm.out (c_shim_cuda.h): the float8 matrix
// product with tensor-wise (one-element) or row-wise (scale_a [M, 1],
// scale_b [1, N]) float32 scales, as torch's CUDA op takes them. The op
// layer (ops/scaled_mm_args) checks the arguments and the layout cuBLASLt's
// float8 kernels need (self row-major, mat2 column-major, K and N multiples
// of 16). cuBLASLt multiplies with unit scales into a float32 buffer, and
// one epilogue kernel applies the scales, the bias and (for a float8
// output) scale_result before the single rounding to out_dtype: the same
// arithmetic as cuBLASLt's own scale epilogue, and the same code for both
// scale kinds, which cuBLASLt's scale modes do not cover alike on every
// version.
#include <memory>
#include <utility>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/matmul/cuda_matmul_extra_kernels.h"
#include "backends/cuda/ops/matmul/cuda_matmul_impl.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "ops/indexing_args.h"
#include "ops/op_args.h"
#include "ops/scaled_mm_args.h"
#include "shim/abi/cuda_matmul.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

cudaDataType_t fp8_type(DType d) { return d == DType::kFloat8_e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3; }

Result<ops::ScaledMmArgs> cuda_args(AtenTensorHandle self, AtenTensorHandle mat2, AtenTensorHandle scale_a,
                                    AtenTensorHandle scale_b, AtenTensorHandle* bias, const int32_t* out_dtype) {
  AOTIRT_ASSIGN_OR_RETURN(ops::ScaledMmArgs a,
                          ops::scaled_mm_args(self, mat2, scale_a, scale_b, bias, out_dtype, /*allow_rowwise=*/true));
  AOTIRT_RETURN_IF_ERROR(ops::check_scaled_mm_cuda(a));
  return a;
}

// The product, written into |given| ([m, n] of a.out_dtype, any strides)
// or, when that is null, into a new contiguous tensor.
Result<TensorImpl> compute(const ops::ScaledMmArgs& a, const TensorImpl* scale_result, bool fast_accum,
                           const TensorImpl* given) {
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.self, "self"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.mat2, "mat2"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.scale_a, "scale_a"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.scale_b, "scale_b"));
  TensorImpl out;
  if (given) {
    AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*given, "out"));
    out = *given;
  } else {
    AOTIRT_ASSIGN_OR_RETURN(out, cuda_empty_contiguous(DimVector{a.m, a.n}, a.out_dtype, scope->device()));
  }
  if (a.bias) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.bias, "bias"));
  const bool fp8_out = a.out_dtype == DType::kFloat8_e4m3fn || a.out_dtype == DType::kFloat8_e5m2;
  if (scale_result && fp8_out) {
    AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*scale_result, "scale_result"));
    AOTIRT_ENSURE(scale_result->dtype() == DType::kFloat32 && scale_result->numel() == 1, kInvalidArgument,
                  "'scale_result' must be one float32 element, got {} of {}", ops::shape_str(*scale_result),
                  dtype_name(scale_result->dtype()));
  }
  if (out.numel() == 0) return out;
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl acc, cuda_empty_contiguous(DimVector{a.m, a.n}, DType::kFloat32, device));
  if (a.k == 0) {
    AOTIRT_RETURN_IF_ERROR(cuda_zero(device, stream, acc));
  } else {
    // out[M, N] row-major is D[N, M] column-major = mat2^T @ self^T, where
    // mat2 (K contiguous) is a column-major [K, N] read transposed and self
    // (K contiguous) a column-major [K, M]: cuBLASLt's "TN" float8 form.
    const TensorImpl &s = *a.self, &w = *a.mat2;
    LtTypedGemm g;
    g.a_type = fp8_type(w.dtype());
    g.b_type = fp8_type(s.dtype());
    g.d_type = CUDA_R_32F;
    g.compute = CUBLAS_COMPUTE_32F;
    g.scale_type = CUDA_R_32F;
    g.m = a.n;
    g.n = a.m;
    g.k = a.k;
    g.a = w.data_ptr();
    g.ta = true;
    g.lda = a.n > 1 ? w.strides()[1] : a.k;
    g.b = s.data_ptr();
    g.tb = false;
    g.ldb = a.m > 1 ? s.strides()[0] : a.k;
    g.d = acc.data_ptr();
    g.ldd = a.n;
    g.fast_accum = fast_accum;
    AOTIRT_RETURN_IF_ERROR(cublaslt_typed_gemm(device, stream, g));
  }
  const int64_t sa_stride = a.rowwise ? a.scale_a->strides()[0] : 0;
  const int64_t sb_stride = a.rowwise ? a.scale_b->strides()[1] : 0;
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_scaled_epilogue(
      static_cast<const float*>(acc.data_ptr()), out.data_ptr(), static_cast<int>(out.dtype()), out.strides()[0],
      out.strides()[1], a.m, a.n, static_cast<const float*>(a.scale_a->data_ptr()), sa_stride,
      static_cast<const float*>(a.scale_b->data_ptr()), sb_stride, a.bias ? a.bias->data_ptr() : nullptr,
      a.bias ? static_cast<int>(a.bias->dtype()) : 0, a.bias ? a.bias->strides()[0] : 0,
      scale_result && fp8_out ? static_cast<const float*>(scale_result->data_ptr()) : nullptr, stream));
  return out;
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda__scaled_mm(AtenTensorHandle self, AtenTensorHandle mat2, AtenTensorHandle scale_a,
                                          AtenTensorHandle scale_b, AtenTensorHandle* bias,
                                          AtenTensorHandle* scale_result, int32_t* out_dtype, int32_t use_fast_accum,
                                          AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::ScaledMmArgs a, cuda_args(self, mat2, scale_a, scale_b, bias, out_dtype));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, compute(a, ops::optional_tensor(scale_result), use_fast_accum != 0, nullptr));
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

AOTITorchError aoti_torch_cuda__scaled_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2,
                                              AtenTensorHandle scale_a, AtenTensorHandle scale_b,
                                              AtenTensorHandle* bias, AtenTensorHandle* scale_result,
                                              int32_t* out_dtype, int32_t use_fast_accum) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * o, checked_impl(out, "out"));
    AOTIRT_ASSIGN_OR_RETURN(ops::ScaledMmArgs a, cuda_args(self, mat2, scale_a, scale_b, bias, out_dtype));
    AOTIRT_ENSURE(o->dtype() == a.out_dtype, kInvalidArgument, "'out' is {}, expected {}", dtype_name(o->dtype()),
                  dtype_name(a.out_dtype));
    AOTIRT_RETURN_IF_ERROR(ops::resize_output(o, DimVector{a.m, a.n}, "out"));
    return compute(a, ops::optional_tensor(scale_result), use_fast_accum != 0, o).take_status();
  });
}

}  // extern "C"
