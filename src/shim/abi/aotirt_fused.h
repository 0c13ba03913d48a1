// aotirt's own shims, not torch's: the fused decode-step ops that
// export_llm(fuse_decode=True) maps its custom ops to
// (python/aotirt/_fused.py, aot_inductor.custom_ops_to_c_shims), with the
// calling convention inductor generates for them. Only aotirt provides
// them, so a package that imports them runs on aotirt alone.
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_aotirt_rms_norm_linear(AtenTensorHandle x,
    AtenTensorHandle norm_weight, double eps, AtenTensorHandle weight, AtenTensorHandle* bias,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_aotirt_linear_add(AtenTensorHandle x, AtenTensorHandle weight,
    AtenTensorHandle residual, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_aotirt_rms_norm_linear_silu_mul(AtenTensorHandle x,
    AtenTensorHandle norm_weight, double eps, AtenTensorHandle weight, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
// silu(gate) * up of the int4 weight-only product, gate and up the halves
// of its columns (ops/fused_args.h): the CPU's and CUDA's int4 packings.
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_aotirt_int4pack_mm_silu_mul(AtenTensorHandle x,
    AtenTensorHandle qdata, int64_t group_size, AtenTensorHandle scale_and_zero,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_aotirt_rms_norm_linear(AtenTensorHandle x,
    AtenTensorHandle norm_weight, double eps, AtenTensorHandle weight, AtenTensorHandle* bias,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_aotirt_linear_add(AtenTensorHandle x, AtenTensorHandle weight,
    AtenTensorHandle residual, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_aotirt_rms_norm_linear_silu_mul(AtenTensorHandle x,
    AtenTensorHandle norm_weight, double eps, AtenTensorHandle weight, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_aotirt_int4pack_mm_silu_mul(AtenTensorHandle x,
    AtenTensorHandle qdata, int64_t group_size, AtenTensorHandle scale_and_zero,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;

}  // extern "C"
