// The tensor-structure ops' rules (see tensor_args.h). Views only compute
// metadata; cat, pad, full and resize_ allocate through the device registry
// and move bytes with the owning device's copy and zero, so nothing here
// names a backend or touches device memory itself.
#include "ops/tensor_args.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/dtype.h"
#include "device/device.h"
#include "ops/layout.h"
#include "ops/op_args.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace ops {
namespace tensor_ops {
namespace {

bool is_wide_unsigned(DType d) { return d == DType::kUInt16 || d == DType::kUInt32 || d == DType::kUInt64; }

bool is_float8(DType d) {
  return d == DType::kFloat8_e5m2 || d == DType::kFloat8_e4m3fn || d == DType::kFloat8_e5m2fnuz ||
         d == DType::kFloat8_e4m3fnuz;
}

// The real type of a complex one; the type itself otherwise.
DType real_of(DType d) {
  switch (d) {
    case DType::kComplex32: return DType::kFloat16;
    case DType::kComplex64: return DType::kFloat32;
    case DType::kComplex128: return DType::kFloat64;
    default: return d;
  }
}

// Promotion between two floating types (float16, bfloat16, float32, float64).
DType promote_floats(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kFloat64 || b == DType::kFloat64) return DType::kFloat64;
  // float16 with bfloat16 has no common 16-bit type; float32 holds both.
  return DType::kFloat32;
}

DType complex_of(DType real) {
  switch (real) {
    case DType::kFloat16: return DType::kComplex32;
    case DType::kFloat64: return DType::kComplex128;
    default: return DType::kComplex64;
  }
}

int integer_width(DType d) { return static_cast<int>(dtype_size(d)); }

// A view of |t| with new metadata over the same storage.
TensorImpl with_layout(const TensorImpl& t, DType dtype, DimVector sizes, DimVector strides, int64_t offset) {
  return TensorImpl(t.storage(), dtype, std::move(sizes), std::move(strides), offset);
}

// |t| narrowed to [start, start + length) along |dim|, no checks.
TensorImpl narrow_unchecked(const TensorImpl& t, int64_t dim, int64_t start, int64_t length) {
  DimVector sizes = t.sizes();
  sizes[dim] = length;
  return with_layout(t, t.dtype(), sizes, t.strides(), t.storage_offset() + start * t.strides()[dim]);
}

}  // namespace

Status check_scalar_fits(double value, DType dtype, bool saturate_half) {
  double lowest = 0, highest = 0;
  switch (dtype) {
    case DType::kBool:
    case DType::kFloat64:
    case DType::kComplex128: return Status();  // any double converts
    case DType::kUInt8: lowest = 0, highest = 255; break;
    case DType::kInt8: lowest = -128, highest = 127; break;
    case DType::kInt16: lowest = -32768, highest = 32767; break;
    case DType::kInt32: lowest = -2147483648.0, highest = 2147483647.0; break;
    // The largest doubles below 2^63 and 2^64: those two would not convert.
    case DType::kInt64: lowest = -9223372036854775808.0, highest = 9223372036854774784.0; break;
    case DType::kUInt16: lowest = 0, highest = 65535; break;
    case DType::kUInt32: lowest = 0, highest = 4294967295.0; break;
    case DType::kUInt64: lowest = 0, highest = 18446744073709549568.0; break;
    case DType::kFloat16:
    case DType::kComplex32:
      if (saturate_half) return Status();
      lowest = -65504.0, highest = 65504.0;
      break;
    case DType::kBFloat16:
      if (saturate_half) return Status();
      lowest = -3.3895313892515355e38, highest = 3.3895313892515355e38;
      break;
    case DType::kFloat32:
    case DType::kComplex64: lowest = -3.4028234663852886e38, highest = 3.4028234663852886e38; break;
    default: return Status();  // float8: the conversion saturates or gives NaN as the format defines
  }
  if (dtype_is_floating(dtype) || dtype_is_complex(dtype)) {
    // Infinity and NaN exist in every floating type; only finite values can overflow.
    if (!std::isfinite(value)) return Status();
  }
  AOTIRT_ENSURE(value == value && value >= lowest && value <= highest, kInvalidArgument,
                "value {} cannot be converted to {} without overflow", value, dtype_name(dtype));
  return Status();
}

Result<int64_t> wrap_dim(int64_t dim, int64_t rank, bool scalar_ok) {
  AOTIRT_ENSURE(rank > 0 || scalar_ok, kInvalidArgument, "dim {} given for a 0-d tensor", dim);
  const int64_t extent = rank == 0 ? 1 : rank;
  AOTIRT_ENSURE(dim >= -extent && dim < extent, kInvalidArgument,
                "dim {} is out of range for a {}-d tensor (expected in [{}, {}])", dim, rank, -extent, extent - 1);
  return dim < 0 ? dim + extent : dim;
}

Result<DType> promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_wide_unsigned(a) || is_wide_unsigned(b))
    return AOTIRT_STATUS(kUnimplemented, "promotion of {} with {} is not supported (torch refuses it too)",
                         dtype_name(a), dtype_name(b));
  if (is_float8(a) || is_float8(b))
    return AOTIRT_STATUS(kUnimplemented, "promotion of {} with {} is not supported (torch refuses it too)",
                         dtype_name(a), dtype_name(b));
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  const bool ca = dtype_is_complex(a), cb = dtype_is_complex(b);
  if (ca || cb) {
    const DType ra = real_of(a), rb = real_of(b);
    // An integral partner does not widen the complex type.
    if (!dtype_is_floating(ra)) return b;
    if (!dtype_is_floating(rb)) return a;
    return complex_of(promote_floats(ra, rb));
  }
  const bool fa = dtype_is_floating(a), fb = dtype_is_floating(b);
  if (fa && fb) return promote_floats(a, b);
  if (fa) return a;
  if (fb) return b;
  // Both integral, signed or uint8.
  if (a == DType::kUInt8 || b == DType::kUInt8) {
    const DType other = a == DType::kUInt8 ? b : a;
    return other == DType::kInt8 ? DType::kInt16 : other;
  }
  return integer_width(a) >= integer_width(b) ? a : b;
}

MemoryFormat suggest_memory_format(const TensorImpl& t) {
  if (!is_channels_last(t.sizes(), t.strides())) return MemoryFormat::kContiguous;
  return t.dim() == 4 ? MemoryFormat::kChannelsLast : MemoryFormat::kChannelsLast3d;
}

Result<DimVector> strides_for_format(const DimVector& sizes, MemoryFormat format) {
  switch (format) {
    case MemoryFormat::kContiguous: return contiguous_strides(sizes);
    case MemoryFormat::kChannelsLast:
      AOTIRT_ENSURE(sizes.size() == 4, kInvalidArgument, "channels_last needs a 4-d tensor, got shape {}",
                    dims_to_string(sizes.data(), sizes.size()));
      return channels_last_strides(sizes);
    case MemoryFormat::kChannelsLast3d:
      AOTIRT_ENSURE(sizes.size() == 5, kInvalidArgument, "channels_last_3d needs a 5-d tensor, got shape {}",
                    dims_to_string(sizes.data(), sizes.size()));
      return channels_last_strides(sizes);
    case MemoryFormat::kPreserve: break;
  }
  return AOTIRT_STATUS(kInvalidArgument, "memory format preserve_format gives no strides by itself");
}

// ---- views ----

Result<TensorImpl> permute_view(const TensorImpl& self, const int64_t* dims, int64_t n) {
  AOTIRT_ENSURE(n == self.dim(), kInvalidArgument, "permute got {} dims for a tensor of shape {}", n,
                shape_str(self));
  AOTIRT_ENSURE(n == 0 || dims != nullptr, kInvalidArgument, "'dims' is null");
  DimVector sizes, strides;
  sizes.resize(n);
  strides.resize(n);
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int64_t i = 0; i < n; ++i) {
    AOTIRT_ASSIGN_OR_RETURN(int64_t d, wrap_dim(dims[i], n, false));
    AOTIRT_ENSURE(!seen[d], kInvalidArgument, "permute got dim {} twice in {}", d, dims_to_string(dims, n));
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return with_layout(self, self.dtype(), sizes, strides, self.storage_offset());
}

Result<TensorImpl> narrow_view(const TensorImpl& self, int64_t dim, int64_t start, int64_t length) {
  AOTIRT_ENSURE(self.dim() > 0, kInvalidArgument, "narrow cannot be applied to a 0-d tensor");
  AOTIRT_ASSIGN_OR_RETURN(int64_t d, wrap_dim(dim, self.dim(), false));
  const int64_t size = self.sizes()[d];
  AOTIRT_ENSURE(length >= 0, kInvalidArgument, "narrow length {} must be non-negative", length);
  AOTIRT_ENSURE(start >= -size && start <= size, kInvalidArgument,
                "narrow start {} is out of range for dimension {} of size {} (expected in [{}, {}])", start, d,
                size, -size, size);
  if (start < 0) start += size;
  AOTIRT_ENSURE(start <= size - length, kInvalidArgument,
                "narrow start {} + length {} exceeds dimension {} of size {}", start, length, d, size);
  return narrow_unchecked(self, d, start, length);
}

Result<TensorImpl> slice_view(const TensorImpl& self, int64_t dim, const int64_t* start_p, const int64_t* end_p,
                              int64_t step) {
  AOTIRT_ENSURE(self.dim() > 0, kInvalidArgument, "slice cannot be applied to a 0-d tensor");
  AOTIRT_ASSIGN_OR_RETURN(int64_t d, wrap_dim(dim, self.dim(), false));
  AOTIRT_ENSURE(step > 0, kInvalidArgument, "slice step {} must be positive", step);
  const int64_t size = self.sizes()[d];
  int64_t start = start_p ? *start_p : 0;
  int64_t end = end_p ? *end_p : INT64_MAX;
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  DimVector sizes = self.sizes(), strides = self.strides();
  sizes[d] = (end - start + step - 1) / step;
  strides[d] *= step;
  return with_layout(self, self.dtype(), sizes, strides, self.storage_offset() + start * self.strides()[d]);
}

Result<TensorImpl> squeeze_dim_view(const TensorImpl& self, int64_t dim) {
  AOTIRT_ASSIGN_OR_RETURN(int64_t d, wrap_dim(dim, self.dim()));
  if (self.dim() == 0 || self.sizes()[d] != 1) return self;
  DimVector sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i == d) continue;
    const int64_t n = sizes.size();
    sizes.resize(n + 1);
    strides.resize(n + 1);
    sizes[n] = self.sizes()[i];
    strides[n] = self.strides()[i];
  }
  return with_layout(self, self.dtype(), sizes, strides, self.storage_offset());
}

Result<TensorImpl> view_as_real(const TensorImpl& self) {
  AOTIRT_ENSURE(dtype_is_complex(self.dtype()), kInvalidArgument,
                "view_as_real needs a complex tensor, got {}", dtype_name(self.dtype()));
  const int64_t n = self.dim();
  DimVector sizes = self.sizes(), strides = self.strides();
  sizes.resize(n + 1);
  strides.resize(n + 1);
  for (int64_t i = 0; i < n; ++i) strides[i] *= 2;
  sizes[n] = 2;
  strides[n] = 1;
  return with_layout(self, real_of(self.dtype()), sizes, strides, self.storage_offset() * 2);
}

Result<TensorImpl> view_as_complex(const TensorImpl& self) {
  const DType dt = self.dtype();
  AOTIRT_ENSURE(dt == DType::kFloat32 || dt == DType::kFloat64 || dt == DType::kFloat16, kInvalidArgument,
                "view_as_complex needs a float32, float64 or float16 tensor, got {}", dtype_name(dt));
  AOTIRT_ENSURE(self.dim() > 0, kInvalidArgument, "view_as_complex needs a tensor with one or more dimensions");
  const int64_t n = self.dim();
  AOTIRT_ENSURE(self.sizes()[n - 1] == 2, kInvalidArgument,
                "view_as_complex needs a last dimension of size 2, got shape {}", shape_str(self));
  AOTIRT_ENSURE(self.strides()[n - 1] == 1, kInvalidArgument,
                "view_as_complex needs a last dimension with stride 1, got {}", layout_str(self));
  DimVector sizes, strides;
  sizes.resize(n - 1);
  strides.resize(n - 1);
  for (int64_t i = 0; i < n - 1; ++i) {
    AOTIRT_ENSURE(self.strides()[i] % 2 == 0, kInvalidArgument,
                  "view_as_complex needs strides divisible by 2 in all but the last dimension, got {}",
                  layout_str(self));
    sizes[i] = self.sizes()[i];
    strides[i] = self.strides()[i] / 2;
  }
  AOTIRT_ENSURE(self.storage_offset() % 2 == 0, kInvalidArgument,
                "view_as_complex needs a storage offset divisible by 2, got {}", self.storage_offset());
  return with_layout(self, complex_of(dt), sizes, strides, self.storage_offset() / 2);
}

Result<TensorImpl> view_dtype(const TensorImpl& self, int32_t dtype) {
  AOTIRT_ENSURE(dtype_is_valid(dtype), kInvalidArgument, "invalid dtype code {}", dtype);
  const DType to = static_cast<DType>(dtype), from = self.dtype();
  const int64_t new_size = static_cast<int64_t>(dtype_size(to)), old_size = static_cast<int64_t>(dtype_size(from));
  if (new_size == old_size)
    return with_layout(self, to, self.sizes(), self.strides(), self.storage_offset());
  const std::string what = std::string("to view ") + dtype_name(from) + " as " + dtype_name(to) +
                           " (different element sizes)";
  AOTIRT_ENSURE(self.dim() > 0, kInvalidArgument, "a 0-d tensor cannot be viewed {}", what.substr(8));
  const int64_t last = self.dim() - 1;
  AOTIRT_ENSURE(self.strides()[last] == 1, kInvalidArgument, "the last stride must be 1 {}, got {}", what,
                layout_str(self));
  DimVector sizes = self.sizes(), strides = self.strides();
  int64_t offset = self.storage_offset();
  if (new_size < old_size) {
    const int64_t r = old_size / new_size;
    for (int64_t i = 0; i < last; ++i) strides[i] *= r;
    sizes[last] *= r;
    offset *= r;
  } else {
    const int64_t r = new_size / old_size;
    AOTIRT_ENSURE(sizes[last] % r == 0, kInvalidArgument, "the last size must be divisible by {} {}, got {}", r,
                  what, sizes[last]);
    AOTIRT_ENSURE(offset % r == 0, kInvalidArgument, "the storage offset must be divisible by {} {}, got {}", r,
                  what, offset);
    for (int64_t i = 0; i < last; ++i) {
      AOTIRT_ENSURE(strides[i] % r == 0, kInvalidArgument, "stride {} must be divisible by {} {}, got {}", i, r,
                    what, strides[i]);
      strides[i] /= r;
    }
    sizes[last] /= r;
    offset /= r;
  }
  return with_layout(self, to, sizes, strides, offset);
}

Result<DimVector> infer_size(const int64_t* shape, int64_t n, int64_t numel) {
  AOTIRT_ENSURE(n >= 0 && (n == 0 || shape != nullptr), kInvalidArgument, "'shape' is null");
  DimVector out = n == 0 ? DimVector() : DimVector(shape, n);
  int64_t infer = -1, product = 1;
  for (int64_t i = 0; i < n; ++i) {
    if (shape[i] == -1) {
      AOTIRT_ENSURE(infer < 0, kInvalidArgument, "only one dimension of shape {} can be inferred",
                    dims_to_string(shape, n));
      infer = i;
      continue;
    }
    AOTIRT_ENSURE(shape[i] >= 0, kInvalidArgument, "invalid size {} at index {} of shape {}", shape[i], i,
                  dims_to_string(shape, n));
    AOTIRT_ENSURE(!__builtin_mul_overflow(product, shape[i], &product), kInvalidArgument,
                  "shape {} has too many elements", dims_to_string(shape, n));
  }
  if (infer >= 0) {
    AOTIRT_ENSURE(product != 0, kInvalidArgument,
                  "cannot reshape a tensor of 0 elements into shape {}: the -1 could be any size",
                  dims_to_string(shape, n));
    AOTIRT_ENSURE(numel % product == 0, kInvalidArgument, "shape {} is invalid for an input of {} elements",
                  dims_to_string(shape, n), numel);
    out[infer] = numel / product;
  } else {
    AOTIRT_ENSURE(product == numel, kInvalidArgument, "shape {} is invalid for an input of {} elements",
                  dims_to_string(shape, n), numel);
  }
  return out;
}

std::optional<DimVector> view_strides(const DimVector& sizes, const DimVector& strides,
                                      const DimVector& new_sizes) {
  const int64_t old_n = sizes.size(), new_n = new_sizes.size();
  DimVector out;
  out.resize(new_n);
  if (old_n == 0) {
    for (int64_t i = 0; i < new_n; ++i) out[i] = 1;
    return out;
  }
  const int64_t numel = numel_of(sizes);
  if (numel == 0) {
    if (sizes == new_sizes) return strides;
    // Any strides fit an empty tensor; torch picks contiguous ones with
    // empty dims counted as 1.
    int64_t s = 1;
    for (int64_t i = new_n - 1; i >= 0; --i) {
      out[i] = s;
      s *= std::max<int64_t>(new_sizes[i], 1);
    }
    return out;
  }
  // Walk the old dims from the innermost, in runs that are contiguous with
  // each other ("chunks"); the new dims must split each chunk exactly.
  int64_t view_d = new_n - 1;
  int64_t chunk_stride = strides[old_n - 1];
  int64_t chunk_numel = 1, view_numel = 1;
  for (int64_t d = old_n - 1; d >= 0; --d) {
    chunk_numel *= sizes[d];
    const bool chunk_ends = d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != chunk_numel * chunk_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < chunk_numel || new_sizes[view_d] == 1)) {
      out[view_d] = view_numel * chunk_stride;
      view_numel *= new_sizes[view_d];
      --view_d;
    }
    if (view_numel != chunk_numel) return std::nullopt;
    if (d > 0) {
      chunk_stride = strides[d - 1];
      chunk_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

Result<TensorImpl> reshape(const TensorImpl& self, const int64_t* shape, int64_t n) {
  AOTIRT_ASSIGN_OR_RETURN(DimVector sizes, infer_size(shape, n, self.numel()));
  if (std::optional<DimVector> strides = view_strides(self.sizes(), self.strides(), sizes))
    return with_layout(self, self.dtype(), sizes, *strides, self.storage_offset());
  // No view exists: a contiguous copy on the same device, viewed in the new
  // shape (torch: _unsafe_view of a contiguous clone).
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl copy, clone_tensor(self));
  return reshape_contiguous(copy, sizes);
}

// ---- new tensors ----

Status zero(const TensorImpl& t) {
  if (t.numel() == 0) return Status();
  AOTIRT_ASSIGN_OR_RETURN(Device * dev, get_device(t.device()));
  return dev->zero(t);
}

Status fill(const TensorImpl& t, double value) {
  if (t.numel() == 0) return Status();
  // The value is converted on the host into |t|'s own dtype, then broadcast
  // by the device's copy: a same-dtype copy, which every device supports for
  // every dtype.
  alignas(16) unsigned char bytes[16] = {};
  store_from_double(bytes, t.dtype(), value);
  Storage* s = Storage::new_borrowed(bytes, sizeof(bytes), DeviceId{});
  TensorImpl scalar(StorageRef::adopt(s), t.dtype(), DimVector(), DimVector(), 0);
  return copy_tensor(t, scalar, false);
}

Result<TensorImpl> full(const DimVector& sizes, double value, DType dtype, DeviceId id) {
  // torch.full fills a one-element float16 or bfloat16 CPU tensor without
  // the overflow check (an out-of-range value becomes infinity: CPU fill_
  // takes a scalar path for one element) but checks every other fill.
  AOTIRT_RETURN_IF_ERROR(check_scalar_fits(value, dtype, numel_of(sizes) == 1 && id.is_cpu()));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, empty_contiguous(sizes, dtype, id));
  AOTIRT_RETURN_IF_ERROR(fill(t, value));
  return t;
}

Result<DimVector> read_sizes(const int64_t* sizes, int64_t n, const char* what) {
  AOTIRT_ENSURE(n >= 0 && n <= 64, kInvalidArgument, "'{}' has a bad length {}", what, n);
  AOTIRT_ENSURE(n == 0 || sizes != nullptr, kInvalidArgument, "'{}' is null", what);
  for (int64_t i = 0; i < n; ++i)
    AOTIRT_ENSURE(sizes[i] >= 0, kInvalidArgument, "'{}' has a negative size {} at index {}", what, sizes[i], i);
  return n == 0 ? DimVector() : DimVector(sizes, n);
}

Result<FactoryOptions> factory_options(const int32_t* dtype, const int32_t* layout, const int32_t* device,
                                       int32_t device_index, DType dtype_default, DeviceId device_default) {
  FactoryOptions o;
  o.dtype = dtype_default;
  if (dtype) {
    AOTIRT_ENSURE(dtype_is_valid(*dtype), kInvalidArgument, "invalid dtype code {}", *dtype);
    o.dtype = static_cast<DType>(*dtype);
  }
  AOTIRT_ENSURE(!layout || *layout == 0, kUnimplemented, "layout {} is not supported (only strided)",
                layout ? *layout : 0);
  o.device = device_default;
  if (device) {
    const int index = device_index < 0 ? 0 : device_index;
    switch (*device) {
      case 0: o.device = DeviceId{DeviceType::kCpu, 0}; break;
      case 1: o.device = DeviceId{DeviceType::kCuda, index}; break;
      case 13: o.device = DeviceId{DeviceType::kMps, index}; break;
      default: return AOTIRT_STATUS(kUnimplemented, "device type {} is not supported by aotirt", *device);
    }
  }
  return o;
}

// ---- cat ----

Result<CatPlan> cat_plan(const AtenTensorHandle* tensors, int64_t n, int64_t dim) {
  AOTIRT_ENSURE(n > 0, kInvalidArgument, "cat needs a non-empty list of tensors");
  AOTIRT_ENSURE(tensors != nullptr, kInvalidArgument, "'tensors' is null");
  std::vector<const TensorImpl*> ts(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    AOTIRT_ENSURE(tensors[i] != nullptr, kInvalidArgument, "tensor {} of the list is a null handle", i);
    ts[i] = impl_of(tensors[i]);
    AOTIRT_ENSURE(ts[i]->dim() > 0, kInvalidArgument, "a 0-d tensor (at position {}) cannot be concatenated", i);
    AOTIRT_ENSURE(ts[i]->device() == ts[0]->device(), kInvalidArgument,
                  "all tensors must be on one device: tensor 0 is on {} but tensor {} on {}",
                  ts[0]->device().to_string(), i, ts[i]->device().to_string());
  }
  // Legacy: 1-d empty tensors ([0]) are skipped whatever the others' shape.
  auto skipped = [](const TensorImpl* t) { return t->dim() == 1 && t->sizes()[0] == 0; };
  CatPlan plan;
  plan.device = ts[0]->device();
  plan.dtype = ts[0]->dtype();
  const TensorImpl* ref = nullptr;
  for (int64_t i = 0; i < n; ++i) {
    if (!skipped(ts[i])) {
      if (!ref) ref = ts[i];
      plan.inputs.push_back(ts[i]);
    }
    AOTIRT_ASSIGN_OR_RETURN(plan.dtype, promote_types(plan.dtype, ts[i]->dtype()));
  }
  if (!ref) {
    // Only skipped tensors: the result is one of them, empty.
    AOTIRT_ASSIGN_OR_RETURN(plan.dim, wrap_dim(dim, 1, false));
    plan.sizes = DimVector{0};
    plan.strides = DimVector{1};
    return plan;
  }
  AOTIRT_ASSIGN_OR_RETURN(plan.dim, wrap_dim(dim, ref->dim(), false));
  const int64_t d = plan.dim;
  plan.sizes = ref->sizes();
  plan.sizes[d] = 0;
  for (int64_t i = 0; i < n; ++i) {
    const TensorImpl& t = *ts[i];
    if (skipped(&t)) continue;
    AOTIRT_ENSURE(t.dim() == ref->dim(), kInvalidArgument,
                  "tensors must have the same number of dimensions: got {} and {} (tensor {})", ref->dim(), t.dim(),
                  i);
    for (int64_t j = 0; j < t.dim(); ++j) {
      if (j == d) continue;
      AOTIRT_ENSURE(t.sizes()[j] == ref->sizes()[j], kInvalidArgument,
                    "sizes of tensors must match except in dimension {}: expected size {} but got size {} for "
                    "tensor {} in the list",
                    d, ref->sizes()[j], t.sizes()[j], i);
    }
    plan.sizes[d] += t.sizes()[d];
  }
  // Output format (torch's cat_compute_output_memory_format): the inputs'
  // common suggested format; any contiguous input, skipped ones included,
  // or any disagreement gives contiguous.
  MemoryFormat format = suggest_memory_format(*ts[0]);
  for (int64_t i = 1; i < n; ++i)
    if (suggest_memory_format(*ts[i]) != format) format = MemoryFormat::kContiguous;
  AOTIRT_ASSIGN_OR_RETURN(plan.strides, strides_for_format(plan.sizes, format));
  return plan;
}

Status cat_copy(const CatPlan& plan, const TensorImpl& out) {
  int64_t at = 0;
  for (const TensorImpl* t : plan.inputs) {
    const int64_t len = t->sizes()[plan.dim];
    if (len > 0 && t->numel() > 0)
      AOTIRT_RETURN_IF_ERROR(copy_tensor(narrow_unchecked(out, plan.dim, at, len), *t, false));
    at += len;
  }
  return Status();
}

Result<TensorImpl> cat(const AtenTensorHandle* tensors, int64_t n, int64_t dim) {
  AOTIRT_ASSIGN_OR_RETURN(CatPlan plan, cat_plan(tensors, n, dim));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(plan.sizes, plan.strides, plan.dtype, plan.device));
  AOTIRT_RETURN_IF_ERROR(cat_copy(plan, out));
  return out;
}

// ---- pad ----

namespace {

enum class PadMode { kConstant, kReflect, kReplicate, kCircular };

Result<PadMode> parse_pad_mode(const char* mode) {
  AOTIRT_ENSURE(mode != nullptr, kInvalidArgument, "'mode' is null");
  const std::string m(mode);
  if (m == "constant") return PadMode::kConstant;
  if (m == "reflect") return PadMode::kReflect;
  if (m == "replicate") return PadMode::kReplicate;
  if (m == "circular") return PadMode::kCircular;
  return AOTIRT_STATUS(kInvalidArgument,
                       "unknown padding mode \"{}\" (expected constant, reflect, replicate or circular)", m);
}

}  // namespace

Result<TensorImpl> pad(const TensorImpl& self, const int64_t* pads, int64_t n, const char* mode_name,
                       const double* value) {
  AOTIRT_ASSIGN_OR_RETURN(PadMode mode, parse_pad_mode(mode_name));
  AOTIRT_ENSURE(n >= 0 && (n == 0 || pads != nullptr), kInvalidArgument, "'pad' is null");
  AOTIRT_ENSURE(n % 2 == 0, kInvalidArgument, "the padding length {} must be divisible by 2", n);
  const int64_t rank = self.dim(), npad = n / 2;
  AOTIRT_ENSURE(npad <= rank, kInvalidArgument,
                "the padding length {} must be at most twice the input's dimension, {}", n, rank);
  if (mode != PadMode::kConstant) {
    AOTIRT_ENSURE(value == nullptr, kInvalidArgument, "padding mode \"{}\" takes no value argument", mode_name);
    AOTIRT_ENSURE(npad >= 1 && npad <= 3 && (rank == npad + 1 || rank == npad + 2), kInvalidArgument,
                  "padding size {} is not supported for a {}-d input in mode \"{}\" (supported: 2 for 2-d or "
                  "3-d, 4 for 3-d or 4-d, 6 for 4-d or 5-d)",
                  n, rank, mode_name);
    // torch's reflection and replication kernels refuse bool on both
    // devices (its CUDA path returns before looking at the dtype when the
    // input is empty); the copies below would take it, but a package must
    // not run here where it fails under torch.
    AOTIRT_ENSURE(mode == PadMode::kCircular || self.dtype() != DType::kBool ||
                      (self.device().type != DeviceType::kCpu && self.numel() == 0),
                  kUnimplemented, "padding mode \"{}\" is not implemented for bool (as in torch)", mode_name);
    // reflect and replicate need every dim but an optional batch dim
    // non-empty.
    for (int64_t i = rank == npad + 2 ? 1 : 0; mode != PadMode::kCircular && i < rank; ++i)
      AOTIRT_ENSURE(self.sizes()[i] > 0, kInvalidArgument,
                    "padding mode \"{}\" needs non-empty dims besides the batch dim, got shape {}", mode_name,
                    shape_str(self));
  }
  // lo/hi pads per dim, the output sizes, and where the (cropped) input
  // lands in the output: [c0, c0 + center).
  DimVector lo, hi, out_sizes = self.sizes(), c0, center;
  lo.resize(rank);
  hi.resize(rank);
  c0.resize(rank);
  center.resize(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t k = rank - 1 - d;  // pads for dim d sit at pairs from the last dim
    lo[d] = k < npad ? pads[2 * k] : 0;
    hi[d] = k < npad ? pads[2 * k + 1] : 0;
    const int64_t size = self.sizes()[d];
    int64_t out = 0;
    AOTIRT_ENSURE(!__builtin_add_overflow(size, lo[d], &out) && !__builtin_add_overflow(out, hi[d], &out),
                  kInvalidArgument, "padding {} overflows dimension {}", dims_to_string(pads, n), d);
    if (k < npad) {
      switch (mode) {
        case PadMode::kConstant:
          AOTIRT_ENSURE(out >= 0, kInvalidArgument,
                        "input size {} plus padding {} and {} gives a negative output size in dimension {}", size,
                        lo[d], hi[d], d);
          break;
        case PadMode::kReflect:
          AOTIRT_ENSURE(lo[d] < size && hi[d] < size, kInvalidArgument,
                        "reflect padding ({}, {}) must be less than dimension {} of size {}", lo[d], hi[d], d,
                        size);
          [[fallthrough]];
        case PadMode::kReplicate:
          AOTIRT_ENSURE(out >= 1, kInvalidArgument,
                        "input size {} in dimension {} is too small for padding ({}, {}): output size {}", size, d,
                        lo[d], hi[d], out);
          break;
        case PadMode::kCircular:
          AOTIRT_ENSURE(lo[d] <= size && hi[d] <= size, kInvalidArgument,
                        "circular padding ({}, {}) wraps around dimension {} of size {} more than once", lo[d],
                        hi[d], d, size);
          AOTIRT_ENSURE(out > 0, kInvalidArgument,
                        "negative circular padding ({}, {}) empties dimension {} of size {}", lo[d], hi[d], d,
                        size);
          break;
      }
    }
    out_sizes[d] = out;
    c0[d] = std::max<int64_t>(lo[d], 0);
    center[d] = size - std::max<int64_t>(-lo[d], 0) - std::max<int64_t>(-hi[d], 0);
  }
  if (mode == PadMode::kConstant) {
    bool grows = false;
    for (int64_t i = 0; i < n; ++i) grows |= pads[i] > 0;
    if (!grows) {
      // Only cropping: torch clones the narrowed input (empty_like's
      // layout) and never looks at the value.
      TensorImpl src = self;
      for (int64_t d = 0; d < rank; ++d) src = narrow_unchecked(src, d, -lo[d], out_sizes[d]);
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(out_sizes, empty_like_strides(src), self.dtype(),
                                                            self.device()));
      if (out.numel() > 0) AOTIRT_RETURN_IF_ERROR(copy_tensor(out, src, false));
      return out;
    }
    if (value) AOTIRT_RETURN_IF_ERROR(check_scalar_fits(*value, self.dtype(), false));
  }
  // Output layout: torch keeps the input's suggested memory format, except
  // circular padding, which builds a contiguous result, and its CUDA
  // reflection and replication kernels, which write a contiguous one.
  const bool contiguous_out = mode == PadMode::kCircular ||
                              (mode != PadMode::kConstant && self.device().type != DeviceType::kCpu);
  const MemoryFormat format = contiguous_out ? MemoryFormat::kContiguous : suggest_memory_format(self);
  AOTIRT_ASSIGN_OR_RETURN(DimVector out_strides, strides_for_format(out_sizes, format));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(out_sizes, out_strides, self.dtype(), self.device()));
  if (out.numel() == 0) return out;

  if (mode == PadMode::kConstant) AOTIRT_RETURN_IF_ERROR(fill(out, value ? *value : 0.0));
  // The cropped input into the center.
  bool center_empty = false;
  for (int64_t d = 0; d < rank; ++d) center_empty |= center[d] <= 0;
  if (!center_empty) {
    TensorImpl src = self, dst = out;
    for (int64_t d = 0; d < rank; ++d) {
      src = narrow_unchecked(src, d, std::max<int64_t>(-lo[d], 0), center[d]);
      dst = narrow_unchecked(dst, d, c0[d], center[d]);
    }
    AOTIRT_RETURN_IF_ERROR(copy_tensor(dst, src, false));
  }
  if (mode == PadMode::kConstant) return out;

  // The other modes fill each padded dim from the output's own center, one
  // dim at a time from the innermost: a dim already done takes its full
  // range, one still to do only its center, which makes the corners the
  // composition torch's kernels compute. Each pad slot copies one slice of
  // width 1, through the device's copy.
  for (int64_t d = rank - 1; d >= rank - npad; --d) {
    TensorImpl region = out;
    for (int64_t e = 0; e < d; ++e) region = narrow_unchecked(region, e, c0[e], center[e]);
    const int64_t begin = c0[d], end = c0[d] + center[d], size = out_sizes[d];
    for (int64_t j = 0; j < size; ++j) {
      if (j >= begin && j < end) continue;
      int64_t src = 0;
      switch (mode) {
        case PadMode::kReflect: src = j < begin ? 2 * begin - j : 2 * (end - 1) - j; break;
        case PadMode::kReplicate: src = j < begin ? begin : end - 1; break;
        default: src = j < begin ? j + center[d] : j - center[d]; break;
      }
      // Negative padding on one side can leave the other side's source
      // outside what remains of the input, where torch reads bytes of
      // the input that the output no longer holds.
      AOTIRT_ENSURE(src >= begin && src < end, kUnimplemented,
                    "padding ({}, {}) of dimension {} (size {}) in mode \"{}\" reaches past the part of the input "
                    "that negative padding keeps",
                    lo[d], hi[d], d, self.sizes()[d], mode_name);
      AOTIRT_RETURN_IF_ERROR(
          copy_tensor(narrow_unchecked(region, d, j, 1), narrow_unchecked(region, d, src, 1), false));
    }
  }
  return out;
}

// ---- resize ----

namespace {

Result<MemoryFormat> read_memory_format(int32_t code) {
  switch (code) {
    case 0: return MemoryFormat::kContiguous;
    case 1: return MemoryFormat::kPreserve;
    case 2: return MemoryFormat::kChannelsLast;
    case 3: return MemoryFormat::kChannelsLast3d;
    default: return AOTIRT_STATUS(kInvalidArgument, "invalid memory format code {}", code);
  }
}

// Sets |self|'s layout, growing its storage (keeping its bytes) when the
// new layout reaches past it. Other tensors sharing the old storage keep it:
// unlike torch's, aotirt's storage cannot change its buffer in place.
Status apply_layout(TensorImpl& self, const DimVector& sizes, const DimVector& strides) {
  AOTIRT_ASSIGN_OR_RETURN(size_t extent, storage_bytes_for(sizes, strides, self.dtype()));
  size_t needed = extent == 0 ? 0 : extent + static_cast<size_t>(self.storage_offset()) * self.element_size();
  const StorageRef& old = self.storage();
  AOTIRT_ENSURE(old, kInvalidArgument, "'self' has no storage to resize");
  if (needed > old->nbytes()) {
    AOTIRT_ENSURE(!old->is_borrowed(), kInvalidArgument,
                  "the storage of 'self' ({} bytes) is not owned by aotirt and cannot grow to {} bytes",
                  old->nbytes(), needed);
    AOTIRT_ENSURE(!old->opaque() && !old->is_immutable(), kInvalidArgument,
                  "the storage of 'self' is a constant and cannot be resized");
    const int64_t old_bytes = static_cast<int64_t>(old->nbytes());
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl grown,
                            empty_contiguous(DimVector{static_cast<int64_t>(needed)}, DType::kUInt8, self.device()));
    if (old_bytes > 0) {
      TensorImpl from(old, DType::kUInt8, DimVector{old_bytes}, DimVector{1}, 0);
      AOTIRT_RETURN_IF_ERROR(copy_tensor(narrow_unchecked(grown, 0, 0, old_bytes), from, false));
    }
    self = TensorImpl(grown.storage(), self.dtype(), sizes, strides, self.storage_offset());
    return Status();
  }
  self.mutable_sizes() = sizes;
  self.mutable_strides() = strides;
  return Status();
}

}  // namespace

Status resize_(TensorImpl& self, const DimVector& sizes, const int32_t* memory_format) {
  std::optional<MemoryFormat> format;
  if (memory_format) {
    AOTIRT_ASSIGN_OR_RETURN(format, read_memory_format(*memory_format));
    AOTIRT_ENSURE(*format != MemoryFormat::kPreserve, kInvalidArgument,
                  "resize_ does not support memory format preserve_format");
  }
  DimVector strides;
  if (format) {
    AOTIRT_ASSIGN_OR_RETURN(strides, strides_for_format(sizes, *format));
  } else if (sizes == self.sizes()) {
    return Status();  // same sizes keep their strides, as in torch
  } else {
    strides = contiguous_strides(sizes);
  }
  return apply_layout(self, sizes, strides);
}

Status resize_as_(TensorImpl& self, const TensorImpl& the_template, const int32_t* memory_format) {
  std::optional<MemoryFormat> format;
  if (memory_format) {
    AOTIRT_ASSIGN_OR_RETURN(format, read_memory_format(*memory_format));
    if (*format == MemoryFormat::kPreserve) format = suggest_memory_format(the_template);
  }
  const DimVector sizes = the_template.sizes();
  DimVector strides;
  if (format) {
    AOTIRT_ASSIGN_OR_RETURN(strides, strides_for_format(sizes, *format));
  } else if (sizes == self.sizes()) {
    return Status();
  } else {
    strides = contiguous_strides(sizes);
  }
  return apply_layout(self, sizes, strides);
}

}  // namespace tensor_ops
}  // namespace ops
}  // namespace aotirt
