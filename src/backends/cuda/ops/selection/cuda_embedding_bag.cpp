// CUDA embedding_bag (c_shim_cuda.h's _embedding_bag and
// _embedding_bag_forward_only, which torch's CUDA backend computes alike).
// The op layer (src/ops/pooling_args) checks arguments and gives the sizes
// of torch's CUDA outputs; here indices and offsets are brought to their
// common dtype, contiguous, and the kernel (cuda_embedding_bag.cu) runs on
// the op's stream with no synchronisation. The index outputs are zeroed
// first: torch leaves the entries its kernel never writes (offset2bag when
// there are no bags, include_last_offset's last bag_size) uninitialised,
// and zeros are the deterministic choice.
#include <cstdint>
#include <memory>
#include <utility>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/selection/cuda_selection_kernels.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "ops/op_args.h"
#include "ops/pooling_args.h"
#include "shim/abi/cuda_selection.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

// |t| as a contiguous tensor of |dtype| on |device|.
Result<TensorImpl> contiguous_index(const TensorImpl& t, DType dtype, int device, cudaStream_t stream) {
  if (t.dtype() == dtype && t.is_contiguous()) return t;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, cuda_empty_contiguous(t.sizes(), dtype, device));
  if (c.numel() > 0) AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, c, t, false));
  return c;
}

Status embedding_bag(const TensorImpl* per_sample_weights, AtenTensorHandle weight, AtenTensorHandle indices,
                     AtenTensorHandle offsets, int64_t mode, bool include_last_offset, int64_t padding_idx,
                     bool forward_only, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
                     AtenTensorHandle* ret3) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_REQUIRE_OUT(ret2);
  AOTIRT_REQUIRE_OUT(ret3);
  AOTIRT_ASSIGN_OR_RETURN(ops::EmbeddingBagArgs a,
                          ops::embedding_bag_args(weight, indices, offsets, mode, per_sample_weights,
                                                  include_last_offset, padding_idx, forward_only));
  const ops::EmbeddingBagCudaSizes sizes = ops::embedding_bag_cuda_sizes(a);
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.weight, "weight"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.indices, "indices"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.offsets, "offsets"));
  if (a.per_sample_weights)
    AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.per_sample_weights, "per_sample_weights"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  const DType id = a.index_dtype;
  std::unique_ptr<TensorImpl> out, o2b, bsz, mix;
  {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl t,
                            cuda_empty_contiguous(DimVector{a.num_bags, a.dim}, a.weight->dtype(), device));
    out.reset(new TensorImpl(std::move(t)));
  }
  {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, cuda_empty_contiguous(DimVector{sizes.offset2bag_size}, id, device));
    o2b.reset(new TensorImpl(std::move(t)));
  }
  {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, cuda_empty_contiguous(DimVector{sizes.bag_size_size}, id, device));
    bsz.reset(new TensorImpl(std::move(t)));
  }
  {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, cuda_empty_contiguous(sizes.max_indices_sizes, id, device));
    mix.reset(new TensorImpl(std::move(t)));
  }
  if (o2b->numel() > 0) AOTIRT_RETURN_IF_ERROR(cuda_zero(device, stream, *o2b));
  if (bsz->numel() > 0) AOTIRT_RETURN_IF_ERROR(cuda_zero(device, stream, *bsz));
  if (out->numel() > 0) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl ix, contiguous_index(*a.indices, id, device, stream));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl off, contiguous_index(*a.offsets, id, device, stream));
    CudaBagShape s;
    s.mode = static_cast<int>(a.mode);
    s.num_indices = a.num_indices;
    s.num_bags = a.num_bags;
    s.dim = a.dim;
    s.rows = a.weight->sizes()[0];
    s.weight_stride0 = a.weight->strides()[0];
    s.weight_stride1 = a.weight->strides()[1];
    const TensorImpl* psw = a.per_sample_weights;
    s.psw_stride = psw && psw->dim() > 0 ? psw->strides()[0] : 1;
    s.padding_idx = a.padding_idx;
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_embedding_bag(
        static_cast<int>(a.weight->dtype()), static_cast<int>(id), a.weight->data_ptr(),
        ix.numel() > 0 ? ix.data_ptr() : nullptr, off.data_ptr(), psw && psw->numel() > 0 ? psw->data_ptr() : nullptr,
        out->data_ptr(), o2b->numel() > 0 ? o2b->data_ptr() : nullptr, bsz->data_ptr(),
        mix->numel() > 0 ? mix->data_ptr() : nullptr, s, stream));
  }
  *ret0 = handle_of(out.release());
  *ret1 = handle_of(o2b.release());
  *ret2 = handle_of(bsz.release());
  *ret3 = handle_of(mix.release());
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda__embedding_bag(AtenTensorHandle weight, AtenTensorHandle indices,
                                              AtenTensorHandle offsets, int32_t scale_grad_by_freq, int64_t mode,
                                              int32_t sparse, AtenTensorHandle* per_sample_weights,
                                              int32_t include_last_offset, int64_t padding_idx,
                                              AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
                                              AtenTensorHandle* ret3) noexcept {
  (void)scale_grad_by_freq;  // both only shape the gradient
  (void)sparse;
  return shim_call(__func__, [&] {
    return embedding_bag(ops::optional_tensor(per_sample_weights), weight, indices, offsets, mode,
                         include_last_offset != 0, padding_idx, false, ret0, ret1, ret2, ret3);
  });
}

AOTITorchError aoti_torch_cuda__embedding_bag_forward_only(AtenTensorHandle weight, AtenTensorHandle indices,
                                                           AtenTensorHandle offsets, int32_t scale_grad_by_freq,
                                                           int64_t mode, int32_t sparse,
                                                           AtenTensorHandle* per_sample_weights,
                                                           int32_t include_last_offset, int64_t padding_idx,
                                                           AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                                           AtenTensorHandle* ret2, AtenTensorHandle* ret3) noexcept {
  (void)scale_grad_by_freq;
  (void)sparse;
  return shim_call(__func__, [&] {
    return embedding_bag(ops::optional_tensor(per_sample_weights), weight, indices, offsets, mode,
                         include_last_offset != 0, padding_idx, true, ret0, ret1, ret2, ret3);
  });
}

}  // extern "C"
