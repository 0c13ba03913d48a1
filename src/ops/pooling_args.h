// The device-neutral rules of the pooling ops (avg, max, adaptive avg/max,
// fractional max, max_unpool; 2-d and 3-d) and of embedding_bag, as torch
// 2.11's meta functions and CPU checks give them: which argument lists are
// accepted, which dtypes, which dims may be empty, the output sizes (with
// ceil_mode and padding) and layouts (channels-last in, channels-last out
// where torch keeps it), and the auxiliary outputs of embedding_bag with
// their sizes. Backends walk every input as a 5-d [N, C, T, H, W] view
// (2-d ops have T = 1, unbatched inputs N = 1), described here.
#pragma once

#include <cstdint>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

enum class PoolKind { kAvg, kMax, kAdaptiveAvg, kAdaptiveMax, kFractionalMax, kUnpool };

// Whose rules an argument function applies where torch's CPU and CUDA
// kernels differ: the CUDA ones take only floating dtypes for avg and max
// pooling (and half types for avg_pool3d, which the CPU one refuses), write
// max_unpool2d contiguous whatever the input's layout, and keep an
// unbatched max_pool3d input's channels-last-3d layout (as torch's CPU one
// does too, which the CPU rules here do not yet follow).
enum class PoolDevice { kCpu, kCuda };

struct PoolArgs {
  PoolKind kind = PoolKind::kAvg;
  const TensorImpl* self = nullptr;
  const TensorImpl* aux = nullptr;  // max_unpool's indices, fractional's random_samples
  int64_t spatial = 2;              // 2 or 3
  bool batched = false;
  // The 5-d view: [N, C, T, H, W]; T is 1 for 2-d ops.
  int64_t batch = 1, channels = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  bool ceil_mode = false, count_include_pad = true;
  bool has_divisor = false;
  int64_t divisor = 0;
  // The outputs' (values and indices alike) sizes and strides.
  DimVector out_sizes, out_strides;
  // Whether the outputs are channels-last because the input is (torch's
  // suggest_memory_format): torch's kernels then take their channels-last
  // path, whose rounding may differ (adaptive average pooling).
  bool channels_last = false;
  // Element strides of self (and of aux for max_unpool) as [N, C, T, H, W]
  // (0 where the dim is absent).
  int64_t in_strides5[5] = {0, 0, 0, 0, 0};
  int64_t aux_strides5[5] = {0, 0, 0, 0, 0};
};

// [N, C, T, H, W] element strides for the 5-d view of a tensor of an op
// with |spatial| spatial dims, |batched| or not.
void strides5(const DimVector& sizes, const DimVector& strides, int64_t spatial, bool batched, int64_t out[5]);

// The argument lists are (pointer, length) pairs as in the shims.
struct IntList {
  const int64_t* data;
  int64_t len;
};

Result<PoolArgs> avg_pool_args(int64_t spatial, AtenTensorHandle self, IntList kernel, IntList stride, IntList padding,
                               bool ceil_mode, bool count_include_pad, const int64_t* divisor_override,
                               PoolDevice device = PoolDevice::kCpu);
Result<PoolArgs> max_pool_args(int64_t spatial, AtenTensorHandle self, IntList kernel, IntList stride, IntList padding,
                               IntList dilation, bool ceil_mode, PoolDevice device = PoolDevice::kCpu);
Result<PoolArgs> adaptive_pool_args(int64_t spatial, bool is_max, AtenTensorHandle self, IntList output_size);
Result<PoolArgs> fractional_max_pool_args(int64_t spatial, AtenTensorHandle self, IntList kernel, IntList output_size,
                                          AtenTensorHandle random_samples);
// |stride| and |padding| are max_unpool3d's (checked as torch does, otherwise
// unused); max_unpool2d ignores them.
Result<PoolArgs> max_unpool_args(int64_t spatial, AtenTensorHandle self, AtenTensorHandle indices,
                                 IntList output_size, IntList stride, IntList padding,
                                 PoolDevice device = PoolDevice::kCpu);

enum class BagMode { kSum = 0, kMean = 1, kMax = 2 };

struct EmbeddingBagArgs {
  const TensorImpl* weight = nullptr;
  const TensorImpl* indices = nullptr;
  const TensorImpl* offsets = nullptr;
  const TensorImpl* per_sample_weights = nullptr;  // null when absent
  BagMode mode = BagMode::kSum;
  bool include_last_offset = false;
  int64_t padding_idx = -1;  // as passed: an index below 0 pads nothing
  DType index_dtype = DType::kInt64;  // indices' and offsets' common dtype (int32 or int64)
  int64_t num_indices = 0, num_offsets = 0, num_bags = 0, dim = 0;
  // torch's "fast path" (float/half/bfloat16 weight with unit column stride,
  // no padding_idx): sums bag b over [offsets[b], offsets[b + 1]) and skips
  // offset2bag for mode sum; otherwise bags follow offset2bag.
  bool fast_path = false;
  // The sizes torch gives the auxiliary outputs.
  int64_t offset2bag_size = 0;
  int64_t bag_size_size = 0;
  DimVector max_indices_sizes;
};

// |forward_only| is _embedding_bag_forward_only (bag_size is then only
// computed for mean and max). Checks shapes and dtypes only: the values of
// indices and offsets live on the device and are the backend's to check.
Result<EmbeddingBagArgs> embedding_bag_args(AtenTensorHandle weight, AtenTensorHandle indices,
                                            AtenTensorHandle offsets, int64_t mode,
                                            const TensorImpl* per_sample_weights, bool include_last_offset,
                                            int64_t padding_idx, bool forward_only);

// The auxiliary outputs' sizes torch's CUDA kernel gives, which has no fast
// path and the same outputs for _embedding_bag_forward_only: offset2bag one
// per index, bag_size one per offset (include_last_offset's last one is
// never written), max_indices [num_bags, dim] for max and empty otherwise.
struct EmbeddingBagCudaSizes {
  int64_t offset2bag_size = 0;
  int64_t bag_size_size = 0;
  DimVector max_indices_sizes;
};
EmbeddingBagCudaSizes embedding_bag_cuda_sizes(const EmbeddingBagArgs& a);

}  // namespace ops
}  // namespace aotirt
