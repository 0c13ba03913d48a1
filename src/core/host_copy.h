// Host-side strided copy with broadcasting and dtype conversion, for every
// dtype: the CPU backend's copies, and the host half of every other
// backend's.
#pragma once

#include "core/tensor.h"
#include "aotirt/status.h"

namespace aotirt {

// Copies |src| into |dst|, both in host memory. |src| broadcasts to |dst|'s
// shape (numpy rules); dtypes may differ.
Status host_copy_strided(const TensorImpl& dst, const TensorImpl& src);

// Strides of |src| expanded to |dst_sizes| (0 where it broadcasts), or an
// INVALID_ARGUMENT status when the shapes are not broadcastable.
Result<DimVector> broadcast_strides(const DimVector& src_sizes, const DimVector& src_strides,
                                    const DimVector& dst_sizes);

}  // namespace aotirt
