// Argument rules of the fused recurrent cells (see rnn_args.h).
#include "ops/rnn_args.h"

#include "base/status.h"
#include "ops/op_args.h"

namespace aotirt {
namespace ops {

Result<LstmCellArgs> lstm_cell_args(AtenTensorHandle input_gates, AtenTensorHandle hidden_gates, AtenTensorHandle cx,
                                    AtenTensorHandle* input_bias, AtenTensorHandle* hidden_bias) {
  LstmCellArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.input_gates, require_tensor(input_gates, "input_gates"));
  AOTIRT_ASSIGN_OR_RETURN(a.hidden_gates, require_tensor(hidden_gates, "hidden_gates"));
  AOTIRT_ASSIGN_OR_RETURN(a.cx, require_tensor(cx, "cx"));
  a.input_bias = optional_tensor(input_bias);
  a.hidden_bias = optional_tensor(hidden_bias);
  const TensorImpl &ig = *a.input_gates, &hg = *a.hidden_gates, &c = *a.cx;
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(ig.dtype(), "input_gates"));
  AOTIRT_RETURN_IF_ERROR(check_dim(ig, 2, "input_gates"));
  AOTIRT_ENSURE(hg.sizes() == ig.sizes(), kInvalidArgument,
                "Expected hidden_gates to have the size of input_gates {}, but got {}", shape_str(ig),
                shape_str(hg));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(hg, "hidden_gates", ig, "input_gates"));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(c, "cx", ig, "input_gates"));
  const int64_t gates = ig.sizes()[1];
  if (a.input_bias) {
    const TensorImpl& bi = *a.input_bias;
    AOTIRT_RETURN_IF_ERROR(check_dim(bi, 1, "input_bias"));
    AOTIRT_ENSURE(bi.numel() == gates, kInvalidArgument, "Expected input_bias to have {} elements, but got {}",
                  gates, bi.numel());
    AOTIRT_ENSURE(a.hidden_bias != nullptr, kInvalidArgument, "input_bias is given but hidden_bias is not");
    AOTIRT_ENSURE(a.hidden_bias->sizes() == bi.sizes(), kInvalidArgument,
                  "Expected hidden_bias to have the size of input_bias {}, but got {}", shape_str(bi),
                  shape_str(*a.hidden_bias));
    AOTIRT_RETURN_IF_ERROR(check_same_dtype(bi, "input_bias", ig, "input_gates"));
    AOTIRT_RETURN_IF_ERROR(check_same_dtype(*a.hidden_bias, "hidden_bias", ig, "input_gates"));
  } else {
    AOTIRT_ENSURE(a.hidden_bias == nullptr, kUnimplemented,
                  "hidden_bias without input_bias is not supported (torch ignores it)");
  }
  AOTIRT_RETURN_IF_ERROR(check_dim(c, 2, "cx"));
  AOTIRT_ENSURE(c.numel() == ig.sizes()[0] * gates / 4, kInvalidArgument,
                "Expected cx to have {} elements (input_gates {} over 4), but got {}", ig.sizes()[0] * gates / 4,
                shape_str(ig), c.numel());
  AOTIRT_ENSURE(c.sizes()[1] * 4 == gates, kUnimplemented,
                "cx {} with input_gates {}: only a cx of [batch, gates / 4] is supported", shape_str(c),
                shape_str(ig));
  a.batch = ig.sizes()[0];
  a.hidden = gates / 4;
  return a;
}

}  // namespace ops
}  // namespace aotirt
