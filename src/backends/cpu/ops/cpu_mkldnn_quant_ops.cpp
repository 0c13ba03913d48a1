// The int8 oneDNN shims of PT2E-quantized CPU packages (torch's shim_cpu.h):
// onednn.qlinear_pointwise.tensor / .binary_tensor on oneDNN's matmul and
// onednn.qconv_pointwise.tensor / qconv2d_pointwise.binary_tensor on its
// convolution. The weight is the int8 tensor torch's qlinear_prepack /
// qconv_prepack made (layout _mkldnn: [K, N] for a linear, [O, I, k...] or
// [G, O/G, I/G, k...] for a convolution); the activation's scale and zero
// point, the weight's per-channel scales and the output's scale and zero
// point are oneDNN runtime arguments, set exactly where torch sets them, so
// that rounding and saturation are oneDNN's, as in torch.
// Only built when CMake found oneDNN (AOTIRT_WITH_ONEDNN).
#include "backends/cpu/ops/cpu_onednn.h"

#if AOTIRT_WITH_ONEDNN

#include <fmt/format.h>

#include <string>
#include <vector>

#include "backends/cpu/ops/cpu_op_util.h"
#include "core/host_copy.h"
#include "base/status.h"
#include "device/device.h"
#include "ops/conv_args.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

// A one-element host tensor's value (an activation scale or zero point).
Result<double> scalar_value(const TensorImpl& t, const char* what) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(t, what));
  AOTIRT_ENSURE(t.numel() == 1, kInvalidArgument, "'{}' must hold one value, got shape {}", what, shape_str(t));
  const void* p = t.data_ptr();
  switch (t.dtype()) {
    case DType::kFloat32: return static_cast<double>(*static_cast<const float*>(p));
    case DType::kFloat64: return *static_cast<const double*>(p);
    case DType::kInt64: return static_cast<double>(*static_cast<const int64_t*>(p));
    case DType::kInt32: return static_cast<double>(*static_cast<const int32_t*>(p));
    case DType::kInt8: return static_cast<double>(*static_cast<const int8_t*>(p));
    case DType::kUInt8: return static_cast<double>(*static_cast<const uint8_t*>(p));
    default:
      return AOTIRT_STATUS(kInvalidArgument, "'{}' has dtype {}; expected a float or integer scalar tensor", what,
                           dtype_name(t.dtype()));
  }
}

bool is_float_out(DType d) { return d == DType::kFloat32 || d == DType::kBFloat16 || d == DType::kFloat16; }

// The output dtype: |code| (c10's number) when given, else the input's.
Result<DType> output_dtype_of(const int32_t* code, DType input) {
  if (!code) return input;
  AOTIRT_ENSURE(dtype_is_valid(*code), kInvalidArgument, "invalid output_dtype code {}", *code);
  const DType d = static_cast<DType>(*code);
  AOTIRT_ENSURE(is_float_out(d) || d == DType::kUInt8 || d == DType::kInt8, kUnimplemented,
                "output_dtype {} (aotirt gives float32, bfloat16, float16, uint8 and int8)", dtype_name(d));
  return d;
}

// The quantization parameters every call carries.
struct QParams {
  double x_scale = 1.0;
  int64_t x_zp = 0;
  TensorImpl w_scales;  // float32, dense
  double out_scale = 1.0;
  int64_t out_zp = 0;
  DType out_dtype = DType::kUInt8;
};

Status read_qparams(AtenTensorHandle act_scale, AtenTensorHandle act_zero_point, AtenTensorHandle weight_scales,
                    int64_t channels, double output_scale, int64_t output_zero_point, const int32_t* output_dtype,
                    DType input_dtype, QParams& q) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* s, require_tensor(act_scale, "act_scale"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* z, require_tensor(act_zero_point, "act_zero_point"));
  AOTIRT_ASSIGN_OR_RETURN(q.x_scale, scalar_value(*s, "act_scale"));
  AOTIRT_ASSIGN_OR_RETURN(double zp, scalar_value(*z, "act_zero_point"));
  q.x_zp = static_cast<int64_t>(zp);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* ws, require_tensor(weight_scales, "weight_scales"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*ws, "weight_scales"));
  AOTIRT_ENSURE(ws->dtype() == DType::kFloat32 || ws->dtype() == DType::kFloat64, kInvalidArgument,
                "'weight_scales' is {}; it must be float32 or float64", dtype_name(ws->dtype()));
  AOTIRT_ENSURE(ws->dim() <= 1 && (ws->numel() == 1 || ws->numel() == channels), kInvalidArgument,
                "'weight_scales' has shape {}; expected one scale or {} (one per output channel)", shape_str(*ws),
                channels);
  AOTIRT_ASSIGN_OR_RETURN(q.w_scales, contiguous_as(*ws, DType::kFloat32));
  AOTIRT_ASSIGN_OR_RETURN(q.out_dtype, output_dtype_of(output_dtype, input_dtype));
  q.out_scale = output_scale;
  q.out_zp = output_zero_point;
  if (is_float_out(q.out_dtype))
    AOTIRT_ENSURE(output_scale == 1.0 && output_zero_point == 0, kInvalidArgument,
                  "a {} output takes output_scale 1 and output_zero_point 0, got {} and {}",
                  dtype_name(q.out_dtype), output_scale, output_zero_point);
  AOTIRT_ENSURE(q.out_zp >= INT32_MIN && q.out_zp <= INT32_MAX && q.x_zp >= INT32_MIN && q.x_zp <= INT32_MAX,
                kInvalidArgument, "zero points {} and {} do not fit int32", q.x_zp, q.out_zp);
  return Status();
}

// The prepacked int8 weight; torch's quantized ops refuse any other.
Result<WeightInfo> read_int8_weight(AtenTensorHandle W) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* w, require_tensor(W, "onednn_weight"));
  AOTIRT_ASSIGN_OR_RETURN(WeightInfo info, read_weight(*w));
  AOTIRT_ENSURE(info.packed, kInvalidArgument,
                "'onednn_weight' {} is a plain tensor; it must be the _mkldnn weight torch's prepack made",
                shape_str(*w));
  AOTIRT_ENSURE(info.layout.dtype == DType::kInt8, kInvalidArgument, "'onednn_weight' is {}; it must be int8",
                dtype_name(info.layout.dtype));
  return info;
}

// The bias as float32 (torch converts it), dense; null when absent.
Status read_qbias(AtenTensorHandle* B, int64_t channels, TensorImpl& out, bool& present) {
  const TensorImpl* b = optional_tensor(B);
  present = b != nullptr;
  if (!b) return Status();
  AOTIRT_RETURN_IF_ERROR(check_cpu(*b, "bias"));
  AOTIRT_ENSURE(b->dim() == 1 && b->sizes()[0] == channels, kInvalidArgument, "'bias' has shape {}, expected [{}]",
                shape_str(*b), channels);
  AOTIRT_ENSURE(is_float_out(b->dtype()) || b->dtype() == DType::kFloat64, kInvalidArgument,
                "'bias' is {}; it must be a floating type", dtype_name(b->dtype()));
  AOTIRT_ASSIGN_OR_RETURN(out, contiguous_as(*b, DType::kFloat32));
  return Status();
}

// The post-ops torch's quantized ops build: a sum into the output (scale and
// zero point of the accumulated tensor) or an add of a second tensor, then
// one unary op.
struct QPostOps {
  bool sum = false;
  float sum_scale = 1.f;
  int32_t sum_zp = 0;
  bool add = false;
  const_dnnl_memory_desc_t add_md = nullptr;
  UnaryPostOp unary;

  std::string key() const {
    return fmt::format("sum{}:{}:{} add{} un{}:{}:{}:{}", sum, sum_scale, sum_zp, add, unary.present,
                       static_cast<int>(unary.alg), unary.alpha, unary.beta);
  }
};

// One descriptor per runtime scale / zero point, owned with the primitive.
struct QuantArg {
  int arg;
  dnnl_data_type_t dt;
  int64_t n;
};

// The attr torch sets: scales and zero points only where they are not the
// identity (as torch does; oneDNN may choose other kernels otherwise),
// weight scales always, a user scratchpad, and the post-ops.
struct QAttr {
  const OnednnApi& api;
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_post_ops_t post = nullptr;
  std::vector<QuantArg> args;
  explicit QAttr(const OnednnApi& a) : api(a) {}
  QAttr(const QAttr&) = delete;
  QAttr& operator=(const QAttr&) = delete;
  ~QAttr() {
    if (post) api.dnnl_post_ops_destroy(post);
    if (attr) api.dnnl_primitive_attr_destroy(attr);
  }
};

Status build_qattr(QAttr& a, const QParams& q, int weight_mask, const QPostOps& ops) {
  const OnednnApi& api = a.api;
  AOTIRT_DNNL_CHECK(api.dnnl_primitive_attr_create(&a.attr), "an attribute");
  AOTIRT_DNNL_CHECK(api.dnnl_primitive_attr_set_scratchpad_mode(a.attr, dnnl_scratchpad_mode_user),
                    "the scratchpad mode");
  if (q.x_scale != 1.0) {
    AOTIRT_DNNL_CHECK(api.dnnl_primitive_attr_set_scales_mask(a.attr, DNNL_ARG_SRC, 0), "the input scale");
    a.args.push_back({DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC, dnnl_f32, 1});
  }
  if (q.x_zp != 0) {
    AOTIRT_DNNL_CHECK(api.dnnl_primitive_attr_set_zero_points_mask(a.attr, DNNL_ARG_SRC, 0), "the input zero point");
    a.args.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, dnnl_s32, 1});
  }
  const int64_t nw = q.w_scales.numel();
  AOTIRT_DNNL_CHECK(api.dnnl_primitive_attr_set_scales_mask(a.attr, DNNL_ARG_WEIGHTS, nw > 1 ? weight_mask : 0),
                    "the weight scales");
  a.args.push_back({DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS, dnnl_f32, nw});
  if (q.out_scale != 1.0) {
    AOTIRT_DNNL_CHECK(api.dnnl_primitive_attr_set_scales_mask(a.attr, DNNL_ARG_DST, 0), "the output scale");
    a.args.push_back({DNNL_ARG_ATTR_SCALES | DNNL_ARG_DST, dnnl_f32, 1});
  }
  if (q.out_zp != 0) {
    AOTIRT_DNNL_CHECK(api.dnnl_primitive_attr_set_zero_points_mask(a.attr, DNNL_ARG_DST, 0),
                      "the output zero point");
    a.args.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, dnnl_s32, 1});
  }
  AOTIRT_DNNL_CHECK(api.dnnl_post_ops_create(&a.post), "a post-op list");
  if (ops.sum)
    AOTIRT_DNNL_CHECK(api.dnnl_post_ops_append_sum(a.post, ops.sum_scale, ops.sum_zp, dnnl_data_type_undef), "sum");
  if (ops.add) AOTIRT_DNNL_CHECK(api.dnnl_post_ops_append_binary(a.post, dnnl_binary_add, ops.add_md), "add");
  if (ops.unary.present)
    AOTIRT_DNNL_CHECK(api.dnnl_post_ops_append_eltwise(a.post, ops.unary.alg, ops.unary.alpha, ops.unary.beta),
                      "an elementwise post-op");
  AOTIRT_DNNL_CHECK(api.dnnl_primitive_attr_set_post_ops(a.attr, a.post), "post-ops");
  return Status();
}

// Descriptors for the runtime scales and zero points, kept with |p|.
Status add_quant_mds(OnednnPrimitive& p, const std::vector<QuantArg>& args) {
  for (const QuantArg& qa : args) {
    const int64_t stride = 1;
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc md,
                            strided_desc(&qa.n, &stride, 1, qa.dt == dnnl_f32 ? DType::kFloat32 : DType::kInt32));
    p.arg_mds.emplace_back(qa.arg, md.md);
    p.owned_mds.push_back(std::move(md));
  }
  return Status();
}

// The runtime values, alive through the call.
struct QuantValues {
  float x_scale, out_scale;
  int32_t x_zp, out_zp;
  explicit QuantValues(const QParams& q)
      : x_scale(static_cast<float>(q.x_scale)),
        out_scale(static_cast<float>(q.out_scale)),
        x_zp(static_cast<int32_t>(q.x_zp)),
        out_zp(static_cast<int32_t>(q.out_zp)) {}
  void append(const QParams& q, std::vector<std::pair<int, void*>>& args) {
    if (q.x_scale != 1.0) args.emplace_back(DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC, &x_scale);
    if (q.x_zp != 0) args.emplace_back(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, &x_zp);
    args.emplace_back(DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS, q.w_scales.data_ptr());
    if (q.out_scale != 1.0) args.emplace_back(DNNL_ARG_ATTR_SCALES | DNNL_ARG_DST, &out_scale);
    if (q.out_zp != 0) args.emplace_back(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, &out_zp);
  }
};

std::string qkey(const QParams& q) {
  return fmt::format("xs{} xz{} ws{} os{} oz{} od{}", q.x_scale != 1.0, q.x_zp != 0, q.w_scales.numel(),
                     q.out_scale != 1.0, q.out_zp != 0, static_cast<int>(q.out_dtype));
}

bool in_list(const std::string& s, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (s == n) return true;
  return false;
}

const char* or_none(const char* s) { return s && *s ? s : "none"; }

// ---- linear -----------------------------------------------------------------

struct QLinearCall {
  AtenTensorHandle X = nullptr, act_scale = nullptr, act_zero_point = nullptr, W = nullptr, weight_scales = nullptr;
  AtenTensorHandle* B = nullptr;
  AtenTensorHandle* other = nullptr;
  double output_scale = 1.0;
  int64_t output_zero_point = 0;
  const int32_t* output_dtype = nullptr;
  double other_scale = 1.0;
  int64_t other_zero_point = 0;
  std::string binary = "none";
  double binary_alpha = 1.0;
  std::string unary = "none";
  const double** unary_args = nullptr;
  int64_t unary_args_len = 0;
  const char* unary_algorithm = nullptr;
};

Status run_qlinear(const QLinearCall& c, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* xp, require_tensor(c.X, "X"));
  const TensorImpl& x_in = *xp;
  AOTIRT_RETURN_IF_ERROR(check_cpu(x_in, "X"));
  AOTIRT_ENSURE(x_in.dtype() == DType::kUInt8 || x_in.dtype() == DType::kInt8, kInvalidArgument,
                "'X' is {}; the int8 linear takes uint8 or int8", dtype_name(x_in.dtype()));
  AOTIRT_ENSURE(x_in.dim() >= 1, kInvalidArgument, "'X' must have at least one dim");
  AOTIRT_ASSIGN_OR_RETURN(WeightInfo w, read_int8_weight(c.W));
  AOTIRT_ENSURE(w.layout.ndims == 2 && w.layout.groups == 1, kInvalidArgument,
                "'onednn_weight' ({}) is not a linear's packed [K, N]", w.layout.to_string());
  const int64_t k = w.layout.dims[0], n = w.layout.dims[1];
  const int64_t kx = x_in.sizes()[x_in.dim() - 1];
  AOTIRT_ENSURE(kx == k, kInvalidArgument, "'X' {} has {} features but 'onednn_weight' takes {}", shape_str(x_in),
                kx, k);
  QParams q;
  AOTIRT_RETURN_IF_ERROR(read_qparams(c.act_scale, c.act_zero_point, c.weight_scales, n, c.output_scale,
                                      c.output_zero_point, c.output_dtype, x_in.dtype(), q));
  TensorImpl bias;
  bool has_bias = false;
  AOTIRT_RETURN_IF_ERROR(read_qbias(c.B, n, bias, has_bias));

  // Post-ops as torch allows them.
  AOTIRT_ENSURE(c.binary_alpha == 1.0, kInvalidArgument, "binary_alpha must be 1, got {}", c.binary_alpha);
  QPostOps ops;
  const bool float_out = is_float_out(q.out_dtype);
  if (c.binary == "none") {
    AOTIRT_ENSURE(in_list(c.unary, {"none", "relu", "leaky_relu", "tanh", "gelu", "hardtanh", "hardswish", "swish"}),
                  kInvalidArgument, "unary post-op '{}' is not one the int8 linear takes", c.unary);
    if (c.unary == "leaky_relu")
      AOTIRT_ENSURE(c.unary_args_len == 1, kInvalidArgument, "leaky_relu takes one argument, got {}",
                    c.unary_args_len);
    if (c.unary == "gelu") {
      const std::string alg = c.unary_algorithm ? c.unary_algorithm : "";
      AOTIRT_ENSURE(alg == "none" || alg == "tanh", kInvalidArgument,
                    "gelu's algorithm must be 'none' or 'tanh', got '{}'", alg);
    }
    AOTIRT_ASSIGN_OR_RETURN(ops.unary, parse_unary(c.unary.c_str(), c.unary_args, c.unary_args_len,
                                                   c.unary_algorithm));
  } else if (c.binary == "sum" || c.binary == "add") {
    AOTIRT_ENSURE(c.unary == "none" || c.unary == "relu", kInvalidArgument,
                  "unary post-op '{}' after binary '{}' (only none and relu)", c.unary, c.binary);
    AOTIRT_ASSIGN_OR_RETURN(ops.unary, parse_unary(c.unary.c_str(), nullptr, 0, nullptr));
  } else {
    return AOTIRT_STATUS(kInvalidArgument, "binary post-op '{}' is unknown (expected none, sum or add)", c.binary);
  }
  const TensorImpl* other = nullptr;
  DimVector out_sizes = x_in.sizes();
  out_sizes[out_sizes.size() - 1] = n;
  const int64_t m = k > 0 ? x_in.numel() / k : 0;
  if (c.binary != "none") {
    other = optional_tensor(c.other);
    AOTIRT_ENSURE(other != nullptr, kInvalidArgument, "binary post-op '{}' needs 'other'", c.binary);
    AOTIRT_RETURN_IF_ERROR(check_cpu(*other, "other"));
    if (float_out)
      AOTIRT_ENSURE(c.other_scale == 1.0 && c.other_zero_point == 0, kInvalidArgument,
                    "a {} output takes other_scale 1 and other_zero_point 0, got {} and {}", dtype_name(q.out_dtype),
                    c.other_scale, c.other_zero_point);
    AOTIRT_ENSURE(other->numel() == m * n && other->dim() >= 1 && other->sizes()[other->dim() - 1] == n,
                  kInvalidArgument, "'other' has shape {}, the linear gives {}", shape_str(*other),
                  dims_to_string(out_sizes.data(), out_sizes.size()));
    if (c.binary == "sum") {
      AOTIRT_ENSURE(other->dtype() == q.out_dtype, kInvalidArgument,
                    "'other' is {}; the sum accumulates into it, so it must be the output's {}",
                    dtype_name(other->dtype()), dtype_name(q.out_dtype));
      AOTIRT_ENSURE(other->is_contiguous(), kUnimplemented,
                    "'other' {} is not contiguous; the sum writes into it in place", shape_str(*other));
      ops.sum = true;
      ops.sum_scale = static_cast<float>(c.other_scale);
      AOTIRT_ENSURE(c.other_zero_point >= INT32_MIN && c.other_zero_point <= INT32_MAX, kInvalidArgument,
                    "other_zero_point {} does not fit int32", c.other_zero_point);
      ops.sum_zp = static_cast<int32_t>(c.other_zero_point);
    } else {
      ops.add = true;
    }
  }

  // The output: a new dense tensor, or 'other' itself for the sum (the
  // result is a view of its storage, as torch returns).
  TensorImpl out;
  if (ops.sum) {
    out = *other;
  } else {
    AOTIRT_ASSIGN_OR_RETURN(out, empty_contiguous(DimVector{m, n}, q.out_dtype, DeviceId{}));
  }
  auto finish_out = [&]() -> Status {
    if (ops.sum) {
      *ret0 = new_handle(std::move(out));
    } else {
      *ret0 = new_handle(reshape_contiguous(out, out_sizes));
    }
    return Status();
  };
  if (m == 0 || n == 0) return finish_out();
  AOTIRT_ENSURE(k > 0, kInvalidArgument, "'X' {} has no features", shape_str(x_in));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x_dense, contiguous_as(x_in, x_in.dtype()));
  TensorImpl x = reshape_contiguous(x_dense, DimVector{m, k});
  TensorImpl out2d = reshape_contiguous(out, DimVector{m, n});
  TensorImpl other2d;
  if (ops.add) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl dense, contiguous_as(*other, other->dtype()));
    other2d = reshape_contiguous(dense, DimVector{m, n});
  }

  AOTIRT_ASSIGN_OR_RETURN(OnednnContext * ctx, onednn_context());
  const OnednnApi& api = ctx->api();
  const std::string key = fmt::format("qlinear m{} n{} k{} x{} b{} {} other{} ops {}", m, n, k,
                                      static_cast<int>(x.dtype()), has_bias, qkey(q),
                                      ops.add ? static_cast<int>(other2d.dtype()) : -1, ops.key());
  auto make = [&]() -> Result<std::shared_ptr<OnednnPrimitive>> {
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc src, strided_desc(x.sizes().data(), x.strides().data(), 2, x.dtype()));
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc dst,
                            strided_desc(out2d.sizes().data(), out2d.strides().data(), 2, out2d.dtype()));
    MemoryDesc wany, bias_md, other_md;
    dnnl_dims_t wd = {k, n};
    AOTIRT_DNNL_CHECK(api.dnnl_memory_desc_create_with_tag(&wany.md, 2, wd, dnnl_s8, dnnl_format_tag_any),
                      "the weight descriptor");
    if (has_bias) {
      const int64_t bd[2] = {1, n}, bs[2] = {n, 1};
      AOTIRT_ASSIGN_OR_RETURN(bias_md, strided_desc(bd, bs, 2, DType::kFloat32));
    }
    QPostOps o = ops;
    if (o.add) {
      AOTIRT_ASSIGN_OR_RETURN(other_md, strided_desc(other2d.sizes().data(), other2d.strides().data(), 2,
                                                     other2d.dtype()));
      o.add_md = other_md.md;
    }
    QAttr attr{api};
    // Weight scales per output channel: dim 1 of the [K, N] weight.
    AOTIRT_RETURN_IF_ERROR(build_qattr(attr, q, 1 << 1, o));
    dnnl_primitive_desc_t pd = nullptr;
    AOTIRT_DNNL_CHECK(api.dnnl_matmul_primitive_desc_create(&pd, ctx->engine(), src.md, wany.md, bias_md.md, dst.md,
                                                            attr.attr),
                      "this int8 linear");
    std::vector<int> ids{DNNL_ARG_SRC, DNNL_ARG_DST};
    if (has_bias) ids.push_back(DNNL_ARG_BIAS);
    if (o.add) ids.push_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1);
    AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<OnednnPrimitive> p, ctx->finish(pd, ids));
    AOTIRT_RETURN_IF_ERROR(add_quant_mds(*p, attr.args));
    return p;
  };
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<OnednnPrimitive> prim, ctx->primitive(key, make));
  const int64_t plain_dims[2] = {k, n};
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<const void> weight, prepared_weight(*ctx, *prim, w, plain_dims, 2));
  QuantValues values(q);
  std::vector<std::pair<int, void*>> args{{DNNL_ARG_SRC, x.data_ptr()},
                                          {DNNL_ARG_WEIGHTS, const_cast<void*>(weight.get())},
                                          {DNNL_ARG_DST, out2d.data_ptr()}};
  if (has_bias) args.emplace_back(DNNL_ARG_BIAS, bias.data_ptr());
  if (ops.add) args.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, other2d.data_ptr());
  values.append(q, args);
  AOTIRT_RETURN_IF_ERROR(ctx->execute(*prim, args));
  return finish_out();
}

// ---- convolution ------------------------------------------------------------

struct QConvCall {
  AtenTensorHandle X = nullptr, act_scale = nullptr, act_zero_point = nullptr, W = nullptr, weight_scales = nullptr;
  AtenTensorHandle accum = nullptr;
  AtenTensorHandle* B = nullptr;
  const int64_t *stride = nullptr, *padding = nullptr, *dilation = nullptr;
  int64_t stride_len = 0, padding_len = 0, dilation_len = 0;
  int64_t groups = 1;
  double output_scale = 1.0;
  int64_t output_zero_point = 0;
  const int32_t* output_dtype = nullptr;
  double accum_scale = 1.0;
  int64_t accum_zero_point = 0;
  bool binary = false;  // the sum into accum
  std::string unary = "none";
  const double** unary_args = nullptr;
  int64_t unary_args_len = 0;
  const char* unary_algorithm = nullptr;
};

Status run_qconv(const QConvCall& c, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* xp, require_tensor(c.X, "X"));
  const TensorImpl& x_in = *xp;
  AOTIRT_RETURN_IF_ERROR(check_cpu(x_in, "X"));
  AOTIRT_ENSURE(x_in.dim() >= 3 && x_in.dim() <= 5, kInvalidArgument, "'X' must be 3-D, 4-D or 5-D, got shape {}",
                shape_str(x_in));
  AOTIRT_ENSURE(x_in.dtype() == DType::kUInt8, kInvalidArgument, "'X' is {}; the int8 convolution takes uint8",
                dtype_name(x_in.dtype()));
  AOTIRT_ENSURE(c.groups >= 1, kInvalidArgument, "groups must be positive, got {}", c.groups);
  AOTIRT_ASSIGN_OR_RETURN(WeightInfo w, read_int8_weight(c.W));
  const int64_t spatial = x_in.dim() - 2;
  AOTIRT_ASSIGN_OR_RETURN(DimVector str, ops::conv_list(c.stride, c.stride_len, spatial, "stride", -1));
  AOTIRT_ASSIGN_OR_RETURN(DimVector pad, ops::conv_list(c.padding, c.padding_len, spatial, "padding", -1));
  AOTIRT_ASSIGN_OR_RETURN(DimVector dil, ops::conv_list(c.dilation, c.dilation_len, spatial, "dilation", -1));
  if (c.binary) {
    AOTIRT_ENSURE(spatial == 2 && (c.unary == "none" || c.unary == "relu"), kInvalidArgument,
                  "the int8 convolution's sum takes a 2-d convolution and unary none or relu, got {}-d and '{}'",
                  spatial, c.unary);
  } else if (spatial == 2) {
    AOTIRT_ENSURE(in_list(c.unary, {"none", "relu", "hardtanh", "hardswish", "swish"}), kInvalidArgument,
                  "unary post-op '{}' is not one the int8 2-d convolution takes", c.unary);
  } else {
    AOTIRT_ENSURE(c.unary == "none" || (spatial == 1 && c.unary == "relu"), kInvalidArgument,
                  "unary post-op '{}' is not one the int8 {}-d convolution takes", c.unary, spatial);
  }
  QPostOps ops;
  AOTIRT_ASSIGN_OR_RETURN(ops.unary, parse_unary(c.unary.c_str(), c.unary_args, c.unary_args_len,
                                                 c.unary_algorithm));

  // A 1-d convolution runs as a 2-d one over [N, C, 1, L], as torch does; its
  // packed weight is [O, I, 1, k].
  const int64_t sp = spatial == 1 ? 2 : spatial;
  DimVector xs = x_in.sizes(), xstr = x_in.strides();
  int64_t s2[3], p2[3], d2[3];
  if (spatial == 1) {
    xs = DimVector{x_in.sizes()[0], x_in.sizes()[1], 1, x_in.sizes()[2]};
    xstr = DimVector{x_in.strides()[0], x_in.strides()[1], x_in.sizes()[2] * x_in.strides()[2], x_in.strides()[2]};
    s2[0] = 1, p2[0] = 0, d2[0] = 1;
    s2[1] = str[0], p2[1] = pad[0], d2[1] = dil[0];
  } else {
    for (int64_t i = 0; i < spatial; ++i) s2[i] = str[i], p2[i] = pad[i], d2[i] = dil[i];
  }
  const BlockedLayout& l = w.layout;
  const int goff = c.groups > 1 ? 1 : 0;
  AOTIRT_ENSURE(l.ndims == sp + 2 + goff, kInvalidArgument,
                "'onednn_weight' ({}) does not fit a {}-d convolution with groups={}", l.to_string(), spatial,
                c.groups);
  AOTIRT_ENSURE(c.groups == 1 || l.dims[0] == c.groups, kInvalidArgument,
                "'onednn_weight' has {} groups, the call {}", l.dims[0], c.groups);
  const int64_t in_c = xs[1];
  const int64_t out_c = l.dims[goff] * c.groups;
  AOTIRT_ENSURE(l.dims[goff + 1] * c.groups == in_c, kInvalidArgument,
                "'X' {} has {} channels but 'onednn_weight' ({}) with groups={} expects {}", shape_str(x_in), in_c,
                l.to_string(), c.groups, l.dims[goff + 1] * c.groups);
  DimVector out4;  // in the 2-d (or 3-d) form
  out4.resize(sp + 2);
  out4[0] = xs[0];
  out4[1] = out_c;
  for (int64_t i = 0; i < sp; ++i) {
    AOTIRT_ENSURE(s2[i] > 0 && d2[i] > 0 && p2[i] >= 0, kInvalidArgument,
                  "stride {}, dilation {} and padding {} must be positive, positive and non-negative", s2[i], d2[i],
                  p2[i]);
    const int64_t kernel = l.dims[goff + 2 + i];
    const int64_t span = d2[i] * (kernel - 1) + 1;
    const int64_t in = xs[2 + i] + 2 * p2[i];
    AOTIRT_ENSURE(in >= span, kInvalidArgument, "kernel {} (dilated to {}) is larger than the padded input {}",
                  kernel, span, in);
    out4[2 + i] = (in - span) / s2[i] + 1;
  }
  QParams q;
  AOTIRT_RETURN_IF_ERROR(read_qparams(c.act_scale, c.act_zero_point, c.weight_scales, out_c, c.output_scale,
                                      c.output_zero_point, c.output_dtype, x_in.dtype(), q));
  TensorImpl bias;
  bool has_bias = false;
  AOTIRT_RETURN_IF_ERROR(read_qbias(c.B, out_c, bias, has_bias));

  // The output, channels-last: new, or the accumulated tensor itself.
  TensorImpl out4t;
  DimVector out_sizes;  // as returned
  if (spatial == 1) {
    out_sizes = DimVector{out4[0], out4[1], out4[3]};
  } else {
    out_sizes = out4;
  }
  if (c.binary) {
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* acc, require_tensor(c.accum, "accum"));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*acc, "accum"));
    AOTIRT_ENSURE(acc->sizes() == out_sizes, kInvalidArgument, "'accum' has shape {}, the convolution gives {}",
                  shape_str(*acc), dims_to_string(out_sizes.data(), out_sizes.size()));
    AOTIRT_ENSURE(acc->strides() == channels_last_strides(acc->sizes()), kInvalidArgument,
                  "'accum' {} must be channels-last contiguous (the sum writes into it)", shape_str(*acc));
    if (is_float_out(q.out_dtype)) {
      AOTIRT_ENSURE(c.accum_scale == 1.0 && c.accum_zero_point == 0, kInvalidArgument,
                    "a {} output takes accum_scale 1 and accum_zero_point 0, got {} and {}",
                    dtype_name(q.out_dtype), c.accum_scale, c.accum_zero_point);
      AOTIRT_ENSURE(acc->dtype() == DType::kFloat32 || acc->dtype() == DType::kBFloat16, kInvalidArgument,
                    "'accum' is {}; with a floating output it must be float32 or bfloat16", dtype_name(acc->dtype()));
    } else {
      AOTIRT_ENSURE(acc->dtype() == q.out_dtype, kInvalidArgument, "'accum' is {}; it must be the output's {}",
                    dtype_name(acc->dtype()), dtype_name(q.out_dtype));
    }
    AOTIRT_ENSURE(c.accum_zero_point >= INT32_MIN && c.accum_zero_point <= INT32_MAX, kInvalidArgument,
                  "accum_zero_point {} does not fit int32", c.accum_zero_point);
    ops.sum = true;
    ops.sum_scale = static_cast<float>(c.accum_scale);
    ops.sum_zp = static_cast<int32_t>(c.accum_zero_point);
    out4t = *acc;
    // The sum writes in the accumulated tensor's own dtype.
    q.out_dtype = acc->dtype();
  } else {
    AOTIRT_ASSIGN_OR_RETURN(out4t, empty_strided(out_sizes, channels_last_strides(out_sizes), q.out_dtype,
                                                 DeviceId{}));
  }
  TensorImpl result = out4t;
  if (out4t.numel() == 0) {
    *ret0 = new_handle(std::move(result));
    return Status();
  }
  DimVector ostr = out4t.strides();
  if (spatial == 1) ostr = DimVector{ostr[0], ostr[1], out4[3] * ostr[2], ostr[2]};

  // oneDNN reads X as it lies when it is dense channels-last; anything else
  // is copied to that layout first (torch does the same).
  TensorImpl x_cl;
  const void* x_data = x_in.data_ptr();
  if (!(xstr == channels_last_strides(xs))) {
    AOTIRT_ASSIGN_OR_RETURN(x_cl, empty_strided(x_in.sizes(), channels_last_strides(x_in.sizes()), x_in.dtype(),
                                                DeviceId{}));
    AOTIRT_RETURN_IF_ERROR(host_copy_strided(x_cl, x_in));
    x_data = x_cl.data_ptr();
    const DimVector& cs = x_cl.strides();
    xstr = spatial == 1 ? DimVector{cs[0], cs[1], xs[3] * cs[2], cs[2]} : cs;
  }

  AOTIRT_ASSIGN_OR_RETURN(OnednnContext * ctx, onednn_context());
  const OnednnApi& api = ctx->api();
  const std::string key = fmt::format(
      "qconv x{}{} w{} g{} p{} s{} d{} o{}{} b{} {} ops {}", dims_to_string(xs.data(), xs.size()),
      dims_to_string(xstr.data(), xstr.size()), dims_to_string(l.dims, l.ndims), c.groups,
      dims_to_string(p2, sp), dims_to_string(s2, sp), dims_to_string(d2, sp),
      dims_to_string(out4.data(), out4.size()), dims_to_string(ostr.data(), ostr.size()), has_bias, qkey(q),
      ops.key());
  auto make = [&]() -> Result<std::shared_ptr<OnednnPrimitive>> {
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc src, strided_desc(xs.data(), xstr.data(), static_cast<int>(xs.size()),
                                                         x_in.dtype()));
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc dst, strided_desc(out4.data(), ostr.data(), static_cast<int>(out4.size()),
                                                         q.out_dtype));
    MemoryDesc wany, bias_md;
    dnnl_dims_t wd;
    for (int i = 0; i < l.ndims; ++i) wd[i] = l.dims[i];
    AOTIRT_DNNL_CHECK(api.dnnl_memory_desc_create_with_tag(&wany.md, l.ndims, wd, dnnl_s8, dnnl_format_tag_any),
                      "the weight descriptor");
    if (has_bias) {
      const int64_t bs = 1;
      AOTIRT_ASSIGN_OR_RETURN(bias_md, strided_desc(&out_c, &bs, 1, DType::kFloat32));
    }
    QAttr attr{api};
    // Per output channel: dim 0 of [O, I, k...]; grouped, dims 0 and 1 of
    // [G, O/G, I/G, k...] together.
    AOTIRT_RETURN_IF_ERROR(build_qattr(attr, q, c.groups > 1 ? 3 : 1, ops));
    dnnl_dims_t strides, dilates, pl;
    for (int64_t i = 0; i < sp; ++i) {
      strides[i] = s2[i];
      dilates[i] = d2[i] - 1;  // oneDNN counts the gaps
      pl[i] = p2[i];
    }
    dnnl_primitive_desc_t pd = nullptr;
    AOTIRT_DNNL_CHECK(api.dnnl_convolution_forward_primitive_desc_create(
                          &pd, ctx->engine(), dnnl_forward_inference, dnnl_convolution_direct, src.md, wany.md,
                          bias_md.md, dst.md, strides, dilates, pl, pl, attr.attr),
                      "this int8 convolution");
    std::vector<int> ids{DNNL_ARG_SRC, DNNL_ARG_DST};
    if (has_bias) ids.push_back(DNNL_ARG_BIAS);
    AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<OnednnPrimitive> p, ctx->finish(pd, ids));
    AOTIRT_RETURN_IF_ERROR(add_quant_mds(*p, attr.args));
    return p;
  };
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<OnednnPrimitive> prim, ctx->primitive(key, make));
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<const void> weight, prepared_weight(*ctx, *prim, w, l.dims, l.ndims));
  QuantValues values(q);
  std::vector<std::pair<int, void*>> args{{DNNL_ARG_SRC, const_cast<void*>(x_data)},
                                          {DNNL_ARG_WEIGHTS, const_cast<void*>(weight.get())},
                                          {DNNL_ARG_DST, out4t.data_ptr()}};
  if (has_bias) args.emplace_back(DNNL_ARG_BIAS, bias.data_ptr());
  values.append(q, args);
  AOTIRT_RETURN_IF_ERROR(ctx->execute(*prim, args));
  *ret0 = new_handle(std::move(result));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu__qlinear_pointwise_tensor(
    AtenTensorHandle X, AtenTensorHandle act_scale, AtenTensorHandle act_zero_point, AtenTensorHandle onednn_weight,
    AtenTensorHandle weight_scales, AtenTensorHandle weight_zero_points, AtenTensorHandle* B, double output_scale,
    int64_t output_zero_point, const int32_t* output_dtype, const char* post_op_name, const double** post_op_args,
    int64_t post_op_args_len_, const char* post_op_algorithm, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    // The weight's zero points are all zero for oneDNN (symmetric int8),
    // and torch does not read them either.
    (void)weight_zero_points;
    QLinearCall c;
    c.X = X, c.act_scale = act_scale, c.act_zero_point = act_zero_point, c.W = onednn_weight;
    c.weight_scales = weight_scales, c.B = B;
    c.output_scale = output_scale, c.output_zero_point = output_zero_point, c.output_dtype = output_dtype;
    c.unary = or_none(post_op_name);
    c.unary_args = post_op_args, c.unary_args_len = post_op_args_len_, c.unary_algorithm = post_op_algorithm;
    return run_qlinear(c, ret0);
  });
}

AOTITorchError aoti_torch_cpu__qlinear_pointwise_binary_tensor(
    AtenTensorHandle X, AtenTensorHandle act_scale, AtenTensorHandle act_zero_point, AtenTensorHandle onednn_weight,
    AtenTensorHandle weight_scales, AtenTensorHandle weight_zero_points, AtenTensorHandle* other, AtenTensorHandle* B,
    double output_scale, int64_t output_zero_point, const int32_t* output_dtype, double other_scale,
    int64_t other_zero_point, const char* binary_post_op, double binary_alpha, const char* unary_post_op,
    const double** unary_post_op_args, int64_t unary_post_op_args_len_, const char* unary_post_op_algorithm,
    AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    (void)weight_zero_points;
    QLinearCall c;
    c.X = X, c.act_scale = act_scale, c.act_zero_point = act_zero_point, c.W = onednn_weight;
    c.weight_scales = weight_scales, c.B = B, c.other = other;
    c.output_scale = output_scale, c.output_zero_point = output_zero_point, c.output_dtype = output_dtype;
    c.other_scale = other_scale, c.other_zero_point = other_zero_point;
    c.binary = or_none(binary_post_op);
    c.binary_alpha = binary_alpha;
    c.unary = or_none(unary_post_op);
    c.unary_args = unary_post_op_args, c.unary_args_len = unary_post_op_args_len_;
    c.unary_algorithm = unary_post_op_algorithm;
    return run_qlinear(c, ret0);
  });
}

AOTITorchError aoti_torch_cpu__qconv_pointwise_tensor(
    AtenTensorHandle X, AtenTensorHandle act_scale, AtenTensorHandle act_zero_point, AtenTensorHandle onednn_weight,
    AtenTensorHandle weight_scales, AtenTensorHandle weight_zero_points, AtenTensorHandle* B, const int64_t* stride,
    int64_t stride_len_, const int64_t* padding, int64_t padding_len_, const int64_t* dilation,
    int64_t dilation_len_, int64_t groups, double output_scale, int64_t output_zero_point,
    const int32_t* output_dtype, const char* attr, const double** post_op_args, int64_t post_op_args_len_,
    const char** algorithm, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    (void)weight_zero_points;
    QConvCall c;
    c.X = X, c.act_scale = act_scale, c.act_zero_point = act_zero_point, c.W = onednn_weight;
    c.weight_scales = weight_scales, c.B = B;
    c.stride = stride, c.stride_len = stride_len_, c.padding = padding, c.padding_len = padding_len_;
    c.dilation = dilation, c.dilation_len = dilation_len_, c.groups = groups;
    c.output_scale = output_scale, c.output_zero_point = output_zero_point, c.output_dtype = output_dtype;
    c.unary = or_none(attr);
    c.unary_args = post_op_args, c.unary_args_len = post_op_args_len_;
    c.unary_algorithm = algorithm ? *algorithm : nullptr;
    return run_qconv(c, ret0);
  });
}

AOTITorchError aoti_torch_cpu__qconv2d_pointwise_binary_tensor(
    AtenTensorHandle X, AtenTensorHandle act_scale, AtenTensorHandle act_zero_point, AtenTensorHandle onednn_weight,
    AtenTensorHandle weight_scales, AtenTensorHandle weight_zero_points, AtenTensorHandle accum, AtenTensorHandle* B,
    const int64_t* stride_args, int64_t stride_len_, const int64_t* padding_args, int64_t padding_len_,
    const int64_t* dilation_args, int64_t dilation_len_, int64_t groups, double output_scale,
    int64_t output_zero_point, const int32_t* output_dtype, double accum_scale, int64_t accum_zero_point,
    const char* binary_attr, double* alpha, const char** unary_attr, const double** unary_scalars,
    int64_t unary_scalars_len_, const char** unary_algorithm, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    (void)weight_zero_points;
    // torch's kernel does not read alpha: the sum's scale is accum_scale.
    (void)alpha;
    const std::string binary = or_none(binary_attr);
    const std::string unary = or_none(unary_attr ? *unary_attr : nullptr);
    AOTIRT_ENSURE(binary == "sum", kInvalidArgument,
                  "the int8 convolution's binary post-op must be 'sum' (then none or relu), got '{}'", binary);
    QConvCall c;
    c.X = X, c.act_scale = act_scale, c.act_zero_point = act_zero_point, c.W = onednn_weight;
    c.weight_scales = weight_scales, c.B = B, c.accum = accum;
    c.stride = stride_args, c.stride_len = stride_len_, c.padding = padding_args, c.padding_len = padding_len_;
    c.dilation = dilation_args, c.dilation_len = dilation_len_, c.groups = groups;
    c.output_scale = output_scale, c.output_zero_point = output_zero_point, c.output_dtype = output_dtype;
    c.accum_scale = accum_scale, c.accum_zero_point = accum_zero_point;
    c.binary = true;
    c.unary = unary;
    c.unary_args = unary_scalars, c.unary_args_len = unary_scalars_len_;
    c.unary_algorithm = unary_algorithm ? *unary_algorithm : nullptr;
    return run_qconv(c, ret0);
  });
}

}  // extern "C"

#endif  // AOTIRT_WITH_ONEDNN
