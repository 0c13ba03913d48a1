// CPU embedding_bag (c_shim_cpu.h's _embedding_bag and
// _embedding_bag_forward_only; the device-generic aoti_torch__embedding_bag
// of c/shim_deprecated.h forwards here for CPU tensors): the four outputs
// torch returns, with its sizes and values. Bag b takes indices [offsets[b], end): end is the next offset,
// and for the last bag the end of indices, except on torch's "fast path"
// (float/half/bfloat16 weight with unit column stride, no padding_idx),
// where an included last offset ends it; the op layer says which path
// torch takes. Sums accumulate in float (double for float64) in index
// order and are rounded to the weight's dtype once; mean then divides the
// rounded sum by the bag's size in that dtype, as torch does; max keeps the
// first of equal values and, like torch, lets no NaN win. Bags are
// independent and large inputs split them over OpenMP threads.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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
using ops::BagMode;
using ops::EmbeddingBagArgs;

namespace {

// Element access per weight dtype; A is the accumulation type.
struct F32 {
  using S = float;
  using A = float;
  static A load(S v) { return v; }
  static S store(A v) { return v; }
};
struct F64 {
  using S = double;
  using A = double;
  static A load(S v) { return v; }
  static S store(A v) { return v; }
};
struct BF16 {
  using S = uint16_t;
  using A = float;
  static A load(S v) { return bf16_to_float(v); }
  static S store(A v) { return float_to_bf16(v); }
};

// torch's fast path (FBGEMM) rounds a bfloat16 result half up in magnitude
// (adding half a unit of the dropped bits) rather than to nearest even.
uint16_t float_to_bf16_half_up(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  return static_cast<uint16_t>((bits + 0x8000u) >> 16);
}
struct F16 {
  using S = uint16_t;
  using A = float;
  static A load(S v) { return half_to_float(v); }
  static S store(A v) { return float_to_half(v); }
};

// Reads a 1-d index tensor as int64.
std::vector<int64_t> read_indices(const TensorImpl& t) {
  const int64_t n = t.dim() == 0 ? 1 : t.sizes()[0];
  const int64_t stride = t.dim() == 0 ? 1 : t.strides()[0];
  std::vector<int64_t> v(static_cast<size_t>(n));
  const char* p = static_cast<const char*>(t.data_ptr());
  const size_t es = t.element_size();
  for (int64_t i = 0; i < n; ++i) v[i] = load_as_int64(p + i * stride * static_cast<int64_t>(es), t.dtype());
  return v;
}

void store_index(const TensorImpl& t, int64_t i, int64_t v) {
  char* p = static_cast<char*>(t.data_ptr());
  if (t.dtype() == DType::kInt64)
    reinterpret_cast<int64_t*>(p)[i] = v;
  else
    reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
}

struct Bags {
  std::vector<int64_t> idx, off;
  std::vector<int64_t> begin, end;  // each bag's index range
  std::vector<int64_t> size;        // torch's bag_size before padding is taken off
};

template <class T>
void reduce_bags(const EmbeddingBagArgs& a, Bags& bags, const TensorImpl& out, std::vector<int64_t>& max_idx) {
  using S = typename T::S;
  using A = typename T::A;
  const TensorImpl& w = *a.weight;
  const S* wp = static_cast<const S*>(w.data_ptr());
  const int64_t ws0 = w.strides()[0], ws1 = w.strides()[1];
  const int64_t D = a.dim;
  S* op = static_cast<S*>(out.data_ptr());
  const TensorImpl* psw = a.per_sample_weights;
  const S* pp = psw ? static_cast<const S*>(psw->data_ptr()) : nullptr;
  const int64_t ps0 = psw && psw->dim() > 0 ? psw->strides()[0] : 1;
  const int64_t nbags = a.num_bags;
  constexpr int64_t kParallelWork = int64_t{1} << 15;
  const bool parallel = nbags > 1 && a.num_indices * D >= kParallelWork && omp_get_max_threads() > 1;
  // One row of sums per thread, allocated here: an exception must not leave
  // an OpenMP region.
  const int threads = parallel ? omp_get_max_threads() : 1;
  std::vector<A> scratch(static_cast<size_t>(D) * static_cast<size_t>(threads));
#pragma omp parallel num_threads(threads) if (parallel)
  {
    A* acc = scratch.data() + static_cast<size_t>(omp_get_thread_num()) * static_cast<size_t>(D);
#pragma omp for schedule(static)
    for (int64_t b = 0; b < nbags; ++b) {
      S* row = op + b * D;
      if (a.mode == BagMode::kMax) {
        bool first = true;
        int64_t* mrow = max_idx.data() + b * D;
        for (int64_t d = 0; d < D; ++d) {
          row[d] = T::store(A(0));
          mrow[d] = 0;
        }
        for (int64_t i = bags.begin[b]; i < bags.end[b]; ++i) {
          const int64_t e = bags.idx[i];
          if (e == a.padding_idx) {
            --bags.size[b];
            continue;
          }
          for (int64_t d = 0; d < D; ++d) {
            const S raw = wp[e * ws0 + d * ws1];
            if (first || T::load(raw) > T::load(row[d])) {
              row[d] = raw;
              mrow[d] = e;
            }
          }
          first = false;
        }
        continue;
      }
      std::fill(acc, acc + D, A(0));
      for (int64_t i = bags.begin[b]; i < bags.end[b]; ++i) {
        const int64_t e = bags.idx[i];
        if (e == a.padding_idx) {
          --bags.size[b];
          continue;
        }
        const S* src = wp + e * ws0;
        if (pp) {
          const A scale = T::load(pp[i * ps0]);
          for (int64_t d = 0; d < D; ++d) acc[d] = std::fma(scale, T::load(src[d * ws1]), acc[d]);
        } else {
          for (int64_t d = 0; d < D; ++d) acc[d] += T::load(src[d * ws1]);
        }
      }
      auto round = [&](A v) -> S {
        if constexpr (std::is_same_v<T, BF16>) {
          if (a.fast_path) return float_to_bf16_half_up(v);
        }
        return T::store(v);
      };
      if (a.mode == BagMode::kMean) {
        // The sum is rounded to the weight's dtype first, then divided there.
        const A count = T::load(T::store(static_cast<A>(std::max<int64_t>(bags.size[b], 1))));
        for (int64_t d = 0; d < D; ++d) row[d] = T::store(T::load(round(acc[d])) / count);
      } else {
        for (int64_t d = 0; d < D; ++d) row[d] = round(acc[d]);
      }
    }
  }
}

Status embedding_bag(const TensorImpl* per_sample_weights, AtenTensorHandle weight, AtenTensorHandle indices,
                     AtenTensorHandle offsets, int64_t mode, bool include_last_offset, int64_t padding_idx,
                     bool forward_only, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
                     AtenTensorHandle* ret3) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_REQUIRE_OUT(ret2);
  AOTIRT_REQUIRE_OUT(ret3);
  AOTIRT_ASSIGN_OR_RETURN(EmbeddingBagArgs a, ops::embedding_bag_args(weight, indices, offsets, mode, per_sample_weights,
                                                                      include_last_offset, padding_idx, forward_only));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.weight, "weight"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.indices, "indices"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.offsets, "offsets"));
  if (a.per_sample_weights) AOTIRT_RETURN_IF_ERROR(check_cpu(*a.per_sample_weights, "per_sample_weights"));
  Bags bags;
  bags.idx = read_indices(*a.indices);
  bags.off = read_indices(*a.offsets);
  const int64_t n = a.num_indices, nb = a.num_bags, no = a.num_offsets;
  const int64_t rows = a.weight->sizes()[0];
  if (no > 0) {
    AOTIRT_ENSURE(bags.off[0] == 0, kInvalidArgument,
                  "embedding_bag: offsets[0] has to be 0 (the first bag starts at position 0), got {}", bags.off[0]);
    AOTIRT_ENSURE(bags.off[no - 1] <= n, kInvalidArgument,
                  "embedding_bag: offsets[-1] can not be greater than the length of indices {}, got {}", n,
                  bags.off[no - 1]);
    for (int64_t j = 1; j < no; ++j)
      AOTIRT_ENSURE(bags.off[j] >= bags.off[j - 1], kInvalidArgument,
                    "embedding_bag: offsets must be non-decreasing, but offsets[{}] = {} follows {}", j, bags.off[j],
                    bags.off[j - 1]);
  }
  for (int64_t i = 0; i < n; ++i)
    AOTIRT_ENSURE(bags.idx[i] >= 0 && bags.idx[i] < rows, kInvalidArgument,
                  "embedding_bag: indices[{}] = {} is out of range for a weight of {} rows", i, bags.idx[i], rows);
  bags.begin.resize(nb);
  bags.end.resize(nb);
  bags.size.resize(nb);
  for (int64_t b = 0; b < nb; ++b) {
    bags.begin[b] = bags.off[b];
    const bool fast_sum = a.fast_path && a.mode != BagMode::kMax;
    bags.end[b] = b + 1 < nb ? bags.off[b + 1] : (fast_sum && b + 1 < no ? bags.off[b + 1] : n);
    bags.size[b] = (b + 1 < nb ? bags.off[b + 1] : n) - bags.off[b];
  }
  const DType wd = a.weight->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(DimVector{nb, a.dim}, wd, DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl o2b, empty_contiguous(DimVector{a.offset2bag_size}, a.index_dtype, DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl bsz, empty_contiguous(DimVector{a.bag_size_size}, a.index_dtype, DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl mix, empty_contiguous(a.max_indices_sizes, a.index_dtype, DeviceId{}));
  std::vector<int64_t> max_idx(a.mode == BagMode::kMax ? static_cast<size_t>(nb * a.dim) : 0);
  auto reduce = [&](auto t) { reduce_bags<decltype(t)>(a, bags, out, max_idx); };
  switch (wd) {
    case DType::kFloat32: reduce(F32{}); break;
    case DType::kFloat64: reduce(F64{}); break;
    case DType::kBFloat16: reduce(BF16{}); break;
    case DType::kFloat16: reduce(F16{}); break;
    default: return AOTIRT_STATUS(kUnimplemented, "embedding_bag: weight dtype {}", dtype_name(wd));
  }
  // offset2bag: the bag of each index (-1 when there are no bags).
  if (a.offset2bag_size > 0) {
    int64_t bag = -1;
    for (int64_t i = 0, j = 0; i < n; ++i) {
      while (j < nb && bags.off[j] <= i) {
        ++bag;
        ++j;
      }
      store_index(o2b, i, bag);
    }
  }
  // bag_size: zeros for sum, else each bag's size less its padding.
  for (int64_t b = 0; b < a.bag_size_size; ++b) store_index(bsz, b, a.mode == BagMode::kSum ? 0 : bags.size[b]);
  if (a.mode == BagMode::kMax) {
    for (int64_t i = 0; i < nb * a.dim; ++i) store_index(mix, i, max_idx[i]);
  } else {
    if (bsz.nbytes() > 0) std::memcpy(mix.data_ptr(), bsz.data_ptr(), bsz.nbytes());
  }
  AtenTensorHandle h[4] = {nullptr, nullptr, nullptr, nullptr};
  TensorImpl* parts[4] = {&out, &o2b, &bsz, &mix};
  try {
    for (int k = 0; k < 4; ++k) h[k] = new_handle(std::move(*parts[k]));
  } catch (...) {
    for (AtenTensorHandle x : h) delete impl_of(x);
    throw;
  }
  *ret0 = h[0];
  *ret1 = h[1];
  *ret2 = h[2];
  *ret3 = h[3];
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu__embedding_bag(AtenTensorHandle weight, AtenTensorHandle indices,
                                             AtenTensorHandle offsets, int32_t scale_grad_by_freq, int64_t mode,
                                             int32_t sparse, AtenTensorHandle* per_sample_weights,
                                             int32_t include_last_offset, int64_t padding_idx, AtenTensorHandle* ret0,
                                             AtenTensorHandle* ret1, AtenTensorHandle* ret2,
                                             AtenTensorHandle* ret3) noexcept {
  (void)scale_grad_by_freq;  // both only shape the gradient
  (void)sparse;
  return shim_call(__func__, [&] {
    return embedding_bag(optional_tensor(per_sample_weights), weight, indices, offsets, mode, include_last_offset != 0,
                         padding_idx, false, ret0, ret1, ret2, ret3);
  });
}

AOTITorchError aoti_torch_cpu__embedding_bag_forward_only(AtenTensorHandle weight, AtenTensorHandle indices,
                                                          AtenTensorHandle offsets, int32_t scale_grad_by_freq,
                                                          int64_t mode, int32_t sparse,
                                                          AtenTensorHandle* per_sample_weights,
                                                          int32_t include_last_offset, int64_t padding_idx,
                                                          AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                                          AtenTensorHandle* ret2, AtenTensorHandle* ret3) noexcept {
  (void)scale_grad_by_freq;
  (void)sparse;
  return shim_call(__func__, [&] {
    return embedding_bag(optional_tensor(per_sample_weights), weight, indices, offsets, mode, include_last_offset != 0,
                         padding_idx, true, ret0, ret1, ret2, ret3);
  });
}

}  // extern "C"
