// The device-neutral rules of the selection family, as torch's meta
// functions and argument checks give them: kthvalue and mode (dimension
// wrapping, k's range, keepdim output sizes), median and nanmedian (dtypes),
// searchsorted and bucketize (boundary/value shape agreement, side/right,
// sorter, the common dtype both are compared in), histc and histogramdd
// (bins, ranges, weights, outer-edge selection), repeat_interleave and
// segment_reduce (repeats/lengths/offsets shapes and dtypes). Outputs are
// contiguous, as torch allocates them.
#pragma once

#include <cstdint>
#include <vector>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

// kthvalue and mode: one value per line along |dim|.
struct LineReduceArgs {
  const TensorImpl* self = nullptr;
  int64_t dim = 0;     // wrapped; 0 for a 0-d input
  int64_t length = 1;  // the dimension's size (1 for a 0-d input)
  int64_t k = 1;       // kthvalue's k (1-based)
  DimVector out_sizes, out_strides;  // contiguous
};
Result<LineReduceArgs> kthvalue_args(AtenTensorHandle self, int64_t k, int64_t dim, bool keepdim);
Result<LineReduceArgs> mode_args(AtenTensorHandle self, int64_t dim, bool keepdim);
// median and nanmedian of every element; |op| names the op in messages.
Result<const TensorImpl*> median_args(AtenTensorHandle self, const char* op);

// searchsorted and bucketize.
struct SearchArgs {
  const TensorImpl* boundaries = nullptr;
  const TensorImpl* values = nullptr;  // null for searchsorted.Scalar
  const TensorImpl* sorter = nullptr;  // optional, int64, boundaries' shape
  double scalar = 0;                   // searchsorted.Scalar's value
  DType compare_dtype = DType::kFloat32;  // torch's result_type of the two
  DType out_dtype = DType::kInt64;
  bool right = false;   // upper bound (first element > value) instead of lower
  int64_t rows = 1;     // boundary rows (1 when boundaries are 1-D)
  int64_t length = 0;   // boundaries.size(-1)
  DimVector out_sizes;  // the values' sizes (0-d for a scalar), contiguous
};
// |values| null means the Scalar overload with |scalar|.
Result<SearchArgs> searchsorted_args(AtenTensorHandle sorted_sequence, AtenTensorHandle values, double scalar,
                                     bool out_int32, bool right, const char** side, AtenTensorHandle* sorter);
Result<SearchArgs> bucketize_args(AtenTensorHandle self, AtenTensorHandle boundaries, bool out_int32, bool right);

// histc and histogramdd (histogram.bin_ct is histogramdd over one column).
struct HistArgs {
  const TensorImpl* self = nullptr;
  const TensorImpl* weight = nullptr;
  int64_t rows = 0;            // samples
  int64_t dims = 1;            // D: the input's innermost size (1 for histc/histogram)
  std::vector<int64_t> bins;   // per dimension
  std::vector<double> range;   // 2 * D requested edges, empty when absent
  bool density = false;
};
// histc: any shape of floating input, |bins| > 0, min <= max.
Result<HistArgs> histc_args(AtenTensorHandle self, int64_t bins, double min, double max);
// histogram.bin_ct: the input flattened to one column.
Result<HistArgs> histogram_args(AtenTensorHandle self, int64_t bins, const double** range, int64_t range_len,
                                AtenTensorHandle* weight, bool density);
// _histogramdd_from_bin_cts: input [..., D], D == bins_len.
Result<HistArgs> histogramdd_args(AtenTensorHandle self, const int64_t* bins, int64_t bins_len, const double** range,
                                  int64_t range_len, AtenTensorHandle* weight, bool density);
// histc's outer edges once the data's extremes are known (|have_data|): an
// empty range [v, v] widens to [v - 1, v + 1]; both must be finite.
Status histc_finish_edges(double* lo, double* hi);
// histogramdd's, per dimension |d|: [v, v] widens to [v - 0.5, v + 0.5].
Status histogramdd_finish_edges(int64_t d, double* lo, double* hi);

// repeat_interleave.Tensor: 1-D int32/int64 repeats; the output's length
// (when given) must be >= 0.
Result<const TensorImpl*> repeat_interleave_args(AtenTensorHandle repeats, const int64_t* output_size);

enum class SegmentReduce { kMax, kMin, kSum, kMean, kProd };
struct SegmentArgs {
  const TensorImpl* data = nullptr;
  const TensorImpl* lengths = nullptr;  // exactly one of lengths/offsets
  const TensorImpl* offsets = nullptr;
  SegmentReduce reduce = SegmentReduce::kSum;
  int64_t axis = 0;             // wrapped
  int64_t outer = 1;            // product of data's sizes before axis
  int64_t axis_size = 0;        // data.size(axis)
  int64_t inner = 1;            // product after axis
  int64_t segments = 0;         // output size along axis
  bool unsafe = false;
  bool has_initial = false;
  double initial = 0;
  DimVector out_sizes;          // contiguous
};
Result<SegmentArgs> segment_reduce_args(AtenTensorHandle data, const char* reduce, AtenTensorHandle* lengths,
                                        AtenTensorHandle* indices, AtenTensorHandle* offsets, int64_t axis,
                                        bool unsafe, const double* initial);

}  // namespace ops
}  // namespace aotirt
