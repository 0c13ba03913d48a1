#include "ops/pooling_args.h"

#include <string>

#include "base/status.h"
#include "ops/layout.h"
#include "ops/op_args.h"

namespace aotirt {
namespace ops {
namespace {

std::string list_str(IntList l) { return l.data || l.len == 0 ? dims_to_string(l.data, l.len) : "[]"; }

bool is_float(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kBFloat16 || d == DType::kFloat16;
}

// The name torch's messages use for an op, e.g. "max_pool3d".
std::string op_name(const char* stem, int64_t spatial) { return std::string(stem) + std::to_string(spatial) + "d"; }

// The ranks an op takes: spatial + 1 (unbatched) or spatial + 2 (batched).
Status check_rank(const TensorImpl& t, int64_t spatial, const std::string& op) {
  AOTIRT_ENSURE(t.dim() == spatial + 1 || t.dim() == spatial + 2, kInvalidArgument,
                "{}: expected a {}-d (unbatched) or {}-d (batched) input, got shape {}", op, spatial + 1,
                spatial + 2, shape_str(t));
  return Status();
}

// Fails when one of dims [first, rank) of |t| is empty.
Status check_nonempty_from(const TensorImpl& t, int64_t first, const std::string& op) {
  for (int64_t d = first; d < t.dim(); ++d)
    AOTIRT_ENSURE(t.sizes()[d] > 0, kInvalidArgument,
                  "{}: expected the input to have non-zero size for non-batch dimensions, but it has shape {} with "
                  "dimension {} empty",
                  op, shape_str(t), d);
  return Status();
}

// Reads an argument list of 1 or |spatial| entries (or 0 when |allow_empty|)
// into |out|, a single entry repeating.
Status expand_list(IntList l, int64_t spatial, bool allow_empty, const char* what, const std::string& op,
                   int64_t out[3], bool* empty = nullptr) {
  AOTIRT_ENSURE(l.len >= 0 && (l.len == 0 || l.data), kInvalidArgument, "{}: '{}' is a null list", op, what);
  const bool ok = l.len == 1 || l.len == spatial || (allow_empty && l.len == 0);
  AOTIRT_ENSURE(ok, kInvalidArgument, "{}: {} must be {}a single int or a list of {} ints, got {}", op, what,
                allow_empty ? "omitted, " : "", spatial, list_str(l));
  if (empty) *empty = l.len == 0;
  for (int64_t i = 0; i < spatial; ++i) out[i] = l.len == 0 ? 0 : l.data[l.len == 1 ? 0 : i];
  return Status();
}

// Reads an argument list of exactly |spatial| entries.
Status exact_list(IntList l, int64_t spatial, const char* what, const std::string& op, int64_t out[3]) {
  AOTIRT_ENSURE(l.len == spatial && l.data, kInvalidArgument, "{}: {} must have {} elements, got {}", op, what,
                spatial, list_str(l));
  for (int64_t i = 0; i < spatial; ++i) out[i] = l.data[i];
  return Status();
}

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// torch's pooling_output_shape: windows that would start in the right
// padding are dropped in ceil mode.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = floor_div(span, stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Fills batch, channels and in[] (T = 1 for 2-d) from |t|.
void fill_geometry(const TensorImpl& t, int64_t spatial, PoolArgs* a) {
  a->batched = t.dim() == spatial + 2;
  const int64_t lead = a->batched ? 1 : 0;
  a->batch = a->batched ? t.sizes()[0] : 1;
  a->channels = t.sizes()[lead];
  for (int64_t i = 0; i < spatial; ++i) a->in[3 - spatial + i] = t.sizes()[lead + 1 + i];
  strides5(t.sizes(), t.strides(), spatial, a->batched, a->in_strides5);
}

// The output sizes for out[] in the input's batched/unbatched form, and
// strides: channels-last when |keep_channels_last| and the batched input
// suggests it, else contiguous.
void set_output_layout(PoolArgs* a, bool keep_channels_last) {
  DimVector sizes;
  sizes.resize(a->spatial + (a->batched ? 2 : 1));
  int64_t d = 0;
  if (a->batched) sizes[d++] = a->batch;
  sizes[d++] = a->channels;
  for (int64_t i = 0; i < a->spatial; ++i) sizes[d++] = a->out[3 - a->spatial + i];
  a->out_sizes = sizes;
  const bool cl = keep_channels_last && a->batched && is_channels_last(a->self->sizes(), a->self->strides());
  a->channels_last = cl;
  a->out_strides = cl ? channels_last_strides(sizes) : contiguous_strides(sizes);
}

// Whether |strides| lay |sizes| out densely with the dims of |order|
// (innermost first) nested in that order; size-1 dims are skipped, as in
// c10's contiguity tests.
bool dense_in_order(const DimVector& sizes, const DimVector& strides, const int64_t* order, int64_t n) {
  int64_t expected = 1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = order[i];
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

// torch's max_pool3d keeps an unbatched [C, T, H, W] input's layout when
// the input unsqueezed to [1, C, T, H, W] is channels-last-3d and not
// contiguous: the outputs are then channels-last-3d with the batch dim
// squeezed away. (Its CPU kernel does so too; aotirt applies the rule to
// CUDA only, leaving the CPU backend's outputs as they were.)
void cuda_unbatched_channels_last_3d(PoolArgs* a) {
  const TensorImpl& t = *a->self;
  const DimVector sizes{1, t.sizes()[0], t.sizes()[1], t.sizes()[2], t.sizes()[3]};
  const DimVector strides{t.sizes()[0] * t.strides()[0], t.strides()[0], t.strides()[1], t.strides()[2],
                          t.strides()[3]};
  static const int64_t kContiguous[5] = {4, 3, 2, 1, 0};
  static const int64_t kChannelsLast[5] = {1, 4, 3, 2, 0};
  if (dense_in_order(sizes, strides, kContiguous, 5) || !dense_in_order(sizes, strides, kChannelsLast, 5)) return;
  const DimVector& o = a->out_sizes;  // [C, T, H, W], none empty
  a->channels_last = true;
  a->out_strides = DimVector{1, o[2] * o[3] * o[0], o[3] * o[0], o[0]};
}

// Kernel, stride, padding (and dilation) of avg and max pooling, placed in
// the last |spatial| of a->kernel etc. and checked as torch does.
Status window_args(int64_t spatial, IntList kernel, IntList stride, IntList padding, IntList* dilation,
                   const std::string& op, PoolArgs* a) {
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
  bool stride_empty = false;
  AOTIRT_RETURN_IF_ERROR(expand_list(kernel, spatial, false, "kernel_size", op, k));
  AOTIRT_RETURN_IF_ERROR(expand_list(stride, spatial, true, "stride", op, s, &stride_empty));
  AOTIRT_RETURN_IF_ERROR(expand_list(padding, spatial, false, "padding", op, p));
  if (dilation) AOTIRT_RETURN_IF_ERROR(expand_list(*dilation, spatial, false, "dilation", op, d));
  const int64_t off = 3 - spatial;
  for (int64_t i = 0; i < spatial; ++i) {
    if (stride_empty) s[i] = k[i];
    AOTIRT_ENSURE(k[i] > 0, kInvalidArgument, "{}: kernel size should be greater than zero, but got {}", op,
                  list_str(kernel));
    AOTIRT_ENSURE(s[i] > 0, kInvalidArgument, "{}: stride should be greater than zero, but got {}", op,
                  list_str(stride));
    AOTIRT_ENSURE(d[i] > 0, kInvalidArgument, "{}: dilation should be greater than zero, but got {}", op,
                  dilation ? list_str(*dilation) : std::string("[1]"));
    AOTIRT_ENSURE(p[i] >= 0, kInvalidArgument, "{}: pad must be non-negative, but got {}", op, list_str(padding));
    AOTIRT_ENSURE(p[i] <= k[i] / 2, kInvalidArgument,
                  "{}: pad should be at most half of kernel size, but got padding {} and kernel_size {}", op,
                  list_str(padding), list_str(kernel));
    a->kernel[off + i] = k[i];
    a->stride[off + i] = s[i];
    a->pad[off + i] = p[i];
    a->dilation[off + i] = d[i];
  }
  return Status();
}

// Output sizes of avg/max pooling, refused when one is below 1.
Status pooled_sizes(const std::string& op, PoolArgs* a) {
  bool ok = true;
  for (int64_t i = 3 - a->spatial; i < 3; ++i) {
    a->out[i] = pooled_size(a->in[i], a->kernel[i], a->pad[i], a->stride[i], a->dilation[i], a->ceil_mode);
    ok = ok && a->out[i] >= 1;
  }
  AOTIRT_ENSURE(ok, kInvalidArgument,
                "{}: given input size {}, the calculated output size [{}, {}, {}] (T, H, W) is too small", op,
                shape_str(*a->self), a->out[0], a->out[1], a->out[2]);
  return Status();
}

}  // namespace

void strides5(const DimVector& sizes, const DimVector& strides, int64_t spatial, bool batched, int64_t out[5]) {
  (void)sizes;
  for (int64_t i = 0; i < 5; ++i) out[i] = 0;
  int64_t d = 0;
  if (batched) out[0] = strides[d++];
  out[1] = strides[d++];
  for (int64_t i = 0; i < spatial; ++i) out[2 + 3 - spatial + i] = strides[d++];
}

Result<PoolArgs> avg_pool_args(int64_t spatial, AtenTensorHandle self, IntList kernel, IntList stride, IntList padding,
                               bool ceil_mode, bool count_include_pad, const int64_t* divisor_override,
                               PoolDevice device) {
  const std::string op = op_name("avg_pool", spatial);
  PoolArgs a;
  a.kind = PoolKind::kAvg;
  a.spatial = spatial;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  const TensorImpl& t = *a.self;
  AOTIRT_RETURN_IF_ERROR(check_rank(t, spatial, op));
  AOTIRT_RETURN_IF_ERROR(window_args(spatial, kernel, stride, padding, nullptr, op, &a));
  if (divisor_override) {
    AOTIRT_ENSURE(*divisor_override != 0, kInvalidArgument, "{}: divisor must be not zero", op);
    a.has_divisor = true;
    a.divisor = *divisor_override;
  }
  // Only a batched input's batch dim may be empty.
  AOTIRT_RETURN_IF_ERROR(check_nonempty_from(t, t.dim() == spatial + 2 ? 1 : 0, op));
  const DType d = t.dtype();
  if (device == PoolDevice::kCuda) {
    // torch's CUDA avg_pool2d looks at the dtype only when there is output
    // to write; its avg_pool3d always does.
    AOTIRT_ENSURE(is_float(d) || (spatial == 2 && t.numel() == 0), kUnimplemented,
                  "{}: 'self' has dtype {}; torch's CUDA {} (and aotirt's) takes float32, float64, bfloat16 and "
                  "float16",
                  op, dtype_name(d), op);
  } else if (spatial == 3) {
    AOTIRT_ENSURE(d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kInt64, kUnimplemented,
                  "{}: 'self' has dtype {}; torch's CPU avg_pool3d (and aotirt's) takes float32, float64 and int64",
                  op, dtype_name(d));
  } else {
    AOTIRT_ENSURE(is_float(d) || d == DType::kInt64, kUnimplemented,
                  "{}: 'self' has dtype {}; aotirt takes float32, float64, bfloat16, float16 and int64", op,
                  dtype_name(d));
  }
  a.ceil_mode = ceil_mode;
  a.count_include_pad = count_include_pad;
  fill_geometry(t, spatial, &a);
  if (spatial == 3) {
    // avg_pool3d also wants the unpadded input to hold a whole kernel.
    AOTIRT_ENSURE(a.in[0] >= a.kernel[0] && a.in[1] >= a.kernel[1] && a.in[2] >= a.kernel[2], kInvalidArgument,
                  "{}: input image (T: {} H: {} W: {}) is smaller than the kernel size (kT: {} kH: {} kW: {})", op,
                  a.in[0], a.in[1], a.in[2], a.kernel[0], a.kernel[1], a.kernel[2]);
  }
  AOTIRT_RETURN_IF_ERROR(pooled_sizes(op, &a));
  set_output_layout(&a, spatial == 2);
  return a;
}

Result<PoolArgs> max_pool_args(int64_t spatial, AtenTensorHandle self, IntList kernel, IntList stride, IntList padding,
                               IntList dilation, bool ceil_mode, PoolDevice device) {
  const std::string op = op_name("max_pool", spatial);
  PoolArgs a;
  a.kind = PoolKind::kMax;
  a.spatial = spatial;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  const TensorImpl& t = *a.self;
  AOTIRT_RETURN_IF_ERROR(check_rank(t, spatial, op));
  AOTIRT_RETURN_IF_ERROR(window_args(spatial, kernel, stride, padding, &dilation, op, &a));
  AOTIRT_RETURN_IF_ERROR(check_nonempty_from(t, t.dim() == spatial + 2 ? 1 : 0, op));
  const DType d = t.dtype();
  // torch's CUDA kernels look at the dtype only when there is output to
  // write (an empty input has none).
  if (device == PoolDevice::kCuda)
    AOTIRT_ENSURE(is_float(d) || t.numel() == 0, kUnimplemented,
                  "{}: 'self' has dtype {}; torch's CUDA {} (and aotirt's) takes float32, float64, bfloat16 and "
                  "float16",
                  op, dtype_name(d), op);
  const bool ok = is_float(d) || d == DType::kUInt8 || d == DType::kInt8 || d == DType::kInt16 ||
                  d == DType::kInt32 || d == DType::kInt64;
  AOTIRT_ENSURE(ok, kUnimplemented,
                "{}: 'self' has dtype {}; aotirt takes float32, float64, bfloat16, float16, uint8, int8, int16, "
                "int32 and int64",
                op, dtype_name(d));
  a.ceil_mode = ceil_mode;
  fill_geometry(t, spatial, &a);
  AOTIRT_RETURN_IF_ERROR(pooled_sizes(op, &a));
  set_output_layout(&a, true);
  if (device == PoolDevice::kCuda && spatial == 3 && !a.batched) cuda_unbatched_channels_last_3d(&a);
  return a;
}

Result<PoolArgs> adaptive_pool_args(int64_t spatial, bool is_max, AtenTensorHandle self, IntList output_size) {
  const std::string op = op_name(is_max ? "adaptive_max_pool" : "adaptive_avg_pool", spatial);
  PoolArgs a;
  a.kind = is_max ? PoolKind::kAdaptiveMax : PoolKind::kAdaptiveAvg;
  a.spatial = spatial;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  const TensorImpl& t = *a.self;
  AOTIRT_RETURN_IF_ERROR(check_rank(t, spatial, op));
  int64_t o[3];
  AOTIRT_RETURN_IF_ERROR(exact_list(output_size, spatial, "output_size", op, o));
  for (int64_t i = 0; i < spatial; ++i)
    AOTIRT_ENSURE(o[i] >= 0, kInvalidArgument, "{}: elements of output_size must be >= 0, got {}", op,
                  list_str(output_size));
  // adaptive_avg_pool2d lets the channels be empty too; the others only the
  // leading dim.
  AOTIRT_RETURN_IF_ERROR(check_nonempty_from(t, !is_max && spatial == 2 ? t.dim() - 2 : 1, op));
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(t.dtype(), "self"));
  fill_geometry(t, spatial, &a);
  for (int64_t i = 0; i < spatial; ++i) a.out[3 - spatial + i] = o[i];
  set_output_layout(&a, spatial == 2);
  return a;
}

Result<PoolArgs> fractional_max_pool_args(int64_t spatial, AtenTensorHandle self, IntList kernel, IntList output_size,
                                          AtenTensorHandle random_samples) {
  const std::string op = op_name("fractional_max_pool", spatial);
  PoolArgs a;
  a.kind = PoolKind::kFractionalMax;
  a.spatial = spatial;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(a.aux, require_tensor(random_samples, "random_samples"));
  const TensorImpl& t = *a.self;
  const TensorImpl& r = *a.aux;
  AOTIRT_RETURN_IF_ERROR(check_rank(t, spatial, op));
  int64_t k[3], o[3];
  AOTIRT_RETURN_IF_ERROR(exact_list(kernel, spatial, "kernel_size", op, k));
  AOTIRT_RETURN_IF_ERROR(exact_list(output_size, spatial, "output_size", op, o));
  AOTIRT_RETURN_IF_ERROR(check_nonempty_from(t, 1, op));
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(t.dtype(), "self"));
  fill_geometry(t, spatial, &a);
  static const char* kDimNames[3] = {"time", "height", "width"};
  for (int64_t i = 0; i < spatial; ++i) {
    const int64_t j = 3 - spatial + i;
    AOTIRT_ENSURE(k[i] >= 0 && o[i] >= 0, kInvalidArgument,
                  "{}: kernel_size {} and output_size {} must not be negative", op, list_str(kernel),
                  list_str(output_size));
    // torch's 3-d check is strict, its 2-d one is not.
    const bool fits = spatial == 3 ? o[i] + k[i] - 1 < a.in[j] : o[i] + k[i] - 1 <= a.in[j];
    AOTIRT_ENSURE(fits, kInvalidArgument, "{}: pool {} {} too large relative to input {} {}",
                  op, kDimNames[j], k[i], kDimNames[j], a.in[j]);
    a.kernel[j] = k[i];
    a.out[j] = o[i];
  }
  AOTIRT_ENSURE(r.dtype() == t.dtype(), kInvalidArgument,
                "{}: 'random_samples' has dtype {} but 'self' has {}; they must match", op, dtype_name(r.dtype()),
                dtype_name(t.dtype()));
  AOTIRT_ENSURE(r.dim() == 3, kInvalidArgument, "{}: 'random_samples' must have 3 dimensions, got shape {}", op,
                shape_str(r));
  AOTIRT_ENSURE(r.sizes()[0] >= a.batch, kInvalidArgument,
                "{}: 'random_samples' of shape {} has fewer rows than the input's batch size {}", op, shape_str(r),
                a.batch);
  AOTIRT_ENSURE(r.sizes()[1] == a.channels, kInvalidArgument,
                "{}: 'random_samples' of shape {} must have size(1) equal to the input's {} channels", op,
                shape_str(r), a.channels);
  AOTIRT_ENSURE(r.sizes()[2] == spatial, kInvalidArgument,
                "{}: 'random_samples' of shape {} must have size(2) equal to {}", op, shape_str(r), spatial);
  a.aux_strides5[0] = r.strides()[0];
  a.aux_strides5[1] = r.strides()[1];
  a.aux_strides5[2] = r.strides()[2];
  set_output_layout(&a, false);
  return a;
}

Result<PoolArgs> max_unpool_args(int64_t spatial, AtenTensorHandle self, AtenTensorHandle indices,
                                 IntList output_size, IntList stride, IntList padding, PoolDevice device) {
  const std::string op = op_name("max_unpool", spatial);
  PoolArgs a;
  a.kind = PoolKind::kUnpool;
  a.spatial = spatial;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(a.aux, require_tensor(indices, "indices"));
  const TensorImpl& t = *a.self;
  const TensorImpl& ix = *a.aux;
  AOTIRT_ENSURE(ix.dtype() == DType::kInt64, kInvalidArgument, "{}: 'indices' must be int64, got {}", op,
                dtype_name(ix.dtype()));
  AOTIRT_RETURN_IF_ERROR(check_rank(t, spatial, op));
  int64_t o[3];
  AOTIRT_RETURN_IF_ERROR(exact_list(output_size, spatial, "output_size", op, o));
  if (spatial == 3) {
    int64_t s[3] = {0, 0, 0}, p[3] = {0, 0, 0};
    AOTIRT_RETURN_IF_ERROR(exact_list(stride, spatial, "stride", op, s));
    AOTIRT_RETURN_IF_ERROR(exact_list(padding, spatial, "padding", op, p));
    AOTIRT_ENSURE(s[0] > 0 && s[1] > 0 && s[2] > 0, kInvalidArgument,
                  "{}: strides should be greater than zero, but got {}", op, list_str(stride));
  }
  AOTIRT_ENSURE(ix.sizes() == t.sizes(), kInvalidArgument,
                "{}: 'indices' must have the shape of 'self' {}, got {}", op, shape_str(t), shape_str(ix));
  AOTIRT_RETURN_IF_ERROR(check_nonempty_from(t, 1, op));
  for (int64_t i = 0; i < spatial; ++i)
    AOTIRT_ENSURE(o[i] >= 0, kInvalidArgument, "{}: elements of output_size must be >= 0, got {}", op,
                  list_str(output_size));
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(t.dtype(), "self"));
  fill_geometry(t, spatial, &a);
  strides5(ix.sizes(), ix.strides(), spatial, a.batched, a.aux_strides5);
  for (int64_t i = 0; i < spatial; ++i) a.out[3 - spatial + i] = o[i];
  // torch's CUDA max_unpool2d writes a contiguous output.
  set_output_layout(&a, spatial == 2 && device == PoolDevice::kCpu);
  return a;
}

Result<EmbeddingBagArgs> embedding_bag_args(AtenTensorHandle weight, AtenTensorHandle indices,
                                            AtenTensorHandle offsets, int64_t mode,
                                            const TensorImpl* per_sample_weights, bool include_last_offset,
                                            int64_t padding_idx, bool forward_only) {
  EmbeddingBagArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.weight, require_tensor(weight, "weight"));
  AOTIRT_ASSIGN_OR_RETURN(a.indices, require_tensor(indices, "indices"));
  AOTIRT_ASSIGN_OR_RETURN(a.offsets, require_tensor(offsets, "offsets"));
  const TensorImpl& w = *a.weight;
  const TensorImpl& ix = *a.indices;
  const TensorImpl& off = *a.offsets;
  AOTIRT_ENSURE(mode >= 0 && mode <= 2, kInvalidArgument,
                "embedding_bag: mode {} is not one of 0 (sum), 1 (mean) and 2 (max)", mode);
  a.mode = static_cast<BagMode>(mode);
  auto index_type = [](DType d) { return d == DType::kInt64 || d == DType::kInt32; };
  AOTIRT_ENSURE(index_type(ix.dtype()), kInvalidArgument, "embedding_bag: 'indices' must be int64 or int32, got {}",
                dtype_name(ix.dtype()));
  AOTIRT_ENSURE(index_type(off.dtype()), kInvalidArgument, "embedding_bag: 'offsets' must be int64 or int32, got {}",
                dtype_name(off.dtype()));
  // Mixed index types are both taken as int64, as torch promotes them.
  a.index_dtype = ix.dtype() == off.dtype() ? ix.dtype() : DType::kInt64;
  AOTIRT_ENSURE(is_float(w.dtype()), kInvalidArgument,
                "embedding_bag: 'weight' must be float32, float64, bfloat16 or float16, got {}",
                dtype_name(w.dtype()));
  AOTIRT_ENSURE(w.dim() == 2, kInvalidArgument, "embedding_bag: 'weight' must be 2-D, got shape {}", shape_str(w));
  AOTIRT_ENSURE(ix.dim() != 2, kUnimplemented,
                "embedding_bag: 2-D 'indices' (shape {}) are not supported; pass them flattened with offsets, as "
                "torch.nn.functional.embedding_bag does",
                shape_str(ix));
  AOTIRT_ENSURE(ix.dim() == 1, kInvalidArgument, "embedding_bag: 'indices' must be 1-D, got shape {}", shape_str(ix));
  AOTIRT_ENSURE(off.dim() == 1, kInvalidArgument, "embedding_bag: 'offsets' must be 1-D, got shape {}",
                shape_str(off));
  a.num_indices = ix.sizes()[0];
  a.num_offsets = off.sizes()[0];
  a.dim = w.sizes()[1];
  if (per_sample_weights) {
    const TensorImpl& p = *per_sample_weights;
    AOTIRT_ENSURE(a.mode == BagMode::kSum, kInvalidArgument,
                  "embedding_bag: per_sample_weights only supported with mode='sum' (mode {})", mode);
    AOTIRT_RETURN_IF_ERROR(check_same_dtype(w, "weight", p, "per_sample_weights"));
    AOTIRT_ENSURE(p.dim() == 1 && p.numel() == a.num_indices, kInvalidArgument,
                  "embedding_bag: 'per_sample_weights' must be 1-D with one weight per index ({}), got shape {}",
                  a.num_indices, shape_str(p));
    a.per_sample_weights = per_sample_weights;
  }
  if (include_last_offset)
    AOTIRT_ENSURE(a.num_offsets >= 1, kInvalidArgument,
                  "embedding_bag: include_last_offset needs at least 1 offset, got none");
  a.include_last_offset = include_last_offset;
  a.padding_idx = padding_idx;
  a.num_bags = a.num_offsets - (include_last_offset ? 1 : 0);
  const DType wd = w.dtype();
  a.fast_path = (wd == DType::kFloat32 || wd == DType::kFloat16 || wd == DType::kBFloat16) && w.strides()[1] == 1 &&
                (!per_sample_weights || per_sample_weights->strides()[0] == 1) && padding_idx < 0;
  a.offset2bag_size = a.mode != BagMode::kSum || !a.fast_path ? a.num_indices : 0;
  a.bag_size_size = !forward_only || a.mode != BagMode::kSum ? a.num_bags : a.num_offsets;
  a.max_indices_sizes = a.mode == BagMode::kMax ? DimVector{a.num_bags, a.dim} : DimVector{a.bag_size_size};
  return a;
}

EmbeddingBagCudaSizes embedding_bag_cuda_sizes(const EmbeddingBagArgs& a) {
  EmbeddingBagCudaSizes s;
  s.offset2bag_size = a.num_indices;
  s.bag_size_size = a.num_offsets;
  s.max_indices_sizes = a.mode == BagMode::kMax ? DimVector{a.num_bags, a.dim} : DimVector{0};
  return s;
}

}  // namespace ops
}  // namespace aotirt
