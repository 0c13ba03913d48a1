// Declarations of the device-generic scaled dot-product attention entry
// points of c/shim_deprecated.h, which packages made by older torch versions
// import (src/shim/common/shim_generic_attention.cpp).
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch__scaled_dot_product_flash_attention(AtenTensorHandle query,
    AtenTensorHandle key, AtenTensorHandle value, double dropout_p, bool is_causal, bool return_debug_mask,
    double scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3,
    int64_t* ret4, int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7,
    AtenTensorHandle* ret8) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch__scaled_dot_product_flash_attention_v2(AtenTensorHandle query,
    AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int is_causal, int return_debug_mask,
    double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3,
    int64_t* ret4, int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7,
    AtenTensorHandle* ret8) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch__scaled_dot_product_efficient_attention(AtenTensorHandle query,
    AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle attn_bias, int compute_log_sumexp,
    double dropout_p, int is_causal, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
    AtenTensorHandle* ret2, AtenTensorHandle* ret3) AOTIRT_NOEXCEPT;

}  // extern "C"
