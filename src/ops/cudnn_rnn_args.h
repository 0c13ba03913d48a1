// The device-neutral rules of aten::_cudnn_rnn's inference forward (RNN_RELU,
// RNN_TANH, LSTM with optional projections, GRU): the argument checks torch
// makes (and the ones cuDNN would make later), the shapes of output, hy and
// cy, where batch_first and packed sequences put the time and batch
// dimensions, and how the flat list of per-layer parameters is read.
#pragma once

#include <cstdint>
#include <vector>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

// torch passes cuDNN's own numbering (cudnnRNNMode_t) as |mode|.
enum class RnnMode : int64_t { kRelu = 0, kTanh = 1, kLstm = 2, kGru = 3 };

// One parameter of a layer and direction, in torch's order: w_ih, w_hh,
// b_ih, b_hh, w_hr (the projection; LSTM with proj_size > 0 only).
enum class RnnParam { kWeightIh, kWeightHh, kBiasIh, kBiasHh, kWeightHr };

struct RnnArgs {
  const TensorImpl* input = nullptr;
  std::vector<const TensorImpl*> weights;  // the list, weight_stride0 per layer and direction
  int64_t weight_stride0 = 0;
  const TensorImpl* weight_buf = nullptr;  // null when absent
  const TensorImpl* hx = nullptr;
  const TensorImpl* cx = nullptr;          // null when absent (LSTM only)
  RnnMode mode = RnnMode::kLstm;
  int64_t hidden_size = 0, proj_size = 0, num_layers = 0, directions = 1;
  bool batch_first = false;
  bool packed = false;                // batch_sizes given (input is [sum, input_size])
  std::vector<int64_t> batch_sizes;   // per time step, non-increasing (packed only)
  int64_t seq_length = 0, mini_batch = 0, input_size = 0;
  int64_t gates = 1;                  // 4 LSTM, 3 GRU, 1 plain RNN
  int64_t out_size = 0;               // proj_size when set, else hidden_size
  // output as returned: [T, B, D * out] contiguous, or its [B, T, D * out]
  // transposed view for batch_first, or [sum, D * out] when packed.
  DimVector output_sizes, output_strides;
  DimVector hidden_sizes;             // hy: [L * D, B, out]
  DimVector cell_sizes;               // cy: [L * D, B, hidden] (when cx is given)
};

// Checks _cudnn_rnn's arguments for an inference forward. UNIMPLEMENTED for
// train=true (the training reserve and dropout are not implemented), and for
// a weight_stride0 torch's modules never pass. Device checks are the
// backend's.
Result<RnnArgs> rnn_args(AtenTensorHandle input, const AtenTensorHandle* weight, int64_t weight_len,
                         int64_t weight_stride0, AtenTensorHandle* weight_buf, AtenTensorHandle hx,
                         AtenTensorHandle* cx, int64_t mode, int64_t hidden_size, int64_t proj_size,
                         int64_t num_layers, int32_t batch_first, double dropout, int32_t train,
                         int32_t bidirectional, const int64_t* batch_sizes, int64_t batch_sizes_len);

// Which parameter slot |index| (0 <= index < weight_stride0) of a layer's
// group holds.
RnnParam rnn_param_at(const RnnArgs& a, int64_t index);

// The sizes torch's modules give parameter |p| of layer |layer|.
DimVector rnn_param_sizes(const RnnArgs& a, int64_t layer, RnnParam p);

}  // namespace ops
}  // namespace aotirt
