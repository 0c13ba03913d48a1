// CUDA pooling fallback ops (c_shim_cuda.h): avg_pool2d/3d, adaptive avg
// and max pooling, max_pool2d/3d_with_indices, fractional_max_pool2d/3d and
// max_unpool2d/3d. The op layer (src/ops/pooling_args, with torch's CUDA
// rules) checks the arguments and gives the output sizes and layouts; here
// the outputs are made and the kernels of cuda_pooling.cu run on the op's
// stream, reading every input in place through its strides, so no layout
// needs a copy. fractional_max_pool takes its random samples as a tensor,
// so nothing here draws random numbers.
#include <memory>
#include <utility>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/pooling/cuda_pooling_kernels.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "ops/pooling_args.h"
#include "shim/abi/cuda_pooling.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

using ops::IntList;
using ops::PoolArgs;
using ops::PoolDevice;

IntList list(const int64_t* data, int64_t len) { return IntList{data, len}; }

CudaPoolGeometry geometry(const PoolArgs& a) {
  CudaPoolGeometry g;
  g.batch = a.batch;
  g.channels = a.channels;
  for (int d = 0; d < 3; ++d) {
    g.in[d] = a.in[d];
    g.out[d] = a.out[d];
  }
  for (int d = 0; d < 5; ++d) g.in_strides[d] = a.in_strides5[d];
  ops::strides5(a.out_sizes, a.out_strides, a.spatial, a.batched, g.out_strides);
  g.channels_inner = a.channels_last;
  return g;
}

int dtype_code(const TensorImpl& t) { return static_cast<int>(t.dtype()); }

// The values and indices of a max pooling, held until both are made and
// filled, then handed out together.
Status hand_out_pair(std::unique_ptr<TensorImpl> values, std::unique_ptr<TensorImpl> indices,
                     AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  *ret0 = handle_of(values.release());
  *ret1 = handle_of(indices.release());
  return Status();
}

Status run_avg(Result<PoolArgs> args, bool adaptive, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(PoolArgs a, std::move(args));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(a.out_sizes, a.out_strides, a.self->dtype(), scope->device()));
  std::unique_ptr<TensorImpl> held(new TensorImpl(std::move(out)));
  CudaAvgParams p;
  if (!adaptive) {
    p.mode = CudaAvgMode::kWindow;
    for (int d = 0; d < 3; ++d) {
      p.kernel[d] = a.kernel[d];
      p.stride[d] = a.stride[d];
      p.pad[d] = a.pad[d];
    }
    p.count_include_pad = a.count_include_pad;
    p.has_divisor = a.has_divisor;
    p.divisor = a.divisor;
  } else if (a.spatial == 3) {
    p.mode = CudaAvgMode::kAdaptiveVolume;
  } else {
    p.mode = a.channels_last ? CudaAvgMode::kAdaptiveReciprocal : CudaAvgMode::kAdaptiveSteps;
  }
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_avg_pool(dtype_code(*a.self), a.self->data_ptr(), held->data_ptr(),
                                                   geometry(a), p, scope->stream()));
  *ret0 = handle_of(held.release());
  return Status();
}

Status run_max(Result<PoolArgs> args, const CudaMaxParams& base, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_ASSIGN_OR_RETURN(PoolArgs a, std::move(args));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.self, "self"));
  CudaMaxParams p = base;
  for (int d = 0; d < 3; ++d) {
    p.kernel[d] = a.kernel[d];
    p.stride[d] = a.stride[d];
    p.pad[d] = a.pad[d];
    p.dilation[d] = a.dilation[d];
  }
  if (p.mode == CudaMaxMode::kFractional) {
    AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.aux, "random_samples"));
    p.samples = a.aux->data_ptr();
    for (int d = 0; d < 3; ++d) p.sample_strides[d] = a.aux_strides5[d];
    p.spatial = static_cast<int>(a.spatial);
  }
  const int device = scope->device();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl vals, cuda_empty(a.out_sizes, a.out_strides, a.self->dtype(), device));
  std::unique_ptr<TensorImpl> values(new TensorImpl(std::move(vals)));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl idx, cuda_empty(a.out_sizes, a.out_strides, DType::kInt64, device));
  std::unique_ptr<TensorImpl> indices(new TensorImpl(std::move(idx)));
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_max_pool(dtype_code(*a.self), a.self->data_ptr(), values->data_ptr(),
                                                   static_cast<int64_t*>(indices->data_ptr()), geometry(a), p,
                                                   scope->stream()));
  return hand_out_pair(std::move(values), std::move(indices), ret0, ret1);
}

CudaMaxParams max_mode(CudaMaxMode mode) {
  CudaMaxParams p;
  p.mode = mode;
  return p;
}

Status run_unpool(Result<PoolArgs> args, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(PoolArgs a, std::move(args));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.self, "self"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.aux, "indices"));
  // The op layer gives CUDA's max_unpool a contiguous output, which the
  // launcher zeroes as one block.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(a.out_sizes, a.out_strides, a.self->dtype(), scope->device()));
  std::unique_ptr<TensorImpl> held(new TensorImpl(std::move(out)));
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_max_unpool(dtype_code(*a.self), a.self->data_ptr(),
                                                     static_cast<const int64_t*>(a.aux->data_ptr()), a.aux_strides5,
                                                     held->data_ptr(), held->nbytes(), geometry(a),
                                                     scope->stream()));
  *ret0 = handle_of(held.release());
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda_avg_pool2d(AtenTensorHandle self, const int64_t* kernel_size, int64_t kernel_size_len_,
                                          const int64_t* stride, int64_t stride_len_, const int64_t* padding,
                                          int64_t padding_len_, int32_t ceil_mode, int32_t count_include_pad,
                                          int64_t* divisor_override, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] {
    return run_avg(ops::avg_pool_args(2, self, list(kernel_size, kernel_size_len_), list(stride, stride_len_),
                                      list(padding, padding_len_), ceil_mode != 0, count_include_pad != 0,
                                      divisor_override, PoolDevice::kCuda),
                   false, ret0);
  });
}

AOTITorchError aoti_torch_cuda_avg_pool3d(AtenTensorHandle self, const int64_t* kernel_size, int64_t kernel_size_len_,
                                          const int64_t* stride, int64_t stride_len_, const int64_t* padding,
                                          int64_t padding_len_, int32_t ceil_mode, int32_t count_include_pad,
                                          int64_t* divisor_override, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] {
    return run_avg(ops::avg_pool_args(3, self, list(kernel_size, kernel_size_len_), list(stride, stride_len_),
                                      list(padding, padding_len_), ceil_mode != 0, count_include_pad != 0,
                                      divisor_override, PoolDevice::kCuda),
                   false, ret0);
  });
}

AOTITorchError aoti_torch_cuda__adaptive_avg_pool2d(AtenTensorHandle self, const int64_t* output_size,
                                                    int64_t output_size_len_, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] {
    return run_avg(ops::adaptive_pool_args(2, false, self, list(output_size, output_size_len_)), true, ret0);
  });
}

AOTITorchError aoti_torch_cuda__adaptive_avg_pool3d(AtenTensorHandle self, const int64_t* output_size,
                                                    int64_t output_size_len_, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] {
    return run_avg(ops::adaptive_pool_args(3, false, self, list(output_size, output_size_len_)), true, ret0);
  });
}

AOTITorchError aoti_torch_cuda_adaptive_max_pool2d(AtenTensorHandle self, const int64_t* output_size,
                                                   int64_t output_size_len_, AtenTensorHandle* ret0,
                                                   AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return run_max(ops::adaptive_pool_args(2, true, self, list(output_size, output_size_len_)),
                   max_mode(CudaMaxMode::kAdaptive), ret0, ret1);
  });
}

AOTITorchError aoti_torch_cuda_adaptive_max_pool3d(AtenTensorHandle self, const int64_t* output_size,
                                                   int64_t output_size_len_, AtenTensorHandle* ret0,
                                                   AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return run_max(ops::adaptive_pool_args(3, true, self, list(output_size, output_size_len_)),
                   max_mode(CudaMaxMode::kAdaptive), ret0, ret1);
  });
}

AOTITorchError aoti_torch_cuda_max_pool2d_with_indices(AtenTensorHandle self, const int64_t* kernel_size,
                                                       int64_t kernel_size_len_, const int64_t* stride,
                                                       int64_t stride_len_, const int64_t* padding,
                                                       int64_t padding_len_, const int64_t* dilation,
                                                       int64_t dilation_len_, int32_t ceil_mode,
                                                       AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return run_max(ops::max_pool_args(2, self, list(kernel_size, kernel_size_len_), list(stride, stride_len_),
                                      list(padding, padding_len_), list(dilation, dilation_len_), ceil_mode != 0,
                                      PoolDevice::kCuda),
                   max_mode(CudaMaxMode::kWindow), ret0, ret1);
  });
}

AOTITorchError aoti_torch_cuda_max_pool3d_with_indices(AtenTensorHandle self, const int64_t* kernel_size,
                                                       int64_t kernel_size_len_, const int64_t* stride,
                                                       int64_t stride_len_, const int64_t* padding,
                                                       int64_t padding_len_, const int64_t* dilation,
                                                       int64_t dilation_len_, int32_t ceil_mode,
                                                       AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return run_max(ops::max_pool_args(3, self, list(kernel_size, kernel_size_len_), list(stride, stride_len_),
                                      list(padding, padding_len_), list(dilation, dilation_len_), ceil_mode != 0,
                                      PoolDevice::kCuda),
                   max_mode(CudaMaxMode::kWindow), ret0, ret1);
  });
}

AOTITorchError aoti_torch_cuda_max_unpool2d(AtenTensorHandle self, AtenTensorHandle indices,
                                            const int64_t* output_size, int64_t output_size_len_,
                                            AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] {
    return run_unpool(ops::max_unpool_args(2, self, indices, list(output_size, output_size_len_), list(nullptr, 0),
                                           list(nullptr, 0), PoolDevice::kCuda),
                      ret0);
  });
}

AOTITorchError aoti_torch_cuda_max_unpool3d(AtenTensorHandle self, AtenTensorHandle indices,
                                            const int64_t* output_size, int64_t output_size_len_,
                                            const int64_t* stride, int64_t stride_len_, const int64_t* padding,
                                            int64_t padding_len_, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] {
    return run_unpool(ops::max_unpool_args(3, self, indices, list(output_size, output_size_len_),
                                           list(stride, stride_len_), list(padding, padding_len_), PoolDevice::kCuda),
                      ret0);
  });
}

AOTITorchError aoti_torch_cuda_fractional_max_pool2d(AtenTensorHandle self, const int64_t* kernel_size,
                                                     int64_t kernel_size_len_, const int64_t* output_size,
                                                     int64_t output_size_len_, AtenTensorHandle random_samples,
                                                     AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return run_max(ops::fractional_max_pool_args(2, self, list(kernel_size, kernel_size_len_),
                                                 list(output_size, output_size_len_), random_samples),
                   max_mode(CudaMaxMode::kFractional), ret0, ret1);
  });
}

AOTITorchError aoti_torch_cuda_fractional_max_pool3d(AtenTensorHandle self, const int64_t* kernel_size,
                                                     int64_t kernel_size_len_, const int64_t* output_size,
                                                     int64_t output_size_len_, AtenTensorHandle random_samples,
                                                     AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return run_max(ops::fractional_max_pool_args(3, self, list(kernel_size, kernel_size_len_),
                                                 list(output_size, output_size_len_), random_samples),
                   max_mode(CudaMaxMode::kFractional), ret0, ret1);
  });
}

}  // extern "C"
