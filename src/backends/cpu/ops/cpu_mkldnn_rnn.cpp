// aten::mkldnn_rnn_layer, the form Inductor gives one layer of nn.LSTM on a
// CPU with oneDNN: oneDNN's LSTM forward primitive over one direction. The
// weights are torch's plain w_ih [4H, I] and w_hh [4H, H] (gates i, f, g, o,
// the order oneDNN's LSTM uses too), read through strided descriptors in
// oneDNN's [layers, directions, input, gates, hidden] order and reordered
// for the primitive; the two biases are summed, as oneDNN takes one.
// Only built when CMake found oneDNN (AOTIRT_WITH_ONEDNN).
#include "backends/cpu/ops/cpu_onednn.h"

#if AOTIRT_WITH_ONEDNN

#include <fmt/format.h>

#include <string>
#include <vector>

#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "device/device.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

constexpr int64_t kModeLstm = 2;  // torch's RNN mode numbers: RNN_RELU 0, RNN_TANH 1, LSTM 2, GRU 3

// A dense float32 copy of a 2-D [N, H] or 3-D [1, N, H] state.
Result<TensorImpl> read_state(const TensorImpl& t, int64_t n, int64_t h, const char* what) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(t, what));
  AOTIRT_ENSURE(t.dtype() == DType::kFloat32, kUnimplemented, "'{}' is {}; aotirt's LSTM layer takes float32", what,
                dtype_name(t.dtype()));
  const bool ok = (t.dim() == 2 && t.sizes()[0] == n && t.sizes()[1] == h) ||
                  (t.dim() == 3 && t.sizes()[0] == 1 && t.sizes()[1] == n && t.sizes()[2] == h);
  AOTIRT_ENSURE(ok, kInvalidArgument, "'{}' has shape {}, expected [{}, {}]", what, shape_str(t), n, h);
  return contiguous_as(t, DType::kFloat32);
}

Status check_weight(const TensorImpl& w, int64_t rows, int64_t cols, const char* what) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(w, what));
  AOTIRT_ENSURE(!w.storage() || w.storage()->opaque() == nullptr, kUnimplemented,
                "'{}' is a prepacked (_mkldnn) tensor; the LSTM layer takes plain weights", what);
  AOTIRT_ENSURE(w.dtype() == DType::kFloat32, kUnimplemented, "'{}' is {}; aotirt's LSTM layer takes float32", what,
                dtype_name(w.dtype()));
  AOTIRT_ENSURE(w.dim() == 2 && w.sizes()[0] == rows && w.sizes()[1] == cols, kInvalidArgument,
                "'{}' has shape {}, expected [{}, {}]", what, shape_str(w), rows, cols);
  return Status();
}

Status check_bias(const TensorImpl& b, int64_t n, const char* what) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(b, what));
  AOTIRT_ENSURE(b.dtype() == DType::kFloat32, kUnimplemented, "'{}' is {}; aotirt's LSTM layer takes float32", what,
                dtype_name(b.dtype()));
  AOTIRT_ENSURE(b.dim() == 1 && b.sizes()[0] == n, kInvalidArgument, "'{}' has shape {}, expected [{}]", what,
                shape_str(b), n);
  return Status();
}

// |w| ([4H, cols], rows gate-major) as oneDNN's [1, 1, cols, 4, H] weights.
Result<MemoryDesc> weight_desc(const TensorImpl& w, int64_t cols, int64_t hidden) {
  const int64_t s0 = w.strides()[0], s1 = w.strides()[1];
  const int64_t dims[5] = {1, 1, cols, 4, hidden};
  const int64_t strides[5] = {4 * hidden * s0, 4 * hidden * s0, s1, hidden * s0, s0};
  return strided_desc(dims, strides, 5, DType::kFloat32);
}

Status run_lstm_layer(AtenTensorHandle input, AtenTensorHandle weight0, AtenTensorHandle weight1,
                      AtenTensorHandle weight2, AtenTensorHandle weight3, AtenTensorHandle hx_,
                      AtenTensorHandle cx_, bool reverse, int64_t batch_sizes_len, int64_t mode,
                      int64_t hidden_size, bool has_biases, bool train, AtenTensorHandle* ret0,
                      AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_REQUIRE_OUT(ret2);
  AOTIRT_REQUIRE_OUT(ret3);
  AOTIRT_ENSURE(mode == kModeLstm, kUnimplemented, "mode {} (aotirt's oneDNN RNN layer is LSTM, mode 2)", mode);
  AOTIRT_ENSURE(!train, kUnimplemented, "train=True (the layer's training workspace is not produced)");
  AOTIRT_ENSURE(batch_sizes_len == 0, kUnimplemented, "batch_sizes of length {} (packed sequences)",
                batch_sizes_len);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* x_in, require_tensor(input, "input"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* w_ih, require_tensor(weight0, "weight0"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* w_hh, require_tensor(weight1, "weight1"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* b_ih, require_tensor(weight2, "weight2"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* b_hh, require_tensor(weight3, "weight3"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* hx, require_tensor(hx_, "hx_"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* cx, require_tensor(cx_, "cx_"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*x_in, "input"));
  AOTIRT_ENSURE(x_in->dtype() == DType::kFloat32, kUnimplemented, "'input' is {}; aotirt's LSTM layer takes float32",
                dtype_name(x_in->dtype()));
  // The layer always reads [T, N, I]: batch_first is the caller's to apply.
  AOTIRT_ENSURE(x_in->dim() == 3, kInvalidArgument, "'input' has shape {}, expected [T, N, I]", shape_str(*x_in));
  const int64_t t_len = x_in->sizes()[0], n = x_in->sizes()[1], in = x_in->sizes()[2];
  const int64_t h = hidden_size;
  AOTIRT_ENSURE(h > 0, kInvalidArgument, "hidden_size must be positive, got {}", h);
  AOTIRT_ENSURE(t_len > 0 && n > 0 && in > 0, kInvalidArgument,
                "'input' {} is empty (oneDNN's LSTM, as torch's, runs no empty sequence)", shape_str(*x_in));
  AOTIRT_RETURN_IF_ERROR(check_weight(*w_ih, 4 * h, in, "weight0"));
  AOTIRT_RETURN_IF_ERROR(check_weight(*w_hh, 4 * h, h, "weight1"));
  AOTIRT_RETURN_IF_ERROR(check_bias(*b_ih, 4 * h, "weight2"));
  AOTIRT_RETURN_IF_ERROR(check_bias(*b_hh, 4 * h, "weight3"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl h0, read_state(*hx, n, h, "hx_"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl c0, read_state(*cx, n, h, "cx_"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, contiguous_as(*x_in, DType::kFloat32));

  // One bias: b_ih + b_hh, or zeros when the layer has none.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl bias, empty_contiguous(DimVector{4 * h}, DType::kFloat32, DeviceId{}));
  {
    float* b = static_cast<float*>(bias.data_ptr());
    const float* bi = static_cast<const float*>(b_ih->data_ptr());
    const float* bh = static_cast<const float*>(b_hh->data_ptr());
    const int64_t si = b_ih->strides()[0], sh = b_hh->strides()[0];
    for (int64_t i = 0; i < 4 * h; ++i) b[i] = has_biases ? bi[i * si] + bh[i * sh] : 0.f;
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl y, empty_contiguous(DimVector{t_len, n, h}, DType::kFloat32, DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl hy, empty_contiguous(hx->sizes(), DType::kFloat32, DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl cy, empty_contiguous(cx->sizes(), DType::kFloat32, DeviceId{}));
  // Inference keeps no workspace: an empty one stands in for torch's.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl ws, empty_contiguous(DimVector{0}, DType::kUInt8, DeviceId{}));

  AOTIRT_ASSIGN_OR_RETURN(OnednnContext * ctx, onednn_context());
  const OnednnApi& api = ctx->api();
  const std::string key = fmt::format("lstm t{} n{} i{} h{} r{}", t_len, n, in, h, reverse);
  auto make = [&]() -> Result<std::shared_ptr<OnednnPrimitive>> {
    MemoryDesc src_layer, src_iter, src_iter_c, w_layer, w_iter, bias_md, dst_layer, dst_iter, dst_iter_c;
    auto plain = [&](MemoryDesc& md, std::initializer_list<int64_t> dims, dnnl_format_tag_t tag) -> Status {
      dnnl_dims_t d;
      int nd = 0;
      for (int64_t v : dims) d[nd++] = v;
      AOTIRT_DNNL_CHECK(api.dnnl_memory_desc_create_with_tag(&md.md, nd, d, dnnl_f32, tag), "an LSTM descriptor");
      return Status();
    };
    AOTIRT_RETURN_IF_ERROR(plain(src_layer, {t_len, n, in}, dnnl_tnc));
    AOTIRT_RETURN_IF_ERROR(plain(src_iter, {1, 1, n, h}, dnnl_ldnc));
    AOTIRT_RETURN_IF_ERROR(plain(src_iter_c, {1, 1, n, h}, dnnl_ldnc));
    AOTIRT_RETURN_IF_ERROR(plain(w_layer, {1, 1, in, 4, h}, dnnl_format_tag_any));
    AOTIRT_RETURN_IF_ERROR(plain(w_iter, {1, 1, h, 4, h}, dnnl_format_tag_any));
    AOTIRT_RETURN_IF_ERROR(plain(bias_md, {1, 1, 4, h}, dnnl_ldgo));
    AOTIRT_RETURN_IF_ERROR(plain(dst_layer, {t_len, n, h}, dnnl_tnc));
    AOTIRT_RETURN_IF_ERROR(plain(dst_iter, {1, 1, n, h}, dnnl_ldnc));
    AOTIRT_RETURN_IF_ERROR(plain(dst_iter_c, {1, 1, n, h}, dnnl_ldnc));
    dnnl_primitive_attr_t attr = nullptr;
    AOTIRT_DNNL_CHECK(api.dnnl_primitive_attr_create(&attr), "an attribute");
    struct AttrGuard {
      const OnednnApi& api;
      dnnl_primitive_attr_t a;
      ~AttrGuard() { api.dnnl_primitive_attr_destroy(a); }
    } guard{api, attr};
    AOTIRT_DNNL_CHECK(api.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user),
                      "the scratchpad mode");
    dnnl_primitive_desc_t pd = nullptr;
    AOTIRT_DNNL_CHECK(api.dnnl_lstm_forward_primitive_desc_create(
                          &pd, ctx->engine(), dnnl_forward_inference,
                          reverse ? dnnl_unidirectional_right2left : dnnl_unidirectional_left2right, src_layer.md,
                          src_iter.md, src_iter_c.md, w_layer.md, w_iter.md, nullptr, nullptr, bias_md.md,
                          dst_layer.md, dst_iter.md, dst_iter_c.md, dnnl_rnn_flags_undef, attr),
                      "this LSTM layer");
    return ctx->finish(pd, {DNNL_ARG_SRC_LAYER, DNNL_ARG_SRC_ITER, DNNL_ARG_SRC_ITER_C, DNNL_ARG_WEIGHTS_ITER,
                            DNNL_ARG_BIAS, DNNL_ARG_DST_LAYER, DNNL_ARG_DST_ITER, DNNL_ARG_DST_ITER_C});
  };
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<OnednnPrimitive> prim, ctx->primitive(key, make));
  // The weights in the primitive's layouts, reordered from torch's on each
  // call (they may be plain inputs that change between calls).
  AOTIRT_ASSIGN_OR_RETURN(MemoryDesc from_layer, weight_desc(*w_ih, in, h));
  AOTIRT_ASSIGN_OR_RETURN(MemoryDesc from_iter, weight_desc(*w_hh, h, h));
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<const void> wl,
                          ctx->reorder(from_layer.md, w_ih->data_ptr(), prim->weights_md));
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<const void> wi,
                          ctx->reorder(from_iter.md, w_hh->data_ptr(), prim->md_for(DNNL_ARG_WEIGHTS_ITER)));
  std::vector<std::pair<int, void*>> args{{DNNL_ARG_SRC_LAYER, x.data_ptr()},
                                          {DNNL_ARG_SRC_ITER, h0.data_ptr()},
                                          {DNNL_ARG_SRC_ITER_C, c0.data_ptr()},
                                          {DNNL_ARG_WEIGHTS_LAYER, const_cast<void*>(wl.get())},
                                          {DNNL_ARG_WEIGHTS_ITER, const_cast<void*>(wi.get())},
                                          {DNNL_ARG_BIAS, bias.data_ptr()},
                                          {DNNL_ARG_DST_LAYER, y.data_ptr()},
                                          {DNNL_ARG_DST_ITER, hy.data_ptr()},
                                          {DNNL_ARG_DST_ITER_C, cy.data_ptr()}};
  AOTIRT_RETURN_IF_ERROR(ctx->execute(*prim, args));
  *ret0 = new_handle(std::move(y));
  *ret1 = new_handle(std::move(hy));
  *ret2 = new_handle(std::move(cy));
  *ret3 = new_handle(std::move(ws));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_mkldnn_rnn_layer(AtenTensorHandle input, AtenTensorHandle weight0,
                                               AtenTensorHandle weight1, AtenTensorHandle weight2,
                                               AtenTensorHandle weight3, AtenTensorHandle hx_, AtenTensorHandle cx_,
                                               int32_t reverse, const int64_t* batch_sizes,
                                               int64_t batch_sizes_len_, int64_t mode, int64_t hidden_size,
                                               int64_t num_layers, int32_t has_biases, int32_t bidirectional,
                                               int32_t batch_first, int32_t train, AtenTensorHandle* ret0,
                                               AtenTensorHandle* ret1, AtenTensorHandle* ret2,
                                               AtenTensorHandle* ret3) noexcept {
  return shim_call(__func__, [&]() -> Status {
    // torch's layer reads neither num_layers, bidirectional nor batch_first:
    // the caller runs one layer and direction at a time on [T, N, I].
    (void)batch_sizes, (void)num_layers, (void)bidirectional, (void)batch_first;
    return run_lstm_layer(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse != 0, batch_sizes_len_, mode,
                          hidden_size, has_biases != 0, train != 0, ret0, ret1, ret2, ret3);
  });
}

}  // extern "C"

#endif  // AOTIRT_WITH_ONEDNN
