#include "core/host_copy.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/status.h"
#include "core/dtype.h"

namespace aotirt {

Result<DimVector> broadcast_strides(const DimVector& src_sizes, const DimVector& src_strides,
                                    const DimVector& dst_sizes) {
  int64_t nd = dst_sizes.size();
  int64_t ns = src_sizes.size();
  if (ns > nd)
    return AOTIRT_STATUS(kInvalidArgument, "cannot broadcast shape {} to {}",
                         dims_to_string(src_sizes.data(), ns), dims_to_string(dst_sizes.data(), nd));
  DimVector out;
  out.resize(nd);
  for (int64_t i = 0; i < nd; ++i) {
    int64_t si = i - (nd - ns);
    if (si < 0) {
      out[i] = 0;
    } else if (src_sizes[si] == dst_sizes[i]) {
      out[i] = src_strides[si];
    } else if (src_sizes[si] == 1) {
      out[i] = 0;
    } else {
      return AOTIRT_STATUS(kInvalidArgument, "cannot broadcast shape {} to {}",
                           dims_to_string(src_sizes.data(), ns), dims_to_string(dst_sizes.data(), nd));
    }
  }
  return out;
}

namespace {

// Copies of at least this many elements are split across the OpenMP
// threads: a fork costs a few microseconds, a strided copy of this size
// tens of them.
constexpr int64_t kParallelElements = int64_t{1} << 16;

// [lowest, highest] byte touched by a view.
void byte_span(const DimVector& sizes, const DimVector& strides, int64_t el, const char* base, const char** lo,
               const char** hi) {
  int64_t low = 0, high = 0;
  for (int64_t d = 0; d < sizes.size(); ++d) {
    const int64_t reach = (sizes[d] - 1) * strides[d];
    (reach < 0 ? low : high) += reach;
  }
  *lo = base + low * el;
  *hi = base + high * el + el - 1;
}

// Calls |fn(dst_row, src_row, n, dst_step, src_step)| for every innermost
// row of the copy. Dims are first coalesced where both sides are dense
// across them (a dense or dtype-converting copy is one row), size-1 dims
// dropped. Large copies whose source and destination do not overlap split
// their rows (or, with fewer rows than threads, each row's columns) across
// the OpenMP threads; |fn| must not share state.
template <class Fn>
void for_each_strided(const DimVector& sizes, const DimVector& dst_strides,
                      const DimVector& src_strides, int64_t dst_el, int64_t src_el, char* dst,
                      const char* src, Fn fn) {
  DimVector sz, dstr, sstr;
  for (int64_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    const int64_t k = sz.size();
    if (k > 0 && dstr[k - 1] == dst_strides[d] * sizes[d] && sstr[k - 1] == src_strides[d] * sizes[d]) {
      sz[k - 1] *= sizes[d];
      dstr[k - 1] = dst_strides[d];
      sstr[k - 1] = src_strides[d];
      continue;
    }
    sz.resize(k + 1);
    dstr.resize(k + 1);
    sstr.resize(k + 1);
    sz[k] = sizes[d];
    dstr[k] = dst_strides[d];
    sstr[k] = src_strides[d];
  }
  const int64_t nd = sz.size();
  if (nd == 0) {
    fn(dst, src, 1, 0, 0);
    return;
  }
  const int64_t inner = sz[nd - 1];
  const int64_t ds = dstr[nd - 1] * dst_el;
  const int64_t ss = sstr[nd - 1] * src_el;
  int64_t rows = 1;
  for (int64_t d = 0; d < nd - 1; ++d) rows *= sz[d];

  // Rows [begin, end) of the row-major order over all dims but the last;
  // |idx| has room for nd - 1 counters.
  auto run_rows = [&](int64_t begin, int64_t end, int64_t* idx) {
    if (begin >= end) return;
    int64_t rest = begin;
    for (int64_t d = nd - 2; d >= 0; --d) {
      idx[d] = rest % sz[d];
      rest /= sz[d];
    }
    for (int64_t r = begin; r < end; ++r) {
      int64_t doff = 0, soff = 0;
      for (int64_t d = 0; d < nd - 1; ++d) {
        doff += idx[d] * dstr[d];
        soff += idx[d] * sstr[d];
      }
      fn(dst + doff * dst_el, src + soff * src_el, inner, ds, ss);
      for (int64_t d = nd - 2; d >= 0; --d) {
        if (++idx[d] < sz[d]) break;
        idx[d] = 0;
      }
    }
  };

  const int threads = omp_in_parallel() ? 1 : std::max(1, omp_get_max_threads());
  bool split = threads > 1 && rows * inner >= kParallelElements;
  if (split) {
    // Overlapping source and destination keep the one-thread row order.
    const char *dlo, *dhi, *slo, *shi;
    byte_span(sz, dstr, dst_el, dst, &dlo, &dhi);
    byte_span(sz, sstr, src_el, src, &slo, &shi);
    split = dhi < slo || shi < dlo;
  }
  // Counters for every thread, allocated before any fork.
  std::vector<int64_t> counters(static_cast<size_t>((split ? threads : 1) * nd));
  if (!split) {
    run_rows(0, rows, counters.data());
    return;
  }
  // Fewer rows than threads (a dense copy is one row): every thread takes
  // its share of the columns of each row instead.
  const bool by_columns = rows < threads;
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    if (!by_columns) {
      run_rows(rows * t / n, rows * (t + 1) / n, counters.data() + t * nd);
    } else {
      const int64_t lo = inner * t / n, hi = inner * (t + 1) / n;
      for (int64_t r = 0; r < rows && hi > lo; ++r) {
        int64_t doff = 0, soff = 0, rest = r;
        for (int64_t d = nd - 2; d >= 0; --d) {
          doff += (rest % sz[d]) * dstr[d];
          soff += (rest % sz[d]) * sstr[d];
          rest /= sz[d];
        }
        fn(dst + doff * dst_el + lo * ds, src + soff * src_el + lo * ss, hi - lo, ds, ss);
      }
    }
  }
}

}  // namespace

Status host_copy_strided(const TensorImpl& dst, const TensorImpl& src) {
  AOTIRT_ASSIGN_OR_RETURN(DimVector sstr, broadcast_strides(src.sizes(), src.strides(), dst.sizes()));
  if (dst.numel() == 0) return Status();
  char* d = static_cast<char*>(dst.data_ptr());
  const char* s = static_cast<const char*>(src.data_ptr());
  if (!d || !s) return AOTIRT_STATUS(kInvalidArgument, "copy with a null data pointer");
  const int64_t del = static_cast<int64_t>(dst.element_size());
  const int64_t sel = static_cast<int64_t>(src.element_size());
  const DType dt = dst.dtype(), st = src.dtype();

  if (dt == st && dst.is_contiguous() && src.is_contiguous() && src.sizes() == dst.sizes()) {
    std::memmove(d, s, dst.nbytes());
    return Status();
  }
  if (dt == st) {
    for_each_strided(dst.sizes(), dst.strides(), sstr, del, sel, d, s,
                     [del](char* dp, const char* sp, int64_t n, int64_t ds, int64_t ss) {
                       if (ds == del && ss == del) {
                         std::memmove(dp, sp, n * del);
                         return;
                       }
                       switch (del) {
                         case 1:
                           for (int64_t i = 0; i < n; ++i) dp[i * ds] = sp[i * ss];
                           break;
                         case 2:
                           for (int64_t i = 0; i < n; ++i)
                             std::memcpy(dp + i * ds, sp + i * ss, 2);
                           break;
                         case 4:
                           for (int64_t i = 0; i < n; ++i)
                             std::memcpy(dp + i * ds, sp + i * ss, 4);
                           break;
                         case 8:
                           for (int64_t i = 0; i < n; ++i)
                             std::memcpy(dp + i * ds, sp + i * ss, 8);
                           break;
                         default:
                           for (int64_t i = 0; i < n; ++i)
                             std::memcpy(dp + i * ds, sp + i * ss, del);
                       }
                     });
    return Status();
  }
  if (dtype_is_complex(dt) || dtype_is_complex(st))
    return AOTIRT_STATUS(kUnimplemented, "copy from {} to {} is not supported", dtype_name(st),
                         dtype_name(dt));
  // float32 <-> bfloat16 / float16 (model inputs and outputs, 10-100 M
  // elements for an LLM's cache or logits) in typed loops: the generic
  // per-element path through double runs at about 8 ns an element. The
  // results are the same: float32 -> double -> float32 is exact.
  const bool f32_to_narrow = st == DType::kFloat32 && (dt == DType::kBFloat16 || dt == DType::kFloat16);
  const bool narrow_to_f32 = dt == DType::kFloat32 && (st == DType::kBFloat16 || st == DType::kFloat16);
  if (f32_to_narrow || narrow_to_f32) {
    const bool bf16 = dt == DType::kBFloat16 || st == DType::kBFloat16;
    for_each_strided(dst.sizes(), dst.strides(), sstr, del, sel, d, s,
                     [=](char* dp, const char* sp, int64_t n, int64_t ds, int64_t ss) {
                       if (f32_to_narrow) {
                         for (int64_t i = 0; i < n; ++i) {
                           float v;
                           std::memcpy(&v, sp + i * ss, 4);
                           const uint16_t h = bf16 ? float_to_bf16(v) : float_to_half(v);
                           std::memcpy(dp + i * ds, &h, 2);
                         }
                       } else {
                         for (int64_t i = 0; i < n; ++i) {
                           uint16_t h;
                           std::memcpy(&h, sp + i * ss, 2);
                           const float v = bf16 ? bf16_to_float(h) : half_to_float(h);
                           std::memcpy(dp + i * ds, &v, 4);
                         }
                       }
                     });
    return Status();
  }
  const bool via_int = dtype_is_integral(dt) && dtype_is_integral(st);
  // int64 -> float32 through double would round twice past 2^53; convert
  // directly, as a C cast (and PyTorch) does.
  const bool int_to_f32 = dt == DType::kFloat32 && (st == DType::kInt64 || st == DType::kUInt64);
  for_each_strided(dst.sizes(), dst.strides(), sstr, del, sel, d, s,
                   [=](char* dp, const char* sp, int64_t n, int64_t ds, int64_t ss) {
                     for (int64_t i = 0; i < n; ++i) {
                       if (via_int) {
                         store_from_int64(dp + i * ds, dt, load_as_int64(sp + i * ss, st));
                       } else if (int_to_f32) {
                         float v = st == DType::kInt64
                                       ? static_cast<float>(load_as_int64(sp + i * ss, st))
                                       : static_cast<float>(static_cast<uint64_t>(load_as_int64(sp + i * ss, st)));
                         std::memcpy(dp + i * ds, &v, sizeof(v));
                       } else {
                         store_from_double(dp + i * ds, dt, load_as_double(sp + i * ss, st));
                       }
                     }
                   });
  return Status();
}

}  // namespace aotirt
