// Declarations of the CUDA attention forward ops of c_shim_cuda.h beyond the
// SDPA entry points of shim_abi.h: torch's flash and memory-efficient
// attention forwards over [batch, seq, heads, dim] tensors. Defined only in
// CUDA builds (src/backends/cuda/ops/attention).
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__flash_attention_forward(AtenTensorHandle query,
    AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* cum_seq_q, AtenTensorHandle* cum_seq_k,
    int64_t max_q, int64_t max_k, double dropout_p, int32_t is_causal, int32_t return_debug_mask, double* scale,
    int64_t* window_size_left, int64_t* window_size_right, AtenTensorHandle* seqused_k,
    AtenTensorHandle* alibi_slopes, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3, AtenTensorHandle* ret4) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__efficient_attention_forward(AtenTensorHandle query,
    AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* bias, AtenTensorHandle* cu_seqlens_q,
    AtenTensorHandle* cu_seqlens_k, int64_t* max_seqlen_q, int64_t* max_seqlen_k, double dropout_p,
    int64_t custom_mask_type, int32_t compute_log_sumexp, double* scale, AtenTensorHandle* seqlen_k,
    int64_t* window_size, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5) AOTIRT_NOEXCEPT;

}  // extern "C"
