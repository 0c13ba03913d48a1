// CUDA _thnn_fused_lstm_cell (c_shim_cuda.h). The op layer (ops/rnn_args)
// checks the arguments; here the operands are made contiguous (a strided
// one is copied first), one kernel (cuda_rnn.cu) writes hy, cy and the
// workspace of activated gates, and the three results are handed out
// together, as torch's CUDA op returns them (all contiguous).
#include <memory>
#include <utility>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/rnn/cuda_rnn_kernels.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "ops/rnn_args.h"
#include "shim/abi/cuda_rnn.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

// |t| itself when contiguous, else a contiguous copy queued on |stream|.
Result<TensorImpl> dense(int device, cudaStream_t stream, const TensorImpl& t) {
  if (t.is_contiguous()) return t;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, cuda_empty_contiguous(t.sizes(), t.dtype(), device));
  AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, c, t, false));
  return c;
}

Status fused_lstm_cell(AtenTensorHandle input_gates, AtenTensorHandle hidden_gates, AtenTensorHandle cx,
                       AtenTensorHandle* input_bias, AtenTensorHandle* hidden_bias, AtenTensorHandle* ret0,
                       AtenTensorHandle* ret1, AtenTensorHandle* ret2) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_REQUIRE_OUT(ret2);
  AOTIRT_ASSIGN_OR_RETURN(ops::LstmCellArgs a,
                          ops::lstm_cell_args(input_gates, hidden_gates, cx, input_bias, hidden_bias));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.input_gates, "input_gates"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.hidden_gates, "hidden_gates"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.cx, "cx"));
  if (a.input_bias) {
    AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.input_bias, "input_bias"));
    AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.hidden_bias, "hidden_bias"));
  }
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  const DType dtype = a.input_gates->dtype();
  auto hy = std::make_unique<TensorImpl>();
  auto cy = std::make_unique<TensorImpl>();
  auto workspace = std::make_unique<TensorImpl>();
  AOTIRT_ASSIGN_OR_RETURN(*hy, cuda_empty_contiguous(a.cx->sizes(), dtype, device));
  AOTIRT_ASSIGN_OR_RETURN(*cy, cuda_empty_contiguous(a.cx->sizes(), dtype, device));
  AOTIRT_ASSIGN_OR_RETURN(*workspace, cuda_empty_contiguous(a.input_gates->sizes(), dtype, device));
  if (a.batch > 0 && a.hidden > 0) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl ig, dense(device, stream, *a.input_gates));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl hg, dense(device, stream, *a.hidden_gates));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, dense(device, stream, *a.cx));
    TensorImpl bi, bh;
    if (a.input_bias) {
      AOTIRT_ASSIGN_OR_RETURN(bi, dense(device, stream, *a.input_bias));
      AOTIRT_ASSIGN_OR_RETURN(bh, dense(device, stream, *a.hidden_bias));
    }
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_lstm_cell(
        static_cast<int>(dtype), ig.data_ptr(), hg.data_ptr(), a.input_bias ? bi.data_ptr() : nullptr,
        a.input_bias ? bh.data_ptr() : nullptr, c.data_ptr(), hy->data_ptr(), cy->data_ptr(), workspace->data_ptr(),
        a.batch, a.hidden, stream));
  }
  *ret0 = handle_of(hy.release());
  *ret1 = handle_of(cy.release());
  *ret2 = handle_of(workspace.release());
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda__thnn_fused_lstm_cell(AtenTensorHandle input_gates, AtenTensorHandle hidden_gates,
                                                     AtenTensorHandle cx, AtenTensorHandle* input_bias,
                                                     AtenTensorHandle* hidden_bias, AtenTensorHandle* ret0,
                                                     AtenTensorHandle* ret1, AtenTensorHandle* ret2) noexcept {
  return shim_call(__func__, [&] {
    return fused_lstm_cell(input_gates, hidden_gates, cx, input_bias, hidden_bias, ret0, ret1, ret2);
  });
}

}  // extern "C"
