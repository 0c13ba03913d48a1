// CUDA _fused_rms_norm (c_shim_cuda.h). The op layer (ops/linalg_args)
// checks the arguments and gives the [rows, n] walk, rstd's shape and dtype
// and the default eps (the accumulation dtype's machine epsilon, as torch's
// CUDA op takes it); here the input and weight are made contiguous, as
// torch's op does, and one kernel (cuda_norm.cu) writes both results.
#include <memory>
#include <utility>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/norm/cuda_norm_kernels.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "ops/linalg_args.h"
#include "ops/op_args.h"
#include "shim/abi/cuda_norm.h"
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

Status fused_rms_norm(AtenTensorHandle input, const int64_t* normalized_shape, int64_t normalized_shape_len,
                      AtenTensorHandle* weight, const double* eps, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_ASSIGN_OR_RETURN(ops::RmsNormArgs a,
                          ops::fused_rms_norm_args(input, normalized_shape, normalized_shape_len, weight, eps));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.input, "input"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  if (a.weight) {
    AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.weight, "weight"));
    // torch's CUDA kernel reads the weight in the input's dtype and refuses
    // another one.
    AOTIRT_RETURN_IF_ERROR(ops::check_same_dtype(*a.weight, "weight", *a.input, "input"));
  }
  auto out = std::make_unique<TensorImpl>();
  auto rstd = std::make_unique<TensorImpl>();
  AOTIRT_ASSIGN_OR_RETURN(*out, cuda_empty_contiguous(a.input->sizes(), a.input->dtype(), device));
  AOTIRT_ASSIGN_OR_RETURN(*rstd, cuda_empty_contiguous(a.rstd_sizes, a.rstd_dtype, device));
  if (a.rows > 0) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, dense(device, stream, *a.input));
    TensorImpl w;
    if (a.weight) {
      AOTIRT_ASSIGN_OR_RETURN(w, dense(device, stream, *a.weight));
    }
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_rms_norm(static_cast<int>(x.dtype()), x.data_ptr(),
                                                     a.weight ? w.data_ptr() : nullptr, out->data_ptr(),
                                                     rstd->data_ptr(), a.rows, a.inner, a.eps, stream));
  }
  *ret0 = handle_of(out.release());
  *ret1 = handle_of(rstd.release());
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda__fused_rms_norm(AtenTensorHandle input, const int64_t* normalized_shape,
                                               int64_t normalized_shape_len_, AtenTensorHandle* weight, double* eps,
                                               AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return fused_rms_norm(input, normalized_shape, normalized_shape_len_, weight, eps, ret0, ret1);
  });
}

}  // extern "C"
