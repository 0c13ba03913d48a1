#include "core/host_copy.h"

#include <cstring>

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

template <class Fn>
void for_each_strided(const DimVector& sizes, const DimVector& dst_strides,
                      const DimVector& src_strides, int64_t dst_el, int64_t src_el, char* dst,
                      const char* src, Fn fn) {
  int64_t nd = sizes.size();
  if (nd == 0) {
    fn(dst, src, 1, 0, 0);
    return;
  }
  // Iterate over all dims but the last; the callback handles one inner row.
  int64_t inner = sizes[nd - 1];
  int64_t ds = dst_strides[nd - 1] * dst_el;
  int64_t ss = src_strides[nd - 1] * src_el;
  std::vector<int64_t> idx(nd > 1 ? nd - 1 : 1, 0);
  while (true) {
    int64_t doff = 0, soff = 0;
    for (int64_t d = 0; d < nd - 1; ++d) {
      doff += idx[d] * dst_strides[d];
      soff += idx[d] * src_strides[d];
    }
    fn(dst + doff * dst_el, src + soff * src_el, inner, ds, ss);
    int64_t d = nd - 2;
    for (; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
    if (d < 0) break;
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
