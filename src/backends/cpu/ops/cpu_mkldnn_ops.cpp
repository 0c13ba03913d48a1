// The oneDNN shims of frozen packages (torch's shim_cpu.h): convolutions
// with a unary post-op, with a binary one (out of place, or summed into
// |other| in place) and linears with a unary or binary post-op, all on weights
// that freezing prepacked (layout _mkldnn) or, for dynamic shapes, plain ones.
// Convolutions run on oneDNN's convolution primitive and linears on its inner
// product, whose weight orientation ([N, K]) is the one torch packed, so a
// weight whose stored layout is the one the primitive wants is used in place.
// Only built when CMake found oneDNN (AOTIRT_WITH_ONEDNN).
#include "backends/cpu/ops/cpu_onednn.h"

#if AOTIRT_WITH_ONEDNN

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/host_copy.h"
#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "device/device.h"
#include "ops/conv_args.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {
constexpr int32_t kLayoutMkldnn = 3;
}  // namespace

Result<WeightInfo> aotirt::cpu_ops::read_weight(const TensorImpl& w) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(w, "weight"));
  WeightInfo info;
  info.tensor = &w;
  const OpaqueLayout* opaque = w.storage() ? w.storage()->opaque() : nullptr;
  if (!opaque) return info;
  AOTIRT_ENSURE(opaque->layout() == kLayoutMkldnn, kUnimplemented, "'weight' has opaque layout {}, not _mkldnn",
                opaque->layout());
  AOTIRT_ASSIGN_OR_RETURN(info.layout, parse_blocked_layout(opaque->metadata().data(), opaque->metadata().size()));
  AOTIRT_ENSURE(info.layout.dtype == w.dtype(), kInvalidArgument,
                "'weight' is {} but its oneDNN descriptor says {}", dtype_name(w.dtype()),
                dtype_name(info.layout.dtype));
  info.packed = true;
  return info;
}

Result<std::shared_ptr<const void>> aotirt::cpu_ops::prepared_weight(OnednnContext& ctx, const OnednnPrimitive& p,
                                                                    const WeightInfo& w, const int64_t* plain_dims,
                                                                    int plain_ndims, const int64_t* plain_strides) {
  const OnednnApi& api = ctx.api();
  auto convert = [&](const void* plain) -> Result<std::shared_ptr<const void>> {
    DimVector dims(plain_dims, plain_ndims);
    DimVector strides = contiguous_strides(dims);
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc from, strided_desc(dims.data(), strides.data(), plain_ndims,
                                                          w.tensor->dtype()));
    return ctx.reorder(from.md, plain, p.weights_md);
  };
  if (!w.packed) {
    auto plain = [&]() -> Result<std::shared_ptr<const void>> {
      if (plain_strides) {
        // The tensor's own memory, seen through the caller's dim order.
        AOTIRT_ASSIGN_OR_RETURN(MemoryDesc from, strided_desc(plain_dims, plain_strides, plain_ndims,
                                                              w.tensor->dtype()));
        return ctx.reorder(from.md, w.tensor->data_ptr(), p.weights_md);
      }
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl dense, contiguous_as(*w.tensor, w.tensor->dtype()));
      return convert(dense.data_ptr());
    };
    const DerivedForms* forms = w.tensor->storage() ? w.tensor->storage()->derived_forms() : nullptr;
    if (!forms) return plain();
    // The view is part of the key: one storage may back several weights.
    const TensorImpl& t = *w.tensor;
    const std::string key = fmt::format("{} of {}{}+{}", p.weights_key, dims_to_string(t.sizes().data(), t.dim()),
                                        dims_to_string(t.strides().data(), t.dim()), t.storage_offset());
    return forms->get(key, [&]() -> Result<DerivedForms::Form> {
      AOTIRT_LOG(kDebug, "oneDNN: parameter {} kept reordered for this kernel ({})",
                 dims_to_string(t.sizes().data(), t.dim()), p.weights_key);
      return plain();
    });
  }
  if (same_layout(api, w.layout, p.weights_md)) {
    // Not owned: the weight tensor outlives the call.
    return std::shared_ptr<const void>(std::shared_ptr<const void>(), w.tensor->data_ptr());
  }
  const DerivedForms* forms = w.tensor->storage()->derived_forms();
  AOTIRT_ENSURE(forms != nullptr, kInternal, "a prepacked weight's storage keeps no derived forms");
  return forms->get(p.weights_key, [&]() -> Result<DerivedForms::Form> {
    int64_t count = 1;
    for (int d = 0; d < w.layout.ndims; ++d) count *= w.layout.dims[d];
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl plain, empty_contiguous(DimVector{count}, w.layout.dtype, DeviceId{}));
    unpack_blocked(w.layout, w.tensor->data_ptr(), plain.data_ptr());
    // A second copy of the weight: worth knowing when memory matters.
    AOTIRT_LOG(kDebug, "oneDNN: weight {} repacked for this kernel ({})", w.layout.to_string(), p.weights_key);
    return convert(plain.data_ptr());
  });
}

namespace {

// Post-ops in order: the binary one (sum in place, or an elementwise op
// with a second tensor), then the unary one.
struct PostOps {
  bool sum = false;
  float sum_scale = 1.f;
  bool binary = false;
  dnnl_alg_kind_t binary_alg = dnnl_alg_kind_undef;
  const_dnnl_memory_desc_t binary_md = nullptr;
  UnaryPostOp unary;

  std::string key() const {
    return fmt::format("sum{}:{} bin{}:{} un{}:{}:{}:{}", sum, sum_scale, binary, static_cast<int>(binary_alg),
                       unary.present, static_cast<int>(unary.alg), unary.alpha, unary.beta);
  }
};

// A primitive attr carrying |ops| and a user-managed scratchpad (so one
// primitive can run on several threads at once).
struct Attr {
  const OnednnApi& api;
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_post_ops_t post = nullptr;
  ~Attr() {
    if (post) api.dnnl_post_ops_destroy(post);
    if (attr) api.dnnl_primitive_attr_destroy(attr);
  }
};

Status build_attr(Attr& a, const PostOps& ops) {
  const OnednnApi& api = a.api;
  AOTIRT_DNNL_CHECK(api.dnnl_primitive_attr_create(&a.attr), "an attribute");
  AOTIRT_DNNL_CHECK(api.dnnl_primitive_attr_set_scratchpad_mode(a.attr, dnnl_scratchpad_mode_user),
                    "the scratchpad mode");
  AOTIRT_DNNL_CHECK(api.dnnl_post_ops_create(&a.post), "a post-op list");
  if (ops.sum) AOTIRT_DNNL_CHECK(api.dnnl_post_ops_append_sum(a.post, ops.sum_scale, 0, dnnl_data_type_undef), "sum");
  if (ops.binary) AOTIRT_DNNL_CHECK(api.dnnl_post_ops_append_binary(a.post, ops.binary_alg, ops.binary_md), "binary");
  if (ops.unary.present)
    AOTIRT_DNNL_CHECK(api.dnnl_post_ops_append_eltwise(a.post, ops.unary.alg, ops.unary.alpha, ops.unary.beta),
                      "an elementwise post-op");
  AOTIRT_DNNL_CHECK(api.dnnl_primitive_attr_set_post_ops(a.attr, a.post), "post-ops");
  return Status();
}

std::string layout_key(const TensorImpl& t) {
  return fmt::format("{}{}", dims_to_string(t.sizes().data(), t.dim()), dims_to_string(t.strides().data(), t.dim()));
}

Status check_float(const TensorImpl& t, const char* what) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(t, what));
  AOTIRT_ASSIGN_OR_RETURN(dnnl_data_type_t dt, onednn_dtype(t.dtype(), what));
  (void)dt;
  return Status();
}

// The bias, when given: 1-D with |n| elements, of the input's dtype or float32.
Result<const TensorImpl*> read_bias(AtenTensorHandle* b, int64_t n, const TensorImpl& x) {
  const TensorImpl* bias = optional_tensor(b);
  if (!bias) return bias;
  AOTIRT_RETURN_IF_ERROR(check_cpu(*bias, "bias"));
  AOTIRT_ENSURE(bias->dim() == 1 && bias->sizes()[0] == n, kInvalidArgument, "'bias' has shape {}, expected [{}]",
                shape_str(*bias), n);
  AOTIRT_ENSURE(bias->dtype() == x.dtype() || bias->dtype() == DType::kFloat32, kInvalidArgument,
                "'bias' is {}; it must be {} or float32", dtype_name(bias->dtype()), dtype_name(x.dtype()));
  return bias;
}

// ---- convolution ------------------------------------------------------------

struct ConvCall {
  const TensorImpl* x = nullptr;
  WeightInfo w;
  const TensorImpl* bias = nullptr;
  const int64_t* padding = nullptr;
  int64_t padding_len = 0;
  const int64_t* stride = nullptr;
  int64_t stride_len = 0;
  const int64_t* dilation = nullptr;
  int64_t dilation_len = 0;
  int64_t groups = 1;
  PostOps ops;
  const TensorImpl* other = nullptr;  // binary operand
  bool in_place = false;              // write into |other|
  const TensorImpl* out = nullptr;    // the output, when the caller made it
};

// One of the op layer's convolution lists (no default: torch always passes
// them to these shims), copied into |out|.
Status read_list(const int64_t* v, int64_t len, int64_t spatial, const char* name, int64_t* out) {
  AOTIRT_ASSIGN_OR_RETURN(DimVector list, ops::conv_list(v, len, spatial, name, -1));
  for (int64_t i = 0; i < spatial; ++i) out[i] = list[i];
  return Status();
}

// The convolution |c| describes, into c.out when set (|ret0| unused), else
// into a new tensor returned in |ret0|.
Status run_conv(ConvCall& c, AtenTensorHandle* ret0) {
  if (!c.out) AOTIRT_REQUIRE_OUT(ret0);
  const TensorImpl& x = *c.x;
  AOTIRT_RETURN_IF_ERROR(check_float(x, "X"));
  AOTIRT_ENSURE(x.dim() >= 3 && x.dim() <= 5, kInvalidArgument, "'X' must be 3-D, 4-D or 5-D, got shape {}",
                shape_str(x));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(x, "X", *c.w.tensor, "weight"));
  AOTIRT_ENSURE(c.groups >= 1, kInvalidArgument, "groups must be positive, got {}", c.groups);
  const int64_t spatial = x.dim() - 2;
  int64_t pad[3], str[3], dil[3];
  AOTIRT_RETURN_IF_ERROR(read_list(c.padding, c.padding_len, spatial, "padding", pad));
  AOTIRT_RETURN_IF_ERROR(read_list(c.stride, c.stride_len, spatial, "stride", str));
  AOTIRT_RETURN_IF_ERROR(read_list(c.dilation, c.dilation_len, spatial, "dilation", dil));

  // The weight's logical dims: [O, I/G, k...], or [G, O/G, I/G, k...] as
  // oneDNN and the packed descriptor write a grouped one.
  const int64_t in_c = x.sizes()[1];
  int64_t out_c = 0;
  int64_t kernel[3];
  DimVector wdims;
  if (c.w.packed) {
    const BlockedLayout& l = c.w.layout;
    const int expect_nd = static_cast<int>(spatial + (c.groups > 1 ? 3 : 2));
    AOTIRT_ENSURE(l.ndims == expect_nd, kInvalidArgument,
                  "packed 'weight' ({}) does not fit a {}-d convolution with groups={}", l.to_string(), spatial,
                  c.groups);
    const int off = c.groups > 1 ? 1 : 0;
    AOTIRT_ENSURE(c.groups == 1 || l.dims[0] == c.groups, kInvalidArgument,
                  "packed 'weight' has {} groups, the call {}", l.dims[0], c.groups);
    out_c = l.dims[off] * c.groups;
    AOTIRT_ENSURE(l.dims[off + 1] * c.groups == in_c, kInvalidArgument,
                  "'X' {} has {} channels but packed 'weight' ({}) with groups={} expects {}", shape_str(x), in_c,
                  l.to_string(), c.groups, l.dims[off + 1] * c.groups);
    for (int64_t i = 0; i < spatial; ++i) kernel[i] = l.dims[off + 2 + i];
    wdims.assign(l.dims, l.ndims);
  } else {
    const TensorImpl& w = *c.w.tensor;
    AOTIRT_ENSURE(w.dim() == x.dim(), kInvalidArgument, "'weight' {} must have as many dims as 'X' {}",
                  shape_str(w), shape_str(x));
    AOTIRT_ENSURE(w.sizes()[0] % c.groups == 0 && w.sizes()[1] * c.groups == in_c, kInvalidArgument,
                  "'X' {} and 'weight' {} do not fit groups={}", shape_str(x), shape_str(w), c.groups);
    out_c = w.sizes()[0];
    for (int64_t i = 0; i < spatial; ++i) kernel[i] = w.sizes()[2 + i];
    if (c.groups > 1) {
      wdims.resize(w.dim() + 1);
      wdims[0] = c.groups;
      wdims[1] = out_c / c.groups;
      for (int64_t d = 1; d < w.dim(); ++d) wdims[d + 1] = w.sizes()[d];
    } else {
      wdims = w.sizes();
    }
  }
  DimVector out_sizes;
  out_sizes.resize(x.dim());
  out_sizes[0] = x.sizes()[0];
  out_sizes[1] = out_c;
  for (int64_t i = 0; i < spatial; ++i) {
    AOTIRT_ENSURE(str[i] > 0 && dil[i] > 0 && pad[i] >= 0, kInvalidArgument,
                  "stride {}, dilation {} and padding {} must be positive, positive and non-negative", str[i],
                  dil[i], pad[i]);
    const int64_t span = dil[i] * (kernel[i] - 1) + 1;
    const int64_t in = x.sizes()[2 + i] + 2 * pad[i];
    AOTIRT_ENSURE(in >= span, kInvalidArgument, "kernel {} (dilated to {}) is larger than the padded input {}",
                  kernel[i], span, in);
    out_sizes[2 + i] = (in - span) / str[i] + 1;
  }
  if (c.bias)
    AOTIRT_ENSURE(c.bias->sizes()[0] == out_c, kInvalidArgument, "'bias' has shape {}, expected [{}]",
                  shape_str(*c.bias), out_c);

  // Output: channels-last, as Inductor planned for a packed weight; with a
  // plain weight (dynamic shapes) a contiguous input gives a contiguous output.
  TensorImpl out;
  if (c.out) {
    AOTIRT_ENSURE(c.out->sizes() == out_sizes && c.out->dtype() == x.dtype(), kInvalidArgument,
                  "'out' is {} {}, the convolution gives {} {}", dtype_name(c.out->dtype()), shape_str(*c.out),
                  dtype_name(x.dtype()), dims_to_string(out_sizes.data(), out_sizes.size()));
    out = *c.out;
  } else if (c.in_place) {
    const TensorImpl& o = *c.other;
    AOTIRT_ENSURE(o.sizes() == out_sizes, kInvalidArgument, "'other' has shape {}, the convolution gives {}",
                  shape_str(o), dims_to_string(out_sizes.data(), out_sizes.size()));
    out = o;
  } else {
    const bool contiguous_out = !c.w.packed && x.is_contiguous();
    DimVector out_strides = contiguous_out ? contiguous_strides(out_sizes) : channels_last_strides(out_sizes);
    AOTIRT_ASSIGN_OR_RETURN(out, empty_strided(out_sizes, out_strides, x.dtype(), DeviceId{}));
  }
  if (c.other) {
    AOTIRT_RETURN_IF_ERROR(check_cpu(*c.other, "other"));
    AOTIRT_RETURN_IF_ERROR(check_same_dtype(x, "X", *c.other, "other"));
    AOTIRT_ENSURE(c.other->sizes() == out_sizes, kInvalidArgument, "'other' has shape {}, the convolution gives {}",
                  shape_str(*c.other), dims_to_string(out_sizes.data(), out_sizes.size()));
  }
  if (out.numel() == 0) {
    if (!c.out) *ret0 = new_handle(std::move(out));
    return Status();
  }

  AOTIRT_ASSIGN_OR_RETURN(OnednnContext * ctx, onednn_context());
  const OnednnApi& api = ctx->api();
  // With a plain weight and no second operand, the activations go in the
  // layout oneDNN's kernel prefers (blocked channels) and are reordered in
  // and out: its kernels for plain NCHW activations are much slower than
  // the reorders.
  const bool own_layouts = !c.w.packed && !c.ops.binary && !c.in_place;
  const std::string key = fmt::format(
      "conv x{} {} w{} {} g{} p{} s{} d{} o{} b{} {} other{} ops {}", layout_key(x), static_cast<int>(x.dtype()),
      dims_to_string(wdims.data(), wdims.size()), c.w.packed, c.groups, dims_to_string(pad, spatial),
      dims_to_string(str, spatial), dims_to_string(dil, spatial), layout_key(out),
      c.bias ? static_cast<int>(c.bias->dtype()) : -1, c.in_place, c.other ? layout_key(*c.other) : "-", c.ops.key());
  auto make = [&]() -> Result<std::shared_ptr<OnednnPrimitive>> {
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc src, strided_desc(x.sizes().data(), x.strides().data(), x.dim(), x.dtype()));
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc dst,
                            strided_desc(out.sizes().data(), out.strides().data(), out.dim(), out.dtype()));
    AOTIRT_ASSIGN_OR_RETURN(dnnl_data_type_t wdt, onednn_dtype(x.dtype(), "weight"));
    MemoryDesc src_any, dst_any;
    if (own_layouts) {
      dnnl_dims_t xd, od;
      for (int64_t i = 0; i < x.dim(); ++i) {
        xd[i] = x.sizes()[i];
        od[i] = out_sizes[i];
      }
      AOTIRT_DNNL_CHECK(api.dnnl_memory_desc_create_with_tag(&src_any.md, static_cast<int>(x.dim()), xd, wdt,
                                                            dnnl_format_tag_any),
                        "the source descriptor");
      AOTIRT_DNNL_CHECK(api.dnnl_memory_desc_create_with_tag(&dst_any.md, static_cast<int>(x.dim()), od, wdt,
                                                            dnnl_format_tag_any),
                        "the destination descriptor");
    }
    MemoryDesc wany, bias_md, other_md;
    dnnl_dims_t wd;
    for (int64_t i = 0; i < wdims.size(); ++i) wd[i] = wdims[i];
    AOTIRT_DNNL_CHECK(api.dnnl_memory_desc_create_with_tag(&wany.md, static_cast<int>(wdims.size()), wd, wdt,
                                                          dnnl_format_tag_any),
                      "the weight descriptor");
    if (c.bias) {
      const int64_t bs = 1;
      AOTIRT_ASSIGN_OR_RETURN(bias_md, strided_desc(c.bias->sizes().data(), &bs, 1, c.bias->dtype()));
    }
    PostOps ops = c.ops;
    if (ops.binary) {
      AOTIRT_ASSIGN_OR_RETURN(other_md, strided_desc(c.other->sizes().data(), c.other->strides().data(),
                                                     c.other->dim(), c.other->dtype()));
      ops.binary_md = other_md.md;
    }
    Attr attr{api};
    AOTIRT_RETURN_IF_ERROR(build_attr(attr, ops));
    dnnl_dims_t strides, dilates, pl, pr;
    for (int64_t i = 0; i < spatial; ++i) {
      strides[i] = str[i];
      dilates[i] = dil[i] - 1;  // oneDNN counts the gaps
      pl[i] = pr[i] = pad[i];
    }
    dnnl_primitive_desc_t pd = nullptr;
    AOTIRT_DNNL_CHECK(api.dnnl_convolution_forward_primitive_desc_create(
                          &pd, ctx->engine(), dnnl_forward_inference, dnnl_convolution_direct,
                          own_layouts ? src_any.md : src.md, wany.md, bias_md.md, own_layouts ? dst_any.md : dst.md,
                          strides, dilates, pl, pr, attr.attr),
                      "this convolution");
    std::vector<int> ids{DNNL_ARG_SRC, DNNL_ARG_DST};
    if (c.bias) ids.push_back(DNNL_ARG_BIAS);
    if (ops.binary) ids.push_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(c.ops.sum ? 1 : 0) | DNNL_ARG_SRC_1);
    AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<OnednnPrimitive> p, ctx->finish(pd, ids));
    if (own_layouts) {
      if (!api.dnnl_memory_desc_equal(src.md, p->md_for(DNNL_ARG_SRC))) p->user_src = std::move(src);
      if (!api.dnnl_memory_desc_equal(dst.md, p->md_for(DNNL_ARG_DST))) p->user_dst = std::move(dst);
    }
    return p;
  };
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<OnednnPrimitive> prim, ctx->primitive(key, make));

  // A plain weight is reordered from its own memory, whatever its strides:
  // a package that folds batch norms into its convolutions makes a fresh
  // channels-last weight on every call, and a dense copy of it first (one
  // thread, three-element rows) cost more than the convolutions themselves.
  DimVector wstrides;
  bool weight_strided = false;
  if (!c.w.packed) {
    const TensorImpl& w = *c.w.tensor;
    wstrides.resize(static_cast<int64_t>(wdims.size()));
    const int64_t shift = c.groups > 1 ? 1 : 0;
    if (c.groups > 1) wstrides[0] = w.strides()[0] * (out_c / c.groups);
    for (int64_t d = 0; d < w.dim(); ++d) wstrides[d + shift] = w.strides()[d];
    weight_strided = true;
    for (int64_t d = 0; d < wstrides.size(); ++d)
      if (wdims[d] > 1 && wstrides[d] <= 0) weight_strided = false;  // oneDNN takes positive strides only
  }
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<const void> weight,
                          prepared_weight(*ctx, *prim, c.w, wdims.data(), static_cast<int>(wdims.size()),
                                          weight_strided ? wstrides.data() : nullptr));
  // Activations in the primitive's own layouts, when it picked others.
  auto scratch_for = [&](const_dnnl_memory_desc_t md) {
    return empty_contiguous(DimVector{static_cast<int64_t>(api.dnnl_memory_desc_get_size(md))}, DType::kUInt8,
                            DeviceId{});
  };
  TensorImpl src_own, dst_own;
  void* src_ptr = x.data_ptr();
  void* dst_ptr = out.data_ptr();
  if (prim->user_src.md) {
    AOTIRT_ASSIGN_OR_RETURN(src_own, scratch_for(prim->md_for(DNNL_ARG_SRC)));
    AOTIRT_RETURN_IF_ERROR(ctx->reorder_into(prim->user_src.md, x.data_ptr(), prim->md_for(DNNL_ARG_SRC),
                                             src_own.data_ptr()));
    src_ptr = src_own.data_ptr();
  }
  if (prim->user_dst.md) {
    AOTIRT_ASSIGN_OR_RETURN(dst_own, scratch_for(prim->md_for(DNNL_ARG_DST)));
    dst_ptr = dst_own.data_ptr();
  }
  std::vector<std::pair<int, void*>> args{{DNNL_ARG_SRC, src_ptr},
                                          {DNNL_ARG_WEIGHTS, const_cast<void*>(weight.get())},
                                          {DNNL_ARG_DST, dst_ptr}};
  if (c.bias) args.emplace_back(DNNL_ARG_BIAS, c.bias->data_ptr());
  if (c.ops.binary)
    args.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(c.ops.sum ? 1 : 0) | DNNL_ARG_SRC_1, c.other->data_ptr());
  AOTIRT_RETURN_IF_ERROR(ctx->execute(*prim, args));
  if (prim->user_dst.md)
    AOTIRT_RETURN_IF_ERROR(ctx->reorder_into(prim->md_for(DNNL_ARG_DST), dst_ptr, prim->user_dst.md, out.data_ptr()));
  if (!c.out) *ret0 = new_handle(std::move(out));
  return Status();
}

Result<float> read_alpha(const double* alpha) { return alpha ? static_cast<float>(*alpha) : 1.f; }

const char* deref(const char** s) { return s && *s ? *s : "none"; }
const char* deref_alg(const char** s) { return s && *s ? *s : ""; }

// ---- linear -------------------------------------------------------------------

Status run_linear(const TensorImpl& x_in, const WeightInfo& w, AtenTensorHandle* b, PostOps ops,
                  const TensorImpl* other, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_RETURN_IF_ERROR(check_float(x_in, "X"));
  AOTIRT_ENSURE(x_in.dim() >= 1, kInvalidArgument, "'X' must have at least one dim");
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(x_in, "X", *w.tensor, "weight"));
  int64_t n = 0, k = 0;
  if (w.packed) {
    AOTIRT_ENSURE(w.layout.ndims == 2 && w.layout.groups == 1, kInvalidArgument,
                  "packed 'weight' ({}) is not a linear's [N, K]", w.layout.to_string());
    n = w.layout.dims[0];
    k = w.layout.dims[1];
  } else {
    AOTIRT_RETURN_IF_ERROR(check_dim(*w.tensor, 2, "weight"));
    n = w.tensor->sizes()[0];
    k = w.tensor->sizes()[1];
  }
  const int64_t kx = x_in.sizes()[x_in.dim() - 1];
  AOTIRT_ENSURE(kx == k, kInvalidArgument, "'X' {} has {} features but 'weight' takes {}", shape_str(x_in), kx, k);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* bias, read_bias(b, n, x_in));

  DimVector out_sizes = x_in.sizes();
  out_sizes[out_sizes.size() - 1] = n;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(out_sizes, x_in.dtype(), DeviceId{}));
  const int64_t m = k > 0 ? x_in.numel() / k : 0;
  TensorImpl other2d;
  if (other) {
    AOTIRT_RETURN_IF_ERROR(check_cpu(*other, "other"));
    AOTIRT_RETURN_IF_ERROR(check_same_dtype(x_in, "X", *other, "other"));
    AOTIRT_ENSURE(other->sizes() == out_sizes, kInvalidArgument, "'other' has shape {}, the linear gives {}",
                  shape_str(*other), dims_to_string(out_sizes.data(), out_sizes.size()));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl dense, contiguous_as(*other, other->dtype()));
    other2d = reshape_contiguous(dense, DimVector{m, n});
  }
  if (out.numel() == 0) {
    *ret0 = new_handle(std::move(out));
    return Status();
  }
  AOTIRT_ENSURE(k > 0, kInvalidArgument, "'X' {} has no features", shape_str(x_in));
  // oneDNN's inner product reads X as a dense [M, K] matrix.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x_dense, contiguous_as(x_in, x_in.dtype()));
  TensorImpl x = reshape_contiguous(x_dense, DimVector{m, k});
  TensorImpl out2d = reshape_contiguous(out, DimVector{m, n});

  AOTIRT_ASSIGN_OR_RETURN(OnednnContext * ctx, onednn_context());
  const OnednnApi& api = ctx->api();
  const std::string key = fmt::format("linear m{} n{} k{} t{} p{} b{} ops {}", m, n, k, static_cast<int>(x.dtype()),
                                      w.packed, bias ? static_cast<int>(bias->dtype()) : -1, ops.key());
  auto make = [&]() -> Result<std::shared_ptr<OnednnPrimitive>> {
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc src, strided_desc(x.sizes().data(), x.strides().data(), 2, x.dtype()));
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc dst,
                            strided_desc(out2d.sizes().data(), out2d.strides().data(), 2, out2d.dtype()));
    AOTIRT_ASSIGN_OR_RETURN(dnnl_data_type_t wdt, onednn_dtype(x.dtype(), "weight"));
    MemoryDesc wany, bias_md, other_md;
    dnnl_dims_t wd = {n, k};
    AOTIRT_DNNL_CHECK(api.dnnl_memory_desc_create_with_tag(&wany.md, 2, wd, wdt, dnnl_format_tag_any),
                      "the weight descriptor");
    if (bias) {
      const int64_t bs = 1;
      AOTIRT_ASSIGN_OR_RETURN(bias_md, strided_desc(bias->sizes().data(), &bs, 1, bias->dtype()));
    }
    PostOps o = ops;
    if (o.binary) {
      AOTIRT_ASSIGN_OR_RETURN(other_md, strided_desc(other2d.sizes().data(), other2d.strides().data(), 2,
                                                     other2d.dtype()));
      o.binary_md = other_md.md;
    }
    Attr attr{api};
    AOTIRT_RETURN_IF_ERROR(build_attr(attr, o));
    dnnl_primitive_desc_t pd = nullptr;
    AOTIRT_DNNL_CHECK(api.dnnl_inner_product_forward_primitive_desc_create(&pd, ctx->engine(), dnnl_forward_inference,
                                                                           src.md, wany.md, bias_md.md, dst.md,
                                                                           attr.attr),
                      "this linear");
    std::vector<int> ids{DNNL_ARG_SRC, DNNL_ARG_DST};
    if (bias) ids.push_back(DNNL_ARG_BIAS);
    if (o.binary) ids.push_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1);
    return ctx->finish(pd, ids);
  };
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<OnednnPrimitive> prim, ctx->primitive(key, make));
  const int64_t plain_dims[2] = {n, k};
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<const void> weight, prepared_weight(*ctx, *prim, w, plain_dims, 2));
  std::vector<std::pair<int, void*>> args{{DNNL_ARG_SRC, x.data_ptr()},
                                          {DNNL_ARG_WEIGHTS, const_cast<void*>(weight.get())},
                                          {DNNL_ARG_DST, out2d.data_ptr()}};
  if (bias) args.emplace_back(DNNL_ARG_BIAS, bias->data_ptr());
  if (ops.binary) args.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, other2d.data_ptr());
  AOTIRT_RETURN_IF_ERROR(ctx->execute(*prim, args));
  *ret0 = new_handle(std::move(out));
  return Status();
}

Status conv_common(AtenTensorHandle X, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding,
                   int64_t padding_len, const int64_t* stride, int64_t stride_len, const int64_t* dilation,
                   int64_t dilation_len, int64_t groups, ConvCall& c) {
  AOTIRT_ASSIGN_OR_RETURN(c.x, require_tensor(X, "X"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* w, require_tensor(W, "W"));
  AOTIRT_ASSIGN_OR_RETURN(c.w, read_weight(*w));
  c.padding = padding;
  c.padding_len = padding_len;
  c.stride = stride;
  c.stride_len = stride_len;
  c.dilation = dilation;
  c.dilation_len = dilation_len;
  c.groups = groups;
  // Its length is checked once the output channels are known.
  c.bias = optional_tensor(B);
  if (c.bias) {
    AOTIRT_RETURN_IF_ERROR(check_cpu(*c.bias, "bias"));
    AOTIRT_ENSURE(c.bias->dim() == 1, kInvalidArgument, "'bias' has shape {}, expected 1-D", shape_str(*c.bias));
    AOTIRT_ENSURE(c.bias->dtype() == c.x->dtype() || c.bias->dtype() == DType::kFloat32, kInvalidArgument,
                  "'bias' is {}; it must be {} or float32", dtype_name(c.bias->dtype()), dtype_name(c.x->dtype()));
  }
  return Status();
}


// ---- transposed convolution ---------------------------------------------------

// mkldnn::_convolution_transpose_pointwise: oneDNN's deconvolution, whose
// weight is [O, I, k...] ([G, O/G, I/G, k...] grouped). A prepacked weight
// (mkldnn::_reorder_convolution_transpose_weight) is stored in those dims; a
// plain one is torch's [I, O/G, k...] and is read through permuted strides.
Status run_deconv(AtenTensorHandle X, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding,
                  int64_t padding_len, const int64_t* output_padding, int64_t output_padding_len,
                  const int64_t* stride, int64_t stride_len, const int64_t* dilation, int64_t dilation_len,
                  int64_t groups, const UnaryPostOp& unary, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* xp, require_tensor(X, "X"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* wp, require_tensor(W, "W"));
  AOTIRT_ASSIGN_OR_RETURN(WeightInfo w, read_weight(*wp));
  const TensorImpl& x_in = *xp;
  AOTIRT_RETURN_IF_ERROR(check_float(x_in, "X"));
  AOTIRT_ENSURE(x_in.dim() >= 3 && x_in.dim() <= 5, kInvalidArgument, "'X' must be 3-D, 4-D or 5-D, got shape {}",
                shape_str(x_in));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(x_in, "X", *wp, "W"));
  AOTIRT_ENSURE(groups >= 1, kInvalidArgument, "groups must be positive, got {}", groups);
  const int64_t spatial = x_in.dim() - 2;
  int64_t pad[3], opad[3], str[3], dil[3];
  AOTIRT_RETURN_IF_ERROR(read_list(padding, padding_len, spatial, "padding", pad));
  AOTIRT_RETURN_IF_ERROR(read_list(output_padding, output_padding_len, spatial, "output_padding", opad));
  AOTIRT_RETURN_IF_ERROR(read_list(stride, stride_len, spatial, "stride", str));
  AOTIRT_RETURN_IF_ERROR(read_list(dilation, dilation_len, spatial, "dilation", dil));

  const int64_t in_c = x_in.sizes()[1];
  AOTIRT_ENSURE(in_c % groups == 0, kInvalidArgument, "'X' {}: {} channels are not divisible by groups={}",
                shape_str(x_in), in_c, groups);
  int64_t out_c = 0;
  int64_t kernel[3];
  // oneDNN's logical weight dims and, for a plain weight, the strides that
  // read torch's [I, O/G, k...] tensor in that order.
  DimVector wdims, wstrides;
  const int goff = groups > 1 ? 1 : 0;
  if (w.packed) {
    const BlockedLayout& l = w.layout;
    AOTIRT_ENSURE(l.ndims == spatial + 2 + goff, kInvalidArgument,
                  "packed 'W' ({}) does not fit a {}-d transposed convolution with groups={}", l.to_string(),
                  spatial, groups);
    AOTIRT_ENSURE(groups == 1 || l.dims[0] == groups, kInvalidArgument, "packed 'W' has {} groups, the call {}",
                  l.dims[0], groups);
    AOTIRT_ENSURE(l.dims[goff + 1] * groups == in_c, kInvalidArgument,
                  "'X' {} has {} channels but packed 'W' ({}) with groups={} expects {}", shape_str(x_in), in_c,
                  l.to_string(), groups, l.dims[goff + 1] * groups);
    out_c = l.dims[goff] * groups;
    for (int64_t i = 0; i < spatial; ++i) kernel[i] = l.dims[goff + 2 + i];
    wdims.assign(l.dims, l.ndims);
  } else {
    const TensorImpl& wt = *wp;
    AOTIRT_ENSURE(wt.dim() == x_in.dim(), kInvalidArgument, "'W' {} must have as many dims as 'X' {}",
                  shape_str(wt), shape_str(x_in));
    AOTIRT_ENSURE(wt.sizes()[0] == in_c, kInvalidArgument,
                  "'X' {} has {} channels but transposed 'W' {} expects {}", shape_str(x_in), in_c, shape_str(wt),
                  wt.sizes()[0]);
    out_c = wt.sizes()[1] * groups;
    for (int64_t i = 0; i < spatial; ++i) kernel[i] = wt.sizes()[2 + i];
    const int64_t ig = in_c / groups;
    std::vector<int64_t> d, s;
    if (groups > 1) {
      d.push_back(groups);
      s.push_back(ig * wt.strides()[0]);
    }
    d.push_back(wt.sizes()[1]);
    s.push_back(wt.strides()[1]);
    d.push_back(ig);
    s.push_back(wt.strides()[0]);
    for (int64_t i = 0; i < spatial; ++i) {
      d.push_back(kernel[i]);
      s.push_back(wt.strides()[2 + i]);
    }
    wdims = DimVector(d);
    wstrides = DimVector(s);
  }
  DimVector out_sizes;
  out_sizes.resize(x_in.dim());
  out_sizes[0] = x_in.sizes()[0];
  out_sizes[1] = out_c;
  for (int64_t i = 0; i < spatial; ++i) {
    AOTIRT_ENSURE(str[i] > 0 && dil[i] > 0 && pad[i] >= 0 && opad[i] >= 0, kInvalidArgument,
                  "stride {}, dilation {}, padding {} and output_padding {} must be positive, positive, "
                  "non-negative and non-negative",
                  str[i], dil[i], pad[i], opad[i]);
    AOTIRT_ENSURE(opad[i] < str[i] || opad[i] < dil[i], kInvalidArgument,
                  "output_padding {} must be smaller than either stride {} or dilation {}", opad[i], str[i], dil[i]);
    const int64_t size = (x_in.sizes()[2 + i] - 1) * str[i] - 2 * pad[i] + dil[i] * (kernel[i] - 1) + opad[i] + 1;
    AOTIRT_ENSURE(size > 0, kInvalidArgument, "the transposed convolution's output size {} is not positive ('X' {})",
                  size, shape_str(x_in));
    out_sizes[2 + i] = size;
  }
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* bias, read_bias(B, out_c, x_in));

  // torch writes channels-last when the input or a plain weight is
  // channels-last, or the weight is prepacked (4-D and 5-D only).
  const bool cl = spatial >= 2 && (w.packed || is_channels_last(x_in.sizes(), x_in.strides()) ||
                                   is_channels_last(wp->sizes(), wp->strides()));
  DimVector out_strides = cl ? channels_last_strides(out_sizes) : contiguous_strides(out_sizes);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(out_sizes, out_strides, x_in.dtype(), DeviceId{}));
  if (out.numel() == 0 || x_in.numel() == 0) {
    // An empty input leaves only the bias (and the post-op) to write, when
    // the output is not empty itself; torch's kernel has no such case either
    // (a zero batch or zero channels make an empty output), so refuse it.
    AOTIRT_ENSURE(out.numel() == 0, kUnimplemented, "'X' {} is empty but the output {} is not", shape_str(x_in),
                  dims_to_string(out_sizes.data(), out_sizes.size()));
    *ret0 = new_handle(std::move(out));
    return Status();
  }
  // oneDNN reads X as it lies when it is dense in one of the two layouts.
  TensorImpl x = x_in;
  if (!x_in.is_contiguous() && !is_channels_last(x_in.sizes(), x_in.strides())) {
    AOTIRT_ASSIGN_OR_RETURN(x, contiguous_as(x_in, x_in.dtype()));
  }

  AOTIRT_ASSIGN_OR_RETURN(OnednnContext * ctx, onednn_context());
  const OnednnApi& api = ctx->api();
  PostOps ops;
  ops.unary = unary;
  const std::string key = fmt::format("deconv x{} {} w{} {} g{} p{} op{} s{} d{} o{} b{} ops {}", layout_key(x),
                                      static_cast<int>(x.dtype()), dims_to_string(wdims.data(), wdims.size()),
                                      w.packed, groups, dims_to_string(pad, spatial), dims_to_string(opad, spatial),
                                      dims_to_string(str, spatial), dims_to_string(dil, spatial), layout_key(out),
                                      bias ? static_cast<int>(bias->dtype()) : -1, ops.key());
  auto make = [&]() -> Result<std::shared_ptr<OnednnPrimitive>> {
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc src, strided_desc(x.sizes().data(), x.strides().data(), x.dim(), x.dtype()));
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc dst,
                            strided_desc(out.sizes().data(), out.strides().data(), out.dim(), out.dtype()));
    AOTIRT_ASSIGN_OR_RETURN(dnnl_data_type_t wdt, onednn_dtype(x.dtype(), "W"));
    MemoryDesc wany, bias_md;
    dnnl_dims_t wd;
    for (int64_t i = 0; i < wdims.size(); ++i) wd[i] = wdims[i];
    AOTIRT_DNNL_CHECK(api.dnnl_memory_desc_create_with_tag(&wany.md, static_cast<int>(wdims.size()), wd, wdt,
                                                          dnnl_format_tag_any),
                      "the weight descriptor");
    if (bias) {
      const int64_t bs = 1;
      AOTIRT_ASSIGN_OR_RETURN(bias_md, strided_desc(bias->sizes().data(), &bs, 1, bias->dtype()));
    }
    Attr attr{api};
    AOTIRT_RETURN_IF_ERROR(build_attr(attr, ops));
    dnnl_dims_t strides, dilates, pl, pr;
    for (int64_t i = 0; i < spatial; ++i) {
      strides[i] = str[i];
      dilates[i] = dil[i] - 1;  // oneDNN counts the gaps
      pl[i] = pad[i];
      // output_padding extends the far side: less padding taken off there.
      pr[i] = pad[i] - opad[i];
    }
    dnnl_primitive_desc_t pd = nullptr;
    AOTIRT_DNNL_CHECK(api.dnnl_deconvolution_forward_primitive_desc_create(
                          &pd, ctx->engine(), dnnl_forward_inference, dnnl_deconvolution_direct, src.md, wany.md,
                          bias_md.md, dst.md, strides, dilates, pl, pr, attr.attr),
                      "this transposed convolution");
    std::vector<int> ids{DNNL_ARG_SRC, DNNL_ARG_DST};
    if (bias) ids.push_back(DNNL_ARG_BIAS);
    return ctx->finish(pd, ids);
  };
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<OnednnPrimitive> prim, ctx->primitive(key, make));
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<const void> weight,
                          prepared_weight(*ctx, *prim, w, wdims.data(), static_cast<int>(wdims.size()),
                                          w.packed ? nullptr : wstrides.data()));
  std::vector<std::pair<int, void*>> args{{DNNL_ARG_SRC, x.data_ptr()},
                                          {DNNL_ARG_WEIGHTS, const_cast<void*>(weight.get())},
                                          {DNNL_ARG_DST, out.data_ptr()}};
  if (bias) args.emplace_back(DNNL_ARG_BIAS, bias->data_ptr());
  AOTIRT_RETURN_IF_ERROR(ctx->execute(*prim, args));
  *ret0 = new_handle(std::move(out));
  return Status();
}

}  // namespace

Status aotirt::cpu_ops::onednn_open() { return onednn_context().status(); }

void aotirt::cpu_ops::onednn_release_primitives() {
  if (OnednnContext* ctx = onednn_context_if_open()) ctx->clear();
}

Status aotirt::cpu_ops::onednn_convolution_into(const TensorImpl& x, const TensorImpl& w, const TensorImpl* bias,
                               const int64_t* stride, const int64_t* padding, const int64_t* dilation,
                               int64_t groups, const TensorImpl& out) {
  AOTIRT_RETURN_IF_ERROR(onednn_context().status());
  const int64_t spatial = x.dim() - 2;
  ConvCall c;
  c.x = &x;
  AOTIRT_ASSIGN_OR_RETURN(c.w, read_weight(w));
  AOTIRT_ENSURE(!c.w.packed, kInvalidArgument, "a plain convolution was given a prepacked weight");
  c.bias = bias;
  c.padding = padding;
  c.padding_len = spatial;
  c.stride = stride;
  c.stride_len = spatial;
  c.dilation = dilation;
  c.dilation_len = spatial;
  c.groups = groups;
  c.out = &out;
  return run_conv(c, nullptr);
}

Status aotirt::cpu_ops::onednn_matmul_into(const TensorImpl& a, const TensorImpl& b, const TensorImpl& c) {
  AOTIRT_ENSURE(a.dim() == 3 && b.dim() == 3 && c.dim() == 3, kInvalidArgument, "matmul on oneDNN takes 3-d operands");
  AOTIRT_ENSURE(a.dtype() == b.dtype() && a.dtype() == c.dtype() &&
                    (a.dtype() == DType::kBFloat16 || a.dtype() == DType::kFloat16),
                kUnimplemented, "matmul on oneDNN takes bfloat16 or float16 operands of one dtype");
  for (const TensorImpl* t : {&a, &b, &c}) {
    for (int64_t d = 0; d < 3; ++d)
      AOTIRT_ENSURE(t->strides()[d] > 0 || t->sizes()[d] == 1, kUnimplemented,
                    "matmul on oneDNN: an operand with stride {} in dim {}", t->strides()[d], d);
    // Row- or column-major matrices only: for others oneDNN falls back to
    // its reference kernel, slower than widening for OpenBLAS.
    AOTIRT_ENSURE(t->strides()[2] == 1 || t->strides()[1] == 1 || t->sizes()[2] == 1 || t->sizes()[1] == 1,
                  kUnimplemented, "matmul on oneDNN: an operand with matrix strides {} and {}", t->strides()[1],
                  t->strides()[2]);
  }
  AOTIRT_ASSIGN_OR_RETURN(OnednnContext * ctx, onednn_context());
  const OnednnApi& api = ctx->api();
  const std::string key = fmt::format("matmul a{} b{} c{} {}", layout_key(a), layout_key(b), layout_key(c),
                                      static_cast<int>(a.dtype()));
  auto make = [&]() -> Result<std::shared_ptr<OnednnPrimitive>> {
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc src, strided_desc(a.sizes().data(), a.strides().data(), 3, a.dtype()));
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc wts, strided_desc(b.sizes().data(), b.strides().data(), 3, b.dtype()));
    AOTIRT_ASSIGN_OR_RETURN(MemoryDesc dst, strided_desc(c.sizes().data(), c.strides().data(), 3, c.dtype()));
    Attr attr{api};
    AOTIRT_RETURN_IF_ERROR(build_attr(attr, PostOps{}));
    dnnl_primitive_desc_t pd = nullptr;
    AOTIRT_DNNL_CHECK(
        api.dnnl_matmul_primitive_desc_create(&pd, ctx->engine(), src.md, wts.md, nullptr, dst.md, attr.attr),
        "this matmul");
    return ctx->finish(pd, {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST});
  };
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<OnednnPrimitive> prim, ctx->primitive(key, make));
  return ctx->execute(*prim, {{DNNL_ARG_SRC, const_cast<void*>(a.data_ptr())},
                              {DNNL_ARG_WEIGHTS, const_cast<void*>(b.data_ptr())},
                              {DNNL_ARG_DST, c.data_ptr()}});
}

extern "C" {

AOTITorchError aoti_torch_cpu_mkldnn__convolution_pointwise(AtenTensorHandle X, AtenTensorHandle W,
                                                             AtenTensorHandle* B, const int64_t* padding,
                                                             int64_t padding_len_, const int64_t* stride,
                                                             int64_t stride_len_, const int64_t* dilation,
                                                             int64_t dilation_len_, int64_t groups, const char* attr,
                                                             const double** scalars, int64_t scalars_len_,
                                                             const char** algorithm, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    ConvCall c;
    AOTIRT_RETURN_IF_ERROR(conv_common(X, W, B, padding, padding_len_, stride, stride_len_, dilation, dilation_len_,
                                       groups, c));
    AOTIRT_ASSIGN_OR_RETURN(c.ops.unary, parse_unary(attr, scalars, scalars_len_, deref_alg(algorithm)));
    return run_conv(c, ret0);
  });
}

AOTITorchError aoti_torch_cpu_mkldnn__convolution_pointwise_binary(
    AtenTensorHandle X, AtenTensorHandle other, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding,
    int64_t padding_len_, const int64_t* stride, int64_t stride_len_, const int64_t* dilation, int64_t dilation_len_,
    int64_t groups, const char* binary_attr, double* alpha, const char** unary_attr, const double** unary_scalars,
    int64_t unary_scalars_len_, const char** unary_algorithm, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    ConvCall c;
    AOTIRT_RETURN_IF_ERROR(conv_common(X, W, B, padding, padding_len_, stride, stride_len_, dilation, dilation_len_,
                                       groups, c));
    AOTIRT_ASSIGN_OR_RETURN(c.other, require_tensor(other, "other"));
    AOTIRT_ASSIGN_OR_RETURN(c.ops.binary_alg, parse_binary(binary_attr));
    AOTIRT_ASSIGN_OR_RETURN(float a, read_alpha(alpha));
    // oneDNN's binary post-op has no scale; torch's fused op is only made
    // with alpha 1.
    AOTIRT_ENSURE(a == 1.f, kUnimplemented, "binary post-op '{}' with alpha {} (only 1 is supported)", binary_attr, a);
    c.ops.binary = true;
    AOTIRT_ASSIGN_OR_RETURN(c.ops.unary, parse_unary(deref(unary_attr), unary_scalars, unary_scalars_len_,
                                                     deref_alg(unary_algorithm)));
    return run_conv(c, ret0);
  });
}

AOTITorchError aoti_torch_cpu_mkldnn__convolution_pointwise_binary_(
    AtenTensorHandle other, AtenTensorHandle X, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding,
    int64_t padding_len_, const int64_t* stride, int64_t stride_len_, const int64_t* dilation, int64_t dilation_len_,
    int64_t groups, const char* binary_attr, double* alpha, const char** unary_attr, const double** unary_scalars,
    int64_t unary_scalars_len_, const char** unary_algorithm, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    ConvCall c;
    AOTIRT_RETURN_IF_ERROR(conv_common(X, W, B, padding, padding_len_, stride, stride_len_, dilation, dilation_len_,
                                       groups, c));
    AOTIRT_ASSIGN_OR_RETURN(c.other, require_tensor(other, "other"));
    AOTIRT_ENSURE(binary_attr != nullptr && std::string(binary_attr) == "add", kInvalidArgument,
                  "the in-place convolution accumulates with 'add' only, got '{}'",
                  binary_attr ? binary_attr : "(null)");
    // other = unary(conv(X) + alpha * other): oneDNN's sum post-op.
    AOTIRT_ASSIGN_OR_RETURN(c.ops.sum_scale, read_alpha(alpha));
    c.ops.sum = true;
    c.in_place = true;
    AOTIRT_ASSIGN_OR_RETURN(c.ops.unary, parse_unary(deref(unary_attr), unary_scalars, unary_scalars_len_,
                                                     deref_alg(unary_algorithm)));
    return run_conv(c, ret0);
  });
}

AOTITorchError aoti_torch_cpu_mkldnn__convolution_transpose_pointwise(
    AtenTensorHandle X, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding, int64_t padding_len_,
    const int64_t* output_padding, int64_t output_padding_len_, const int64_t* stride, int64_t stride_len_,
    const int64_t* dilation, int64_t dilation_len_, int64_t groups, const char* attr, const double** scalars,
    int64_t scalars_len_, const char** algorithm, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(UnaryPostOp unary, parse_unary(attr, scalars, scalars_len_, deref_alg(algorithm)));
    return run_deconv(X, W, B, padding, padding_len_, output_padding, output_padding_len_, stride, stride_len_,
                      dilation, dilation_len_, groups, unary, ret0);
  });
}

AOTITorchError aoti_torch_cpu__linear_pointwise(AtenTensorHandle X, AtenTensorHandle W, AtenTensorHandle* B,
                                                const char* attr, const double** scalars, int64_t scalars_len_,
                                                const char** algorithm, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* x, require_tensor(X, "X"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* w, require_tensor(W, "W"));
    AOTIRT_ASSIGN_OR_RETURN(WeightInfo wi, read_weight(*w));
    PostOps ops;
    AOTIRT_ASSIGN_OR_RETURN(ops.unary, parse_unary(attr, scalars, scalars_len_, deref_alg(algorithm)));
    return run_linear(*x, wi, B, ops, nullptr, ret0);
  });
}

AOTITorchError aoti_torch_cpu__linear_pointwise_binary(AtenTensorHandle X, AtenTensorHandle other,
                                                       AtenTensorHandle W, AtenTensorHandle* B, const char* attr,
                                                       AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* x, require_tensor(X, "X"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* o, require_tensor(other, "other"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* w, require_tensor(W, "W"));
    AOTIRT_ASSIGN_OR_RETURN(WeightInfo wi, read_weight(*w));
    PostOps ops;
    AOTIRT_ASSIGN_OR_RETURN(ops.binary_alg, parse_binary(attr));
    ops.binary = true;
    return run_linear(*x, wi, B, ops, o, ret0);
  });
}

}  // extern "C"

#else  // !AOTIRT_WITH_ONEDNN

#include "base/status.h"

namespace aotirt {
namespace cpu_ops {

Status onednn_convolution_into(const TensorImpl&, const TensorImpl&, const TensorImpl*, const int64_t*,
                               const int64_t*, const int64_t*, int64_t, const TensorImpl&) {
  return AOTIRT_STATUS(kUnavailable, "this build of aotirt has no oneDNN");
}

Status onednn_matmul_into(const TensorImpl&, const TensorImpl&, const TensorImpl&) {
  return AOTIRT_STATUS(kUnavailable, "this build of aotirt has no oneDNN");
}

Status onednn_open() { return AOTIRT_STATUS(kUnavailable, "this build of aotirt has no oneDNN"); }

void onednn_release_primitives() {}

}  // namespace cpu_ops
}  // namespace aotirt

#endif  // AOTIRT_WITH_ONEDNN
