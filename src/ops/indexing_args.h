// The device-neutral rules of the indexing ops, as torch's meta functions and
// checks give them: which index tensors an optional-index list holds and the
// dims each covers (bool masks cover one dim per mask dim), the broadcast of
// index tensors and the shape of an advanced-indexing result, the layout
// TensorIterator gives index.Tensor's output, the scatter / scatter_reduce /
// index_reduce shape and dtype checks, and the resize of an out= tensor.
// Work that needs the index values (masks to positions, bounds) is the
// backend's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

// One entry of an optional-index list that holds a tensor.
struct IndexEntry {
  const TensorImpl* tensor = nullptr;
  int64_t first_dim = 0;  // the first dim of self it indexes
  bool is_mask = false;   // bool or uint8: covers tensor->dim() dims
};

struct IndexArgs {
  const TensorImpl* self = nullptr;
  std::vector<IndexEntry> entries;  // in dim order
};

// Checks index.Tensor's / index_put's list: at most self.dim() entries,
// index dtypes long, int, byte or bool, mask shapes equal to the dims they
// cover, and at least one index given.
Result<IndexArgs> index_args(AtenTensorHandle self, const AtenTensorHandle** indices, int64_t indices_len);

// Broadcasts |shapes| (numpy rules); INVALID_ARGUMENT naming them otherwise.
Result<DimVector> broadcast_shapes(const std::vector<DimVector>& shapes, const char* what);

// The geometry of an advanced index once every index is an integer tensor
// (masks replaced by one position tensor per covered dim).
struct AdvancedIndexShape {
  DimVector index_shape;             // the broadcast shape B of the index tensors
  std::vector<int64_t> indexed_dims;  // self dims with an index, ascending
  std::vector<int64_t> rest_dims;     // self dims without one, ascending
  bool adjacent = true;               // indexed dims consecutive: B replaces them in place
  DimVector result_sizes;
  // For each result dim: >= 0, the index of the B dim; < 0, -(1 + j) for rest_dims[j].
  std::vector<int64_t> result_dim_source;
};

// |dims[i]| is the self dim indexed by an index tensor of shape |shapes[i]|.
Result<AdvancedIndexShape> advanced_index_shape(const TensorImpl& self, const std::vector<int64_t>& dims,
                                                const std::vector<DimVector>& shapes);

// The strides torch gives index.Tensor's result of |s| over |self| when the
// integer index tensors (masks already replaced by positions) have dtypes
// |index_dtypes| and strides |index_bstrides| once broadcast to
// s.index_shape: TensorIterator's layout over self restrided to the result
// and each index viewed in the result's rank.
DimVector index_result_strides(const TensorImpl& self, const AdvancedIndexShape& s,
                               const std::vector<DType>& index_dtypes, const std::vector<DimVector>& index_bstrides);

// The strides TensorIterator gives an output of |sizes| computed from inputs
// of those sizes with |input_strides| (0 where an input broadcasts): dense,
// with the dims ordered as the inputs' strides order them.
DimVector iterator_output_strides(const DimVector& sizes, const std::vector<DimVector>& input_strides);

// The strides torch's view gives a tensor of |sizes|/|strides| reshaped to
// |new_sizes| (same element count, viewable: here, size-1 dims inserted).
// They decide where TensorIterator orders the size-1 dims of an index.
DimVector view_strides(const DimVector& sizes, const DimVector& strides, const DimVector& new_sizes);

enum class ScatterReduce { kNone, kSum, kProd, kMean, kAmax, kAmin };
const char* scatter_reduce_name(ScatterReduce r);

struct ScatterArgs {
  TensorImpl* out = nullptr;
  const TensorImpl* self = nullptr;
  const TensorImpl* index = nullptr;
  const TensorImpl* src = nullptr;  // null for scatter.value_out
  int64_t dim = 0;                  // wrapped; 0 for a 0-d self
  ScatterReduce reduce = ScatterReduce::kNone;
  bool include_self = true;
};

// scatter.src_out / scatter.value_out (|src| null) / scatter_reduce.two_out
// (|reduce| non-null): torch's dim, dtype and shape checks. |out| is not
// resized here.
Result<ScatterArgs> scatter_args(AtenTensorHandle out, AtenTensorHandle self, int64_t dim, AtenTensorHandle index,
                                 AtenTensorHandle src, const char* reduce, bool include_self);

struct IndexReduceArgs {
  const TensorImpl* self = nullptr;
  const TensorImpl* index = nullptr;
  const TensorImpl* source = nullptr;
  int64_t dim = 0;  // wrapped; 0 for a 0-d self
  ScatterReduce reduce = ScatterReduce::kProd;
  bool include_self = true;
};

// index_reduce: reduce one of prod, mean, amax, amin; a vector index of
// int32/int64 with one entry per source slice; source of self's dtype and
// shape apart from dim.
Result<IndexReduceArgs> index_reduce_args(AtenTensorHandle self, int64_t dim, AtenTensorHandle index,
                                          AtenTensorHandle source, const char* reduce, bool include_self);

// Resizes |out| to |sizes| as torch's resize_output: kept when the sizes
// already match; else made contiguous, in its storage when that is large
// enough, else in a fresh one on its device (a borrowed buffer too small is
// an error).
Status resize_output(TensorImpl* out, const DimVector& sizes, const char* what);

// Fails as torch's checked scalar conversion does when |value| does not fit
// |dtype| (NaN into an integer, a finite value past the type's range; from
// an integer source, uint8 takes negatives down to -255, which wrap).
Status check_scalar_fits(double value, bool from_integral, DType dtype);

// True for the dtypes the indexing ops handle (bool, the integer types to
// int64, float16, bfloat16, float32, float64).
bool indexing_dtype(DType d);

}  // namespace ops
}  // namespace aotirt
