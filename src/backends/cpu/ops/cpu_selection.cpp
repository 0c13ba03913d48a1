// CPU order statistics: kthvalue, mode (along a dimension), median and
// nanmedian (of every element). The input is made contiguous and each line
// is gathered as (key, index) pairs: floating keys as doubles (exact for
// every floating dtype), integer keys as int64. NaN orders above every
// number, as in torch, and values are copied bit for bit from the element
// whose index is returned, so an index always points at its value.
//
// Which index torch returns among equal values is not documented, but its
// CPU kernels are deterministic and aotirt follows them so indices agree:
// kthvalue selects with the classic median-of-three quickselect (Numerical
// Recipes' "select") over the line in index order; mode sorts the line by
// value alone with std::sort and returns the last element of the longest
// run. A line holding NaN is the exception for mode: torch's value-only
// order is not a strict weak order there (its result depends on where the
// NaNs sit, and std::sort may even read out of bounds), so aotirt sorts NaN
// last and counts each NaN as a run of its own.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
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

bool is_floating(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}

template <class K>
bool key_isnan(K k) {
  if constexpr (std::is_floating_point_v<K>) return std::isnan(k);
  return false;
}

// Strict weak order on (key, index): NaN above every number, ties by index.
template <class K>
bool pair_less(const std::pair<K, int64_t>& x, const std::pair<K, int64_t>& y) {
  const bool xn = key_isnan(x.first), yn = key_isnan(y.first);
  if (xn || yn) {
    if (xn && yn) return x.second < y.second;
    return yn;
  }
  if (x.first < y.first) return true;
  if (y.first < x.first) return false;
  return x.second < y.second;
}

template <class K>
K load_key(const void* p, DType dtype) {
  if constexpr (std::is_floating_point_v<K>)
    return load_as_double(p, dtype);
  else
    return load_as_int64(p, dtype);
}

// Runs line(o, i, scratch) over the outer x inner lines of a [outer, n,
// inner] contiguous tensor, splitting them over OpenMP threads when large.
template <class K, class Line>
void for_each_line(int64_t outer, int64_t n, int64_t inner, Line&& line) {
  const int64_t lines = outer * inner;
  if (lines == 0 || n == 0) return;
  constexpr int64_t kParallelElements = int64_t{1} << 15;
  const bool parallel = lines > 1 && lines * n >= kParallelElements && omp_get_max_threads() > 1;
  const int threads = parallel ? omp_get_max_threads() : 1;
  // Scratch is allocated here: an exception must not leave an OpenMP region.
  std::vector<std::pair<K, int64_t>> scratch(static_cast<size_t>(n) * static_cast<size_t>(threads));
#pragma omp parallel num_threads(threads) if (parallel)
  {
    std::pair<K, int64_t>* buf = scratch.data() + static_cast<size_t>(omp_get_thread_num()) * n;
#pragma omp for schedule(static)
    for (int64_t l = 0; l < lines; ++l) line(l / inner, l % inner, buf);
  }
}

enum class LineOp { kKth, kMode };

// x > y with NaN above every number: the quickselect's order.
template <class K>
bool greater_or_nan(K x, K y) {
  return (key_isnan(x) && !key_isnan(y)) || x > y;
}

// Moves the k-th smallest (0-based) of line[0, n) to line[k] by median-of-
// three quickselect; equal keys end where this exact sequence of swaps
// leaves them, which is what fixes the index returned for ties.
template <class K>
void quickselect(std::pair<K, int64_t>* line, int64_t n, int64_t k) {
  auto gt = [&](int64_t a, int64_t b) { return greater_or_nan(line[a].first, line[b].first); };
  auto swap_at = [&](int64_t a, int64_t b) { std::swap(line[a], line[b]); };
  int64_t lo = 0, hi = n - 1;
  while (hi > lo) {
    if (hi == lo + 1) {
      if (gt(lo, hi)) swap_at(lo, hi);
      return;
    }
    // Order line[lo + 1] <= line[lo] <= line[hi]: line[lo] is the pivot and
    // the two others bound the scans below.
    swap_at(lo + (hi - lo) / 2, lo + 1);
    if (gt(lo + 1, hi)) swap_at(lo + 1, hi);
    if (gt(lo, hi)) swap_at(lo, hi);
    if (gt(lo + 1, lo)) swap_at(lo + 1, lo);
    const K pivot = line[lo].first;
    int64_t i = lo + 1, j = hi;
    for (;;) {
      do ++i;
      while (greater_or_nan(pivot, line[i].first));
      do --j;
      while (greater_or_nan(line[j].first, pivot));
      if (j < i) break;
      swap_at(i, j);
    }
    swap_at(lo, j);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
}

// The mode of line[0, n): the longest run of equal keys after sorting, the
// first such run on ties (so the smallest value), reported by the run's
// last element.
template <class K>
int64_t mode_index(std::pair<K, int64_t>* line, int64_t n) {
  bool has_nan = false;
  for (int64_t j = 0; j < n && !has_nan; ++j) has_nan = key_isnan(line[j].first);
  if (has_nan)
    std::sort(line, line + n, pair_less<K>);
  else
    std::sort(line, line + n, [](const std::pair<K, int64_t>& x, const std::pair<K, int64_t>& y) {
      return x.first < y.first;
    });
  int64_t best = 0, pick = 0, run_start = 0;
  for (int64_t j = 0; j < n; ++j) {
    // NaN never equals itself, so each NaN is a run of its own.
    if (j + 1 < n && line[j].first == line[j + 1].first) continue;
    const int64_t freq = j + 1 - run_start;
    if (freq > best) {
      best = freq;
      pick = line[j].second;
    }
    run_start = j + 1;
  }
  return pick;
}

template <class K>
void select_lines(const ops::LineReduceArgs& a, LineOp op, const TensorImpl& in, const TensorImpl& vals,
                  const TensorImpl& idx) {
  const TensorImpl& t = *a.self;
  const DType dtype = t.dtype();
  const size_t esize = dtype_size(dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d < a.dim) outer *= t.sizes()[d];
    if (d > a.dim) inner *= t.sizes()[d];
  }
  const int64_t n = a.length;
  const char* src = static_cast<const char*>(in.data_ptr());
  char* out_v = static_cast<char*>(vals.data_ptr());
  int64_t* out_i = static_cast<int64_t*>(idx.data_ptr());
  for_each_line<K>(outer, n, inner, [&](int64_t o, int64_t i, std::pair<K, int64_t>* line) {
    const int64_t base = o * n * inner + i;
    for (int64_t j = 0; j < n; ++j) line[j] = {load_key<K>(src + (base + j * inner) * esize, dtype), j};
    int64_t pick = 0;
    if (op == LineOp::kKth) {
      quickselect(line, n, a.k - 1);
      pick = line[a.k - 1].second;
    } else {
      pick = mode_index(line, n);
    }
    const int64_t o_at = o * inner + i;
    std::memcpy(out_v + o_at * esize, src + (base + pick * inner) * esize, esize);
    out_i[o_at] = pick;
  });
}

Status select_along(const ops::LineReduceArgs& a, LineOp op, AtenTensorHandle* values, AtenTensorHandle* indices) {
  AOTIRT_REQUIRE_OUT(values);
  AOTIRT_REQUIRE_OUT(indices);
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl in, contiguous_as(*a.self, a.self->dtype()));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl vals, empty_strided(a.out_sizes, a.out_strides, a.self->dtype(), DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl idx, empty_strided(a.out_sizes, a.out_strides, DType::kInt64, DeviceId{}));
  if (is_floating(a.self->dtype()))
    select_lines<double>(a, op, in, vals, idx);
  else
    select_lines<int64_t>(a, op, in, vals, idx);
  AtenTensorHandle v = new_handle(std::move(vals));
  AtenTensorHandle ix = nullptr;
  try {
    ix = new_handle(std::move(idx));
  } catch (...) {
    delete impl_of(v);
    throw;
  }
  *values = v;
  *indices = ix;
  return Status();
}

// What torch's median of an empty tensor holds: NaN converted to the dtype,
// which on x86-64 is NaN for floating dtypes, the most negative value for
// int32 and int64 (the conversion's "indefinite" result) and 0 for the
// narrower integers (the low bits of that int32).
void store_empty_median(void* dst, DType dtype) {
  if (is_floating(dtype))
    store_from_double(dst, dtype, std::numeric_limits<double>::quiet_NaN());
  else if (dtype == DType::kInt64)
    store_from_int64(dst, dtype, std::numeric_limits<int64_t>::min());
  else if (dtype == DType::kInt32)
    store_from_int64(dst, dtype, std::numeric_limits<int32_t>::min());
  else
    store_from_int64(dst, dtype, 0);
}

template <class K>
int64_t median_index(const char* src, DType dtype, int64_t n, bool ignore_nan, std::vector<std::pair<K, int64_t>>* buf) {
  buf->clear();
  const size_t esize = dtype_size(dtype);
  for (int64_t j = 0; j < n; ++j) {
    const K k = load_key<K>(src + j * esize, dtype);
    if (key_isnan(k)) {
      if (!ignore_nan) return j;  // median propagates NaN
      continue;
    }
    buf->push_back({k, j});
  }
  if (buf->empty()) return -1;
  // The lower of the two middle values for an even count, as torch.
  const size_t mid = (buf->size() - 1) / 2;
  std::nth_element(buf->begin(), buf->begin() + mid, buf->end(), pair_less<K>);
  return (*buf)[mid].second;
}

Status median(AtenTensorHandle self, bool ignore_nan, const char* op, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, ops::median_args(self, op));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*t, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl in, contiguous_as(*t, t->dtype()));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(DimVector{}, DimVector{}, t->dtype(), DeviceId{}));
  const DType dtype = t->dtype();
  const size_t esize = dtype_size(dtype);
  const char* src = static_cast<const char*>(in.data_ptr());
  const int64_t n = t->numel();
  int64_t pick = -1;
  if (n > 0) {
    if (is_floating(dtype)) {
      std::vector<std::pair<double, int64_t>> buf;
      buf.reserve(static_cast<size_t>(n));
      pick = median_index<double>(src, dtype, n, ignore_nan, &buf);
    } else {
      std::vector<std::pair<int64_t, int64_t>> buf;
      buf.reserve(static_cast<size_t>(n));
      pick = median_index<int64_t>(src, dtype, n, ignore_nan, &buf);
    }
  }
  if (pick >= 0)
    std::memcpy(out.data_ptr(), src + pick * esize, esize);
  else if (n == 0)
    store_empty_median(out.data_ptr(), dtype);
  else  // nanmedian of all-NaN input
    store_from_double(out.data_ptr(), dtype, std::numeric_limits<double>::quiet_NaN());
  *ret = new_handle(std::move(out));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_kthvalue(AtenTensorHandle self, int64_t k, int64_t dim, int32_t keepdim,
                                       AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::LineReduceArgs a, ops::kthvalue_args(self, k, dim, keepdim != 0));
    return select_along(a, LineOp::kKth, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_mode(AtenTensorHandle self, int64_t dim, int32_t keepdim, AtenTensorHandle* ret0,
                                   AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::LineReduceArgs a, ops::mode_args(self, dim, keepdim != 0));
    return select_along(a, LineOp::kMode, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_median(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return median(self, false, "median", ret0); });
}

AOTITorchError aoti_torch_cpu_nanmedian(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return median(self, true, "nanmedian", ret0); });
}

}  // extern "C"
