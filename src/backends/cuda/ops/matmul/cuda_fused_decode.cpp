// CUDA implementations of aotirt's fused decode-step shims
// (shim/abi/aotirt_fused.h). One bfloat16 row, as a decode step has, runs
// as one kernel: the few-row product with the norm in its loads and the
// residual add or SiLU-multiply in its store (cuda_fused_decode.cu).
// Anything else (more rows, other dtypes, strides, rows too long for
// shared memory) runs the norm, the matmul dispatch and the residual add
// or SiLU-multiply one after another, each rounded where transformers'
// modules round.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "backends/cuda/launch/cuda_l2_prefetch.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/matmul/cuda_fused_decode_kernels.h"
#include "backends/cuda/ops/matmul/cuda_matmul_impl.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_options.h"
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

// The one-row kernel's prefetch of the next products' weights (the q/k/v
// product's hint, aotirt_rms_norm_linear_prefetch): all of next_weight,
// then the same leading part of each half of next_pair, within a share of
// L2, so that the memory fetches them while the attention runs and the o
// and gate/up products read that much from L2. Tensors that are not
// contiguous, or not aligned for the kernel's pieces, are left out.
void add_prefetch(CudaFusedRow* p, const ops::FusedLinearArgs& a, const CudaDevice& dev) {
  if (!a.next_weight || !a.next_pair || !cuda_l2_prefetch_enabled()) return;
  const CudaOptions& opt = cuda_options();
  int64_t left = static_cast<int64_t>(dev.properties().l2_cache_bytes) * opt.l2_prefetch_share / 100;
  p->prefetch_mode = static_cast<CudaL2Prefetch>(opt.l2_prefetch_mode);
  int r = 0;
  auto add = [&](const void* at, int64_t bytes) {
    bytes = std::min(bytes, left) / 16 * 16;
    if (bytes <= 0 || reinterpret_cast<uintptr_t>(at) % 16 != 0 || r == kCudaFusedPrefetchRanges) return;
    p->prefetch[r] = at;
    p->prefetch_bytes[r++] = bytes;
    left -= bytes;
  };
  const TensorImpl& w = *a.next_weight;
  if (w.is_contiguous()) add(w.data_ptr(), w.nbytes());
  const TensorImpl& pair = *a.next_pair;
  if (pair.is_contiguous()) {
    const int64_t half = pair.nbytes() / 2, part = std::min(half, left / 2);
    add(pair.data_ptr(), part);
    add(static_cast<const char*>(pair.data_ptr()) + half, part);
  }
}

Result<TensorImpl> fused_linear(const ops::FusedLinearArgs& a) {
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.x, "x"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.weight, "weight"));
  if (a.norm_weight) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.norm_weight, "norm_weight"));
  if (a.bias) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.bias, "bias"));
  if (a.residual) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.residual, "residual"));
  if (a.next_weight) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.next_weight, "next_weight"));
  if (a.next_pair) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.next_pair, "next_pair"));
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
      add_prefetch(&p, a, *dev);
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

AOTITorchError aoti_torch_cuda_aotirt_rms_norm_linear_prefetch(AtenTensorHandle x, AtenTensorHandle norm_weight,
                                                               double eps, AtenTensorHandle weight,
                                                               AtenTensorHandle* bias, AtenTensorHandle next_weight,
                                                               AtenTensorHandle next_pair,
                                                               AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::FusedLinearArgs a, ops::rms_norm_linear_prefetch_args(x, norm_weight, eps, weight,
                                                                                       bias, next_weight, next_pair));
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
