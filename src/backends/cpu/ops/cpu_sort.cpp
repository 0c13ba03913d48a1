// CPU sort, sort.stable and topk (c_shim_cpu.h). Each line along the
// dimension is gathered as (key, index) pairs, ordered with the standard
// library's stable sort (or a partial sort for topk), and written back:
// values copied bit for bit from the input, indices as int64. NaN orders
// above every number, as in torch: last ascending, first descending, and
// among the largest for topk. Lines are independent and large inputs split
// them over OpenMP threads.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/dtype.h"
#include "device/device.h"
#include "ops/sort_args.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

// Reads element |p| of |dtype| as a sort key. Floating keys are doubles
// (exact for every floating dtype here); integer keys stay int64, so large
// values keep their order.
double float_key(const void* p, DType dtype) { return load_as_double(p, dtype); }
int64_t int_key(const void* p, DType dtype) { return load_as_int64(p, dtype); }

bool is_floating(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}

// Strict weak order with NaN above everything; |descending| flips it.
template <class K>
bool before(K a, K b, bool descending) {
  if constexpr (std::is_floating_point_v<K>) {
    if (descending) return !std::isnan(b) && (std::isnan(a) || a > b);
    return !std::isnan(a) && (std::isnan(b) || a < b);
  } else {
    return descending ? a > b : a < b;
  }
}

// Offsets of line |l| (row-major over every dimension but |dim|) in a
// tensor of |sizes| with |strides|.
int64_t line_offset(int64_t l, const DimVector& sizes, const DimVector& strides, int64_t dim) {
  int64_t off = 0;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (d == dim) continue;
    off += (l % sizes[d]) * strides[d];
    l /= sizes[d];
  }
  return off;
}

template <class K, class Load>
void order_lines(const ops::SortArgs& a, const TensorImpl& values, const TensorImpl& indices, bool partial,
                 Load load) {
  const TensorImpl& in = *a.self;
  const DType dtype = in.dtype();
  const size_t esize = dtype_size(dtype);
  const int64_t rank = in.dim();
  const int64_t n = rank == 0 ? 1 : in.sizes()[a.dim];
  int64_t lines = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (d != a.dim) lines *= in.sizes()[d];
  if (n == 0 || lines == 0 || a.k == 0) return;
  const DimVector in_sizes = rank == 0 ? DimVector{1} : in.sizes();
  const DimVector in_strides = rank == 0 ? DimVector{1} : in.strides();
  const DimVector out_sizes = rank == 0 ? DimVector{1} : a.out_sizes;
  const DimVector out_strides = rank == 0 ? DimVector{1} : a.out_strides;
  const char* src = static_cast<const char*>(in.data_ptr());
  char* vals = static_cast<char*>(values.data_ptr());
  int64_t* idx = static_cast<int64_t*>(indices.data_ptr());
  const int64_t in_step = in_strides[a.dim], out_step = out_strides[a.dim];
  constexpr int64_t kParallelElements = int64_t{1} << 15;
  const bool parallel = lines > 1 && lines * n >= kParallelElements && omp_get_max_threads() > 1;
  // One line of scratch per thread, allocated here: an exception must not
  // leave an OpenMP region.
  const int threads = parallel ? omp_get_max_threads() : 1;
  std::vector<std::pair<K, int64_t>> scratch(static_cast<size_t>(n) * static_cast<size_t>(threads));
#pragma omp parallel num_threads(threads) if (parallel)
  {
    std::pair<K, int64_t>* line = scratch.data() + static_cast<size_t>(omp_get_thread_num()) * n;
#pragma omp for schedule(static)
    for (int64_t l = 0; l < lines; ++l) {
      const int64_t in_off = line_offset(l, in_sizes, in_strides, a.dim);
      const int64_t out_off = line_offset(l, out_sizes, out_strides, a.dim);
      for (int64_t j = 0; j < n; ++j) line[j] = {load(src + (in_off + j * in_step) * esize, dtype), j};
      auto cmp = [&](const std::pair<K, int64_t>& x, const std::pair<K, int64_t>& y) {
        return before(x.first, y.first, a.descending);
      };
      if (partial && a.k < n)
        std::partial_sort(line, line + a.k, line + n, [&](const auto& x, const auto& y) {
          // Ties by index keep the result the same on every run.
          return cmp(x, y) || (!cmp(y, x) && x.second < y.second);
        });
      else
        std::stable_sort(line, line + n, cmp);
      for (int64_t j = 0; j < a.k; ++j) {
        const int64_t o = out_off + j * out_step;
        std::memcpy(vals + o * esize, src + (in_off + line[j].second * in_step) * esize, esize);
        idx[o] = line[j].second;
      }
    }
  }
}

Status order(const ops::SortArgs& a, bool partial, AtenTensorHandle* values, AtenTensorHandle* indices) {
  AOTIRT_REQUIRE_OUT(values);
  AOTIRT_REQUIRE_OUT(indices);
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl vals, empty_strided(a.out_sizes, a.out_strides, a.self->dtype(), DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl idx, empty_strided(a.out_sizes, a.out_strides, DType::kInt64, DeviceId{}));
  if (is_floating(a.self->dtype()))
    order_lines<double>(a, vals, idx, partial, float_key);
  else
    order_lines<int64_t>(a, vals, idx, partial, int_key);
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

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_sort(AtenTensorHandle self, int64_t dim, int32_t descending, AtenTensorHandle* ret0,
                                   AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::SortArgs a, ops::sort_args(self, dim, descending != 0));
    return order(a, false, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_sort_stable(AtenTensorHandle self, int32_t* stable, int64_t dim, int32_t descending,
                                          AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  (void)stable;  // every sort here is stable
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::SortArgs a, ops::sort_args(self, dim, descending != 0));
    return order(a, false, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_topk(AtenTensorHandle self, int64_t k, int64_t dim, int32_t largest, int32_t sorted,
                                   AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  (void)sorted;  // the k values always come out in order, which sorted=False allows
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::SortArgs a, ops::topk_args(self, k, dim, largest != 0));
    return order(a, true, ret0, ret1);
  });
}

}  // extern "C"
