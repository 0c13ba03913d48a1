// Argument, shape and dtype rules of the selection family (see
// selection_args.h). Messages follow torch's wording where a user would
// search for it; the shim wrapper prefixes the op's name.
#include "ops/selection_args.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "base/status.h"
#include "core/dtype.h"
#include "ops/op_args.h"

namespace aotirt {
namespace ops {
namespace {

bool is_floating(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}

// The real dtypes the CPU kernels here read: the ones torch's sort-based
// kernels dispatch on (bool is added per op where torch takes it).
bool is_real(DType d) {
  switch (d) {
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kBool:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64: return true;
    default: return false;
  }
}

Status wrap_dim(const TensorImpl& t, int64_t dim, int64_t* out) {
  const int64_t extent = t.dim() == 0 ? 1 : t.dim();
  AOTIRT_ENSURE(dim >= -extent && dim < extent, kInvalidArgument,
                "dim {} is out of range for a tensor of shape {} (expected in [{}, {}])", dim, shape_str(t), -extent,
                extent - 1);
  *out = dim < 0 ? dim + extent : dim;
  return Status();
}

Result<LineReduceArgs> line_reduce(AtenTensorHandle self, int64_t dim, bool keepdim, bool allow_bool,
                                   const char* op) {
  LineReduceArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  const TensorImpl& t = *a.self;
  AOTIRT_ENSURE(is_real(t.dtype()) && (allow_bool || t.dtype() != DType::kBool), kUnimplemented,
                "'self' has dtype {}, which {} does not take", dtype_name(t.dtype()), op);
  AOTIRT_RETURN_IF_ERROR(wrap_dim(t, dim, &a.dim));
  a.length = t.dim() == 0 ? 1 : t.sizes()[a.dim];
  AOTIRT_ENSURE(a.length > 0, kInvalidArgument, "{}(): Expected reduction dim {} to have non-zero size", op, a.dim);
  std::vector<int64_t> sizes;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d != a.dim)
      sizes.push_back(t.sizes()[d]);
    else if (keepdim)
      sizes.push_back(1);
  }
  a.out_sizes = DimVector(sizes);
  a.out_strides = contiguous_strides(a.out_sizes);
  return a;
}

// torch's promote_types for two real dtypes (kept private: other op
// families carry their own).
DType search_promote(DType a, DType b);

// c10's result_type for a dimensioned tensor of |higher| against a 0-d
// tensor or wrapped number of |lower|: the lower-priority operand only
// matters when it is of a higher category.
DType combine_categories(DType higher, DType lower) {
  if (is_floating(higher)) return higher;
  if (higher == DType::kBool || is_floating(lower)) return search_promote(higher, lower);
  return higher;
}

Status check_searchable(DType d, const char* what) {
  AOTIRT_ENSURE(is_real(d), kUnimplemented, "'{}' has dtype {}, which searchsorted does not take", what,
                dtype_name(d));
  return Status();
}

Result<std::vector<double>> read_range(const double** range, int64_t range_len) {
  std::vector<double> r;
  if (range == nullptr) return r;
  AOTIRT_ENSURE(range_len == 0 || *range != nullptr, kInvalidArgument, "'range' has {} elements but no data",
                range_len);
  r.assign(*range, *range + range_len);
  return r;
}

Status check_bins(int64_t bins, int64_t d) {
  AOTIRT_ENSURE(bins > 0, kInvalidArgument, "bins must be > 0, but got {} for dimension {}", bins, d);
  return Status();
}

Status check_hist_dtype(const TensorImpl& t, const char* op) {
  AOTIRT_ENSURE(t.dtype() == DType::kFloat32 || t.dtype() == DType::kFloat64, kUnimplemented,
                "'self' has dtype {}; {} takes float32 and float64 only, as torch's CPU kernel", dtype_name(t.dtype()),
                op);
  return Status();
}

Status check_weight(const HistArgs& a, const DimVector& want_sizes) {
  if (!a.weight) return Status();
  AOTIRT_ENSURE(a.weight->dtype() == a.self->dtype(), kInvalidArgument,
                "'weight' has dtype {} but 'self' has dtype {}; they must have the same dtype",
                dtype_name(a.weight->dtype()), dtype_name(a.self->dtype()));
  AOTIRT_ENSURE(a.weight->sizes() == want_sizes, kInvalidArgument,
                "'weight' has shape {} but must have shape {} (the input's, without its innermost dimension for "
                "histogramdd)",
                shape_str(*a.weight), dims_to_string(want_sizes.data(), want_sizes.size()));
  return Status();
}

// A given range is checked as torch checks it, per dimension, before any
// data is read.
Status check_given_range(HistArgs* a) {
  if (a->range.empty()) return Status();
  for (int64_t d = 0; d < a->dims; ++d)
    AOTIRT_RETURN_IF_ERROR(histogramdd_finish_edges(d, &a->range[2 * d], &a->range[2 * d + 1]));
  return Status();
}

DType search_promote(DType a, DType b) {
  if (a == b) return a;
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa && fb) {
    if ((a == DType::kFloat16 && b == DType::kBFloat16) || (a == DType::kBFloat16 && b == DType::kFloat16))
      return DType::kFloat32;
    auto rank = [](DType d) { return d == DType::kFloat64 ? 3 : d == DType::kFloat32 ? 2 : 1; };
    return rank(a) >= rank(b) ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  if ((a == DType::kUInt8 && b == DType::kInt8) || (a == DType::kInt8 && b == DType::kUInt8)) return DType::kInt16;
  if (a == DType::kUInt8) return b;  // b is a wider signed type
  if (b == DType::kUInt8) return a;
  return dtype_size(a) >= dtype_size(b) ? a : b;
}

}  // namespace

Result<LineReduceArgs> kthvalue_args(AtenTensorHandle self, int64_t k, int64_t dim, bool keepdim) {
  AOTIRT_ASSIGN_OR_RETURN(LineReduceArgs a, line_reduce(self, dim, keepdim, false, "kthvalue"));
  AOTIRT_ENSURE(k >= 1 && k <= a.length, kInvalidArgument,
                "kthvalue(): selected number k {} out of range for dimension {} of size {}", k, a.dim, a.length);
  a.k = k;
  return a;
}

Result<LineReduceArgs> mode_args(AtenTensorHandle self, int64_t dim, bool keepdim) {
  return line_reduce(self, dim, keepdim, true, "mode");
}

Result<const TensorImpl*> median_args(AtenTensorHandle self, const char* op) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, require_tensor(self, "self"));
  AOTIRT_ENSURE(is_real(t->dtype()) && t->dtype() != DType::kBool, kUnimplemented,
                "'self' has dtype {}, which {} does not take", dtype_name(t->dtype()), op);
  return t;
}

Result<SearchArgs> searchsorted_args(AtenTensorHandle sorted_sequence, AtenTensorHandle values, double scalar,
                                     bool out_int32, bool right, const char** side, AtenTensorHandle* sorter) {
  SearchArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.boundaries, require_tensor(sorted_sequence, "sorted_sequence"));
  const TensorImpl& b = *a.boundaries;
  if (values) {
    AOTIRT_ASSIGN_OR_RETURN(a.values, require_tensor(values, "self"));
  }
  a.scalar = scalar;
  AOTIRT_RETURN_IF_ERROR(check_searchable(b.dtype(), "sorted_sequence"));
  if (a.values) AOTIRT_RETURN_IF_ERROR(check_searchable(a.values->dtype(), "self"));
  AOTIRT_ENSURE(b.dim() > 0, kInvalidArgument, "boundaries tensor should have positive dimension, but got 0 dimension");
  const int64_t vdim = a.values ? a.values->dim() : 0;
  AOTIRT_ENSURE(vdim > 0 || b.dim() == 1, kInvalidArgument,
                "input value can be a scalar only when boundaries tensor dimension is 1, but got boundaries "
                "tensor dim({})",
                b.dim());
  if (b.dim() > 1) {
    bool match = vdim == b.dim();
    for (int64_t d = 0; match && d + 1 < b.dim(); ++d) match = b.sizes()[d] == a.values->sizes()[d];
    AOTIRT_ENSURE(match, kInvalidArgument,
                  "boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and "
                  "input value tensor must match, but got boundaries tensor {} and input value tensor {}",
                  shape_str(b), shape_str(*a.values));
  }
  a.right = right;
  if (side) {
    AOTIRT_ENSURE(*side != nullptr, kInvalidArgument, "'side' points to a null string");
    const bool is_left = std::strcmp(*side, "left") == 0, is_right = std::strcmp(*side, "right") == 0;
    AOTIRT_ENSURE(is_left || is_right, kInvalidArgument, "side can only be 'left' or 'right' but got {}", *side);
    AOTIRT_ENSURE(!(is_left && right), kInvalidArgument,
                  "side and right can't be set to opposites, got side of left while right was True");
    a.right = is_right;
  }
  a.sorter = optional_tensor(sorter);
  if (a.sorter) {
    AOTIRT_ENSURE(a.sorter->dtype() == DType::kInt64, kInvalidArgument,
                  "sorter must be a tensor of long dtype but got dtype {}", dtype_name(a.sorter->dtype()));
    AOTIRT_ENSURE(a.sorter->sizes() == b.sizes(), kInvalidArgument,
                  "boundary and sorter must have the same size, but got boundary tensor {} and sorter tensor {}",
                  shape_str(b), shape_str(*a.sorter));
  }
  a.length = b.sizes()[b.dim() - 1];
  a.rows = 1;
  for (int64_t d = 0; d + 1 < b.dim(); ++d) a.rows *= b.sizes()[d];
  AOTIRT_ENSURE(!out_int32 || a.length < std::numeric_limits<int32_t>::max(), kInvalidArgument,
                "the size of boundaries' last dimension ({}) must be less than 2^31 - 1 with out_int32", a.length);
  a.out_dtype = out_int32 ? DType::kInt32 : DType::kInt64;
  if (!a.values) {
    // The scalar is a wrapped double: it counts as the default float dtype.
    a.compare_dtype = combine_categories(b.dtype(), DType::kFloat32);
  } else if (a.values->dim() == 0) {
    a.compare_dtype = combine_categories(b.dtype(), a.values->dtype());
  } else {
    a.compare_dtype = search_promote(b.dtype(), a.values->dtype());
  }
  AOTIRT_ENSURE(a.compare_dtype != DType::kBool, kUnimplemented,
                "sorted_sequence and self compare as bool, which torch's searchsorted does not implement");
  if (a.values) a.out_sizes = a.values->sizes();
  return a;
}

Result<SearchArgs> bucketize_args(AtenTensorHandle self, AtenTensorHandle boundaries, bool out_int32, bool right) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* b, require_tensor(boundaries, "boundaries"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* v, require_tensor(self, "self"));
  (void)v;
  AOTIRT_ENSURE(b->dim() == 1, kInvalidArgument, "boundaries tensor must be 1 dimension, but got dim({})", b->dim());
  return searchsorted_args(boundaries, self, 0.0, out_int32, right, nullptr, nullptr);
}

Status histc_finish_edges(double* lo, double* hi) {
  if (*lo == *hi) {
    *lo -= 1;
    *hi += 1;
  }
  AOTIRT_ENSURE(std::isfinite(*lo) && std::isfinite(*hi), kInvalidArgument, "range of [{}, {}] is not finite", *lo,
                *hi);
  AOTIRT_ENSURE(*lo < *hi, kInvalidArgument, "max must be larger than min (got min {} and max {})", *lo, *hi);
  return Status();
}

Status histogramdd_finish_edges(int64_t d, double* lo, double* hi) {
  AOTIRT_ENSURE(std::isfinite(*lo) && std::isfinite(*hi), kInvalidArgument,
                "dimension {}'s range [{}, {}] is not finite", d, *lo, *hi);
  AOTIRT_ENSURE(*lo <= *hi, kInvalidArgument, "min should not exceed max, but got min {} max {} for dimension {}", *lo,
                *hi, d);
  if (*lo == *hi) {
    *lo -= 0.5;
    *hi += 0.5;
  }
  return Status();
}

Result<HistArgs> histc_args(AtenTensorHandle self, int64_t bins, double min, double max) {
  HistArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(a.self->dtype(), "self"));
  AOTIRT_RETURN_IF_ERROR(check_bins(bins, 0));
  a.bins = {bins};
  a.rows = a.self->numel();
  a.range = {min, max};
  // An empty range means "the data's extremes", read by the kernel; any
  // other is final now.
  if (min != max) AOTIRT_RETURN_IF_ERROR(histc_finish_edges(&a.range[0], &a.range[1]));
  return a;
}

Result<HistArgs> histogram_args(AtenTensorHandle self, int64_t bins, const double** range, int64_t range_len,
                                AtenTensorHandle* weight, bool density) {
  HistArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_hist_dtype(*a.self, "histogram"));
  AOTIRT_RETURN_IF_ERROR(check_bins(bins, 0));
  a.bins = {bins};
  a.rows = a.self->numel();
  a.density = density;
  AOTIRT_ASSIGN_OR_RETURN(a.range, read_range(range, range_len));
  AOTIRT_ENSURE(a.range.empty() || a.range.size() == 2, kInvalidArgument,
                "for a 1-dimensional histogram range should have 2 elements, but got {}", a.range.size());
  a.weight = optional_tensor(weight);
  AOTIRT_RETURN_IF_ERROR(check_weight(a, a.self->sizes()));
  AOTIRT_RETURN_IF_ERROR(check_given_range(&a));
  return a;
}

Result<HistArgs> histogramdd_args(AtenTensorHandle self, const int64_t* bins, int64_t bins_len, const double** range,
                                  int64_t range_len, AtenTensorHandle* weight, bool density) {
  HistArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_hist_dtype(*a.self, "histogramdd"));
  const TensorImpl& t = *a.self;
  AOTIRT_ENSURE(t.dim() >= 2, kInvalidArgument, "input tensor should have at least 2 dimensions, got shape {}",
                shape_str(t));
  a.dims = t.sizes()[t.dim() - 1];
  AOTIRT_ENSURE(bins_len == a.dims, kInvalidArgument,
                "the size of bins ({}) must be equal to the innermost dimension of the input ({})", bins_len, a.dims);
  AOTIRT_ENSURE(a.dims > 0, kUnimplemented, "a histogram of 0 dimensions (input shape {}) is not supported",
                shape_str(t));
  AOTIRT_ENSURE(bins != nullptr, kInvalidArgument, "'bins' is null");
  int64_t total = 1;
  for (int64_t d = 0; d < a.dims; ++d) {
    AOTIRT_RETURN_IF_ERROR(check_bins(bins[d], d));
    AOTIRT_ENSURE(total <= std::numeric_limits<int64_t>::max() / bins[d], kInvalidArgument,
                  "the histogram's {} bins per dimension overflow int64", dims_to_string(bins, bins_len));
    total *= bins[d];
  }
  a.bins.assign(bins, bins + bins_len);
  a.rows = 1;
  for (int64_t d = 0; d + 1 < t.dim(); ++d) a.rows *= t.sizes()[d];
  a.density = density;
  AOTIRT_ASSIGN_OR_RETURN(a.range, read_range(range, range_len));
  AOTIRT_ENSURE(a.range.empty() || static_cast<int64_t>(a.range.size()) == 2 * a.dims, kInvalidArgument,
                "for a {}-dimensional histogram range should have {} elements, but got {}", a.dims, 2 * a.dims,
                a.range.size());
  a.weight = optional_tensor(weight);
  DimVector lead(t.sizes().data(), t.dim() - 1);
  AOTIRT_RETURN_IF_ERROR(check_weight(a, lead));
  AOTIRT_RETURN_IF_ERROR(check_given_range(&a));
  return a;
}

Result<const TensorImpl*> repeat_interleave_args(AtenTensorHandle repeats, const int64_t* output_size) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* r, require_tensor(repeats, "repeats"));
  AOTIRT_ENSURE(r->dim() == 1, kInvalidArgument, "repeat_interleave only accept 1D vector as repeat, got shape {}",
                shape_str(*r));
  AOTIRT_ENSURE(r->dtype() == DType::kInt32 || r->dtype() == DType::kInt64, kUnimplemented,
                "'repeats' has dtype {}; repeat_interleave takes int32 and int64 repeats", dtype_name(r->dtype()));
  AOTIRT_ENSURE(output_size == nullptr || *output_size >= 0, kInvalidArgument, "output_size {} is negative",
                output_size ? *output_size : 0);
  return r;
}

Result<SegmentArgs> segment_reduce_args(AtenTensorHandle data, const char* reduce, AtenTensorHandle* lengths,
                                        AtenTensorHandle* indices, AtenTensorHandle* offsets, int64_t axis,
                                        bool unsafe, const double* initial) {
  SegmentArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.data, require_tensor(data, "data"));
  const TensorImpl& t = *a.data;
  AOTIRT_ENSURE(reduce != nullptr, kInvalidArgument, "'reduce' is a null string");
  const std::string r = reduce;
  if (r == "max" || r == "amax")
    a.reduce = SegmentReduce::kMax;
  else if (r == "min" || r == "amin")
    a.reduce = SegmentReduce::kMin;
  else if (r == "sum")
    a.reduce = SegmentReduce::kSum;
  else if (r == "mean")
    a.reduce = SegmentReduce::kMean;
  else if (r == "prod")
    a.reduce = SegmentReduce::kProd;
  else
    return AOTIRT_STATUS(kInvalidArgument, "reduce argument must be either sum, prod, mean, amax or amin, got {}", r);
  AOTIRT_ENSURE(optional_tensor(indices) == nullptr, kUnimplemented,
                "'indices' given: indices based reduction is not supported (torch does not support it either)");
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(t.dtype(), "data"));
  a.lengths = optional_tensor(lengths);
  if (!a.lengths) a.offsets = optional_tensor(offsets);
  const TensorImpl* seg = a.lengths ? a.lengths : a.offsets;
  AOTIRT_ENSURE(seg != nullptr, kInvalidArgument, "either lengths or offsets must be defined");
  const char* seg_name = a.lengths ? "lengths" : "offsets";
  AOTIRT_ENSURE(seg->dtype() == DType::kInt32 || seg->dtype() == DType::kInt64, kUnimplemented,
                "'{}' has dtype {}; segment_reduce takes int32 and int64 {}", seg_name, dtype_name(seg->dtype()),
                seg_name);
  AOTIRT_ENSURE(seg->dim() >= 1 && t.dim() >= seg->dim(), kInvalidArgument,
                "'{}' of shape {} must have at least one dimension and at most as many as 'data' (shape {})",
                seg_name, shape_str(*seg), shape_str(t));
  AOTIRT_ENSURE(axis >= -t.dim() && axis < t.dim(), kInvalidArgument,
                "axis {} is out of range for data of shape {} (expected in [{}, {}])", axis, shape_str(t), -t.dim(),
                t.dim() - 1);
  a.axis = axis < 0 ? axis + t.dim() : axis;
  AOTIRT_ENSURE(a.axis == seg->dim() - 1, kInvalidArgument,
                "expected axis to be the last dimension of {} (of shape {}) but got {}", seg_name, shape_str(*seg),
                a.axis);
  for (int64_t d = 0; d < a.axis; ++d)
    AOTIRT_ENSURE(seg->sizes()[d] == t.sizes()[d], kInvalidArgument,
                  "'{}' of shape {} must match data's shape {} in the dimensions before axis {}", seg_name,
                  shape_str(*seg), shape_str(t), a.axis);
  const int64_t last = seg->sizes()[seg->dim() - 1];
  a.segments = a.lengths ? last : last - 1;
  AOTIRT_ENSURE(a.segments >= 0, kInvalidArgument, "'offsets' must hold at least one element along axis");
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d < a.axis) a.outer *= t.sizes()[d];
    if (d > a.axis) a.inner *= t.sizes()[d];
  }
  a.axis_size = t.sizes()[a.axis];
  a.unsafe = unsafe;
  a.has_initial = initial != nullptr;
  a.initial = initial ? *initial : 0.0;
  a.out_sizes = t.sizes();
  a.out_sizes[a.axis] = a.segments;
  return a;
}

}  // namespace ops
}  // namespace aotirt
