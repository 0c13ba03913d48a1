// CPU histograms: histc, histogram.bin_ct and _histogramdd_from_bin_cts.
// The outer edges come from the arguments or the data's extremes (NaN
// propagates into them and is refused as not finite, as in torch); the bin
// edges are torch's linspace in the input's dtype. histc places an element
// by linear interpolation alone, computed in the input's dtype with a
// rounding after each operation (so bfloat16 and float16 bin exactly as
// torch's c10 arithmetic does); histogramdd refines that estimate with a
// search among the neighbouring edges, so an element lands in the bin its
// value lies in. Counts accumulate in the output's dtype. Large inputs are
// split over OpenMP threads, each with its own partial histogram, summed in
// thread order afterwards.
#include <omp.h>

#include <algorithm>
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
#include "ops/selection_args.h"
#include "shim/abi/cpu_selection.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

// Arithmetic in a storage dtype: C computes, rd rounds a result to the
// dtype (identity for float32 and float64).
struct F32 {
  static constexpr size_t kSize = 4;
  using C = float;
  static C rd(C x) { return x; }
  static C load(const void* p) { return *static_cast<const float*>(p); }
  static void store(void* p, C v) { *static_cast<float*>(p) = v; }
};
struct F64 {
  static constexpr size_t kSize = 8;
  using C = double;
  static C rd(C x) { return x; }
  static C load(const void* p) { return *static_cast<const double*>(p); }
  static void store(void* p, C v) { *static_cast<double*>(p) = v; }
};
struct BF16 {
  static constexpr size_t kSize = 2;
  using C = float;
  static C rd(C x) { return bf16_to_float(float_to_bf16(x)); }
  static C load(const void* p) { return bf16_to_float(*static_cast<const uint16_t*>(p)); }
  static void store(void* p, C v) { *static_cast<uint16_t*>(p) = float_to_bf16(v); }
};
struct F16 {
  static constexpr size_t kSize = 2;
  using C = float;
  static C rd(C x) { return half_to_float(float_to_half(x)); }
  static C load(const void* p) { return half_to_float(*static_cast<const uint16_t*>(p)); }
  static void store(void* p, C v) { *static_cast<uint16_t*>(p) = float_to_half(v); }
};

template <class Fn>
Status dispatch(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(F32{});
    case DType::kFloat64: return fn(F64{});
    case DType::kBFloat16: return fn(BF16{});
    case DType::kFloat16: return fn(F16{});
    default: return AOTIRT_STATUS(kUnimplemented, "dtype {} is not histogrammed on the CPU", dtype_name(dtype));
  }
}

// A double converted to the dtype the way c10 converts a Scalar: through
// float for the 16-bit types.
template <class T>
typename T::C from_double(double v) {
  return T::rd(static_cast<typename T::C>(v));
}

// The minimum and maximum of column |d| of a contiguous [rows, dims]
// tensor; NaN when any element is NaN, as torch's aminmax.
template <class T>
void column_extremes(const char* x, int64_t rows, int64_t dims, int64_t d, double* lo, double* hi) {
  const size_t esize = T::kSize;
  double mn = std::numeric_limits<double>::infinity(), mx = -std::numeric_limits<double>::infinity();
  bool nan = false;
  for (int64_t r = 0; r < rows; ++r) {
    const double v = T::load(x + (r * dims + d) * esize);
    if (std::isnan(v)) nan = true;
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  *lo = nan ? std::numeric_limits<double>::quiet_NaN() : mn;
  *hi = nan ? std::numeric_limits<double>::quiet_NaN() : mx;
}

// torch's CPU linspace of |steps| values in the dtype: the first half
// counts up from |lo|, the second half down from |hi|.
template <class T>
std::vector<typename T::C> linspace(typename T::C lo, typename T::C hi, int64_t steps) {
  using C = typename T::C;
  std::vector<C> e(static_cast<size_t>(steps));
  const C step = T::rd(T::rd(hi - lo) / T::rd(static_cast<C>(steps - 1)));
  const int64_t halfway = steps / 2;
  for (int64_t i = 0; i < steps; ++i)
    e[i] = i < halfway ? T::rd(lo + T::rd(step * static_cast<C>(i)))
                       : T::rd(hi - T::rd(step * static_cast<C>(steps - i - 1)));
  return e;
}

// Fills |hist| (contiguous, of |total| elements, zeroed) from the rows of a
// contiguous [rows, dims] input; |bin_of|(row, thread) returns the flat bin
// or -1 to skip the row.
template <class T, class BinOf>
void accumulate(int64_t rows, int64_t total, const char* weight, char* hist, BinOf&& bin_of) {
  using C = typename T::C;
  const size_t esize = T::kSize;
  constexpr int64_t kParallelRows = int64_t{1} << 15;
  const bool parallel = rows >= kParallelRows && omp_get_max_threads() > 1;
  const int threads = parallel ? omp_get_max_threads() : 1;
  // Partial histograms in the compute type, rounded after each addition;
  // allocated here: an exception must not leave an OpenMP region.
  std::vector<C> partial(static_cast<size_t>(total) * static_cast<size_t>(threads), C(0));
#pragma omp parallel num_threads(threads) if (parallel)
  {
    C* mine = partial.data() + static_cast<size_t>(omp_get_thread_num()) * total;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t b = bin_of(r);
      if (b < 0) continue;
      const C w = weight ? T::load(weight + r * esize) : C(1);
      mine[b] = T::rd(mine[b] + w);
    }
  }
  for (int64_t i = 0; i < total; ++i) {
    C s = partial[i];
    for (int t = 1; t < threads; ++t) s = T::rd(s + partial[static_cast<size_t>(t) * total + i]);
    T::store(hist + i * esize, s);
  }
}

template <class T>
Status histc_kernel(const ops::HistArgs& a, const TensorImpl& in, const TensorImpl& out) {
  using C = typename T::C;
  const char* x = static_cast<const char*>(in.data_ptr());
  double lo = a.range[0], hi = a.range[1];
  if (lo == hi) {
    if (a.rows > 0) column_extremes<T>(x, a.rows, 1, 0, &lo, &hi);
    AOTIRT_RETURN_IF_ERROR(ops::histc_finish_edges(&lo, &hi));
  }
  const C left = from_double<T>(lo), right = from_double<T>(hi);
  const int64_t bins = a.bins[0];
  const size_t esize = dtype_size(in.dtype());
  const C width = T::rd(right - left), nbins = T::rd(static_cast<C>(bins));
  accumulate<T>(a.rows, bins, nullptr, static_cast<char*>(out.data_ptr()), [&](int64_t r) -> int64_t {
    const C v = T::load(x + r * esize);
    if (!(v >= left && v <= right)) return -1;
    int64_t pos = static_cast<int64_t>(T::rd(T::rd(T::rd(v - left) * nbins) / width));
    if (pos >= bins) pos = bins - 1;
    return pos < 0 ? 0 : pos;
  });
  return Status();
}

// histogramdd: fills |hist| and returns each dimension's edges in |edges|.
template <class T>
Status histdd_kernel(const ops::HistArgs& a, const TensorImpl& in, const TensorImpl* weight, const TensorImpl& hist,
                     std::vector<std::vector<typename T::C>>* edges) {
  using C = typename T::C;
  const char* x = static_cast<const char*>(in.data_ptr());
  const int64_t D = a.dims;
  edges->resize(static_cast<size_t>(D));
  for (int64_t d = 0; d < D; ++d) {
    double lo = 0, hi = 1;
    if (!a.range.empty()) {
      lo = a.range[2 * d];
      hi = a.range[2 * d + 1];
    } else if (a.rows > 0) {
      column_extremes<T>(x, a.rows, D, d, &lo, &hi);
      AOTIRT_RETURN_IF_ERROR(ops::histogramdd_finish_edges(d, &lo, &hi));
    }
    (*edges)[d] = linspace<T>(from_double<T>(lo), from_double<T>(hi), a.bins[d] + 1);
  }
  int64_t total = 1;
  for (int64_t d = 0; d < D; ++d) total *= a.bins[d];
  const size_t esize = sizeof(C);
  const char* w = weight ? static_cast<const char*>(weight->data_ptr()) : nullptr;
  accumulate<T>(a.rows, total, w, static_cast<char*>(hist.data_ptr()), [&](int64_t r) -> int64_t {
    int64_t flat = 0;
    for (int64_t d = 0; d < D; ++d) {
      const std::vector<C>& e = (*edges)[d];
      const int64_t n_edges = static_cast<int64_t>(e.size());
      const C v = T::load(x + (r * D + d) * esize);
      const C left = e.front(), right = e.back();
      if (!(v >= left && v <= right)) return -1;
      int64_t pos = static_cast<int64_t>((v - left) * static_cast<C>(n_edges - 1) / (right - left));
      pos = std::min(std::max<int64_t>(pos, 0), n_edges - 1);
      // The estimate is within one bin of the answer; search around it.
      const int64_t from = std::max<int64_t>(0, pos - 1), to = std::min(pos + 2, n_edges);
      pos = std::upper_bound(e.begin() + from, e.begin() + to, v) - e.begin() - 1;
      // Should rounding ever put the estimate further off, search them all.
      if (pos < 0 || e[pos] > v || (pos + 1 < n_edges && !(v < e[pos + 1])))
        pos = std::upper_bound(e.begin(), e.end(), v) - e.begin() - 1;
      if (pos == n_edges - 1) pos -= 1;
      flat = flat * a.bins[d] + pos;
    }
    return flat;
  });
  if (a.density) {
    C* h = static_cast<C*>(hist.data_ptr());
    double sum = 0;
    for (int64_t i = 0; i < total; ++i) sum += h[i];
    const C s = static_cast<C>(sum);
    for (int64_t i = 0; i < total; ++i) h[i] = h[i] / s;
    int64_t inner = total;
    for (int64_t d = 0; d < D; ++d) {
      inner /= a.bins[d];
      const std::vector<C>& e = (*edges)[d];
      for (int64_t i = 0; i < total; ++i) {
        const int64_t j = (i / inner) % a.bins[d];
        h[i] = h[i] / (e[j + 1] - e[j]);
      }
    }
  }
  return Status();
}

Result<TensorImpl> zeros(const DimVector& sizes, DType dtype) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, empty_contiguous(sizes, dtype, DeviceId{}));
  if (t.nbytes() > 0) std::memset(t.data_ptr(), 0, t.nbytes());
  return t;
}

Status run_histc(const ops::HistArgs& a, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl in, contiguous_as(*a.self, a.self->dtype()));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, zeros(DimVector{a.bins[0]}, a.self->dtype()));
  AOTIRT_RETURN_IF_ERROR(dispatch(a.self->dtype(), [&](auto t) { return histc_kernel<decltype(t)>(a, in, out); }));
  *ret = new_handle(std::move(out));
  return Status();
}

// histogram.bin_ct (|edges_out| set) and _histogramdd_from_bin_cts.
Status run_histdd(const ops::HistArgs& a, AtenTensorHandle* hist_out, AtenTensorHandle* edges_out) {
  AOTIRT_REQUIRE_OUT(hist_out);
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  if (a.weight) AOTIRT_RETURN_IF_ERROR(check_cpu(*a.weight, "weight"));
  const DType dtype = a.self->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl in, contiguous_as(*a.self, dtype));
  TensorImpl weight;
  if (a.weight) {
    AOTIRT_ASSIGN_OR_RETURN(weight, contiguous_as(*a.weight, dtype));
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl hist, zeros(DimVector(a.bins), dtype));
  TensorImpl edges;
  AOTIRT_RETURN_IF_ERROR(dispatch(dtype, [&](auto t) -> Status {
    using T = decltype(t);
    using C = typename T::C;
    std::vector<std::vector<C>> e;
    AOTIRT_RETURN_IF_ERROR(histdd_kernel<T>(a, in, a.weight ? &weight : nullptr, hist, &e));
    if (edges_out) {
      AOTIRT_ASSIGN_OR_RETURN(edges, empty_contiguous(DimVector{a.bins[0] + 1}, dtype, DeviceId{}));
      std::copy(e[0].begin(), e[0].end(), static_cast<C*>(edges.data_ptr()));
    }
    return Status();
  }));
  AtenTensorHandle h = new_handle(std::move(hist));
  if (edges_out) {
    try {
      *edges_out = new_handle(std::move(edges));
    } catch (...) {
      delete impl_of(h);
      throw;
    }
  }
  *hist_out = h;
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_histc(AtenTensorHandle self, int64_t bins, double min, double max,
                                    AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::HistArgs a, ops::histc_args(self, bins, min, max));
    return run_histc(a, ret0);
  });
}

AOTITorchError aoti_torch_cpu_histogram_bin_ct(AtenTensorHandle self, int64_t bins, const double** range,
                                               int64_t range_len_, AtenTensorHandle* weight, int32_t density,
                                               AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret1);
    AOTIRT_ASSIGN_OR_RETURN(ops::HistArgs a, ops::histogram_args(self, bins, range, range_len_, weight, density != 0));
    return run_histdd(a, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu__histogramdd_from_bin_cts(AtenTensorHandle self, const int64_t* bins, int64_t bins_len_,
                                                        const double** range, int64_t range_len_,
                                                        AtenTensorHandle* weight, int32_t density,
                                                        AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::HistArgs a, ops::histogramdd_args(self, bins, bins_len_, range, range_len_, weight,
                                                                   density != 0));
    return run_histdd(a, ret0, nullptr);
  });
}

}  // extern "C"
