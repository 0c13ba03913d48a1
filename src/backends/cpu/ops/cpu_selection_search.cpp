// CPU searchsorted (Tensor and Scalar) and bucketize. Boundaries and values
// are first converted to the dtype torch compares them in (the result_type
// of the two), so every comparison is the one torch makes; the search is a
// plain binary search per value, with the sorter (when given) indirecting
// each probe. The comparisons are written as !(b >= v) and !(b > v) so NaN
// values land past the end and NaN boundaries behave as in torch's search.
#include <omp.h>

#include <cstdint>
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

bool is_floating(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}

template <class K>
std::vector<K> load_keys(const TensorImpl& t) {
  std::vector<K> keys(static_cast<size_t>(t.numel()));
  const char* p = static_cast<const char*>(t.data_ptr());
  const size_t esize = dtype_size(t.dtype());
  for (int64_t i = 0; i < t.numel(); ++i) {
    if constexpr (std::is_floating_point_v<K>)
      keys[i] = load_as_double(p + i * esize, t.dtype());
    else
      keys[i] = load_as_int64(p + i * esize, t.dtype());
  }
  return keys;
}

template <class K>
void search(const ops::SearchArgs& a, const std::vector<K>& bounds, const std::vector<K>& values,
            const int64_t* sorter, int64_t values_per_row, const TensorImpl& out) {
  const int64_t n = static_cast<int64_t>(values.size());
  const int64_t len = a.length;
  const bool right = a.right;
  const bool int32 = out.dtype() == DType::kInt32;
  void* dst = out.data_ptr();
  constexpr int64_t kParallelValues = int64_t{1} << 14;
  const bool parallel = n >= kParallelValues && omp_get_max_threads() > 1;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t e = 0; e < n; ++e) {
    const int64_t row = a.rows == 1 ? 0 : e / values_per_row;
    const K* b = bounds.data() + row * len;
    const int64_t* s = sorter ? sorter + row * len : nullptr;
    const K v = values[e];
    int64_t lo = 0, hi = len;
    while (lo < hi) {
      const int64_t mid = lo + ((hi - lo) >> 1);
      const K m = s ? b[s[mid]] : b[mid];
      const bool go_right = right ? !(m > v) : !(m >= v);
      if (go_right)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (int32)
      static_cast<int32_t*>(dst)[e] = static_cast<int32_t>(lo);
    else
      static_cast<int64_t*>(dst)[e] = lo;
  }
}

Status run_search(const ops::SearchArgs& a, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.boundaries, "sorted_sequence"));
  if (a.values) AOTIRT_RETURN_IF_ERROR(check_cpu(*a.values, "self"));
  if (a.sorter) AOTIRT_RETURN_IF_ERROR(check_cpu(*a.sorter, "sorter"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl bounds, contiguous_as(*a.boundaries, a.compare_dtype));
  TensorImpl values;
  if (a.values) {
    AOTIRT_ASSIGN_OR_RETURN(values, contiguous_as(*a.values, a.compare_dtype));
  } else {
    // The scalar rounded to the compare dtype, as torch's conversion does.
    AOTIRT_ASSIGN_OR_RETURN(values, empty_contiguous(DimVector{}, a.compare_dtype, DeviceId{}));
    store_from_double(values.data_ptr(), a.compare_dtype, a.scalar);
  }
  std::vector<int64_t> sorter;
  if (a.sorter) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl s, contiguous_as(*a.sorter, DType::kInt64));
    const int64_t* p = static_cast<const int64_t*>(s.data_ptr());
    sorter.assign(p, p + s.numel());
    for (int64_t v : sorter)
      AOTIRT_ENSURE(v >= 0 && v < a.length, kInvalidArgument,
                    "sorter index out of range: {} is not in [0, {})", v, a.length);
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out,
                          empty_contiguous(a.out_sizes, a.out_dtype, DeviceId{}));
  const int64_t values_per_row =
      a.values && a.values->dim() > 0 ? a.values->sizes()[a.values->dim() - 1] : 1;
  const int64_t* sp = a.sorter ? sorter.data() : nullptr;
  if (out.numel() > 0) {
    if (is_floating(a.compare_dtype))
      search<double>(a, load_keys<double>(bounds), load_keys<double>(values), sp, values_per_row, out);
    else
      search<int64_t>(a, load_keys<int64_t>(bounds), load_keys<int64_t>(values), sp, values_per_row, out);
  }
  *ret = new_handle(std::move(out));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_searchsorted_Tensor(AtenTensorHandle sorted_sequence, AtenTensorHandle self,
                                                  int32_t out_int32, int32_t right, const char** side,
                                                  AtenTensorHandle* sorter, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(self != nullptr, kInvalidArgument, "'self' is a null tensor handle");
    AOTIRT_ASSIGN_OR_RETURN(ops::SearchArgs a, ops::searchsorted_args(sorted_sequence, self, 0.0, out_int32 != 0,
                                                                     right != 0, side, sorter));
    return run_search(a, ret0);
  });
}

AOTITorchError aoti_torch_cpu_searchsorted_Scalar(AtenTensorHandle sorted_sequence, double self, int32_t out_int32,
                                                  int32_t right, const char** side, AtenTensorHandle* sorter,
                                                  AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::SearchArgs a, ops::searchsorted_args(sorted_sequence, nullptr, self, out_int32 != 0,
                                                                     right != 0, side, sorter));
    return run_search(a, ret0);
  });
}

AOTITorchError aoti_torch_cpu_bucketize_Tensor(AtenTensorHandle self, AtenTensorHandle boundaries, int32_t out_int32,
                                               int32_t right, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::SearchArgs a, ops::bucketize_args(self, boundaries, out_int32 != 0, right != 0));
    return run_search(a, ret0);
  });
}

}  // extern "C"

