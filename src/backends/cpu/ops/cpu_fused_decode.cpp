// CPU implementations of aotirt's fused decode-step shims
// (shim/abi/aotirt_fused.h): the RMS norm before the product computed in
// float32 and rounded through the model's dtype where transformers'
// modules round, the product on the CPU's matmul routine, then the
// residual added, or SiLU-multiply of the product's gate and up halves,
// rounded alike. The same results as the separate ops, up to the order of
// float32 sums.
#include <cmath>
#include <cstdint>

#include "backends/cpu/ops/cpu_matmul.h"
#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/dtype.h"
#include "core/host_copy.h"
#include "device/device.h"
#include "ops/fused_args.h"
#include "shim/abi/aotirt_fused.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

constexpr int64_t kParallelWork = int64_t{1} << 15;

float round_to(float v, DType d) {
  if (d == DType::kBFloat16) return bf16_to_float(float_to_bf16(v));
  if (d == DType::kFloat16) return half_to_float(float_to_half(v));
  return v;
}

Status check_devices(const ops::FusedLinearArgs& a) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.x, "x"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.weight, "weight"));
  if (a.norm_weight) AOTIRT_RETURN_IF_ERROR(check_cpu(*a.norm_weight, "norm_weight"));
  if (a.bias) AOTIRT_RETURN_IF_ERROR(check_cpu(*a.bias, "bias"));
  if (a.residual) AOTIRT_RETURN_IF_ERROR(check_cpu(*a.residual, "residual"));
  return Status();
}

// A contiguous tensor's storage as a [1, rows, cols] view.
TensorImpl batched(const TensorImpl& t, int64_t rows, int64_t cols) {
  return TensorImpl(t.storage(), t.dtype(), DimVector{1, rows, cols}, DimVector{rows * cols, cols, 1},
                    t.storage_offset());
}

// The product's input: x itself, or its prologue, as a contiguous [rows, k]
// tensor of x's dtype.
Result<TensorImpl> product_input(const ops::FusedLinearArgs& a) {
  const DType dtype = a.x->dtype();
  if (a.prologue == ops::FusedPrologue::kNone) return contiguous_as(*a.x, dtype);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl xf, contiguous_as(*a.x, DType::kFloat32));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl y, empty_contiguous(DimVector{a.rows, a.k}, DType::kFloat32, DeviceId{}));
  const float* px = static_cast<const float*>(xf.data_ptr());
  float* py = static_cast<float*>(y.data_ptr());
  const int64_t rows = a.rows, k = a.k;
  const bool parallel = rows > 1 && rows * k >= kParallelWork;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl gf, contiguous_as(*a.norm_weight, DType::kFloat32));
  const float* pg = static_cast<const float*>(gf.data_ptr());
  const float eps = static_cast<float>(a.eps);
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = px + r * k;
    double ss = 0.0;
    for (int64_t i = 0; i < k; ++i) ss += double(xr[i]) * double(xr[i]);
    // An empty row gives NaN (0 / 0), as torch's mean does.
    const float inv = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(k)) + eps);
    for (int64_t i = 0; i < k; ++i) py[r * k + i] = round_to(pg[i] * round_to(xr[i] * inv, dtype), dtype);
  }
  if (dtype == DType::kFloat32) return y;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(y.sizes(), dtype, DeviceId{}));
  if (y.numel() > 0) AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, y));
  return out;
}

// out = residual + out, or silu(gate) * up of |prod|'s rows into out,
// each step rounded to the dtype (the product was).
Result<TensorImpl> epilogue(const ops::FusedLinearArgs& a, const TensorImpl& prod, const TensorImpl& out) {
  const DType dtype = a.x->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl pf, contiguous_as(prod, DType::kFloat32));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl of, empty_contiguous(out.sizes(), DType::kFloat32, DeviceId{}));
  const float* pp = static_cast<const float*>(pf.data_ptr());
  float* po = static_cast<float*>(of.data_ptr());
  if (a.silu_mul) {
    const int64_t half = a.n / 2;
    for (int64_t r = 0; r < a.rows; ++r) {
      const float* gate = pp + r * a.n;
      const float* up = gate + half;
      for (int64_t i = 0; i < half; ++i) {
        const float s = round_to(gate[i] / (1.0f + std::exp(-gate[i])), dtype);
        po[r * half + i] = round_to(s * up[i], dtype);
      }
    }
  } else {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl rf, contiguous_as(*a.residual, DType::kFloat32));
    const float* pr = static_cast<const float*>(rf.data_ptr());
    const int64_t total = of.numel();
    for (int64_t i = 0; i < total; ++i) po[i] = round_to(pr[i] + pp[i], dtype);
  }
  if (dtype == DType::kFloat32) return of;
  AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, of));
  return out;
}

Result<TensorImpl> fused_linear(const ops::FusedLinearArgs& a) {
  AOTIRT_RETURN_IF_ERROR(check_devices(a));
  const DType dtype = a.x->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(a.out_sizes, dtype, DeviceId{}));
  if (out.numel() == 0) return out;
  // The product goes to out itself unless SiLU-multiply halves it.
  TensorImpl prod = out;
  if (a.silu_mul) {
    AOTIRT_ASSIGN_OR_RETURN(prod, empty_contiguous(DimVector{a.rows, a.n}, dtype, DeviceId{}));
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl in, product_input(a));
  const TensorImpl& w = *a.weight;
  // weight^T as a [1, k, n] view of weight's own storage.
  const TensorImpl wt(w.storage(), dtype, DimVector{1, a.k, a.n}, DimVector{0, w.strides()[1], w.strides()[0]},
                      w.storage_offset());
  const TensorImpl prod3 = batched(prod, a.rows, a.n);
  if (a.bias) {
    const TensorImpl bias3(a.bias->storage(), dtype, DimVector{1, a.rows, a.n},
                           DimVector{0, 0, a.bias->strides()[0]}, a.bias->storage_offset());
    AOTIRT_RETURN_IF_ERROR(cpu_matmul_into(prod3, &bias3, batched(in, a.rows, a.k), wt, 1.0, 1.0));
  } else {
    AOTIRT_RETURN_IF_ERROR(cpu_matmul_into(prod3, nullptr, batched(in, a.rows, a.k), wt, 0.0, 1.0));
  }
  if (!a.residual && !a.silu_mul) return out;
  return epilogue(a, prod, out);
}

Status give_out(Result<TensorImpl> r, AtenTensorHandle* ret) {
  AOTIRT_RETURN_IF_ERROR(r.status());
  *ret = new_handle(std::move(r).value());
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_aotirt_rms_norm_linear(AtenTensorHandle x, AtenTensorHandle norm_weight, double eps,
                                                     AtenTensorHandle weight, AtenTensorHandle* bias,
                                                     AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::FusedLinearArgs a, ops::rms_norm_linear_args(x, norm_weight, eps, weight, bias));
    return give_out(fused_linear(a), ret0);
  });
}

AOTITorchError aoti_torch_cpu_aotirt_linear_add(AtenTensorHandle x, AtenTensorHandle weight,
                                                AtenTensorHandle residual, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::FusedLinearArgs a, ops::linear_add_args(x, weight, residual));
    return give_out(fused_linear(a), ret0);
  });
}

AOTITorchError aoti_torch_cpu_aotirt_rms_norm_linear_silu_mul(AtenTensorHandle x, AtenTensorHandle norm_weight,
                                                              double eps, AtenTensorHandle weight,
                                                              AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::FusedLinearArgs a, ops::rms_norm_linear_silu_mul_args(x, norm_weight, eps, weight));
    return give_out(fused_linear(a), ret0);
  });
}

}  // extern "C"
