#include "ops/cudnn_rnn_args.h"

#include <string>

#include "base/status.h"
#include "ops/op_args.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace ops {
namespace {

const char* mode_name(RnnMode m) {
  switch (m) {
    case RnnMode::kRelu: return "RNN_RELU";
    case RnnMode::kTanh: return "RNN_TANH";
    case RnnMode::kLstm: return "LSTM";
    case RnnMode::kGru: return "GRU";
  }
  return "?";
}

// torch's check_attributes(check_dtype=true): every hidden state and
// parameter has the input's dtype.
Status check_like_input(const TensorImpl& input, const TensorImpl& t, const std::string& what) {
  AOTIRT_ENSURE(t.dtype() == input.dtype(), kInvalidArgument,
                "input and {} tensors are not the same dtype: input is {}, {} is {}", what, dtype_name(input.dtype()),
                what, dtype_name(t.dtype()));
  return Status();
}

}  // namespace

RnnParam rnn_param_at(const RnnArgs& a, int64_t index) {
  // Without biases a projected layer is (w_ih, w_hh, w_hr).
  if (a.weight_stride0 == 3) return index == 2 ? RnnParam::kWeightHr : static_cast<RnnParam>(index);
  return static_cast<RnnParam>(index);
}

DimVector rnn_param_sizes(const RnnArgs& a, int64_t layer, RnnParam p) {
  const int64_t rows = a.gates * a.hidden_size;
  switch (p) {
    case RnnParam::kWeightIh: return {rows, layer == 0 ? a.input_size : a.out_size * a.directions};
    case RnnParam::kWeightHh: return {rows, a.out_size};
    case RnnParam::kBiasIh:
    case RnnParam::kBiasHh: return {rows};
    case RnnParam::kWeightHr: return {a.proj_size, a.hidden_size};
  }
  return {};
}

Result<RnnArgs> rnn_args(AtenTensorHandle input, const AtenTensorHandle* weight, int64_t weight_len,
                         int64_t weight_stride0, AtenTensorHandle* weight_buf, AtenTensorHandle hx,
                         AtenTensorHandle* cx, int64_t mode, int64_t hidden_size, int64_t proj_size,
                         int64_t num_layers, int32_t batch_first, double dropout, int32_t train,
                         int32_t bidirectional, const int64_t* batch_sizes, int64_t batch_sizes_len) {
  (void)dropout;  // applies between layers in training only (torch uses 0 when train is false)
  RnnArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.input, require_tensor(input, "input"));
  AOTIRT_ASSIGN_OR_RETURN(a.hx, require_tensor(hx, "hx"));
  a.cx = optional_tensor(cx);
  a.weight_buf = optional_tensor(weight_buf);
  AOTIRT_ENSURE(!train, kUnimplemented,
                "train=true is not implemented (only the inference forward is: no training reserve, no dropout)");
  AOTIRT_ENSURE(mode >= 0 && mode <= 3, kInvalidArgument,
                "unrecognized cuDNN RNN mode {} (0 RNN_RELU, 1 RNN_TANH, 2 LSTM, 3 GRU)", mode);
  a.mode = static_cast<RnnMode>(mode);
  a.gates = a.mode == RnnMode::kLstm ? 4 : a.mode == RnnMode::kGru ? 3 : 1;
  AOTIRT_ENSURE(hidden_size > 0, kInvalidArgument, "hidden_size must be positive, got {}", hidden_size);
  AOTIRT_ENSURE(num_layers > 0, kInvalidArgument, "num_layers must be positive, got {}", num_layers);
  AOTIRT_ENSURE(proj_size >= 0 && proj_size < hidden_size, kInvalidArgument,
                "proj_size must be in [0, hidden_size={}), got {}", hidden_size, proj_size);
  AOTIRT_ENSURE(proj_size == 0 || a.mode == RnnMode::kLstm, kInvalidArgument,
                "proj_size={} is only supported for LSTM, not {}", proj_size, mode_name(a.mode));
  a.hidden_size = hidden_size;
  a.proj_size = proj_size;
  a.num_layers = num_layers;
  a.directions = bidirectional ? 2 : 1;
  a.batch_first = batch_first != 0;
  a.out_size = proj_size > 0 ? proj_size : hidden_size;
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(a.input->dtype(), "input"));

  // Sequence geometry.
  AOTIRT_ENSURE(batch_sizes_len >= 0 && (batch_sizes_len == 0 || batch_sizes), kInvalidArgument,
                "batch_sizes is null with length {}", batch_sizes_len);
  a.packed = batch_sizes_len > 0;
  if (a.packed) {
    AOTIRT_ENSURE(a.input->dim() == 2, kInvalidArgument,
                  "a packed input (batch_sizes given) must be 2-D [sum(batch_sizes), input_size], got shape {}",
                  shape_str(*a.input));
    int64_t sum = 0;
    for (int64_t t = 0; t < batch_sizes_len; ++t) {
      const int64_t b = batch_sizes[t];
      AOTIRT_ENSURE(b > 0 && (t == 0 || b <= batch_sizes[t - 1]), kInvalidArgument,
                    "batch_sizes[{}]={} must be positive and not exceed the step before it", t, b);
      sum += b;
      AOTIRT_ENSURE(sum <= a.input->sizes()[0], kInvalidArgument,
                    "batch_sizes sum past input.size(0)={}", a.input->sizes()[0]);
      a.batch_sizes.push_back(b);
    }
    AOTIRT_ENSURE(sum == a.input->sizes()[0], kInvalidArgument,
                  "batch_sizes sum to {} but input.size(0) is {}", sum, a.input->sizes()[0]);
    a.seq_length = batch_sizes_len;
    a.mini_batch = batch_sizes[0];
    a.input_size = a.input->sizes()[1];
  } else {
    AOTIRT_ENSURE(a.input->dim() == 3, kInvalidArgument,
                  "input must be 3-D ([seq, batch, input_size], or [batch, seq, input_size] with batch_first), "
                  "got shape {}",
                  shape_str(*a.input));
    a.seq_length = a.input->sizes()[a.batch_first ? 1 : 0];
    a.mini_batch = a.input->sizes()[a.batch_first ? 0 : 1];
    a.input_size = a.input->sizes()[2];
  }

  const int64_t dout = a.directions * a.out_size;
  if (a.packed) {
    a.output_sizes = {a.input->sizes()[0], dout};
    a.output_strides = {dout, 1};
  } else if (a.batch_first) {
    a.output_sizes = {a.mini_batch, a.seq_length, dout};
    a.output_strides = {dout, a.mini_batch * dout, 1};
  } else {
    a.output_sizes = {a.seq_length, a.mini_batch, dout};
    a.output_strides = {a.mini_batch * dout, dout, 1};
  }
  a.hidden_sizes = {num_layers * a.directions, a.mini_batch, a.out_size};
  a.cell_sizes = {num_layers * a.directions, a.mini_batch, hidden_size};

  // Hidden and cell states.
  AOTIRT_RETURN_IF_ERROR(check_like_input(*a.input, *a.hx, "hidden (hx)"));
  AOTIRT_ENSURE(a.mode == RnnMode::kLstm || !a.cx, kInvalidArgument, "rnn: illegal defined cx for non-LSTM RNN ({})",
                mode_name(a.mode));
  AOTIRT_ENSURE(a.hx->is_contiguous(), kInvalidArgument, "rnn: hx is not contiguous ({})", layout_str(*a.hx));
  AOTIRT_ENSURE(a.hx->sizes() == a.hidden_sizes, kInvalidArgument, "Expected hidden size {}, got hx of shape {}",
                dims_to_string(a.hidden_sizes.data(), a.hidden_sizes.size()), shape_str(*a.hx));
  if (a.cx) {
    AOTIRT_RETURN_IF_ERROR(check_like_input(*a.input, *a.cx, "hidden (cx)"));
    AOTIRT_ENSURE(a.cx->is_contiguous(), kInvalidArgument, "rnn: cx is not contiguous ({})", layout_str(*a.cx));
    AOTIRT_ENSURE(a.cx->sizes() == a.cell_sizes, kInvalidArgument, "Expected cell size {}, got cx of shape {}",
                  dims_to_string(a.cell_sizes.data(), a.cell_sizes.size()), shape_str(*a.cx));
  }

  // Parameters: every listed tensor has the input's dtype (torch checks them
  // even when it then reads weight_buf instead).
  AOTIRT_ENSURE(weight_len >= 0 && (weight_len == 0 || weight), kInvalidArgument, "weight is null with length {}",
                weight_len);
  for (int64_t i = 0; i < weight_len; ++i) {
    const std::string what = "weight[" + std::to_string(i) + "]";
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* w, require_tensor(weight[i], what.c_str()));
    AOTIRT_RETURN_IF_ERROR(check_like_input(*a.input, *w, "parameter (" + what + ")"));
    a.weights.push_back(w);
  }
  a.weight_stride0 = weight_stride0;
  if (a.weight_buf) {
    AOTIRT_ENSURE(a.weight_buf->dtype() == a.input->dtype(), kInvalidArgument,
                  "weight_buf is {} but input is {}; cuDNN reads it in the input's dtype",
                  dtype_name(a.weight_buf->dtype()), dtype_name(a.input->dtype()));
    AOTIRT_ENSURE(a.weight_buf->is_contiguous(), kUnimplemented,
                  "a non-contiguous weight_buf ({}) is not implemented", layout_str(*a.weight_buf));
    return a;
  }
  // No flat buffer: the list is copied into one, so it must be complete.
  const bool proj = proj_size > 0;
  AOTIRT_ENSURE(proj ? (weight_stride0 == 3 || weight_stride0 == 5) : (weight_stride0 == 2 || weight_stride0 == 4),
                kUnimplemented,
                "weight_stride0={} is not implemented with proj_size={} (expected {} or {}: weights{} with or "
                "without biases)",
                weight_stride0, proj_size, proj ? 3 : 2, proj ? 5 : 4, proj ? " and projection" : "");
  const int64_t groups = num_layers * a.directions;
  AOTIRT_ENSURE(weight_len == weight_stride0 * groups, kInvalidArgument,
                "weight has {} tensors; {} layers x {} directions x weight_stride0={} needs {}", weight_len,
                num_layers, a.directions, weight_stride0, weight_stride0 * groups);
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t layer = g / a.directions;
    for (int64_t k = 0; k < weight_stride0; ++k) {
      const TensorImpl& w = *a.weights[g * weight_stride0 + k];
      const DimVector want = rnn_param_sizes(a, layer, rnn_param_at(a, k));
      AOTIRT_ENSURE(w.numel() == numel_of(want), kInvalidArgument,
                    "weight[{}] (layer {}, direction {}) has shape {}; expected {} elements (shape {})",
                    g * weight_stride0 + k, layer, g % a.directions, shape_str(w), numel_of(want),
                    dims_to_string(want.data(), want.size()));
    }
  }
  return a;
}

}  // namespace ops
}  // namespace aotirt
