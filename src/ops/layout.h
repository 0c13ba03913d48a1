// The device-neutral op layer's stride rules: the layouts torch's meta
// functions give outputs (empty_like, channels-last), and the tests torch
// makes on an input's layout. Every backend's ops use these, so a rule is
// written once.
#pragma once

#include "core/tensor.h"

namespace aotirt {
namespace ops {

// True when |t|'s elements occupy exactly numel() consecutive slots in some
// order, as PyTorch's is_non_overlapping_and_dense.
bool is_non_overlapping_and_dense(const TensorImpl& t);

// Dense strides for |sizes| that order the dims as |strides| does (c10's
// infer_dense_strides: an insertion sort from "last dim fastest", so ties
// and zero strides keep that order).
DimVector dense_strides_like(const DimVector& sizes, const DimVector& strides);

// Strides of a fresh dense tensor laid out like |t|, as torch.empty_like
// (memory_format=preserve): |t|'s own strides when it is non-overlapping and
// dense, else dense_strides_like. Generated code relies on the latter for
// outputs whose input is a view into a fused buffer.
DimVector empty_like_strides(const TensorImpl& t);

// c10's suggest_memory_format test for 4-d (channels_last) and 5-d
// (channels_last_3d) tensors: strides that walk C, the spatial dims
// innermost first, then N; ambiguous cases (size-1 dims with equal strides)
// count as contiguous.
bool is_channels_last(const DimVector& sizes, const DimVector& strides);

// The strides PyTorch gives a channels-last tensor of |sizes| (rank 3 to 5:
// channels innermost, then the spatial dims, batch outermost). Unlike
// contiguous strides they multiply plain sizes, so an empty dim zeroes the
// strides outside it, as in PyTorch.
DimVector channels_last_strides(const DimVector& sizes);

// A view of |t| with |sizes| and contiguous strides; |t| must be contiguous
// with the same element count.
TensorImpl reshape_contiguous(const TensorImpl& t, const DimVector& sizes);

}  // namespace ops
}  // namespace aotirt
