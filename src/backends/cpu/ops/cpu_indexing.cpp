// CPU indexing ops (c_shim_cpu.h): index.Tensor and index_put (advanced
// indexing with optional indices, bool masks and broadcast index tensors),
// nonzero, nonzero_static, masked_select, masked_scatter, scatter (src,
// value, reduce) and index_reduce. Index values are all read and bounds
// checked before anything is written, so a bad index is an error naming it
// and never a stray write. Element copies move bytes; index_put's
// accumulation is typed and, like torch's serial CPU
// kernel, adds duplicates in index order, so results do not depend on the
// thread count.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/dtype.h"
#include "core/host_copy.h"
#include "device/device.h"
#include "ops/indexing_args.h"
#include "shim/abi/cpu_indexing.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

constexpr int64_t kParallelElements = int64_t{1} << 15;

// The element offsets (row-major order over |sizes|) of a tensor with
// |strides|.
std::vector<int64_t> offsets_table(const DimVector& sizes, const DimVector& strides) {
  const int64_t n = numel_of(sizes);
  std::vector<int64_t> out(static_cast<size_t>(n));
  if (n == 0) return out;
  const int64_t nd = sizes.size();
  std::vector<int64_t> coord(static_cast<size_t>(nd), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = off;
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++coord[d] < sizes[d]) {
        off += strides[d];
        break;
      }
      off -= (sizes[d] - 1) * strides[d];
      coord[d] = 0;
    }
  }
  return out;
}

// Is element |p| of |dtype| nonzero (NaN is; -0.0 is not)?
bool nonzero_at(const char* p, DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64: return load_as_double(p, dtype) != 0.0;
    default: return load_as_int64(p, dtype) != 0;
  }
}

Status check_dtype(const TensorImpl& t, const char* what, const char* op) {
  AOTIRT_ENSURE(ops::indexing_dtype(t.dtype()), kUnimplemented, "'{}' has dtype {}, which aotirt's {} does not take",
                what, dtype_name(t.dtype()), op);
  return Status();
}

void copy_element(char* dst, const char* src, size_t esize) {
  switch (esize) {
    case 1: *dst = *src; break;
    case 2: std::memcpy(dst, src, 2); break;
    case 4: std::memcpy(dst, src, 4); break;
    case 8: std::memcpy(dst, src, 8); break;
    default: std::memcpy(dst, src, esize);
  }
}

// ---------------------------------------------------------------------------
// Typed element access for the reducing ops. Each step loads, combines and
// stores in the tensor's dtype, as torch's CPU kernels do (so float16 and
// bfloat16 round after every step, and integers wrap).

template <class S_, class A_, bool kIsBool = false>
struct Elem {
  using S = S_;
  using A = A_;
  static constexpr bool kBool = kIsBool;
  static constexpr bool kFloat = std::is_floating_point_v<A_>;
  static A load(const S* p) {
    if constexpr (kIsBool) return *p != 0;
    return static_cast<A>(*p);
  }
  static void store(S* p, A v) {
    if constexpr (kIsBool)
      *p = v != 0;
    else if constexpr (std::is_floating_point_v<A_>)
      *p = static_cast<S>(v);
    else
      *p = static_cast<S>(static_cast<uint64_t>(v));  // wraps, as a cast does
  }
};
struct Half {
  using S = uint16_t;
  using A = float;
  static constexpr bool kBool = false;
  static constexpr bool kFloat = true;
  static A load(const S* p) { return half_to_float(*p); }
  static void store(S* p, A v) { *p = float_to_half(v); }
};
struct BHalf {
  using S = uint16_t;
  using A = float;
  static constexpr bool kBool = false;
  static constexpr bool kFloat = true;
  static A load(const S* p) { return bf16_to_float(*p); }
  static void store(S* p, A v) { *p = float_to_bf16(v); }
};

template <class Fn>
Status dispatch(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: fn(Elem<float, float>{}); return Status();
    case DType::kFloat64: fn(Elem<double, double>{}); return Status();
    case DType::kFloat16: fn(Half{}); return Status();
    case DType::kBFloat16: fn(BHalf{}); return Status();
    case DType::kInt64: fn(Elem<int64_t, int64_t>{}); return Status();
    case DType::kInt32: fn(Elem<int32_t, int64_t>{}); return Status();
    case DType::kInt16: fn(Elem<int16_t, int64_t>{}); return Status();
    case DType::kInt8: fn(Elem<int8_t, int64_t>{}); return Status();
    case DType::kUInt8: fn(Elem<uint8_t, int64_t>{}); return Status();
    case DType::kBool: fn(Elem<uint8_t, int64_t, true>{}); return Status();
    default:
      return AOTIRT_STATUS(kUnimplemented, "{} of dtype {} is not implemented on the CPU", op, dtype_name(dtype));
  }
}

// One reduction step: |acc| combined with |v|. Bool sums are "or" and
// products "and", as torch's bool arithmetic; amax/amin propagate NaN.
template <class T>
typename T::A combine(ops::ScatterReduce r, typename T::A acc, typename T::A v) {
  using A = typename T::A;
  switch (r) {
    case ops::ScatterReduce::kSum:
    case ops::ScatterReduce::kMean:
      if constexpr (T::kBool) return (acc != 0) || (v != 0);
      else if constexpr (T::kFloat) return acc + v;
      else return static_cast<A>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
    case ops::ScatterReduce::kProd:
      if constexpr (T::kBool) return (acc != 0) && (v != 0);
      else if constexpr (T::kFloat) return acc * v;
      else return static_cast<A>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
    case ops::ScatterReduce::kAmax:
      if constexpr (T::kFloat)
        if (std::isnan(acc) || std::isnan(v)) return std::numeric_limits<A>::quiet_NaN();
      return acc < v ? v : acc;
    case ops::ScatterReduce::kAmin:
      if constexpr (T::kFloat)
        if (std::isnan(acc) || std::isnan(v)) return std::numeric_limits<A>::quiet_NaN();
      return v < acc ? v : acc;
    default: return v;
  }
}

// The value an element starts from when include_self is false.
template <class T>
typename T::A reduce_init(ops::ScatterReduce r) {
  using A = typename T::A;
  using S = typename T::S;
  switch (r) {
    case ops::ScatterReduce::kProd: return A(1);
    case ops::ScatterReduce::kAmax:
      if constexpr (T::kBool) return A(0);
      else if constexpr (T::kFloat) return -std::numeric_limits<A>::infinity();
      else return static_cast<A>(std::numeric_limits<S>::lowest());
    case ops::ScatterReduce::kAmin:
      if constexpr (T::kBool) return A(1);
      else if constexpr (T::kFloat) return std::numeric_limits<A>::infinity();
      else return static_cast<A>(std::numeric_limits<S>::max());
    default: return A(0);
  }
}

// mean's final division: true division for floats, floor division for
// integers (torch's div(rounding_mode="floor")).
template <class T>
typename T::A divide(typename T::A v, int64_t count) {
  using A = typename T::A;
  if constexpr (T::kFloat) {
    return v / static_cast<A>(count);
  } else {
    const A c = static_cast<A>(count);
    A q = v / c;
    if ((v % c != 0) && ((v < 0) != (c < 0))) --q;
    return q;
  }
}

// ---------------------------------------------------------------------------
// Advanced indexing.

// An advanced index made concrete: every index an integer tensor (masks
// replaced by their positions), their broadcast, and every index value
// wrapped and checked.
struct IndexPlan {
  ops::AdvancedIndexShape shape;
  std::vector<TensorImpl> index;            // integer index tensors (int32/int64)
  std::vector<DimVector> index_bstrides;    // each one's strides in the broadcast shape B
  std::vector<int64_t> values;              // [numel(B), index.size()], wrapped
  std::vector<int64_t> rest_sizes;
};

Result<IndexPlan> plan_index(const ops::IndexArgs& a) {
  const TensorImpl& self = *a.self;
  IndexPlan p;
  std::vector<int64_t> dims;
  std::vector<DimVector> shapes;
  for (const ops::IndexEntry& e : a.entries) {
    AOTIRT_RETURN_IF_ERROR(check_cpu(*e.tensor, "indices"));
    if (!e.is_mask) {
      p.index.push_back(*e.tensor);
      dims.push_back(e.first_dim);
      shapes.push_back(e.tensor->sizes());
      continue;
    }
    // A mask's true positions, one int64 tensor per dim it covers.
    const TensorImpl& m = *e.tensor;
    const int64_t k = m.dim();
    const std::vector<int64_t> offs = offsets_table(m.sizes(), m.strides());
    const char* base = static_cast<const char*>(m.data_ptr());
    int64_t count = 0;
    for (int64_t off : offs) count += base[off] != 0;
    std::vector<TensorImpl> cols;
    for (int64_t j = 0; j < k; ++j) {
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, empty_contiguous(DimVector{count}, DType::kInt64, DeviceId{}));
      cols.push_back(std::move(c));
    }
    std::vector<int64_t> coord(static_cast<size_t>(k), 0);
    int64_t row = 0;
    for (size_t i = 0; i < offs.size(); ++i) {
      if (base[offs[i]] != 0) {
        for (int64_t j = 0; j < k; ++j) static_cast<int64_t*>(cols[j].data_ptr())[row] = coord[j];
        ++row;
      }
      for (int64_t d = k - 1; d >= 0; --d) {
        if (++coord[d] < m.sizes()[d]) break;
        coord[d] = 0;
      }
    }
    for (int64_t j = 0; j < k; ++j) {
      dims.push_back(e.first_dim + j);
      shapes.push_back(cols[j].sizes());
      p.index.push_back(std::move(cols[j]));
    }
  }
  AOTIRT_ASSIGN_OR_RETURN(p.shape, ops::advanced_index_shape(self, dims, shapes));
  const DimVector& b = p.shape.index_shape;
  for (const TensorImpl& t : p.index) {
    AOTIRT_ASSIGN_OR_RETURN(DimVector s, broadcast_strides(t.sizes(), t.strides(), b));
    p.index_bstrides.push_back(s);
  }
  for (int64_t d : p.shape.rest_dims) p.rest_sizes.push_back(self.sizes()[d]);
  // Read, wrap and check every index value before any write.
  const int64_t nb = numel_of(b), ni = static_cast<int64_t>(p.index.size());
  p.values.resize(static_cast<size_t>(nb * ni));
  for (int64_t k = 0; k < ni; ++k) {
    const TensorImpl& t = p.index[k];
    const std::vector<int64_t> offs = offsets_table(b, p.index_bstrides[k]);
    const int64_t size = self.sizes()[dims[k]];
    const bool is64 = t.dtype() == DType::kInt64;
    const void* base = t.data_ptr();
    for (int64_t i = 0; i < nb; ++i) {
      const int64_t v = is64 ? static_cast<const int64_t*>(base)[offs[i]]
                             : static_cast<const int32_t*>(base)[offs[i]];
      AOTIRT_ENSURE(v >= -size && v < size, kInvalidArgument,
                    "index {} is out of bounds for dimension {} with size {}", v, dims[k], size);
      p.values[i * ni + k] = v < 0 ? v + size : v;
    }
  }
  return p;
}

// Offsets, in a tensor of self's rank with |strides|, of every B position
// (the indexed dims) and every rest position.
std::vector<int64_t> index_offsets(const IndexPlan& p, const DimVector& strides) {
  const int64_t nb = numel_of(p.shape.index_shape), ni = static_cast<int64_t>(p.index.size());
  std::vector<int64_t> out(static_cast<size_t>(nb), 0);
  for (int64_t i = 0; i < nb; ++i)
    for (int64_t k = 0; k < ni; ++k) out[i] += p.values[i * ni + k] * strides[p.shape.indexed_dims[k]];
  return out;
}
std::vector<int64_t> rest_offsets(const IndexPlan& p, const DimVector& strides) {
  DimVector st;
  st.resize(static_cast<int64_t>(p.shape.rest_dims.size()));
  for (size_t j = 0; j < p.shape.rest_dims.size(); ++j) st[j] = strides[p.shape.rest_dims[j]];
  return offsets_table(DimVector(p.rest_sizes), st);
}
// The same two tables for a tensor laid out in the result's shape.
void result_offsets(const IndexPlan& p, const DimVector& strides, std::vector<int64_t>* b_off,
                    std::vector<int64_t>* r_off) {
  const DimVector& b = p.shape.index_shape;
  DimVector bst, rst;
  bst.resize(b.size());
  rst.resize(static_cast<int64_t>(p.shape.rest_dims.size()));
  for (size_t d = 0; d < p.shape.result_dim_source.size(); ++d) {
    const int64_t s = p.shape.result_dim_source[d];
    if (s >= 0)
      bst[s] = strides[d];
    else
      rst[-1 - s] = strides[d];
  }
  *b_off = offsets_table(b, bst);
  *r_off = offsets_table(DimVector(p.rest_sizes), rst);
}

// Runs body(b, r) for every (B position, rest position): rest positions in
// blocks over the threads, B positions in order within each, so two writes to
// one element always come from one thread, in index order.
// A gather (|writes_distinct|: every pair writes its own element) may
// instead split the B positions when there are too few rest blocks.
template <class Body>
void for_each_pair(int64_t nb, int64_t nr, Body&& body, bool writes_distinct = false) {
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (nr + kBlock - 1) / kBlock;
  const bool big = nb * nr >= kParallelElements && omp_get_max_threads() > 1;
  if (writes_distinct && big && blocks < omp_get_max_threads() && nb > blocks) {
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t r = 0; r < nr; ++r) body(b, r);
    return;
  }
  const bool parallel = blocks > 1 && big;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t r0 = blk * kBlock, r1 = std::min(nr, r0 + kBlock);
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t r = r0; r < r1; ++r) body(b, r);
  }
}

Status index_tensor(const ops::IndexArgs& a, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  const TensorImpl& self = *a.self;
  AOTIRT_RETURN_IF_ERROR(check_cpu(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(IndexPlan p, plan_index(a));
  const DimVector& rs = p.shape.result_sizes;
  std::vector<DType> dtypes;
  for (const TensorImpl& t : p.index) dtypes.push_back(t.dtype());
  const DimVector out_strides = ops::index_result_strides(self, p.shape, dtypes, p.index_bstrides);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(rs, out_strides, self.dtype(), DeviceId{}));
  if (out.numel() > 0) {
    const std::vector<int64_t> sb = index_offsets(p, self.strides()), sr = rest_offsets(p, self.strides());
    std::vector<int64_t> ob, orr;
    result_offsets(p, out.strides(), &ob, &orr);
    const size_t es = self.element_size();
    const char* s = static_cast<const char*>(self.data_ptr());
    char* o = static_cast<char*>(out.data_ptr());
    for_each_pair(static_cast<int64_t>(sb.size()), static_cast<int64_t>(sr.size()), [&](int64_t b, int64_t r) {
      copy_element(o + (ob[b] + orr[r]) * es, s + (sb[b] + sr[r]) * es, es);
    }, /*writes_distinct=*/true);
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

Status index_put(const ops::IndexArgs& a, AtenTensorHandle values, bool accumulate, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  const TensorImpl& self = *a.self;
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* vp, require_tensor(values, "values"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*vp, "values"));
  TensorImpl v = *vp;
  // torch puts one value under a lone mask with masked_fill_: the value is
  // then a scalar of any dtype, and a uint8 mask is refused.
  if (!accumulate && v.numel() == 1 && a.entries.size() == 1 && a.entries[0].is_mask) {
    AOTIRT_ENSURE(a.entries[0].tensor->dtype() == DType::kBool, kInvalidArgument,
                  "masked_fill_ only supports boolean masks, but got mask with dtype {}",
                  dtype_name(a.entries[0].tensor->dtype()));
    if (v.dtype() != self.dtype()) {
      AOTIRT_ENSURE(ops::indexing_dtype(v.dtype()), kUnimplemented,
                    "'values' has dtype {}, which index_put does not take",
                    dtype_name(v.dtype()));
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl scalar, empty_contiguous(DimVector(), self.dtype(), DeviceId{}));
      if (dtype_is_floating(v.dtype())) {
        const double x = load_as_double(v.data_ptr(), v.dtype());
        AOTIRT_RETURN_IF_ERROR(ops::check_scalar_fits(x, false, self.dtype()));
        store_from_double(scalar.data_ptr(), self.dtype(), x);
      } else {
        const int64_t x = load_as_int64(v.data_ptr(), v.dtype());
        AOTIRT_RETURN_IF_ERROR(ops::check_scalar_fits(static_cast<double>(x), true, self.dtype()));
        store_from_int64(scalar.data_ptr(), self.dtype(), x);
      }
      v = std::move(scalar);
    }
  }
  AOTIRT_ENSURE(v.dtype() == self.dtype(), kInvalidArgument,
                "Index put requires the source and destination dtypes match, got {} for the destination and {} for "
                "the source.",
                dtype_name(self.dtype()), dtype_name(v.dtype()));
  AOTIRT_ASSIGN_OR_RETURN(IndexPlan p, plan_index(a));
  const DimVector& rs = p.shape.result_sizes;
  auto vst = broadcast_strides(v.sizes(), v.strides(), rs);
  AOTIRT_ENSURE(vst.ok(), kInvalidArgument,
                "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
                shape_str(v), dims_to_string(rs.data(), rs.size()));
  // torch clones self (preserving its layout) and puts into the clone.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out,
                          empty_strided(self.sizes(), empty_like_strides(self), self.dtype(), DeviceId{}));
  AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, self));
  const int64_t nb = numel_of(p.shape.index_shape), nr = numel_of(DimVector(p.rest_sizes));
  if (nb > 0 && nr > 0) {
    const std::vector<int64_t> ob = index_offsets(p, out.strides()), orr = rest_offsets(p, out.strides());
    std::vector<int64_t> vb, vr;
    result_offsets(p, vst.value(), &vb, &vr);
    char* o = static_cast<char*>(out.data_ptr());
    const char* s = static_cast<const char*>(v.data_ptr());
    if (!accumulate) {
      const size_t es = self.element_size();
      for_each_pair(nb, nr, [&](int64_t b, int64_t r) {
        copy_element(o + (ob[b] + orr[r]) * es, s + (vb[b] + vr[r]) * es, es);
      });
    } else {
      AOTIRT_RETURN_IF_ERROR(dispatch(self.dtype(), "index_put", [&](auto tr) {
        using T = decltype(tr);
        using S = typename T::S;
        S* od = reinterpret_cast<S*>(o);
        const S* sd = reinterpret_cast<const S*>(s);
        for_each_pair(nb, nr, [&](int64_t b, int64_t r) {
          S* dst = od + ob[b] + orr[r];
          T::store(dst, combine<T>(ops::ScatterReduce::kSum, T::load(dst), T::load(sd + vb[b] + vr[r])));
        });
      }));
    }
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

// ---------------------------------------------------------------------------
// nonzero, masked_select, masked_scatter.

Result<TensorImpl> nonzero_cpu(const TensorImpl& self, const int64_t* static_size, int64_t fill_value) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_dtype(self, "self", "nonzero"));
  const int64_t nd = self.dim();
  const std::vector<int64_t> offs = offsets_table(self.sizes(), self.strides());
  const char* base = static_cast<const char*>(self.data_ptr());
  const size_t es = self.element_size();
  int64_t count = 0;
  for (int64_t off : offs) count += nonzero_at(base + off * es, self.dtype());
  const int64_t rows = static_size ? *static_size : count;
  // torch's CPU nonzero is [N, ndim] column-major (strides [1, N]);
  // nonzero_static is row-major.
  DimVector sizes{rows, nd};
  DimVector strides = static_size ? contiguous_strides(sizes) : DimVector{1, rows};
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(sizes, strides, DType::kInt64, DeviceId{}));
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  const int64_t rs = strides[0], cs = strides[1];
  std::vector<int64_t> coord(static_cast<size_t>(nd), 0);
  int64_t row = 0;
  for (size_t i = 0; i < offs.size() && row < rows; ++i) {
    if (nonzero_at(base + offs[i] * es, self.dtype())) {
      for (int64_t j = 0; j < nd; ++j) o[row * rs + j * cs] = coord[j];
      ++row;
    }
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++coord[d] < self.sizes()[d]) break;
      coord[d] = 0;
    }
  }
  for (; row < rows; ++row)
    for (int64_t j = 0; j < nd; ++j) o[row * rs + j * cs] = fill_value;
  return out;
}

Result<const TensorImpl*> require_bool_mask(AtenTensorHandle mask, const char* message) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* m, require_tensor(mask, "mask"));
  AOTIRT_ENSURE(m->dtype() == DType::kBool, kInvalidArgument, "{}, but got mask with dtype {}", message,
                dtype_name(m->dtype()));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*m, "mask"));
  return m;
}

Status masked_select(AtenTensorHandle self_h, AtenTensorHandle mask_h, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* sp, require_tensor(self_h, "self"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* mp,
                          require_bool_mask(mask_h, "masked_select: expected BoolTensor for mask"));
  const TensorImpl &self = *sp, &mask = *mp;
  AOTIRT_RETURN_IF_ERROR(check_cpu(self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_dtype(self, "self", "masked_select"));
  AOTIRT_ASSIGN_OR_RETURN(DimVector shape, ops::broadcast_shapes({self.sizes(), mask.sizes()}, "self and mask"));
  AOTIRT_ASSIGN_OR_RETURN(DimVector sst, broadcast_strides(self.sizes(), self.strides(), shape));
  AOTIRT_ASSIGN_OR_RETURN(DimVector mst, broadcast_strides(mask.sizes(), mask.strides(), shape));
  const std::vector<int64_t> so = offsets_table(shape, sst), mo = offsets_table(shape, mst);
  const char* m = static_cast<const char*>(mask.data_ptr());
  int64_t count = 0;
  for (int64_t off : mo) count += m[off] != 0;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(DimVector{count}, self.dtype(), DeviceId{}));
  const size_t es = self.element_size();
  const char* s = static_cast<const char*>(self.data_ptr());
  char* o = static_cast<char*>(out.data_ptr());
  int64_t k = 0;
  for (size_t i = 0; i < mo.size(); ++i)
    if (m[mo[i]] != 0) copy_element(o + (k++) * es, s + so[i] * es, es);
  *ret0 = new_handle(std::move(out));
  return Status();
}

Status masked_scatter(AtenTensorHandle self_h, AtenTensorHandle mask_h, AtenTensorHandle source_h,
                      AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* sp, require_tensor(self_h, "self"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* mp,
                          require_bool_mask(mask_h, "masked_scatter_ only supports boolean masks"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* srcp, require_tensor(source_h, "source"));
  const TensorImpl &self = *sp, &mask = *mp, &source = *srcp;
  AOTIRT_RETURN_IF_ERROR(check_cpu(self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(source, "source"));
  AOTIRT_ENSURE(self.dtype() == source.dtype(), kInvalidArgument,
                "masked_scatter: expected self and source to have same dtypes but got {} and {}",
                dtype_name(self.dtype()), dtype_name(source.dtype()));
  AOTIRT_RETURN_IF_ERROR(check_dtype(self, "self", "masked_scatter"));
  AOTIRT_ASSIGN_OR_RETURN(DimVector shape, ops::broadcast_shapes({mask.sizes(), self.sizes()}, "mask and self"));
  AOTIRT_ASSIGN_OR_RETURN(DimVector mst, broadcast_strides(mask.sizes(), mask.strides(), shape));
  const std::vector<int64_t> mo = offsets_table(shape, mst);
  const char* m = static_cast<const char*>(mask.data_ptr());
  int64_t count = 0;
  for (int64_t off : mo) count += m[off] != 0;
  AOTIRT_ENSURE(count <= source.numel(), kInvalidArgument,
                "Number of elements of source < number of ones in mask (source has {}, mask has {} ones)",
                source.numel(), count);
  // The result is self expanded to the common shape, contiguous.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(shape, self.dtype(), DeviceId{}));
  AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, self));
  if (count > 0) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl src, contiguous_as(source, source.dtype()));
    const size_t es = self.element_size();
    const char* s = static_cast<const char*>(src.data_ptr());
    char* o = static_cast<char*>(out.data_ptr());
    int64_t k = 0;
    for (size_t i = 0; i < mo.size(); ++i)
      if (m[mo[i]] != 0) copy_element(o + i * es, s + (k++) * es, es);
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

Status nonzero_shim(AtenTensorHandle self, const int64_t* size, int64_t fill_value, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, nonzero_cpu(*t, size, fill_value));
  *ret0 = new_handle(std::move(out));
  return Status();
}

// ---------------------------------------------------------------------------
// scatter, scatter_reduce, index_reduce.

bool same_view(const TensorImpl& a, const TensorImpl& b) {
  return a.storage().get() == b.storage().get() && a.storage_offset() == b.storage_offset() &&
         a.sizes() == b.sizes() && a.strides() == b.strides() && a.dtype() == b.dtype();
}

// |t| itself, or a contiguous copy of it when it shares |out|'s storage, so
// that writing |out| cannot change what is read from |t|.
Result<TensorImpl> apart_from(const TensorImpl& out, const TensorImpl& t) {
  if (!t.storage() || t.storage().get() != out.storage().get() || t.numel() == 0) return t;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl copy, empty_contiguous(t.sizes(), t.dtype(), DeviceId{}));
  AOTIRT_RETURN_IF_ERROR(host_copy_strided(copy, t));
  return copy;
}

// Sizes and strides with a 0-d tensor seen as [1], as torch's scatter does.
DimVector sizes_1d(const TensorImpl& t) { return t.dim() == 0 ? DimVector{1} : t.sizes(); }
DimVector strides_1d(const TensorImpl& t) { return t.dim() == 0 ? DimVector{1} : t.strides(); }

int64_t load_index(const void* base, bool is64, int64_t off) {
  return is64 ? static_cast<const int64_t*>(base)[off] : static_cast<const int32_t*>(base)[off];
}

// out = self with src (or |value|) scattered along dim, combined by the
// reduction when there is one.
Status scatter_cpu(ops::ScatterArgs& a, double value) {
  TensorImpl& out = *a.out;
  AOTIRT_RETURN_IF_ERROR(check_cpu(out, "out"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.index, "index"));
  if (a.src) AOTIRT_RETURN_IF_ERROR(check_cpu(*a.src, "src"));
  // An in-place scatter passes one tensor as self and out; any other overlap
  // with out is read from a copy.
  const bool in_place = same_view(out, *a.self);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl self, apart_from(out, *a.self));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl index, apart_from(out, *a.index));
  TensorImpl src;
  if (a.src) {
    AOTIRT_ASSIGN_OR_RETURN(src, apart_from(out, *a.src));
  }
  // Every index is checked (against self's sizes, which out takes) before
  // out is resized or written.
  const int64_t dim = a.dim;
  // (An empty index may have any rank; it scatters nothing.)
  const bool empty = index.numel() == 0;
  const DimVector isz = empty ? DimVector{0} : sizes_1d(index), ist = empty ? DimVector{1} : strides_1d(index);
  const int64_t limit = sizes_1d(*a.self)[dim];
  const bool is64 = index.dtype() == DType::kInt64;
  const void* ib = index.data_ptr();
  DimVector outer_sizes = isz;
  if (!empty) outer_sizes[dim] = 1;
  const std::vector<int64_t> io = empty ? std::vector<int64_t>() : offsets_table(outer_sizes, ist);
  const int64_t outer = static_cast<int64_t>(io.size());
  const int64_t n = empty ? 0 : isz[dim], i_step = empty ? 0 : ist[dim];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = load_index(ib, is64, io[o] + i * i_step);
      AOTIRT_ENSURE(v >= 0 && v < limit, kInvalidArgument, "index {} is out of bounds for dimension {} with size {}",
                    v, dim, limit);
    }
  AOTIRT_RETURN_IF_ERROR(ops::resize_output(&out, a.self->sizes(), "out"));
  if (!in_place) AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, self));
  if (empty || out.numel() == 0) return Status();
  const DimVector ost = strides_1d(out);
  const std::vector<int64_t> oo = offsets_table(outer_sizes, ost);
  std::vector<int64_t> so;
  int64_t s_step = 0;
  if (a.src) {
    const DimVector sst = strides_1d(src);
    so = offsets_table(outer_sizes, sst);
    s_step = sst[dim];
  }
  const int64_t o_step = ost[dim];
  const ops::ScatterReduce red = a.reduce;
  const bool include_self = a.include_self;
  const bool parallel = outer > 1 && outer * n >= kParallelElements && omp_get_max_threads() > 1;
  std::vector<int64_t> counts;
  if (red == ops::ScatterReduce::kMean) counts.assign(static_cast<size_t>(outer * limit), 0);
  return dispatch(out.dtype(), "scatter", [&](auto tr) {
    using T = decltype(tr);
    using S = typename T::S;
    using A = typename T::A;
    S* od = static_cast<S*>(out.data_ptr());
    const S* sd = a.src ? static_cast<const S*>(src.data_ptr()) : nullptr;
    S scalar{};
    store_from_double(&scalar, out.dtype(), value);
    const A fill = T::load(&scalar);
    if (red != ops::ScatterReduce::kNone && !include_self) {
      const A init = reduce_init<T>(red);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < n; ++i) T::store(od + oo[o] + load_index(ib, is64, io[o] + i * i_step) * o_step, init);
    }
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t v = load_index(ib, is64, io[o] + i * i_step);
        S* dst = od + oo[o] + v * o_step;
        const A x = sd ? T::load(sd + so[o] + i * s_step) : fill;
        if (red == ops::ScatterReduce::kNone) {
          T::store(dst, x);
        } else {
          T::store(dst, combine<T>(red, T::load(dst), x));
          if (red == ops::ScatterReduce::kMean) ++counts[o * limit + v];
        }
      }
    }
    if (red == ops::ScatterReduce::kMean) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t v = 0; v < limit; ++v) {
          const int64_t c = counts[o * limit + v];
          if (c == 0) continue;
          S* dst = od + oo[o] + v * o_step;
          T::store(dst, divide<T>(T::load(dst), c + (include_self ? 1 : 0)));
        }
    }
  });
}

Status index_reduce_cpu(const ops::IndexReduceArgs& a, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  const TensorImpl &self = *a.self, &index = *a.index, &source = *a.source;
  AOTIRT_RETURN_IF_ERROR(check_cpu(self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(index, "index"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(source, "source"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(self.sizes(), self.dtype(), DeviceId{}));
  AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, self));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl src, contiguous_as(source, source.dtype()));
  const DimVector sz = sizes_1d(self);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < sz.size(); ++d) {
    if (d < a.dim) outer *= sz[d];
    if (d > a.dim) inner *= sz[d];
  }
  const int64_t limit = sz[a.dim], n = index.numel();
  const int64_t i_step = index.dim() == 0 ? 0 : index.strides()[0];
  const bool is64 = index.dtype() == DType::kInt64;
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::vector<int64_t> counts(static_cast<size_t>(limit), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = load_index(index.data_ptr(), is64, i * i_step);
    AOTIRT_ENSURE(v >= 0 && v < limit, kInvalidArgument, "index {} is out of bounds for dimension {} with size {}", v,
                  a.dim, limit);
    idx[i] = v;
    ++counts[v];
  }
  const ops::ScatterReduce red = a.reduce;
  const bool include_self = a.include_self;
  const int64_t lines = outer * inner;
  const bool parallel = lines > 1 && lines * n >= kParallelElements && omp_get_max_threads() > 1;
  if (out.numel() > 0 && n > 0) {
    // (A pragma cannot sit inside a macro's argument, hence the Status.)
    const Status st = dispatch(out.dtype(), "index_reduce", [&](auto tr) {
      using T = decltype(tr);
      using S = typename T::S;
      S* od = static_cast<S*>(out.data_ptr());
      const S* sd = static_cast<const S*>(src.data_ptr());
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t l = 0; l < lines; ++l) {
        const int64_t o = l / inner, in = l % inner;
        S* base = od + o * limit * inner + in;
        if (!include_self)
          for (int64_t i = 0; i < n; ++i) T::store(base + idx[i] * inner, reduce_init<T>(red));
        for (int64_t i = 0; i < n; ++i) {
          S* dst = base + idx[i] * inner;
          T::store(dst, combine<T>(red, T::load(dst), T::load(sd + (o * n + i) * inner + in)));
        }
        if (red == ops::ScatterReduce::kMean)
          for (int64_t v = 0; v < limit; ++v)
            if (counts[v] > 0) T::store(base + v * inner, divide<T>(T::load(base + v * inner),
                                                                     counts[v] + (include_self ? 1 : 0)));
      }
    });
    AOTIRT_RETURN_IF_ERROR(st);
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_index_Tensor(AtenTensorHandle self, const AtenTensorHandle** indices,
                                           int64_t indices_len_, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::IndexArgs a, ops::index_args(self, indices, indices_len_));
    return index_tensor(a, ret0);
  });
}

AOTITorchError aoti_torch_cpu_index_put(AtenTensorHandle self, const AtenTensorHandle** indices, int64_t indices_len_,
                                        AtenTensorHandle values, int32_t accumulate, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::IndexArgs a, ops::index_args(self, indices, indices_len_));
    return index_put(a, values, accumulate != 0, ret0);
  });
}

AOTITorchError aoti_torch_cpu_nonzero(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status { return nonzero_shim(self, nullptr, 0, ret0); });
}

AOTITorchError aoti_torch_cpu_nonzero_static(AtenTensorHandle self, int64_t size, int64_t fill_value,
                                             AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(size >= 0, kInvalidArgument, "nonzero_static: 'size' must be an non-negative integer, got {}", size);
    return nonzero_shim(self, &size, fill_value, ret0);
  });
}

AOTITorchError aoti_torch_cpu_masked_select(AtenTensorHandle self, AtenTensorHandle mask,
                                            AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status { return masked_select(self, mask, ret0); });
}

AOTITorchError aoti_torch_cpu_masked_scatter(AtenTensorHandle self, AtenTensorHandle mask, AtenTensorHandle source,
                                             AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status { return masked_scatter(self, mask, source, ret0); });
}

AOTITorchError aoti_torch_cpu_scatter_src_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                              AtenTensorHandle index, AtenTensorHandle src) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(src != nullptr, kInvalidArgument, "'src' is a null tensor handle");
    AOTIRT_ASSIGN_OR_RETURN(ops::ScatterArgs a, ops::scatter_args(out, self, dim, index, src, nullptr, true));
    return scatter_cpu(a, 0.0);
  });
}

AOTITorchError aoti_torch_cpu_scatter_value_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                                AtenTensorHandle index, double value) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::ScatterArgs a, ops::scatter_args(out, self, dim, index, nullptr, nullptr, true));
    // torch converts the value (checked) only when there is something to scatter.
    if (a.index->numel() > 0) AOTIRT_RETURN_IF_ERROR(ops::check_scalar_fits(value, false, a.self->dtype()));
    return scatter_cpu(a, value);
  });
}

AOTITorchError aoti_torch_cpu_scatter_reduce_two_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                                     AtenTensorHandle index, AtenTensorHandle src, const char* reduce,
                                                     int32_t include_self) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(src != nullptr, kInvalidArgument, "'src' is a null tensor handle");
    AOTIRT_ENSURE(reduce != nullptr, kInvalidArgument, "'reduce' is null");
    AOTIRT_ASSIGN_OR_RETURN(ops::ScatterArgs a,
                            ops::scatter_args(out, self, dim, index, src, reduce, include_self != 0));
    return scatter_cpu(a, 0.0);
  });
}

AOTITorchError aoti_torch_cpu_index_reduce(AtenTensorHandle self, int64_t dim, AtenTensorHandle index,
                                           AtenTensorHandle source, const char* reduce, int32_t include_self,
                                           AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::IndexReduceArgs a,
                            ops::index_reduce_args(self, dim, index, source, reduce, include_self != 0));
    return index_reduce_cpu(a, ret0);
  });
}

}  // extern "C"
