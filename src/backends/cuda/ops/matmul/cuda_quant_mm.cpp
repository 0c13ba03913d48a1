// CUDA _int_mm.out, _weight_int8pack_mm and _weight_int4pack_mm
// (c_shim_cuda.h): int8 x int8 -> int32, floating activations times int8
// weights [N, K] with a scale per output channel, and bfloat16 activations
// times grouped int4 weights. The op layer (ops/linalg_args) checks the arguments.
// _int_mm runs on cuBLASLt's int8 GEMM when the operands are in the form
// it takes, else on a kernel of cuda_matmul_extra.cu that reads them at
// their own strides; _weight_int8pack_mm on another kernel there. _int_mm
// takes the shapes torch's CUDA op takes (more than 16 rows, K and N
// multiples of 8) and refuses the others with torch's messages, so a model
// behaves the same on either runtime.
// _weight_int8pack_mm accumulates each output in float32 and applies the
// scale before the single rounding to the activations' dtype, as torch's
// CUDA kernel does. _weight_int4pack_mm reads torch's CUDA int4 packing
// (_convert_weight_to_int4pack on CUDA; see cuda_matmul_extra_kernels.h):
// in place for few rows, dequantized to bfloat16 and multiplied on
// cuBLASLt for more. aotirt's own aotirt_int4pack_mm_silu_mul (a decode
// step's MLP gate and up product, shim/abi/aotirt_fused.h) runs on the
// few-row kernel with SiLU-multiply in its store, else as the product and a
// SiLU-multiply kernel.
#include <memory>
#include <utility>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/matmul/cuda_fused_decode_kernels.h"
#include "backends/cuda/ops/matmul/cuda_matmul_extra_kernels.h"
#include "backends/cuda/ops/matmul/cuda_matmul_impl.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "ops/fused_args.h"
#include "ops/linalg_args.h"
#include "shim/abi/aotirt_fused.h"
#include "shim/abi/cuda_matmul.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

Status run_int_mm(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) {
  AOTIRT_ASSIGN_OR_RETURN(ops::IntMmArgs a, ops::int_mm_out_args(out, self, mat2));
  AOTIRT_RETURN_IF_ERROR(ops::check_int_mm_cuda_shape(a));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.a, "self"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.b, "mat2"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.out, "out"));
  const TensorImpl &x = *a.a, &y = *a.b;
  // cuBLASLt's int8 kernels take the "TN" form: self [M, K] and mat2
  // [K, N] both K-contiguous (mat2 a transposed weight, the common case),
  // leading dims multiples of 4. out[M, N] row-major is then D[N, M]
  // column-major = mat2^T @ self^T, as for _scaled_mm.
  const bool tn = x.strides()[1] == 1 && y.strides()[0] == 1 && x.strides()[0] >= a.k && y.strides()[1] >= a.k &&
                  x.strides()[0] % 4 == 0 && y.strides()[1] % 4 == 0;
  if (tn) {
    LtTypedGemm g;
    g.a_type = CUDA_R_8I;
    g.b_type = CUDA_R_8I;
    g.d_type = CUDA_R_32I;
    g.compute = CUBLAS_COMPUTE_32I;
    g.scale_type = CUDA_R_32I;
    g.m = a.n;
    g.n = a.m;
    g.k = a.k;
    g.a = y.data_ptr();
    g.ta = true;
    g.lda = y.strides()[1];
    g.b = x.data_ptr();
    g.tb = false;
    g.ldb = x.strides()[0];
    g.d = a.out->data_ptr();
    g.ldd = a.n;
    Status s = cublaslt_typed_gemm(scope->device(), scope->stream(), g);
    // Without cuBLASLt, or without an algorithm for these strides, the
    // kernel below takes the product.
    if (s.ok() || (s.code() != StatusCode::kUnimplemented && s.code() != StatusCode::kUnavailable)) return s;
  }
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_int8_mm(
      static_cast<const int8_t*>(x.data_ptr()), x.strides()[0], x.strides()[1], static_cast<const int8_t*>(y.data_ptr()),
      y.strides()[0], y.strides()[1], static_cast<int32_t*>(a.out->data_ptr()), a.m, a.k, a.n, scope->stream()));
  return Status();
}

Status run_weight_int8(AtenTensorHandle self, AtenTensorHandle mat2, AtenTensorHandle scales, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(ops::WeightOnlyArgs a, ops::weight_int8pack_mm_args(self, mat2, scales));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.a, "self"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.b, "mat2"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.scales, "scales"));
  const DType dtype = a.a->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(DimVector{a.m, a.n}, dtype, scope->device()));
  if (out.numel() > 0) {
    // A single row may carry any stride; k is contiguous (checked).
    const int64_t row_stride = a.m > 1 ? a.a->strides()[0] : a.k;
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_weight_int8_mm(
        a.a->data_ptr(), row_stride, static_cast<const int8_t*>(a.b->data_ptr()), a.scales->data_ptr(),
        a.scales->strides()[0], out.data_ptr(), static_cast<int>(dtype), a.m, a.k, a.n, scope->stream()));
  }
  *ret = new_handle(std::move(out));
  return Status();
}

// Up to this many rows the packed weights are read in place, once per row;
// past it they are dequantized once and multiplied on cuBLASLt.
constexpr int64_t kInt4GemvMaxRows = 16;

// _weight_int4pack_mm of checked arguments, on |scope|'s stream.
Result<TensorImpl> weight_int4(const ops::WeightOnlyArgs& a, CudaOpScope& scope) {
  const int device = scope.device();
  cudaStream_t stream = scope.stream();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(DimVector{a.m, a.n}, DType::kBFloat16, device));
  const int ikt = static_cast<int>(a.inner_k_tiles);
  const int32_t* packed = static_cast<const int32_t*>(a.b->data_ptr());
  if (out.numel() == 0) {
    // Nothing to compute.
  } else if (a.m <= kInt4GemvMaxRows) {
    // A dependent launch on Hopper: the weights' copies start behind the
    // kernel ahead (a decode step's generated kernels let it start early).
    AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
    const bool dependent = cuda_dependent_launches(*dev);
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_int4pack_gemv(a.a->data_ptr(), packed, a.scales->data_ptr(),
                                                          out.data_ptr(), a.m, a.n, a.k, ikt, a.group, stream,
                                                          dependent));
  } else {
    // The weights as bfloat16 [N, K], each value rounded as torch's kernel
    // rounds it before its bfloat16 tensor-core product; the GEMM then
    // accumulates in float32 and rounds once, as that kernel does.
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl w, cuda_empty_contiguous(DimVector{a.n, a.k}, DType::kBFloat16, device));
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cuda_launch_int4pack_dequant(packed, a.scales->data_ptr(), w.data_ptr(), a.n, a.k, ikt, a.group, stream));
    const TensorImpl wt(w.storage(), w.dtype(), DimVector{a.k, a.n}, DimVector{1, a.k}, w.storage_offset());
    AOTIRT_RETURN_IF_ERROR(cuda_addmm_tensors(out, nullptr, *a.a, wt, 0.0, 1.0));
  }
  return out;
}

Status run_weight_int4(AtenTensorHandle self, AtenTensorHandle mat2, int64_t group, AtenTensorHandle sz,
                       AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(ops::WeightOnlyArgs a, ops::weight_int4pack_mm_cuda_args(self, mat2, group, sz));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.a, "self"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.b, "mat2"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.scales, "qScaleAndZeros"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, weight_int4(a, *scope));
  *ret = new_handle(std::move(out));
  return Status();
}

Status run_int4_silu_mul(AtenTensorHandle x, AtenTensorHandle qdata, int64_t group, AtenTensorHandle sz,
                         AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(ops::WeightOnlyArgs a, ops::int4pack_mm_silu_mul_args(x, qdata, group, sz, /*cuda=*/true));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.a, "x"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.b, "qdata"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.scales, "scale_and_zero"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  const int ikt = static_cast<int>(a.inner_k_tiles);
  const int32_t* packed = static_cast<const int32_t*>(a.b->data_ptr());
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(DimVector{a.m, a.n / 2}, DType::kBFloat16, device));
  if (out.numel() > 0 &&
      cuda_int4pack_silu_mul_fits(a.a->data_ptr(), packed, a.scales->data_ptr(), a.m, a.n, a.k, ikt, a.group)) {
    AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_int4pack_gemv_silu_mul(a.a->data_ptr(), packed, a.scales->data_ptr(),
                                                                   out.data_ptr(), a.m, a.n, a.k, ikt, a.group,
                                                                   stream, cuda_dependent_launches(*dev)));
  } else if (out.numel() > 0) {
    // More rows, or a shape the pair kernel does not take: the product,
    // then SiLU-multiply of its halves.
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl prod, weight_int4(a, *scope));
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_fused_prologue_launch(CudaFusedPrologue::kSiluMul,
                                                           static_cast<int>(DType::kBFloat16), prod.data_ptr(),
                                                           nullptr, 0.f, out.data_ptr(), a.m, a.n / 2, stream));
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda__int_mm_out(AtenTensorHandle out, AtenTensorHandle self,
                                           AtenTensorHandle mat2) noexcept {
  return shim_call(__func__, [&]() -> Status { return run_int_mm(out, self, mat2); });
}

AOTITorchError aoti_torch_cuda__weight_int8pack_mm(AtenTensorHandle self, AtenTensorHandle mat2,
                                                   AtenTensorHandle scales, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status { return run_weight_int8(self, mat2, scales, ret0); });
}

AOTITorchError aoti_torch_cuda__weight_int4pack_mm(AtenTensorHandle self, AtenTensorHandle mat2, int64_t qGroupSize,
                                                   AtenTensorHandle qScaleAndZeros, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status { return run_weight_int4(self, mat2, qGroupSize, qScaleAndZeros, ret0); });
}

AOTITorchError aoti_torch_cuda_aotirt_int4pack_mm_silu_mul(AtenTensorHandle x, AtenTensorHandle qdata,
                                                           int64_t group_size, AtenTensorHandle scale_and_zero,
                                                           AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status { return run_int4_silu_mul(x, qdata, group_size, scale_and_zero, ret0); });
}

}  // extern "C"
