// CPU pooling fallback ops (c_shim_cpu.h): avg_pool2d/3d, adaptive avg and
// max pooling, max_pool2d/3d_with_indices, fractional_max_pool2d/3d and
// max_unpool2d/3d. Every input is read in place through its strides as a
// 5-d [N, C, T, H, W] view (the op layer's PoolArgs), and outputs are written
// through theirs, so channels-last and transposed inputs need no copy. The
// N x C planes are independent and large inputs split them over OpenMP
// threads. Within a window the order of the sums and the accumulation type
// follow torch's CPU kernels (float for float32 and the half types in the
// 2-d kernels; the 3-d adaptive average accumulates in the storage type, as
// torch's older 3-d kernel does), so results match torch bit for bit; max
// pooling keeps the last NaN of a window, as torch does, and reports
// indices flattened over the spatial dims.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/dtype.h"
#include "device/device.h"
#include "ops/pooling_args.h"
#include "shim/abi/cpu_pooling.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;
using ops::IntList;
using ops::PoolArgs;
using ops::PoolKind;

namespace {

// Element access per dtype: the stored type S, the type A torch computes
// in, and round(), which gives an A value the precision of S (torch's
// arithmetic directly on a half type rounds after every operation).
struct F32 {
  using S = float;
  using A = float;
  static A load(S v) { return v; }
  static S store(A v) { return v; }
  static A round(A v) { return v; }
};
struct F64 {
  using S = double;
  using A = double;
  static A load(S v) { return v; }
  static S store(A v) { return v; }
  static A round(A v) { return v; }
};
struct BF16 {
  using S = uint16_t;
  using A = float;
  static A load(S v) { return bf16_to_float(v); }
  static S store(A v) { return float_to_bf16(v); }
  static A round(A v) { return bf16_to_float(float_to_bf16(v)); }
};
struct F16 {
  using S = uint16_t;
  using A = float;
  static A load(S v) { return half_to_float(v); }
  static S store(A v) { return float_to_half(v); }
  static A round(A v) { return half_to_float(float_to_half(v)); }
};
template <class I>
struct Int {
  using S = I;
  using A = int64_t;
  static A load(S v) { return v; }
  static S store(A v) { return static_cast<S>(v); }
  static A round(A v) { return v; }
};

template <class Fn>
Status dispatch(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: fn(F32{}); return Status();
    case DType::kFloat64: fn(F64{}); return Status();
    case DType::kBFloat16: fn(BF16{}); return Status();
    case DType::kFloat16: fn(F16{}); return Status();
    case DType::kInt64: fn(Int<int64_t>{}); return Status();
    case DType::kInt32: fn(Int<int32_t>{}); return Status();
    case DType::kInt16: fn(Int<int16_t>{}); return Status();
    case DType::kInt8: fn(Int<int8_t>{}); return Status();
    case DType::kUInt8: fn(Int<uint8_t>{}); return Status();
    default: return AOTIRT_STATUS(kUnimplemented, "dtype {} is not pooled on the CPU", dtype_name(dtype));
  }
}

template <class A>
bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// The value a max starts from: -inf, or the lowest integer.
template <class A>
A lowest() {
  if constexpr (std::is_floating_point_v<A>) {
    return -std::numeric_limits<A>::infinity();
  } else {
    return std::numeric_limits<A>::lowest();
  }
}

// Runs body(plane) for each of the N x C planes, in parallel when there is
// enough work (|work| elements touched per plane).
template <class Body>
void for_each_plane(int64_t planes, int64_t work, Body&& body) {
  constexpr int64_t kParallelWork = int64_t{1} << 15;
  const bool parallel = planes > 1 && planes * work >= kParallelWork && omp_get_max_threads() > 1;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t p = 0; p < planes; ++p) body(p);
}

// The 5-d output strides of |a|'s outputs.
void out_strides5(const PoolArgs& a, int64_t os[5]) {
  ops::strides5(a.out_sizes, a.out_strides, a.spatial, a.batched, os);
}

int64_t out_plane_size(const PoolArgs& a) { return a.out[0] * a.out[1] * a.out[2]; }

// torch's adaptive pooling windows: [start, end) of output |o| of |out|
// over an input of |in|.
int64_t start_index(int64_t o, int64_t out, int64_t in) { return (o / out) * in + ((o % out) * in) / out; }
int64_t end_index(int64_t o, int64_t out, int64_t in) { return 1 + ((o + 1) * in - 1) / out; }

// A window of the input plane: [start, end) with a step per dim (T, H, W).
struct Window {
  int64_t start[3], end[3], step[3];
};

// The maximum of |w| over the plane at |in|: the value (bits kept) and its
// index flattened over T, H, W. A NaN wins and the last one stays, as in
// torch; an empty window gives the lowest value at the window's start.
template <class T>
void window_max(const PoolArgs& a, const typename T::S* in, const int64_t is[5], const Window& w,
                typename T::S* out_value, int64_t* out_index) {
  using A = typename T::A;
  const int64_t H = a.in[1], W = a.in[2];
  A best = lowest<A>();
  typename T::S best_raw = T::store(best);
  int64_t best_i = w.start[0] * H * W + w.start[1] * W + w.start[2];
  for (int64_t t = w.start[0]; t < w.end[0]; t += w.step[0])
    for (int64_t h = w.start[1]; h < w.end[1]; h += w.step[1])
      for (int64_t x = w.start[2]; x < w.end[2]; x += w.step[2]) {
        const typename T::S raw = in[t * is[2] + h * is[3] + x * is[4]];
        const A v = T::load(raw);
        if (v > best || is_nan(v)) {
          best = v;
          best_raw = raw;
          best_i = t * H * W + h * W + x;
        }
      }
  *out_value = best_raw;
  *out_index = best_i;
}

// Walks every output position of every plane, asking |window_of| for the
// window of (plane, ot, oh, ow), and writes the max and its index.
template <class T, class WindowOf>
void max_pool_planes(const PoolArgs& a, const TensorImpl& values, const TensorImpl& indices, WindowOf&& window_of) {
  using S = typename T::S;
  const S* in = static_cast<const S*>(a.self->data_ptr());
  S* vals = static_cast<S*>(values.data_ptr());
  int64_t* idx = static_cast<int64_t*>(indices.data_ptr());
  int64_t os[5];
  out_strides5(a, os);
  const int64_t* is = a.in_strides5;
  const int64_t window_size = std::max<int64_t>(1, a.kernel[0] * a.kernel[1] * a.kernel[2]);
  for_each_plane(a.batch * a.channels, out_plane_size(a) * window_size, [&](int64_t p) {
    const int64_t n = p / a.channels, c = p % a.channels;
    const S* plane = in + n * is[0] + c * is[1];
    const int64_t obase = n * os[0] + c * os[1];
    for (int64_t ot = 0; ot < a.out[0]; ++ot)
      for (int64_t oh = 0; oh < a.out[1]; ++oh)
        for (int64_t ow = 0; ow < a.out[2]; ++ow) {
          const Window w = window_of(p, ot, oh, ow);
          const int64_t o = obase + ot * os[2] + oh * os[3] + ow * os[4];
          window_max<T>(a, plane, is, w, vals + o, idx + o);
        }
  });
}

Status finish_pair(TensorImpl values, TensorImpl indices, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  AtenTensorHandle v = new_handle(std::move(values));
  AtenTensorHandle ix = nullptr;
  try {
    ix = new_handle(std::move(indices));
  } catch (...) {
    delete impl_of(v);
    throw;
  }
  *ret0 = v;
  *ret1 = ix;
  return Status();
}

// ---- avg_pool2d / avg_pool3d ----

template <class T>
void avg_pool(const PoolArgs& a, const TensorImpl& out) {
  using S = typename T::S;
  using A = typename T::A;
  const S* in = static_cast<const S*>(a.self->data_ptr());
  S* dst = static_cast<S*>(out.data_ptr());
  int64_t os[5];
  out_strides5(a, os);
  const int64_t* is = a.in_strides5;
  for_each_plane(a.batch * a.channels, out_plane_size(a) * a.kernel[0] * a.kernel[1] * a.kernel[2], [&](int64_t p) {
    const int64_t n = p / a.channels, c = p % a.channels;
    const S* plane = in + n * is[0] + c * is[1];
    const int64_t obase = n * os[0] + c * os[1];
    int64_t o3[3];
    for (o3[0] = 0; o3[0] < a.out[0]; ++o3[0])
      for (o3[1] = 0; o3[1] < a.out[1]; ++o3[1])
        for (o3[2] = 0; o3[2] < a.out[2]; ++o3[2]) {
          int64_t s[3], e[3], pool_size = 1, inside = 1;
          for (int d = 0; d < 3; ++d) {
            s[d] = o3[d] * a.stride[d] - a.pad[d];
            e[d] = std::min(s[d] + a.kernel[d], a.in[d] + a.pad[d]);
            pool_size *= e[d] - s[d];
            s[d] = std::max<int64_t>(s[d], 0);
            e[d] = std::min(e[d], a.in[d]);
            inside *= std::max<int64_t>(e[d] - s[d], 0);
          }
          S* o = dst + obase + o3[0] * os[2] + o3[1] * os[3] + o3[2] * os[4];
          if (inside == 0) {
            *o = T::store(A(0));
            continue;
          }
          const int64_t divide = a.has_divisor ? a.divisor : a.count_include_pad ? pool_size : inside;
          A sum = A(0);
          for (int64_t t = s[0]; t < e[0]; ++t)
            for (int64_t h = s[1]; h < e[1]; ++h)
              for (int64_t x = s[2]; x < e[2]; ++x) sum += T::load(plane[t * is[2] + h * is[3] + x * is[4]]);
          *o = T::store(sum / static_cast<A>(divide));
        }
  });
}

Status run_avg_pool(Result<PoolArgs> args, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(PoolArgs a, std::move(args));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(a.out_sizes, a.out_strides, a.self->dtype(), DeviceId{}));
  if (out.numel() > 0) AOTIRT_RETURN_IF_ERROR(dispatch(a.self->dtype(), [&](auto t) { avg_pool<decltype(t)>(a, out); }));
  *ret0 = new_handle(std::move(out));
  return Status();
}

// ---- max_pool2d/3d_with_indices ----

Status run_max_pool(Result<PoolArgs> args, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_ASSIGN_OR_RETURN(PoolArgs a, std::move(args));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl vals, empty_strided(a.out_sizes, a.out_strides, a.self->dtype(), DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl idx, empty_strided(a.out_sizes, a.out_strides, DType::kInt64, DeviceId{}));
  if (vals.numel() > 0) {
    auto window_of = [&](int64_t, int64_t ot, int64_t oh, int64_t ow) {
      Window w;
      const int64_t o3[3] = {ot, oh, ow};
      for (int d = 0; d < 3; ++d) {
        int64_t s = o3[d] * a.stride[d] - a.pad[d];
        w.end[d] = std::min(s + (a.kernel[d] - 1) * a.dilation[d] + 1, a.in[d]);
        while (s < 0) s += a.dilation[d];
        w.start[d] = s;
        w.step[d] = a.dilation[d];
      }
      return w;
    };
    AOTIRT_RETURN_IF_ERROR(
        dispatch(a.self->dtype(), [&](auto t) { max_pool_planes<decltype(t)>(a, vals, idx, window_of); }));
  }
  return finish_pair(std::move(vals), std::move(idx), ret0, ret1);
}

// ---- adaptive pooling ----

template <class T>
void adaptive_avg_pool(const PoolArgs& a, const TensorImpl& out) {
  using S = typename T::S;
  using A = typename T::A;
  const S* in = static_cast<const S*>(a.self->data_ptr());
  S* dst = static_cast<S*>(out.data_ptr());
  int64_t os[5];
  out_strides5(a, os);
  const int64_t* is = a.in_strides5;
  // torch's 3-d kernel sums and divides in the storage type; its 2-d kernels
  // sum in float and divide by the window's height, then its width, except
  // the channels-last one, which divides the channels it handles in whole
  // 32-byte vectors (AVX2, torch's usual CPU capability) by the window's
  // area and only the remaining channels by height, then width.
  const bool storage_math = a.spatial == 3;
  constexpr int64_t kLanes = std::is_same_v<typename T::S, uint16_t> ? 16 : 32 / static_cast<int64_t>(sizeof(A));
  const int64_t area_channels =
      a.spatial == 2 && a.batched && is_channels_last(a.self->sizes(), a.self->strides())
          ? a.channels - a.channels % kLanes
          : 0;
  for_each_plane(a.batch * a.channels, a.in[0] * a.in[1] * a.in[2], [&](int64_t p) {
    const int64_t n = p / a.channels, c = p % a.channels;
    const S* plane = in + n * is[0] + c * is[1];
    const int64_t obase = n * os[0] + c * os[1];
    int64_t o3[3];
    for (o3[0] = 0; o3[0] < a.out[0]; ++o3[0])
      for (o3[1] = 0; o3[1] < a.out[1]; ++o3[1])
        for (o3[2] = 0; o3[2] < a.out[2]; ++o3[2]) {
          int64_t s[3], e[3];
          for (int d = 0; d < 3; ++d) {
            s[d] = start_index(o3[d], a.out[d], a.in[d]);
            e[d] = end_index(o3[d], a.out[d], a.in[d]);
          }
          A sum = A(0);
          for (int64_t t = s[0]; t < e[0]; ++t)
            for (int64_t h = s[1]; h < e[1]; ++h)
              for (int64_t x = s[2]; x < e[2]; ++x) {
                sum += T::load(plane[t * is[2] + h * is[3] + x * is[4]]);
                if (storage_math) sum = T::round(sum);
              }
          A r;
          if (c < area_channels) {
            r = sum / static_cast<A>((e[1] - s[1]) * (e[2] - s[2]));
          } else if (storage_math) {
            r = T::round(sum / T::round(static_cast<A>(e[0] - s[0])));
            r = T::round(r / T::round(static_cast<A>(e[1] - s[1])));
            r = T::round(r / T::round(static_cast<A>(e[2] - s[2])));
          } else {
            r = sum / static_cast<A>(e[1] - s[1]) / static_cast<A>(e[2] - s[2]);
          }
          dst[obase + o3[0] * os[2] + o3[1] * os[3] + o3[2] * os[4]] = T::store(r);
        }
  });
}

Status run_adaptive_avg(Result<PoolArgs> args, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(PoolArgs a, std::move(args));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(a.out_sizes, a.out_strides, a.self->dtype(), DeviceId{}));
  if (out.numel() > 0)
    AOTIRT_RETURN_IF_ERROR(dispatch(a.self->dtype(), [&](auto t) { adaptive_avg_pool<decltype(t)>(a, out); }));
  *ret0 = new_handle(std::move(out));
  return Status();
}

Status run_adaptive_max(Result<PoolArgs> args, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_ASSIGN_OR_RETURN(PoolArgs a, std::move(args));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl vals, empty_strided(a.out_sizes, a.out_strides, a.self->dtype(), DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl idx, empty_strided(a.out_sizes, a.out_strides, DType::kInt64, DeviceId{}));
  if (vals.numel() > 0) {
    auto window_of = [&](int64_t, int64_t ot, int64_t oh, int64_t ow) {
      Window w;
      const int64_t o3[3] = {ot, oh, ow};
      for (int d = 0; d < 3; ++d) {
        w.start[d] = start_index(o3[d], a.out[d], a.in[d]);
        w.end[d] = end_index(o3[d], a.out[d], a.in[d]);
        w.step[d] = 1;
      }
      return w;
    };
    AOTIRT_RETURN_IF_ERROR(
        dispatch(a.self->dtype(), [&](auto t) { max_pool_planes<decltype(t)>(a, vals, idx, window_of); }));
  }
  return finish_pair(std::move(vals), std::move(idx), ret0, ret1);
}

// ---- fractional_max_pool2d/3d ----

// torch's generate_intervals, in T's arithmetic: the window starts along one
// dim for one plane's random |sample|.
template <class T>
bool fractional_starts(typename T::A sample, int64_t in, int64_t out, int64_t k, int64_t* starts) {
  using A = typename T::A;
  if (!std::isfinite(sample)) return false;
  if (out > 1) {
    const A alpha = T::round(T::round(static_cast<A>(in - k)) / T::round(static_cast<A>(out - 1)));
    const A base = T::round(sample * alpha);
    for (int64_t i = 0; i < out - 1; ++i) {
      const A at = T::round(T::round(T::round(static_cast<A>(i)) + sample) * alpha);
      if (!(std::fabs(at) < A(2147483647)) || !(std::fabs(base) < A(2147483647))) return false;
      starts[i] = static_cast<int64_t>(static_cast<int>(at)) - static_cast<int64_t>(static_cast<int>(base));
    }
  }
  if (out > 0) starts[out - 1] = in - k;
  for (int64_t i = 0; i < out; ++i)
    if (starts[i] < 0 || starts[i] + k > in) return false;
  return true;
}

template <class T>
Status fractional_max_pool(const PoolArgs& a, const TensorImpl& values, const TensorImpl& indices) {
  using S = typename T::S;
  const S* rs = static_cast<const S*>(a.aux->data_ptr());
  const int64_t planes = a.batch * a.channels;
  const int64_t span = a.out[0] + a.out[1] + a.out[2];
  // Every plane's window starts, computed and checked before the parallel
  // walk: a random sample that puts a window outside the input is refused.
  std::vector<int64_t> starts(static_cast<size_t>(planes * span));
  for (int64_t p = 0; p < planes; ++p) {
    const int64_t n = p / a.channels, c = p % a.channels;
    int64_t* st = starts.data() + p * span;
    for (int d = 0; d < 3; ++d) {
      int64_t* dst = st + (d == 0 ? 0 : d == 1 ? a.out[0] : a.out[0] + a.out[1]);
      if (d < 3 - a.spatial) {  // a 2-d input's single T position
        dst[0] = 0;
        continue;
      }
      // torch's samples run (W, H) for 2-d inputs and (T, H, W) for 3-d ones.
      const int j = a.spatial == 3 ? d : (d == 2 ? 0 : 1);
      const typename T::A sample = T::load(rs[n * a.aux_strides5[0] + c * a.aux_strides5[1] + j * a.aux_strides5[2]]);
      AOTIRT_ENSURE(fractional_starts<T>(sample, a.in[d], a.out[d], a.kernel[d], dst), kInvalidArgument,
                    "random_samples[{}, {}, {}] = {} places a pooling window outside the input (expected values in "
                    "[0, 1))",
                    n, c, j, static_cast<double>(sample));
    }
  }
  max_pool_planes<T>(a, values, indices, [&](int64_t p, int64_t ot, int64_t oh, int64_t ow) {
    const int64_t* st = starts.data() + p * span;
    Window w;
    const int64_t s3[3] = {st[ot], st[a.out[0] + oh], st[a.out[0] + a.out[1] + ow]};
    for (int d = 0; d < 3; ++d) {
      w.start[d] = s3[d];
      w.end[d] = s3[d] + a.kernel[d];
      w.step[d] = 1;
    }
    return w;
  });
  return Status();
}

Status run_fractional(Result<PoolArgs> args, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_ASSIGN_OR_RETURN(PoolArgs a, std::move(args));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.aux, "random_samples"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl vals, empty_strided(a.out_sizes, a.out_strides, a.self->dtype(), DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl idx, empty_strided(a.out_sizes, a.out_strides, DType::kInt64, DeviceId{}));
  if (vals.numel() > 0) {
    Status s;
    AOTIRT_RETURN_IF_ERROR(
        dispatch(a.self->dtype(), [&](auto t) { s = fractional_max_pool<decltype(t)>(a, vals, idx); }));
    AOTIRT_RETURN_IF_ERROR(s);
  }
  return finish_pair(std::move(vals), std::move(idx), ret0, ret1);
}

// ---- max_unpool2d/3d ----

template <class T>
Status max_unpool(const PoolArgs& a, const TensorImpl& out) {
  using S = typename T::S;
  const S* in = static_cast<const S*>(a.self->data_ptr());
  const int64_t* ind = static_cast<const int64_t*>(a.aux->data_ptr());
  S* dst = static_cast<S*>(out.data_ptr());
  int64_t os[5];
  out_strides5(a, os);
  const int64_t* is = a.in_strides5;
  const int64_t* xs = a.aux_strides5;
  const int64_t planes = a.batch * a.channels;
  const int64_t plane_out = out_plane_size(a);
  // Every index is checked before anything is written, so a bad one leaves
  // no half-filled output behind.
  for (int64_t p = 0; p < planes; ++p) {
    const int64_t n = p / a.channels, c = p % a.channels;
    const int64_t* ip = ind + n * xs[0] + c * xs[1];
    for (int64_t t = 0; t < a.in[0]; ++t)
      for (int64_t h = 0; h < a.in[1]; ++h)
        for (int64_t x = 0; x < a.in[2]; ++x) {
          const int64_t m = ip[t * xs[2] + h * xs[3] + x * xs[4]];
          AOTIRT_ENSURE(m >= 0 && m < plane_out, kInvalidArgument,
                        "found an invalid max index {} (the output planes are of size {})", m,
                        a.spatial == 3 ? fmt::format("{}x{}x{}", a.out[0], a.out[1], a.out[2])
                                       : fmt::format("{}x{}", a.out[1], a.out[2]));
        }
  }
  // Positions are visited in order within a plane, so when two share an
  // index the later one wins, as in torch.
  for_each_plane(planes, a.in[0] * a.in[1] * a.in[2], [&](int64_t p) {
    const int64_t n = p / a.channels, c = p % a.channels;
    const int64_t* ip = ind + n * xs[0] + c * xs[1];
    const S* vp = in + n * is[0] + c * is[1];
    S* op = dst + n * os[0] + c * os[1];
    for (int64_t t = 0; t < a.in[0]; ++t)
      for (int64_t h = 0; h < a.in[1]; ++h)
        for (int64_t x = 0; x < a.in[2]; ++x) {
          const int64_t m = ip[t * xs[2] + h * xs[3] + x * xs[4]];
          const int64_t mt = m / (a.out[1] * a.out[2]), mh = (m / a.out[2]) % a.out[1], mw = m % a.out[2];
          op[mt * os[2] + mh * os[3] + mw * os[4]] = vp[t * is[2] + h * is[3] + x * is[4]];
        }
  });
  return Status();
}

Status run_unpool(Result<PoolArgs> args, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(PoolArgs a, std::move(args));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.aux, "indices"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(a.out_sizes, a.out_strides, a.self->dtype(), DeviceId{}));
  // An empty output takes nothing, and torch then looks at no index.
  if (out.numel() > 0) {
    std::memset(out.data_ptr(), 0, out.nbytes());
    Status s;
    AOTIRT_RETURN_IF_ERROR(dispatch(a.self->dtype(), [&](auto t) { s = max_unpool<decltype(t)>(a, out); }));
    AOTIRT_RETURN_IF_ERROR(s);
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

IntList list(const int64_t* data, int64_t len) { return IntList{data, len}; }

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_avg_pool2d(AtenTensorHandle self, const int64_t* kernel_size, int64_t kernel_size_len_,
                                         const int64_t* stride, int64_t stride_len_, const int64_t* padding,
                                         int64_t padding_len_, int32_t ceil_mode, int32_t count_include_pad,
                                         int64_t* divisor_override, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] {
    return run_avg_pool(ops::avg_pool_args(2, self, list(kernel_size, kernel_size_len_), list(stride, stride_len_),
                                           list(padding, padding_len_), ceil_mode != 0, count_include_pad != 0,
                                           divisor_override),
                        ret0);
  });
}

AOTITorchError aoti_torch_cpu_avg_pool3d(AtenTensorHandle self, const int64_t* kernel_size, int64_t kernel_size_len_,
                                         const int64_t* stride, int64_t stride_len_, const int64_t* padding,
                                         int64_t padding_len_, int32_t ceil_mode, int32_t count_include_pad,
                                         int64_t* divisor_override, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] {
    return run_avg_pool(ops::avg_pool_args(3, self, list(kernel_size, kernel_size_len_), list(stride, stride_len_),
                                           list(padding, padding_len_), ceil_mode != 0, count_include_pad != 0,
                                           divisor_override),
                        ret0);
  });
}

AOTITorchError aoti_torch_cpu__adaptive_avg_pool2d(AtenTensorHandle self, const int64_t* output_size,
                                                   int64_t output_size_len_, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] {
    return run_adaptive_avg(ops::adaptive_pool_args(2, false, self, list(output_size, output_size_len_)), ret0);
  });
}

AOTITorchError aoti_torch_cpu__adaptive_avg_pool3d(AtenTensorHandle self, const int64_t* output_size,
                                                   int64_t output_size_len_, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] {
    return run_adaptive_avg(ops::adaptive_pool_args(3, false, self, list(output_size, output_size_len_)), ret0);
  });
}

AOTITorchError aoti_torch_cpu_adaptive_max_pool2d(AtenTensorHandle self, const int64_t* output_size,
                                                  int64_t output_size_len_, AtenTensorHandle* ret0,
                                                  AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return run_adaptive_max(ops::adaptive_pool_args(2, true, self, list(output_size, output_size_len_)), ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_adaptive_max_pool3d(AtenTensorHandle self, const int64_t* output_size,
                                                  int64_t output_size_len_, AtenTensorHandle* ret0,
                                                  AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return run_adaptive_max(ops::adaptive_pool_args(3, true, self, list(output_size, output_size_len_)), ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_max_pool2d_with_indices(AtenTensorHandle self, const int64_t* kernel_size,
                                                      int64_t kernel_size_len_, const int64_t* stride,
                                                      int64_t stride_len_, const int64_t* padding,
                                                      int64_t padding_len_, const int64_t* dilation,
                                                      int64_t dilation_len_, int32_t ceil_mode,
                                                      AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return run_max_pool(ops::max_pool_args(2, self, list(kernel_size, kernel_size_len_), list(stride, stride_len_),
                                           list(padding, padding_len_), list(dilation, dilation_len_),
                                           ceil_mode != 0),
                        ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_max_pool3d_with_indices(AtenTensorHandle self, const int64_t* kernel_size,
                                                      int64_t kernel_size_len_, const int64_t* stride,
                                                      int64_t stride_len_, const int64_t* padding,
                                                      int64_t padding_len_, const int64_t* dilation,
                                                      int64_t dilation_len_, int32_t ceil_mode,
                                                      AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return run_max_pool(ops::max_pool_args(3, self, list(kernel_size, kernel_size_len_), list(stride, stride_len_),
                                           list(padding, padding_len_), list(dilation, dilation_len_),
                                           ceil_mode != 0),
                        ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_max_unpool2d(AtenTensorHandle self, AtenTensorHandle indices,
                                           const int64_t* output_size, int64_t output_size_len_,
                                           AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] {
    return run_unpool(
        ops::max_unpool_args(2, self, indices, list(output_size, output_size_len_), list(nullptr, 0), list(nullptr, 0)),
        ret0);
  });
}

AOTITorchError aoti_torch_cpu_max_unpool3d(AtenTensorHandle self, AtenTensorHandle indices,
                                           const int64_t* output_size, int64_t output_size_len_,
                                           const int64_t* stride, int64_t stride_len_, const int64_t* padding,
                                           int64_t padding_len_, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] {
    return run_unpool(ops::max_unpool_args(3, self, indices, list(output_size, output_size_len_),
                                           list(stride, stride_len_), list(padding, padding_len_)),
                      ret0);
  });
}

AOTITorchError aoti_torch_cpu_fractional_max_pool2d(AtenTensorHandle self, const int64_t* kernel_size,
                                                    int64_t kernel_size_len_, const int64_t* output_size,
                                                    int64_t output_size_len_, AtenTensorHandle random_samples,
                                                    AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return run_fractional(ops::fractional_max_pool_args(2, self, list(kernel_size, kernel_size_len_),
                                                        list(output_size, output_size_len_), random_samples),
                          ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_fractional_max_pool3d(AtenTensorHandle self, const int64_t* kernel_size,
                                                    int64_t kernel_size_len_, const int64_t* output_size,
                                                    int64_t output_size_len_, AtenTensorHandle random_samples,
                                                    AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return run_fractional(ops::fractional_max_pool_args(3, self, list(kernel_size, kernel_size_len_),
                                                        list(output_size, output_size_len_), random_samples),
                          ret0, ret1);
  });
}

}  // extern "C"
