// The device-neutral rules of the fused recurrent cells, as torch's CUDA
// kernels check them: _thnn_fused_lstm_cell takes input_gates and
// hidden_gates [batch, 4 * hidden] (the input, forget, cell and output
// gates side by side in each row), the previous cell state cx [batch,
// hidden], and optionally both biases of 4 * hidden elements; all of one
// floating dtype. Its results are hy and cy (cx's sizes, contiguous) and
// the workspace (the activated gates, input_gates' sizes, contiguous).
#pragma once

#include <cstdint>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

struct LstmCellArgs {
  const TensorImpl* input_gates = nullptr;
  const TensorImpl* hidden_gates = nullptr;
  const TensorImpl* cx = nullptr;
  const TensorImpl* input_bias = nullptr;   // null when absent; then so is hidden_bias
  const TensorImpl* hidden_bias = nullptr;
  int64_t batch = 0, hidden = 0;
};

// INVALID_ARGUMENT where torch raises; UNIMPLEMENTED for what torch takes
// and aotirt does not: a hidden_bias without an input_bias (torch ignores
// it), and a cx whose last size is not a quarter of the gates' (torch then
// reads the gates as if reshaped to cx's rows).
Result<LstmCellArgs> lstm_cell_args(AtenTensorHandle input_gates, AtenTensorHandle hidden_gates, AtenTensorHandle cx,
                                    AtenTensorHandle* input_bias, AtenTensorHandle* hidden_bias);

}  // namespace ops
}  // namespace aotirt
