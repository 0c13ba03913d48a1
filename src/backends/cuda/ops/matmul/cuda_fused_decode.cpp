// CUDA implementations of aotirt's fused decode-step shims
// (shim/abi/aotirt_fused.h). One bfloat16 row, as a decode step has, runs
// as one kernel: the few-row product with the norm in its loads and the
// residual add or SiLU-multiply in its store (cuda_fused_decode.cu).
// Anything else (more rows, other dtypes, strides, rows too long for
// shared memory) runs the norm, the matmul dispatch and the residual add
// or SiLU-multiply one after another, each rounded where transformers'
// modules round.
#include <cuda_runtime_api.h>

#include <memory>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/matmul/cuda_fused_decode_kernels.h"
#include "backends/cuda/ops/matmul/cuda_matmul_impl.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "device/device.h"
#include "ops/fused_args.h"
#include "shim/abi/aotirt_fused.h"
#include "shim/common/shim_util.h"

using namespace aotirt;

namespace {

CudaFusedPrologue prologue_of(ops::FusedPrologue p) {
  return p == ops::FusedPrologue::kRmsNorm ? CudaFusedPrologue::kRmsNorm : CudaFusedPrologue::kNone;
}

bool dense_1d(const TensorImpl* t) { return t == nullptr || t->is_contiguous(); }

Result<TensorImpl> contiguous_on(const TensorImpl& t, int device) {
  if (t.is_contiguous()) return t;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, cuda_empty_contiguous(t.sizes(), t.dtype(), device));
  AOTIRT_RETURN_IF_ERROR(copy_tensor(c, t, /*non_blocking=*/true));
  return c;
}

// A contiguous tensor's storage as [rows, cols].
TensorImpl matrix(const TensorImpl& t, int64_t rows, int64_t cols) {
  return TensorImpl(t.storage(), t.dtype(), DimVector{rows, cols}, DimVector{cols, 1}, t.storage_offset());
}

Result<TensorImpl> fused_linear(const ops::FusedLinearArgs& a) {
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.x, "x"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.weight, "weight"));
  if (a.norm_weight) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.norm_weight, "norm_weight"));
  if (a.bias) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.bias, "bias"));
  if (a.residual) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.residual, "residual"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  const DType dtype = a.x->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(a.out_sizes, dtype, device));
  if (out.numel() == 0) return out;
  const CudaFusedPrologue pro = prologue_of(a.prologue);

  if (dtype == DType::kBFloat16 && a.rows == 1 && a.x->is_contiguous() && a.weight->strides()[1] == 1 &&
      dense_1d(a.norm_weight) && dense_1d(a.bias) && dense_1d(a.residual) && a.k <= INT32_MAX &&
      a.n <= INT32_MAX) {
    CudaFusedRow p;
    p.silu_mul = a.silu_mul;
    p.n = static_cast<int>(a.n);
    p.k = static_cast<int>(a.k);
    p.x = a.x->data_ptr();
    p.norm = a.norm_weight ? a.norm_weight->data_ptr() : nullptr;
    p.eps = static_cast<float>(a.eps);
    p.w = a.weight->data_ptr();
    p.ldw = a.weight->strides()[0];
    p.bias = a.bias ? a.bias->data_ptr() : nullptr;
    p.residual = a.residual ? a.residual->data_ptr() : nullptr;
    p.out = out.data_ptr();
    // The warp form for a product without a prologue, the shared form for
    // one with (CudaFusedTest.Timing, bench/notes.md): each of the warp
    // form's warps making the whole norm again cost more than the shared
    // form's barrier. SiLU-multiply takes the shared form.
    CudaFusedRowKernel form = pro == CudaFusedPrologue::kNone && !a.silu_mul ? CudaFusedRowKernel::kWarp
                                                                             : CudaFusedRowKernel::kShared;
    if (!cuda_fused_row_supported(p, pro, form)) form = CudaFusedRowKernel::kShared;
    if (cuda_fused_row_supported(p, pro, form)) {
      AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
      const bool dependent = cuda_dependent_launches(*dev);
      AOTIRT_CUDA_RETURN_IF_ERROR(cuda_fused_row_launch(p, pro, stream, dependent, form));
      return out;
    }
  }

  // The general path: prologue, product, residual.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, contiguous_on(*a.x, device));
  TensorImpl in = matrix(x, a.rows, a.k);
  if (pro != CudaFusedPrologue::kNone) {
    TensorImpl norm;
    if (a.norm_weight) {
      AOTIRT_ASSIGN_OR_RETURN(norm, contiguous_on(*a.norm_weight, device));
    }
    AOTIRT_ASSIGN_OR_RETURN(in, cuda_empty_contiguous(DimVector{a.rows, a.k}, dtype, device));
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_fused_prologue_launch(pro, static_cast<int>(dtype), x.data_ptr(),
                                                           a.norm_weight ? norm.data_ptr() : nullptr,
                                                           static_cast<float>(a.eps), in.data_ptr(), a.rows, a.k,
                                                           stream));
  }
  const TensorImpl& w = *a.weight;
  const TensorImpl wt(w.storage(), dtype, DimVector{a.k, a.n}, DimVector{w.strides()[1], w.strides()[0]},
                      w.storage_offset());
  // The product goes to out itself unless SiLU-multiply halves it.
  TensorImpl prod = out;
  if (a.silu_mul) {
    AOTIRT_ASSIGN_OR_RETURN(prod, cuda_empty_contiguous(DimVector{a.rows, a.n}, dtype, device));
  }
  AOTIRT_RETURN_IF_ERROR(cuda_addmm_tensors(matrix(prod, a.rows, a.n), a.bias, in, wt, 1.0, 1.0));
  if (a.silu_mul) {
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_fused_prologue_launch(CudaFusedPrologue::kSiluMul, static_cast<int>(dtype),
                                                           prod.data_ptr(), nullptr, 0.f, out.data_ptr(), a.rows,
                                                           a.n / 2, stream));
  }
  if (a.residual) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl res, contiguous_on(*a.residual, device));
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cuda_fused_residual_launch(static_cast<int>(dtype), res.data_ptr(), out.data_ptr(), out.numel(), stream));
  }
  return out;
}

Status give_out(Result<TensorImpl> r, AtenTensorHandle* ret) {
  AOTIRT_RETURN_IF_ERROR(r.status());
  *ret = new_handle(std::move(r).value());
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cuda_aotirt_rms_norm_linear(AtenTensorHandle x, AtenTensorHandle norm_weight, double eps,
                                                      AtenTensorHandle weight, AtenTensorHandle* bias,
                                                      AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::FusedLinearArgs a, ops::rms_norm_linear_args(x, norm_weight, eps, weight, bias));
    return give_out(fused_linear(a), ret0);
  });
}

AOTITorchError aoti_torch_cuda_aotirt_linear_add(AtenTensorHandle x, AtenTensorHandle weight,
                                                 AtenTensorHandle residual, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::FusedLinearArgs a, ops::linear_add_args(x, weight, residual));
    return give_out(fused_linear(a), ret0);
  });
}

AOTITorchError aoti_torch_cuda_aotirt_rms_norm_linear_silu_mul(AtenTensorHandle x, AtenTensorHandle norm_weight,
                                                               double eps, AtenTensorHandle weight,
                                                               AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::FusedLinearArgs a, ops::rms_norm_linear_silu_mul_args(x, norm_weight, eps, weight));
    return give_out(fused_linear(a), ret0);
  });
}

}  // extern "C"
