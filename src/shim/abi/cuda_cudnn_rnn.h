// Declaration of the CUDA recurrent-network shim of c_shim_cuda.h
// (aten::_cudnn_rnn, inference forward on cuDNN). Defined only in CUDA
// builds (src/backends/cuda/ops/rnn).
#pragma once

#include "shim/shim_abi.h"

extern "C" {

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__cudnn_rnn(AtenTensorHandle input, const AtenTensorHandle* weight,
    int64_t weight_len_, int64_t weight_stride0, AtenTensorHandle* weight_buf, AtenTensorHandle hx,
    AtenTensorHandle* cx, int64_t mode, int64_t hidden_size, int64_t proj_size, int64_t num_layers,
    int32_t batch_first, double dropout, int32_t train, int32_t bidirectional, const int64_t* batch_sizes,
    int64_t batch_sizes_len_, AtenTensorHandle* dropout_state, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
    AtenTensorHandle* ret2, AtenTensorHandle* ret3, AtenTensorHandle* ret4) AOTIRT_NOEXCEPT;

}  // extern "C"
