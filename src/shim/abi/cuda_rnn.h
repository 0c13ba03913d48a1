// Declarations of the CUDA recurrent-cell shims of c_shim_cuda.h
// (_thnn_fused_lstm_cell). Defined only in CUDA builds
// (src/backends/cuda/ops/rnn).
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__thnn_fused_lstm_cell(AtenTensorHandle input_gates,
    AtenTensorHandle hidden_gates, AtenTensorHandle cx, AtenTensorHandle* input_bias, AtenTensorHandle* hidden_bias,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2) AOTIRT_NOEXCEPT;

}  // extern "C"
