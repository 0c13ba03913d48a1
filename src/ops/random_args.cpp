#include "ops/random_args.h"

#include <algorithm>
#include <charconv>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>

#include "base/status.h"
#include "ops/layout.h"
#include "ops/op_args.h"

namespace aotirt {
namespace ops {
namespace {

const char* kind_name(RandomKind kind) {
  switch (kind) {
    case RandomKind::kUniform: return "a uniform distribution";
    case RandomKind::kNormal: return "a normal distribution";
    case RandomKind::kExponential: return "an exponential distribution";
    case RandomKind::kRandint: return "randint";
    case RandomKind::kRandperm: return "randperm";
    case RandomKind::kBernoulli: return "bernoulli";
  }
  return "?";
}

bool is_int_or_bool(DType d) {
  switch (d) {
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kBool: return true;
    default: return false;
  }
}

bool is_float(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}

// The largest finite value of a floating |d|.
double float_max(DType d) {
  switch (d) {
    case DType::kFloat16: return 65504.0;
    case DType::kBFloat16: return 3.3895313892515355e38;
    case DType::kFloat32:
    case DType::kComplex64: return FLT_MAX;
    default: return DBL_MAX;
  }
}

// The integers |d| holds exactly, as [lo, hi].
void exact_int_range(DType d, int64_t* lo, int64_t* hi) {
  switch (d) {
    case DType::kUInt8: *lo = 0; *hi = 255; return;
    case DType::kInt8: *lo = -128; *hi = 127; return;
    case DType::kInt16: *lo = -32768; *hi = 32767; return;
    case DType::kInt32: *lo = INT32_MIN; *hi = INT32_MAX; return;
    case DType::kBool: *lo = 0; *hi = 1; return;
    case DType::kFloat16: *lo = -(int64_t{1} << 11); *hi = int64_t{1} << 11; return;
    case DType::kBFloat16: *lo = -(int64_t{1} << 8); *hi = int64_t{1} << 8; return;
    case DType::kFloat32: *lo = -(int64_t{1} << 24); *hi = int64_t{1} << 24; return;
    case DType::kFloat64: *lo = -(int64_t{1} << 53); *hi = int64_t{1} << 53; return;
    default: *lo = INT64_MIN; *hi = INT64_MAX; return;
  }
}

}  // namespace

Status check_random_dtype(RandomKind kind, DType dtype, const char* what) {
  const bool complex = dtype == DType::kComplex64 || dtype == DType::kComplex128;
  const bool supported = is_float(dtype) || complex || is_int_or_bool(dtype);
  AOTIRT_ENSURE(supported, kUnimplemented, "'{}' has dtype {}, which aotirt does not draw random values for", what,
                dtype_name(dtype));
  bool ok = false;
  switch (kind) {
    case RandomKind::kUniform:
    case RandomKind::kNormal: ok = is_float(dtype) || complex; break;
    case RandomKind::kExponential: ok = is_float(dtype); break;
    case RandomKind::kRandint:
      AOTIRT_ENSURE(!complex, kUnimplemented, "'{}' has dtype {}, which aotirt's randint does not produce", what,
                    dtype_name(dtype));
      ok = true;
      break;
    case RandomKind::kRandperm: ok = dtype != DType::kBool && !complex; break;
    case RandomKind::kBernoulli: ok = !complex; break;
  }
  AOTIRT_ENSURE(ok, kInvalidArgument, "'{}' has dtype {}, which {} is not defined for (as in torch)", what,
                dtype_name(dtype), kind_name(kind));
  return Status();
}

Result<FactoryArgs> factory_args(RandomKind kind, const int64_t* size, int64_t size_len, const int32_t* dtype,
                                 DType default_dtype, const int32_t* layout, const int32_t* pin_memory) {
  FactoryArgs a;
  AOTIRT_ENSURE(size_len >= 0, kInvalidArgument, "'size' has negative length {}", size_len);
  AOTIRT_ENSURE(size != nullptr || size_len == 0, kInvalidArgument, "'size' is null but has length {}", size_len);
  a.sizes = DimVector(size, size_len);
  for (int64_t i = 0; i < size_len; ++i)
    AOTIRT_ENSURE(size[i] >= 0, kInvalidArgument, "'size' {} has a negative dimension {}",
                  dims_to_string(size, size_len), size[i]);
  AOTIRT_ENSURE(!layout || *layout == 0, kUnimplemented,
                "'layout' is {} (not torch.strided); aotirt creates strided tensors only", *layout);
  AOTIRT_ENSURE(!pin_memory || *pin_memory == 0, kUnimplemented,
                "'pin_memory' is True; aotirt does not pin the memory of CPU tensors");
  if (dtype) {
    AOTIRT_ENSURE(dtype_is_valid(*dtype), kInvalidArgument, "invalid dtype code {} for 'dtype'", *dtype);
    a.dtype = static_cast<DType>(*dtype);
  } else {
    a.dtype = default_dtype;
  }
  AOTIRT_RETURN_IF_ERROR(check_random_dtype(kind, a.dtype, "dtype"));
  return a;
}

Result<uint64_t> parse_random_seed(const std::string& text) {
  if (text.empty()) {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) | rd();
  }
  const char* end = text.data() + text.size();
  uint64_t u = 0;
  auto r = std::from_chars(text.data(), end, u);
  if (r.ec == std::errc() && r.ptr == end) return u;
  int64_t s = 0;
  r = std::from_chars(text.data(), end, s);
  if (r.ec == std::errc() && r.ptr == end) return static_cast<uint64_t>(s);
  return AOTIRT_STATUS(kInvalidArgument, "AOTIRT_SEED='{}' is not a 64-bit integer", text);
}

Status check_no_generator(AtenGeneratorHandle* generator) {
  AOTIRT_ENSURE(generator == nullptr || *generator == nullptr, kUnimplemented,
                "'generator' is given, but aotirt has no generator objects: it draws from one process-wide "
                "generator (seeded by AOTIRT_SEED)");
  return Status();
}

Status check_randint_range(int64_t low, int64_t high, DType dtype) {
  AOTIRT_ENSURE(low < high, kInvalidArgument, "'low' must be less than 'high', but got low={} >= high={}", low,
                high);
  const int64_t last = high - 1;
  if (is_float(dtype)) {
    // torch only warns when the bounds exceed the exactly representable
    // integers; it refuses values beyond the dtype's finite range.
    const double m = float_max(dtype);
    AOTIRT_ENSURE(static_cast<double>(low) >= -m, kInvalidArgument, "low={} is out of bounds for {}", low,
                  dtype_name(dtype));
    AOTIRT_ENSURE(static_cast<double>(last) <= m, kInvalidArgument, "high - 1 = {} is out of bounds for {}", last,
                  dtype_name(dtype));
    return Status();
  }
  int64_t lo, hi;
  exact_int_range(dtype, &lo, &hi);
  AOTIRT_ENSURE(low >= lo && low <= hi, kInvalidArgument, "low={} is out of bounds for {}", low, dtype_name(dtype));
  AOTIRT_ENSURE(last >= lo && last <= hi, kInvalidArgument, "high - 1 = {} is out of bounds for {}", last,
                dtype_name(dtype));
  return Status();
}

Status check_randperm_n(int64_t n, DType dtype) {
  AOTIRT_ENSURE(n >= 0, kInvalidArgument, "'n' must be non-negative, got n={}", n);
  int64_t lo, hi;
  exact_int_range(dtype, &lo, &hi);
  AOTIRT_ENSURE(n == 0 || n - 1 <= hi, kInvalidArgument,
                "n={} is too large for dtype {}: n - 1 must be at most {}", n, dtype_name(dtype), hi);
  return Status();
}

Status check_uniform_range(double from, double to, DType dtype) {
  AOTIRT_ENSURE(from <= to, kInvalidArgument, "uniform expects a [from, to) range, but found from={} > to={}", from,
                to);
  const double m = float_max(dtype);
  AOTIRT_ENSURE(to - from <= m, kInvalidArgument,
                "uniform expects to - from <= the largest {} ({}), but found to={} and from={}", dtype_name(dtype),
                m, to, from);
  return Status();
}

Status check_normal_std(double std) {
  AOTIRT_ENSURE(std >= 0.0, kInvalidArgument, "normal expects std >= 0.0, but found std={}", std);
  return Status();
}

Status check_exponential_lambda(double lambd) {
  AOTIRT_ENSURE(lambd > 0.0, kInvalidArgument, "exponential expects lambda > 0.0, but found lambda={}", lambd);
  return Status();
}

Status check_bernoulli_p(double p) {
  AOTIRT_ENSURE(p >= 0.0 && p <= 1.0, kInvalidArgument, "bernoulli expects p to be in [0, 1], but got p={}", p);
  return Status();
}

Result<DimVector> expand_strides(const TensorImpl& p, const DimVector& sizes, const char* what) {
  const int64_t nd = sizes.size(), pd = p.dim();
  AOTIRT_ENSURE(pd <= nd, kInvalidArgument, "'{}' of shape {} has more dimensions than the target shape {}", what,
                shape_str(p), dims_to_string(sizes.data(), nd));
  DimVector strides;
  strides.resize(nd);
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t pdim = d - (nd - pd);
    if (pdim < 0) {
      strides[d] = 0;
      continue;
    }
    const int64_t ps = p.sizes()[pdim];
    AOTIRT_ENSURE(ps == sizes[d] || ps == 1, kInvalidArgument,
                  "'{}' of shape {} cannot be expanded to shape {} (size {} at dimension {})", what, shape_str(p),
                  dims_to_string(sizes.data(), nd), ps, d);
    strides[d] = ps == 1 && sizes[d] != 1 ? 0 : p.strides()[pdim];
  }
  return strides;
}

// ---- FFT ----

namespace {

Status fft_common(AtenTensorHandle self, const int64_t* dim, int64_t dim_len, int64_t normalization, FftArgs* a) {
  AOTIRT_ASSIGN_OR_RETURN(a->self, require_tensor(self, "self"));
  const TensorImpl& t = *a->self;
  AOTIRT_ENSURE(dim_len >= 0, kInvalidArgument, "'dim' has negative length {}", dim_len);
  AOTIRT_ENSURE(dim != nullptr || dim_len == 0, kInvalidArgument, "'dim' is null but has length {}", dim_len);
  std::vector<bool> seen(static_cast<size_t>(t.dim()), false);
  for (int64_t i = 0; i < dim_len; ++i) {
    // The frontend (torch.fft) wraps dims before calling the aten op.
    AOTIRT_ENSURE(dim[i] >= 0 && dim[i] < t.dim(), kInvalidArgument,
                  "'dim' {} holds {}, out of range for a tensor of shape {} (wrapped dims expected)",
                  dims_to_string(dim, dim_len), dim[i], shape_str(t));
    AOTIRT_ENSURE(!seen[dim[i]], kInvalidArgument, "'dim' {} repeats dimension {}", dims_to_string(dim, dim_len),
                  dim[i]);
    seen[dim[i]] = true;
    a->dims.push_back(dim[i]);
  }
  a->given_dims = a->dims;
  AOTIRT_ENSURE(normalization >= 0 && normalization <= 2, kInvalidArgument,
                "'normalization' is {}; expected 0 (none), 1 (1/sqrt(n)) or 2 (1/n)", normalization);
  double n = 1.0;
  for (int64_t d : a->dims) n *= static_cast<double>(t.sizes()[d]);
  if (normalization == 1 && n > 0) a->scale = 1.0 / std::sqrt(n);
  if (normalization == 2 && n > 0) a->scale = 1.0 / n;
  return Status();
}

// The output layout of torch's CPU _exec_fft (see FftArgs).
void fft_layout(const TensorImpl& t, bool keep_last, FftArgs* a) {
  const DimVector& in_strides = t.strides();
  auto by_stride = [&](int64_t x, int64_t y) { return in_strides[x] > in_strides[y]; };
  std::sort(a->dims.begin(), a->dims.end() - (keep_last ? 1 : 0), by_stride);
  const int64_t nd = t.dim();
  std::vector<int64_t> order(static_cast<size_t>(nd));
  std::vector<bool> transformed(static_cast<size_t>(nd), false);
  for (int64_t d = 0; d < nd; ++d) order[d] = d;
  for (int64_t d : a->dims) transformed[d] = true;
  // std::partition and std::sort (not their stable forms), as torch uses,
  // so ties among equal strides land where they do in torch.
  auto batch_end = std::partition(order.begin(), order.end(), [&](int64_t d) { return !transformed[d]; });
  std::sort(order.begin(), batch_end, by_stride);
  std::copy(a->dims.begin(), a->dims.end(), batch_end);
  const int64_t batch_dims = batch_end - order.begin();
  a->out_strides.resize(nd);
  int64_t stride = 1;
  for (int64_t i = nd - 1; i >= batch_dims; --i) {
    a->out_strides[order[i]] = stride;
    stride *= std::max<int64_t>(a->out_sizes[order[i]], 1);
  }
  int64_t batch = 1;
  for (int64_t i = batch_dims - 1; i >= 0; --i) {
    a->out_strides[order[i]] = batch * stride;
    batch *= a->out_sizes[order[i]];
  }
}

}  // namespace

Result<FftArgs> fft_c2c_args(AtenTensorHandle self, const int64_t* dim, int64_t dim_len, int64_t normalization) {
  FftArgs a;
  AOTIRT_RETURN_IF_ERROR(fft_common(self, dim, dim_len, normalization, &a));
  const DType d = a.self->dtype();
  AOTIRT_ENSURE(d != DType::kComplex32, kUnimplemented, "'self' has dtype {}; aotirt's FFTs take complex64 and "
                "complex128", dtype_name(d));
  AOTIRT_ENSURE(d == DType::kComplex64 || d == DType::kComplex128, kInvalidArgument,
                "'self' has dtype {}; _fft_c2c takes complex tensors only", dtype_name(d));
  a.out_dtype = d;
  a.out_sizes = a.self->sizes();
  if (a.dims.empty())
    a.out_strides = empty_like_strides(*a.self);  // torch returns a clone
  else
    fft_layout(*a.self, false, &a);
  return a;
}

Result<FftArgs> fft_r2c_args(AtenTensorHandle self, const int64_t* dim, int64_t dim_len, int64_t normalization,
                             bool onesided) {
  FftArgs a;
  AOTIRT_RETURN_IF_ERROR(fft_common(self, dim, dim_len, normalization, &a));
  const DType d = a.self->dtype();
  AOTIRT_ENSURE(d != DType::kFloat16 && d != DType::kBFloat16, kUnimplemented,
                "'self' has dtype {}; aotirt's FFTs take float32 and float64", dtype_name(d));
  AOTIRT_ENSURE(d == DType::kFloat32 || d == DType::kFloat64, kInvalidArgument,
                "'self' has dtype {}; _fft_r2c takes real floating tensors only", dtype_name(d));
  AOTIRT_ENSURE(!a.dims.empty(), kInvalidArgument, "'dim' is empty; _fft_r2c needs at least one dimension");
  a.out_dtype = d == DType::kFloat64 ? DType::kComplex128 : DType::kComplex64;
  a.onesided = onesided;
  a.out_sizes = a.self->sizes();
  if (onesided) a.out_sizes[a.dims.back()] = a.out_sizes[a.dims.back()] / 2 + 1;
  fft_layout(*a.self, true, &a);
  return a;
}

DimVector dense_strides_in_order(const DimVector& sizes, const std::vector<int64_t>& order) {
  DimVector strides;
  strides.resize(sizes.size());
  int64_t stride = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[order[i]] = stride;
    stride *= std::max<int64_t>(sizes[order[i]], 1);
  }
  return strides;
}

namespace {

// One pass of torch's cuFFT path over |dims| of an input strided
// |in_strides|, into |out_sizes|: std::partition and std::sort (not their
// stable forms) as torch calls them, so ties among equal strides land where
// they land in torch.
FftPass cuda_fft_pass(const DimVector& in_strides, const DimVector& out_sizes, std::vector<int64_t> dims) {
  FftPass p;
  const int64_t nd = static_cast<int64_t>(in_strides.size());
  std::vector<bool> transformed(static_cast<size_t>(nd), false);
  for (int64_t d : dims) transformed[d] = true;
  p.order.resize(static_cast<size_t>(nd));
  for (int64_t d = 0; d < nd; ++d) p.order[d] = d;
  auto batch_end = std::partition(p.order.begin(), p.order.end(), [&](int64_t d) { return !transformed[d]; });
  std::sort(p.order.begin(), batch_end, [&](int64_t x, int64_t y) { return in_strides[x] > in_strides[y]; });
  const int64_t batch_dims = batch_end - p.order.begin();
  std::copy(dims.begin(), dims.end(), batch_end);
  p.out_sizes = out_sizes;
  p.out_strides.resize(nd);
  // The transformed dims densely (sizes of 0 as 1); the batch dims outside
  // them, each a multiple of the whole signal's extent.
  int64_t signal = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    p.out_strides[dims[i]] = signal;
    signal *= std::max<int64_t>(out_sizes[dims[i]], 1);
  }
  int64_t batch = 1;
  for (int64_t i = batch_dims - 1; i >= 0; --i) {
    p.out_strides[p.order[i]] = batch * signal;
    batch *= out_sizes[p.order[i]];
  }
  p.dims = std::move(dims);
  return p;
}

// Passes of at most three dims over |pending|, the dims with the smallest
// strides first (torch re-sorts before each pass: the previous pass changed
// the strides), appended to |out|, starting from an input strided |strides|.
void cuda_fft_c2c_passes(std::vector<int64_t> pending, DimVector strides, const DimVector& out_sizes,
                         std::vector<FftPass>* out) {
  constexpr size_t kMaxDimsPerPlan = 3;
  while (!pending.empty()) {
    std::sort(pending.begin(), pending.end(), [&](int64_t x, int64_t y) { return strides[x] > strides[y]; });
    const size_t take = std::min(kMaxDimsPerPlan, pending.size());
    std::vector<int64_t> dims(pending.end() - take, pending.end());
    pending.resize(pending.size() - take);
    out->push_back(cuda_fft_pass(strides, out_sizes, std::move(dims)));
    strides = out->back().out_strides;
  }
}

}  // namespace

bool fft_cuda_r2c_in_one_plan(const std::vector<int64_t>& dims) {
  constexpr size_t kMaxDimsPerPlan = 3;
  if (dims.size() > kMaxDimsPerPlan) return false;
  return !(dims.size() >= 2 && dims[0] == 0 && dims[1] == 1);
}

FftCudaPasses fft_cuda_passes(const FftArgs& a, bool r2c, bool complex_aligned) {
  FftCudaPasses f;
  const TensorImpl& t = *a.self;
  // From the caller's order, as torch: its sorts are not stable in general,
  // so ties among equal strides depend on where they start.
  const std::vector<int64_t>& dims = a.given_dims;
  if (!r2c) {
    cuda_fft_c2c_passes(dims, t.strides(), a.out_sizes, &f.passes);
    f.out_strides = f.passes.back().out_strides;
    return f;
  }
  const int64_t last = dims.back();
  DimVector strides = t.strides();
  if (!complex_aligned) {
    // torch copies the input densely with |last| innermost.
    std::vector<int64_t> order;
    for (int64_t d = 0; d < t.dim(); ++d)
      if (d != last) order.push_back(d);
    order.push_back(last);
    strides = dense_strides_in_order(t.sizes(), order);
  }
  if (fft_cuda_r2c_in_one_plan(dims)) {
    // One multi-dim r2c over |dims| in the caller's order (|last| halved,
    // innermost), straight into the result's sizes: a two-sided result is
    // laid out at full size by the pass itself and filled in place.
    f.passes.push_back(cuda_fft_pass(strides, a.out_sizes, dims));
    f.passes.back().r2c = true;
    f.out_strides = f.passes.back().out_strides;
    return f;
  }
  DimVector onesided = t.sizes();
  onesided[last] = onesided[last] / 2 + 1;
  const bool single = dims.size() == 1;
  f.passes.push_back(cuda_fft_pass(strides, single ? a.out_sizes : onesided, {last}));
  f.passes.back().r2c = true;
  cuda_fft_c2c_passes(std::vector<int64_t>(dims.begin(), dims.end() - 1), f.passes.back().out_strides, onesided,
                      &f.passes);
  const FftPass& final_pass = f.passes.back();
  f.expand = !a.onesided && final_pass.out_sizes[last] != a.out_sizes[last];
  f.out_strides = f.expand ? contiguous_strides(a.out_sizes) : final_pass.out_strides;
  return f;
}

}  // namespace ops
}  // namespace aotirt
