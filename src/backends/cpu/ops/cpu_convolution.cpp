// CPU fallback for aten::convolution: 1-d, 2-d and 3-d, strided, padded,
// dilated, grouped and transposed. Every case runs as 3-d internally (1-d and
// 2-d get leading spatial dims of size one) through im2col + GEMM, or GEMM +
// col2im for the transposed case.
#include <algorithm>
#include <vector>

#include "backends/cpu/ops/cpu_onednn.h"
#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/host_copy.h"
#include "device/device.h"
#include "ops/conv_args.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

constexpr int kMaxSpatial = 3;

// Geometry of one convolution with spatial dims padded to three.
struct ConvGeometry {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t groups = 1;
  int64_t in_size[kMaxSpatial] = {1, 1, 1};
  int64_t out_size[kMaxSpatial] = {1, 1, 1};
  int64_t kernel[kMaxSpatial] = {1, 1, 1};
  int64_t stride[kMaxSpatial] = {1, 1, 1};
  int64_t padding[kMaxSpatial] = {0, 0, 0};
  int64_t dilation[kMaxSpatial] = {1, 1, 1};
  bool transposed = false;

  int64_t kernel_volume() const { return kernel[0] * kernel[1] * kernel[2]; }
  int64_t in_volume() const { return in_size[0] * in_size[1] * in_size[2]; }
  int64_t out_volume() const { return out_size[0] * out_size[1] * out_size[2]; }
};

// Unfolds one group of one image, x [C, iD, iH, iW], into col
// [C * kvol, oD * oH * oW], zero where the window reaches into padding.
// Each (channel, kernel offset) pair fills its own row of col, so the rows
// are split across OpenMP threads (the pool the model's kernels use too).
template <class T>
void im2col(const T* x, int64_t channels, const ConvGeometry& g, T* col) {
  const int64_t kvol = g.kernel_volume();
  const int64_t oh_n = g.out_size[1], ow_n = g.out_size[2];
  const int64_t row_len = g.out_size[0] * oh_n * ow_n;
#pragma omp parallel for schedule(static) if (channels * kvol * row_len > 32768)
  for (int64_t r = 0; r < channels * kvol; ++r) {
    const int64_t c = r / kvol, k = r % kvol;
    const int64_t kd = k / (g.kernel[1] * g.kernel[2]);
    const int64_t kh = (k / g.kernel[2]) % g.kernel[1];
    const int64_t kw = k % g.kernel[2];
    const T* xc = x + c * g.in_volume();
    T* dst = col + r * row_len;
    // Output columns whose input column lies inside the image: [ow_lo, ow_hi).
    // With stride 1 they are a contiguous run of the input row.
    const int64_t off_w = kw * g.dilation[2] - g.padding[2];
    int64_t ow_lo = 0, ow_hi = ow_n;
    while (ow_lo < ow_n && ow_lo * g.stride[2] + off_w < 0) ++ow_lo;
    while (ow_hi > ow_lo && (ow_hi - 1) * g.stride[2] + off_w >= g.in_size[2]) --ow_hi;
    for (int64_t od = 0; od < g.out_size[0]; ++od) {
      const int64_t id = od * g.stride[0] - g.padding[0] + kd * g.dilation[0];
      for (int64_t oh = 0; oh < oh_n; ++oh, dst += ow_n) {
        const int64_t ih = oh * g.stride[1] - g.padding[1] + kh * g.dilation[1];
        if (id < 0 || id >= g.in_size[0] || ih < 0 || ih >= g.in_size[1]) {
          std::fill(dst, dst + ow_n, T(0));
          continue;
        }
        const T* row = xc + (id * g.in_size[1] + ih) * g.in_size[2];
        std::fill(dst, dst + ow_lo, T(0));
        if (g.stride[2] == 1) {
          std::copy(row + ow_lo + off_w, row + ow_hi + off_w, dst + ow_lo);
        } else {
          for (int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow] = row[ow * g.stride[2] + off_w];
        }
        std::fill(dst + ow_hi, dst + ow_n, T(0));
      }
    }
  }
}

// The adjoint of im2col for the transposed case: col [C * kvol, iD * iH * iW]
// is scattered (added) into y [C, oD, oH, oW]. Here the input grid plays the
// role of the forward convolution's output grid.
template <class T>
void col2im_add(const T* col, int64_t channels, const ConvGeometry& g, T* y) {
  const T* src = col;
  for (int64_t c = 0; c < channels; ++c) {
    T* yc = y + c * g.out_volume();
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          for (int64_t id = 0; id < g.in_size[0]; ++id) {
            const int64_t od = id * g.stride[0] - g.padding[0] + kd * g.dilation[0];
            if (od < 0 || od >= g.out_size[0]) {
              src += g.in_size[1] * g.in_size[2];
              continue;
            }
            for (int64_t ih = 0; ih < g.in_size[1]; ++ih) {
              const int64_t oh = ih * g.stride[1] - g.padding[1] + kh * g.dilation[1];
              if (oh < 0 || oh >= g.out_size[1]) {
                src += g.in_size[2];
                continue;
              }
              T* row = yc + (od * g.out_size[1] + oh) * g.out_size[2];
              for (int64_t iw = 0; iw < g.in_size[2]; ++iw, ++src) {
                const int64_t ow = iw * g.stride[2] - g.padding[2] + kw * g.dilation[2];
                if (ow >= 0 && ow < g.out_size[2]) row[ow] += *src;
              }
            }
          }
        }
  }
}

// Fills each channel plane of y [C, vol] with its bias, or zero.
template <class T>
void init_planes(T* y, int64_t channels, int64_t vol, const T* bias) {
  for (int64_t c = 0; c < channels; ++c) std::fill(y + c * vol, y + (c + 1) * vol, bias ? bias[c] : T(0));
}

// x [N, Cin, in...], w (contiguous, compute dtype), y [N, Cout, out...] contiguous.
template <class T>
void conv_forward(const ConvGeometry& g, const T* x, const T* w, const T* bias, T* y) {
  const int64_t cin_g = g.in_channels / g.groups, cout_g = g.out_channels / g.groups;
  const int64_t kvol = g.kernel_volume(), in_vol = g.in_volume(), out_vol = g.out_volume();
  const int64_t rows = cin_g * kvol;
  // A 1x1x1 kernel with unit stride and no padding reads the input as is.
  bool pointwise = kvol == 1;
  for (int i = 0; i < kMaxSpatial; ++i) pointwise = pointwise && g.stride[i] == 1 && g.padding[i] == 0;
  std::vector<T> col(pointwise ? 0 : static_cast<size_t>(rows * out_vol));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T* xg = x + (n * g.in_channels + grp * cin_g) * in_vol;
      T* yg = y + (n * g.out_channels + grp * cout_g) * out_vol;
      const T* wg = w + grp * cout_g * rows;
      init_planes(yg, cout_g, out_vol, bias ? bias + grp * cout_g : nullptr);
      const T* b = xg;
      if (!pointwise) {
        im2col(xg, cin_g, g, col.data());
        b = col.data();
      }
      // y_g [cout_g, out_vol] += w_g [cout_g, rows] @ col [rows, out_vol]
      gemm<T>(false, false, cout_g, out_vol, rows, T(1), wg, std::max<int64_t>(rows, 1), b,
              std::max<int64_t>(out_vol, 1), T(1), yg, std::max<int64_t>(out_vol, 1));
    }
  }
}

// Transposed: w is [Cin, Cout/groups, k...].
template <class T>
void conv_transposed(const ConvGeometry& g, const T* x, const T* w, const T* bias, T* y) {
  const int64_t cin_g = g.in_channels / g.groups, cout_g = g.out_channels / g.groups;
  const int64_t kvol = g.kernel_volume(), in_vol = g.in_volume(), out_vol = g.out_volume();
  const int64_t rows = cout_g * kvol;
  std::vector<T> col(static_cast<size_t>(rows * in_vol));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T* xg = x + (n * g.in_channels + grp * cin_g) * in_vol;
      T* yg = y + (n * g.out_channels + grp * cout_g) * out_vol;
      const T* wg = w + grp * cin_g * rows;
      init_planes(yg, cout_g, out_vol, bias ? bias + grp * cout_g : nullptr);
      // col [rows, in_vol] = w_g^T [rows, cin_g] @ x_g [cin_g, in_vol]
      gemm<T>(true, false, rows, in_vol, cin_g, T(1), wg, std::max<int64_t>(rows, 1), xg,
              std::max<int64_t>(in_vol, 1), T(0), col.data(), std::max<int64_t>(in_vol, 1));
      col2im_add(col.data(), cout_g, g, yg);
    }
  }
}

// The geometry of |a| (the op layer's checked arguments) on the CPU.
Result<ConvGeometry> plan(const ops::ConvArgs& a) {
  const TensorImpl& in = *a.input;
  AOTIRT_RETURN_IF_ERROR(check_cpu(in, "input"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.weight, "weight"));
  if (a.bias) AOTIRT_RETURN_IF_ERROR(check_cpu(*a.bias, "bias"));
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(in.dtype(), "input"));
  const int64_t off = kMaxSpatial - a.spatial;
  ConvGeometry g;
  g.transposed = a.transposed;
  g.groups = a.groups;
  g.batch = a.batch;
  g.in_channels = a.in_channels;
  g.out_channels = a.out_channels;
  for (int64_t i = 0; i < a.spatial; ++i) {
    g.stride[off + i] = a.stride[i];
    g.padding[off + i] = a.padding[i];
    g.dilation[off + i] = a.dilation[i];
    g.in_size[off + i] = in.sizes()[2 + i];
    g.kernel[off + i] = a.weight->sizes()[2 + i];
    g.out_size[off + i] = a.out_sizes[2 + i];
  }
  return g;
}

template <class T>
void run(const ConvGeometry& g, const TensorImpl& x, const TensorImpl& w, const TensorImpl* b,
         const TensorImpl& y) {
  const T* px = static_cast<const T*>(x.data_ptr());
  const T* pw = static_cast<const T*>(w.data_ptr());
  const T* pb = b ? static_cast<const T*>(b->data_ptr()) : nullptr;
  T* py = static_cast<T*>(y.data_ptr());
  if (g.transposed)
    conv_transposed(g, px, pw, pb, py);
  else
    conv_forward(g, px, pw, pb, py);
}

Status convolution(const ops::ConvArgs& a, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(ConvGeometry g, plan(a));
  const TensorImpl& in = *a.input;
  const DType dtype = in.dtype();
  const DType ct = compute_dtype(dtype);
  const int64_t spatial = a.spatial;
  const DimVector& out_sizes = a.out_sizes;
  // PyTorch's layout on the CPU: channels-last when the input or the weight
  // is, for 2-d, and for 3-d on the oneDNN path (which float64 does not take).
  bool channels_last = (in.dim() == 4 || (in.dim() == 5 && dtype != DType::kFloat64)) &&
                       (is_channels_last(in.sizes(), in.strides()) ||
                        is_channels_last(a.weight->sizes(), a.weight->strides()));
  DimVector out_strides = channels_last ? channels_last_strides(out_sizes) : contiguous_strides(out_sizes);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(out_sizes, out_strides, dtype, DeviceId{}));

  // oneDNN's kernels where they apply, as in PyTorch; im2col and BLAS when
  // this build or machine has no oneDNN, and for what oneDNN lacks.
  if (out.numel() > 0 && !g.transposed && dtype != DType::kFloat64) {
    const int64_t off = kMaxSpatial - spatial;
    Status st = onednn_convolution_into(in, *a.weight, a.bias, g.stride + off, g.padding + off, g.dilation + off,
                                        g.groups, out);
    if (st.ok()) {
      *ret0 = new_handle(std::move(out));
      return Status();
    }
    if (st.code() != StatusCode::kUnavailable && st.code() != StatusCode::kUnimplemented) return st;
  }
  if (out.numel() > 0) {
    AOTIRT_RETURN_IF_ERROR(ensure_blas());
    AOTIRT_RETURN_IF_ERROR(check_blas_int(g.out_channels * g.kernel_volume(), "rows"));
    AOTIRT_RETURN_IF_ERROR(check_blas_int(g.in_channels * g.kernel_volume(), "rows"));
    AOTIRT_RETURN_IF_ERROR(check_blas_int(std::max(g.in_volume(), g.out_volume()), "columns"));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, contiguous_as(in, ct));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl w, contiguous_as(*a.weight, ct));
    TensorImpl bias_staged;
    if (a.bias) {
      AOTIRT_ASSIGN_OR_RETURN(bias_staged, contiguous_as(*a.bias, ct));
    }
    TensorImpl y = out;
    const bool direct = dtype == ct && !channels_last;
    if (!direct) {
      AOTIRT_ASSIGN_OR_RETURN(y, empty_contiguous(out_sizes, ct, DeviceId{}));
    }
    if (ct == DType::kFloat64)
      run<double>(g, x, w, a.bias ? &bias_staged : nullptr, y);
    else
      run<float>(g, x, w, a.bias ? &bias_staged : nullptr, y);
    if (!direct) AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, y));
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_convolution(AtenTensorHandle input, AtenTensorHandle weight,
                                          AtenTensorHandle* bias, const int64_t* stride, int64_t stride_len_,
                                          const int64_t* padding, int64_t padding_len_,
                                          const int64_t* dilation, int64_t dilation_len_, int32_t transposed,
                                          const int64_t* output_padding, int64_t output_padding_len_,
                                          int64_t groups, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::ConvArgs a,
                            ops::conv_args(input, weight, bias, stride, stride_len_, padding, padding_len_, dilation,
                                           dilation_len_, transposed != 0, output_padding, output_padding_len_,
                                           groups));
    return convolution(a, ret0);
  });
}

}  // extern "C"
