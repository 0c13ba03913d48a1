// Launchers for the CUDA fused recurrent cells (cuda_rnn.cu). Plain C++
// types only, so the .cu file needs none of aotirt's headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace aotirt {

// _thnn_fused_lstm_cell over contiguous tensors of |dtype| (a c10 number:
// float16, float32, float64 or bfloat16): gates [batch, 4 * hidden] (input,
// forget, cell, output), biases of 4 * hidden elements (both null or both
// given), cx, hy and cy [batch, hidden], and the workspace, which receives
// the activated gates in the gates' layout. Computes in float32 for the
// 16-bit dtypes, as torch's kernel does.
cudaError_t cuda_launch_lstm_cell(int dtype, const void* input_gates, const void* hidden_gates,
                                  const void* input_bias, const void* hidden_bias, const void* cx, void* hy,
                                  void* cy, void* workspace, int64_t batch, int64_t hidden, cudaStream_t stream);

}  // namespace aotirt
