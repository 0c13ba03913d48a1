// CPU repeat_interleave.Tensor (index form: i repeated repeats[i] times) and
// segment_reduce over lengths or offsets. segment_reduce reduces in the
// data's dtype, rounding after each operation as torch's CPU kernel does
// for bfloat16 and float16; a NaN in a max/min segment wins. Data-dependent
// checks (negative lengths, rows that do not sum to the axis size) are made
// here; segments that would reach outside the data are refused even with
// unsafe=True, where torch would read out of bounds.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/dtype.h"
#include "device/device.h"
#include "ops/selection_args.h"
#include "shim/abi/cpu_selection.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

struct F32 {
  using C = float;
  static C rd(C x) { return x; }
  static C load(const void* p) { return *static_cast<const float*>(p); }
  static void store(void* p, C v) { *static_cast<float*>(p) = v; }
};
struct F64 {
  using C = double;
  static C rd(C x) { return x; }
  static C load(const void* p) { return *static_cast<const double*>(p); }
  static void store(void* p, C v) { *static_cast<double*>(p) = v; }
};
struct BF16 {
  using C = float;
  static C rd(C x) { return bf16_to_float(float_to_bf16(x)); }
  static C load(const void* p) { return bf16_to_float(*static_cast<const uint16_t*>(p)); }
  static void store(void* p, C v) { *static_cast<uint16_t*>(p) = float_to_bf16(v); }
};
struct F16 {
  using C = float;
  static C rd(C x) { return half_to_float(float_to_half(x)); }
  static C load(const void* p) { return half_to_float(*static_cast<const uint16_t*>(p)); }
  static void store(void* p, C v) { *static_cast<uint16_t*>(p) = float_to_half(v); }
};

Result<std::vector<int64_t>> int64_values(const TensorImpl& t) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, contiguous_as(t, DType::kInt64));
  const int64_t* p = static_cast<const int64_t*>(c.data_ptr());
  return std::vector<int64_t>(p, p + t.numel());
}

Status repeat_interleave(AtenTensorHandle repeats, int64_t* output_size, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* r, ops::repeat_interleave_args(repeats, output_size));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*r, "repeats"));
  AOTIRT_ASSIGN_OR_RETURN(std::vector<int64_t> reps, int64_values(*r));
  int64_t total = 0;
  for (int64_t v : reps) {
    AOTIRT_ENSURE(v >= 0, kInvalidArgument, "repeats can not be negative (got {})", v);
    AOTIRT_ENSURE(total <= std::numeric_limits<int64_t>::max() - v, kInvalidArgument, "the repeats overflow int64");
    total += v;
  }
  AOTIRT_ENSURE(output_size == nullptr || *output_size == total, kInvalidArgument,
                "allocated size does not match required size: output_size is {} but the repeats sum to {}",
                output_size ? *output_size : 0, total);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(DimVector{total}, r->dtype(), DeviceId{}));
  char* dst = static_cast<char*>(out.data_ptr());
  const bool i32 = r->dtype() == DType::kInt32;
  int64_t at = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(reps.size()); ++i) {
    for (int64_t j = 0; j < reps[i]; ++j, ++at) {
      if (i32)
        reinterpret_cast<int32_t*>(dst)[at] = static_cast<int32_t>(i);
      else
        reinterpret_cast<int64_t*>(dst)[at] = i;
    }
  }
  *ret = new_handle(std::move(out));
  return Status();
}

template <class T>
void reduce_segments(const ops::SegmentArgs& a, const char* data, const std::vector<int64_t>& starts,
                     const std::vector<int64_t>& counts, char* out) {
  using C = typename T::C;
  const int64_t lines = a.outer * a.segments;
  const size_t esize = dtype_size(a.data->dtype());
  constexpr int64_t kParallelElements = int64_t{1} << 15;
  const bool parallel = lines > 1 && a.outer * a.axis_size * a.inner >= kParallelElements && omp_get_max_threads() > 1;
  C init;
  switch (a.reduce) {
    case ops::SegmentReduce::kMax: init = -std::numeric_limits<C>::infinity(); break;
    case ops::SegmentReduce::kMin: init = std::numeric_limits<C>::infinity(); break;
    case ops::SegmentReduce::kProd: init = C(1); break;
    default: init = C(0); break;
  }
  if (a.has_initial) init = T::rd(static_cast<C>(a.initial));
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t l = 0; l < lines; ++l) {
    const int64_t o = l / a.segments;
    const int64_t start = starts[l], count = counts[l];
    for (int64_t i = 0; i < a.inner; ++i) {
      C acc = init;
      for (int64_t j = start; j < start + count; ++j) {
        const C x = T::load(data + ((o * a.axis_size + j) * a.inner + i) * esize);
        switch (a.reduce) {
          case ops::SegmentReduce::kMax: acc = std::isnan(x) ? x : std::max(acc, x); break;
          case ops::SegmentReduce::kMin: acc = std::isnan(x) ? x : std::min(acc, x); break;
          case ops::SegmentReduce::kProd: acc = T::rd(acc * x); break;
          default: acc = T::rd(acc + x); break;
        }
      }
      if (a.reduce == ops::SegmentReduce::kMean) {
        if (count > 0)
          acc = T::rd(acc / T::rd(static_cast<C>(count)));
        else if (!a.has_initial)
          acc = std::numeric_limits<C>::quiet_NaN();
      }
      T::store(out + (l * a.inner + i) * esize, acc);
    }
  }
}

Status segment_reduce(const ops::SegmentArgs& a, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.data, "data"));
  const TensorImpl* seg = a.lengths ? a.lengths : a.offsets;
  AOTIRT_RETURN_IF_ERROR(check_cpu(*seg, a.lengths ? "lengths" : "offsets"));
  AOTIRT_ASSIGN_OR_RETURN(std::vector<int64_t> sv, int64_values(*seg));
  // Each (outer row, segment)'s start and length along the axis.
  const int64_t lines = a.outer * a.segments;
  std::vector<int64_t> starts(static_cast<size_t>(lines)), counts(static_cast<size_t>(lines));
  for (int64_t o = 0; o < a.outer; ++o) {
    if (a.lengths) {
      int64_t at = 0;
      for (int64_t s = 0; s < a.segments; ++s) {
        const int64_t len = sv[o * a.segments + s];
        AOTIRT_ENSURE(len >= 0, kInvalidArgument, "lengths contains negative value ({})", len);
        AOTIRT_ENSURE(len <= a.axis_size - at, kInvalidArgument,
                      "lengths of row {} sum past data.size({}) = {}", o, a.axis, a.axis_size);
        starts[o * a.segments + s] = at;
        counts[o * a.segments + s] = len;
        at += len;
      }
      AOTIRT_ENSURE(a.unsafe || at == a.axis_size, kInvalidArgument,
                    "expected all rows of lengths along axis to sum to data.size({}) = {} when !unsafe, but row {} "
                    "sums to {}",
                    a.axis, a.axis_size, o, at);
    } else {
      const int64_t* row = sv.data() + o * (a.segments + 1);
      for (int64_t s = 0; s < a.segments; ++s) {
        const int64_t begin = row[s], end = row[s + 1];
        AOTIRT_ENSURE(end >= begin, kInvalidArgument, "offsets must not decrease (segment_length >= 0), got {} then {}",
                      begin, end);
        AOTIRT_ENSURE(begin >= 0 && end <= a.axis_size, kInvalidArgument,
                      "offsets [{}, {}) reach outside data.size({}) = {}", begin, end, a.axis, a.axis_size);
        starts[o * a.segments + s] = begin;
        counts[o * a.segments + s] = end - begin;
      }
    }
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl in, contiguous_as(*a.data, a.data->dtype()));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(a.out_sizes, a.data->dtype(), DeviceId{}));
  const char* src = static_cast<const char*>(in.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  if (out.numel() > 0) {
    switch (a.data->dtype()) {
      case DType::kFloat32: reduce_segments<F32>(a, src, starts, counts, dst); break;
      case DType::kFloat64: reduce_segments<F64>(a, src, starts, counts, dst); break;
      case DType::kBFloat16: reduce_segments<BF16>(a, src, starts, counts, dst); break;
      case DType::kFloat16: reduce_segments<F16>(a, src, starts, counts, dst); break;
      default:
        return AOTIRT_STATUS(kUnimplemented, "'data' has dtype {}, which segment_reduce does not take",
                             dtype_name(a.data->dtype()));
    }
  }
  *ret = new_handle(std::move(out));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_repeat_interleave_Tensor(AtenTensorHandle repeats, int64_t* output_size,
                                                       AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return repeat_interleave(repeats, output_size, ret0); });
}

AOTITorchError aoti_torch_cpu_segment_reduce(AtenTensorHandle data, const char* reduce, AtenTensorHandle* lengths,
                                             AtenTensorHandle* indices, AtenTensorHandle* offsets, int64_t axis,
                                             int32_t unsafe, double* initial, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::SegmentArgs a, ops::segment_reduce_args(data, reduce, lengths, indices, offsets, axis,
                                                                        unsafe != 0, initial));
    return segment_reduce(a, ret0);
  });
}

}  // extern "C"
