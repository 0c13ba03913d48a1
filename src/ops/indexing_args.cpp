// The indexing ops' argument, shape and layout rules (see indexing_args.h).
#include "ops/indexing_args.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/status.h"
#include "device/device.h"
#include "ops/layout.h"
#include "ops/op_args.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace ops {
namespace {

std::string dims_str(const DimVector& d) { return dims_to_string(d.data(), d.size()); }

Result<int64_t> wrap_dim(int64_t dim, const TensorImpl& t) {
  const int64_t extent = t.dim() == 0 ? 1 : t.dim();
  AOTIRT_ENSURE(dim >= -extent && dim < extent, kInvalidArgument,
                "dim {} is out of range for a tensor of shape {} (expected in [{}, {}])", dim, shape_str(t), -extent,
                extent - 1);
  return dim < 0 ? dim + extent : dim;
}

// Size and rank as torch's ensure_nonempty_*: a 0-d tensor counts as [1].
int64_t nonempty_dim(const TensorImpl& t) { return t.dim() == 0 ? 1 : t.dim(); }
int64_t nonempty_size(const TensorImpl& t, int64_t d) { return t.dim() == 0 ? 1 : t.sizes()[d]; }

bool is_index_int(DType d) { return d == DType::kInt64 || d == DType::kInt32; }

Result<ScatterReduce> parse_reduce(const char* reduce, bool index_reduce) {
  AOTIRT_ENSURE(reduce != nullptr, kInvalidArgument, "'reduce' is null");
  const std::string r(reduce);
  if (r == "prod") return ScatterReduce::kProd;
  if (r == "mean") return ScatterReduce::kMean;
  if (r == "amax") return ScatterReduce::kAmax;
  if (r == "amin") return ScatterReduce::kAmin;
  if (r == "sum" && !index_reduce) return ScatterReduce::kSum;
  if (index_reduce)
    return AOTIRT_STATUS(kInvalidArgument,
                         "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {}.", r);
  return AOTIRT_STATUS(kInvalidArgument, "reduce argument must be either sum, prod, mean, amax or amin, got {}", r);
}

}  // namespace

bool indexing_dtype(DType d) {
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

Status check_scalar_fits(double value, bool from_integral, DType dtype) {
  double lo = 0, hi = 0;
  bool integral = true;
  switch (dtype) {
    case DType::kUInt8: lo = from_integral ? -255.0 : 0.0; hi = 255; break;
    case DType::kInt8: lo = -128; hi = 127; break;
    case DType::kInt16: lo = -32768; hi = 32767; break;
    case DType::kInt32: lo = -2147483648.0; hi = 2147483647.0; break;
    case DType::kInt64: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
    case DType::kFloat16: lo = -65504.0; hi = 65504.0; integral = false; break;
    case DType::kBFloat16: lo = -3.3895313892515355e38; hi = 3.3895313892515355e38; integral = false; break;
    case DType::kFloat32: lo = -3.4028234663852886e38; hi = 3.4028234663852886e38; integral = false; break;
    default: return Status();  // float64 and bool take any value
  }
  bool overflows;
  if (std::isnan(value))
    overflows = integral;
  else if (std::isinf(value))
    overflows = integral;
  else
    overflows = value < lo || value > hi;
  AOTIRT_ENSURE(!overflows, kInvalidArgument, "value {} cannot be converted to type {} without overflow", value,
                dtype_name(dtype));
  return Status();
}

const char* scatter_reduce_name(ScatterReduce r) {
  switch (r) {
    case ScatterReduce::kSum: return "sum";
    case ScatterReduce::kProd: return "prod";
    case ScatterReduce::kMean: return "mean";
    case ScatterReduce::kAmax: return "amax";
    case ScatterReduce::kAmin: return "amin";
    default: return "none";
  }
}

Result<IndexArgs> index_args(AtenTensorHandle self, const AtenTensorHandle** indices, int64_t indices_len) {
  IndexArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  const TensorImpl& t = *a.self;
  AOTIRT_ENSURE(indices_len >= 0, kInvalidArgument, "indices_len_ {} is negative", indices_len);
  AOTIRT_ENSURE(indices_len == 0 || indices != nullptr, kInvalidArgument, "'indices' is null but indices_len_ is {}",
                indices_len);
  AOTIRT_ENSURE(indices_len <= t.dim(), kInvalidArgument, "too many indices for tensor of dimension {} (got {})",
                t.dim(), indices_len);
  int64_t cursor = 0;
  for (int64_t i = 0; i < indices_len; ++i) {
    if (indices[i] == nullptr) {  // no index: the whole dim
      ++cursor;
      continue;
    }
    AOTIRT_ENSURE(*indices[i] != nullptr, kInvalidArgument, "index {} points to a null tensor handle", i);
    const TensorImpl* it = impl_of(*indices[i]);
    const DType d = it->dtype();
    IndexEntry e;
    e.tensor = it;
    e.first_dim = cursor;
    if (d == DType::kBool || d == DType::kUInt8) {
      e.is_mask = true;
      AOTIRT_ENSURE(it->dim() > 0, kUnimplemented, "index {} is a 0-d mask, which aotirt does not index with", i);
      for (int64_t j = 0; j < it->dim(); ++j) {
        AOTIRT_ENSURE(cursor + j < t.dim(), kInvalidArgument,
                      "too many indices for tensor of dimension {} (mask {} covers dims {} to {})", t.dim(), i, cursor,
                      cursor + it->dim() - 1);
        AOTIRT_ENSURE(it->sizes()[j] == t.sizes()[cursor + j], kInvalidArgument,
                      "The shape of the mask {} at index {} does not match the shape of the indexed tensor {} at "
                      "index {}",
                      shape_str(*it), j, shape_str(t), cursor + j);
      }
      cursor += it->dim();
    } else {
      AOTIRT_ENSURE(is_index_int(d), kInvalidArgument,
                    "tensors used as indices must be long, int, byte or bool tensors (index {} is {})", i,
                    dtype_name(d));
      ++cursor;
    }
    a.entries.push_back(e);
  }
  AOTIRT_ENSURE(!a.entries.empty(), kInvalidArgument, "at least one index must be provided");
  AOTIRT_ENSURE(indexing_dtype(t.dtype()), kUnimplemented, "'self' has dtype {}, which aotirt does not index",
                dtype_name(t.dtype()));
  return a;
}

Result<DimVector> broadcast_shapes(const std::vector<DimVector>& shapes, const char* what) {
  int64_t rank = 0;
  for (const DimVector& s : shapes) rank = std::max(rank, s.size());
  DimVector out;
  out.resize(rank);
  for (int64_t i = 0; i < rank; ++i) out[i] = 1;
  for (const DimVector& s : shapes) {
    for (int64_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[rank - s.size() + i];
      const int64_t v = s[i];
      if (v == o || v == 1) continue;
      if (o == 1) {
        o = v;
        continue;
      }
      std::string all;
      for (const DimVector& x : shapes) all += (all.empty() ? "" : ", ") + dims_str(x);
      return AOTIRT_STATUS(kInvalidArgument, "shape mismatch: {} could not be broadcast together with shapes {}",
                           what, all);
    }
  }
  return out;
}

Result<AdvancedIndexShape> advanced_index_shape(const TensorImpl& self, const std::vector<int64_t>& dims,
                                                const std::vector<DimVector>& shapes) {
  AdvancedIndexShape s;
  AOTIRT_ASSIGN_OR_RETURN(s.index_shape, broadcast_shapes(shapes, "indexing tensors"));
  s.indexed_dims = dims;
  for (size_t i = 1; i < dims.size(); ++i)
    if (dims[i] != dims[i - 1] + 1) s.adjacent = false;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) s.rest_dims.push_back(d);
  std::vector<int64_t> sizes;
  auto push_b = [&] {
    for (int64_t j = 0; j < s.index_shape.size(); ++j) {
      sizes.push_back(s.index_shape[j]);
      s.result_dim_source.push_back(j);
    }
  };
  bool b_done = false;
  if (!s.adjacent) {
    push_b();
    b_done = true;
  }
  for (size_t j = 0; j < s.rest_dims.size(); ++j) {
    if (!b_done && s.rest_dims[j] > dims.front()) {
      push_b();
      b_done = true;
    }
    sizes.push_back(self.sizes()[s.rest_dims[j]]);
    s.result_dim_source.push_back(-1 - static_cast<int64_t>(j));
  }
  if (!b_done) push_b();
  s.result_sizes = DimVector(sizes);
  return s;
}

DimVector iterator_output_strides(const DimVector& sizes, const std::vector<DimVector>& input_strides) {
  const int64_t nd = sizes.size();
  if (nd == 0) return DimVector();
  // perm[0] is the fastest-moving dim; start from row-major order.
  std::vector<int64_t> perm(nd);
  for (int64_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  // 1: d0 goes after d1; -1: before; 0: the inputs do not say.
  auto should_swap = [&](int64_t d0, int64_t d1) -> int {
    for (const DimVector& st : input_strides) {
      const int64_t s0 = st[d0], s1 = st[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (sizes[d0] > sizes[d1]) return 1;
    }
    return 0;
  };
  // An insertion sort that stops at the first dim it must stay behind and
  // steps past the ones the inputs leave unordered, as TensorIterator does.
  for (int64_t i = 1; i < nd; ++i) {
    int64_t d1 = i;
    for (int64_t d0 = i - 1; d0 >= 0; --d0) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  bool row_major = true;
  for (int64_t i = 0; i < nd; ++i)
    if (perm[i] != nd - 1 - i) row_major = false;
  if (row_major) return contiguous_strides(sizes);
  DimVector strides;
  strides.resize(nd);
  int64_t next = 1;
  for (int64_t i = 0; i < nd; ++i) {
    strides[perm[i]] = next;
    next *= sizes[perm[i]];
  }
  return strides;
}

DimVector view_strides(const DimVector& sizes, const DimVector& strides, const DimVector& new_sizes) {
  const int64_t nd = sizes.size(), vd_count = new_sizes.size();
  DimVector out;
  out.resize(vd_count);
  for (int64_t i = 0; i < vd_count; ++i) out[i] = 1;
  if (nd == 0) return out;
  if (numel_of(sizes) == 0) return contiguous_strides(new_sizes);
  // Walk the old dims innermost first in chunks of mutually contiguous dims;
  // the new dims of each chunk get strides from the chunk's base stride, and
  // size-1 new dims take the running product there.
  int64_t view_d = vd_count - 1;
  int64_t base = strides[nd - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = nd - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out[view_d] = view_numel * base;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (d > 0) {
        base = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return out;
}

DimVector index_result_strides(const TensorImpl& self, const AdvancedIndexShape& s,
                               const std::vector<DType>& index_dtypes, const std::vector<DimVector>& index_bstrides) {
  const DimVector& rs = s.result_sizes;
  std::vector<DimVector> inputs;
  // Self restrided to the result: 0 along B, and where a size-1 dim of self
  // is broadcast.
  DimVector src;
  src.resize(rs.size());
  for (size_t d = 0; d < s.result_dim_source.size(); ++d) {
    const int64_t k = s.result_dim_source[d];
    src[d] = k >= 0 ? 0 : self.strides()[s.rest_dims[-1 - k]];
    if (k < 0 && self.sizes()[s.rest_dims[-1 - k]] == 1 && rs[d] != 1) src[d] = 0;
  }
  inputs.push_back(src);
  // Each index, expanded to B, viewed as [1]*before + B + [1]*after; its
  // size-1 dims keep the strides that view gives them unless the result is
  // longer there.
  const DimVector& b = s.index_shape;
  DimVector viewed;
  viewed.resize(rs.size());
  for (size_t d = 0; d < s.result_dim_source.size(); ++d) {
    const int64_t k = s.result_dim_source[d];
    viewed[d] = k >= 0 ? b[k] : 1;
  }
  for (size_t k = 0; k < index_bstrides.size(); ++k) {
    // torch converts an int32 index to int64 after expanding it, which
    // keeps a dense layout and makes any other one contiguous.
    DimVector bst = index_bstrides[k];
    if (index_dtypes[k] == DType::kInt32 &&
        !is_non_overlapping_and_dense(TensorImpl(StorageRef(), DType::kInt32, b, bst, 0)))
      bst = contiguous_strides(b);
    DimVector st = view_strides(b, bst, viewed);
    for (int64_t d = 0; d < rs.size(); ++d)
      if (viewed[d] == 1 && rs[d] != 1) st[d] = 0;
    inputs.push_back(st);
  }
  return iterator_output_strides(rs, inputs);
}

Result<ScatterArgs> scatter_args(AtenTensorHandle out, AtenTensorHandle self, int64_t dim, AtenTensorHandle index,
                                 AtenTensorHandle src, const char* reduce, bool include_self) {
  ScatterArgs a;
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* o, require_tensor(out, "out"));
  a.out = const_cast<TensorImpl*>(o);  // out= tensors are resized in place
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(a.index, require_tensor(index, "index"));
  if (src) a.src = impl_of(src);
  if (reduce) {
    AOTIRT_ASSIGN_OR_RETURN(a.reduce, parse_reduce(reduce, false));
  }
  a.include_self = include_self;
  const TensorImpl &t = *a.self, &ix = *a.index;
  AOTIRT_ASSIGN_OR_RETURN(a.dim, wrap_dim(dim, t));
  AOTIRT_ENSURE(is_index_int(ix.dtype()), kInvalidArgument, "scatter(): Expected dtype int32/int64 for index, got {}",
                dtype_name(ix.dtype()));
  if (a.src)
    AOTIRT_ENSURE(a.src->dtype() == t.dtype(), kInvalidArgument,
                  "scatter(): Expected self.dtype to be equal to src.dtype (self is {}, src is {})",
                  dtype_name(t.dtype()), dtype_name(a.src->dtype()));
  AOTIRT_ENSURE(indexing_dtype(t.dtype()), kUnimplemented, "'self' has dtype {}, which aotirt does not scatter",
                dtype_name(t.dtype()));
  AOTIRT_ENSURE(!(a.reduce == ScatterReduce::kMean && t.dtype() == DType::kBool), kUnimplemented,
                "scatter_reduce with reduce=mean is not implemented for bool, as in torch");
  AOTIRT_ENSURE(a.out->dtype() == t.dtype(), kInvalidArgument,
                "Expected out tensor to have dtype {}, but got {} instead", dtype_name(t.dtype()),
                dtype_name(a.out->dtype()));
  if (ix.numel() == 0) return a;
  AOTIRT_ENSURE(nonempty_dim(t) == nonempty_dim(ix), kInvalidArgument,
                "Index tensor must have the same number of dimensions as self tensor (index {}, self {})",
                shape_str(ix), shape_str(t));
  if (a.src)
    AOTIRT_ENSURE(nonempty_dim(*a.src) == nonempty_dim(ix), kInvalidArgument,
                  "Index tensor must have the same number of dimensions as src tensor (index {}, src {})",
                  shape_str(ix), shape_str(*a.src));
  bool wrong = false;
  for (int64_t d = 0; d < nonempty_dim(t); ++d) {
    if (d != a.dim && nonempty_size(ix, d) > nonempty_size(t, d)) wrong = true;
    if (a.src && nonempty_size(ix, d) > nonempty_size(*a.src, d)) wrong = true;
  }
  AOTIRT_ENSURE(!wrong, kInvalidArgument,
                "Expected index {} to be no larger than self {} apart from dimension {} and to be no larger size "
                "than src {}",
                shape_str(ix), shape_str(t), a.dim, a.src ? shape_str(*a.src) : std::string("(a scalar)"));
  return a;
}

Result<IndexReduceArgs> index_reduce_args(AtenTensorHandle self, int64_t dim, AtenTensorHandle index,
                                          AtenTensorHandle source, const char* reduce, bool include_self) {
  IndexReduceArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(a.index, require_tensor(index, "index"));
  AOTIRT_ASSIGN_OR_RETURN(a.source, require_tensor(source, "source"));
  AOTIRT_ASSIGN_OR_RETURN(a.reduce, parse_reduce(reduce, true));
  a.include_self = include_self;
  const TensorImpl &t = *a.self, &ix = *a.index, &src = *a.source;
  AOTIRT_ASSIGN_OR_RETURN(a.dim, wrap_dim(dim, t));
  AOTIRT_ENSURE(ix.dim() <= 1, kInvalidArgument,
                "index_reduce_(): Index is supposed to be a vector, but got dim: {} with size {}", ix.dim(),
                shape_str(ix));
  AOTIRT_ENSURE(is_index_int(ix.dtype()), kInvalidArgument,
                "index_reduce_(): Expected dtype int32/int64 for index but got: {}", dtype_name(ix.dtype()));
  AOTIRT_ENSURE(t.dtype() == src.dtype(), kInvalidArgument,
                "index_reduce_(): self ({}) and source ({}) must have the same scalar type", dtype_name(t.dtype()),
                dtype_name(src.dtype()));
  AOTIRT_ENSURE(a.dim == 0 || a.dim < src.dim(), kInvalidArgument,
                "index_reduce_(): Indexing dim {} is out of bounds of the source tensor with dim {}", a.dim,
                src.dim());
  const int64_t slices = src.dim() == 0 ? 1 : src.sizes()[a.dim];
  AOTIRT_ENSURE(ix.numel() == slices, kInvalidArgument,
                "index_reduce_(): Number of indices ({}) should be equal to source.size(dim): ({}), for dim: {}",
                ix.numel(), slices, a.dim);
  std::vector<int64_t> ss = t.sizes().to_vector(), rs = src.sizes().to_vector();
  if (src.dim() != 0 && t.dim() != 0) {
    ss.erase(ss.begin() + a.dim);
    rs.erase(rs.begin() + a.dim);
  }
  AOTIRT_ENSURE(ss == rs, kInvalidArgument,
                "source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                "self.shape = {} source.shape = {}",
                shape_str(t), shape_str(src));
  AOTIRT_ENSURE(indexing_dtype(t.dtype()) && t.dtype() != DType::kBool, kUnimplemented,
                "'self' has dtype {}, which index_reduce does not take", dtype_name(t.dtype()));
  return a;
}

Status resize_output(TensorImpl* out, const DimVector& sizes, const char* what) {
  if (out->sizes() == sizes) return Status();
  const DimVector strides = contiguous_strides(sizes);
  AOTIRT_ASSIGN_OR_RETURN(size_t bytes, storage_bytes_for(sizes, strides, out->dtype()));
  const size_t need = bytes + static_cast<size_t>(out->storage_offset()) * out->element_size();
  if (out->storage() && (bytes == 0 || out->storage()->nbytes() >= need)) {
    out->mutable_sizes() = sizes;
    out->mutable_strides() = strides;
    return Status();
  }
  AOTIRT_ENSURE(!out->storage() || !out->storage()->is_borrowed(), kInvalidArgument,
                "'{}' has shape {} and must be resized to {}, but its storage is a borrowed buffer of {} bytes", what,
                shape_str(*out), dims_str(sizes), out->storage() ? out->storage()->nbytes() : 0);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl fresh, empty_strided(sizes, strides, out->dtype(), out->device()));
  *out = std::move(fresh);
  return Status();
}

}  // namespace ops
}  // namespace aotirt
