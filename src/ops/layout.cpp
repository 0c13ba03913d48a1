#include "ops/layout.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace aotirt {
namespace ops {

bool is_non_overlapping_and_dense(const TensorImpl& t) {
  const int64_t nd = t.dim();
  if (nd == 0) return true;
  std::vector<int64_t> order(nd);
  std::iota(order.begin(), order.end(), 0);
  // Size-0/1 dims place no constraint; sort them last so the walk ends there.
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    bool a_trivial = t.sizes()[a] < 2, b_trivial = t.sizes()[b] < 2;
    if (a_trivial != b_trivial) return b_trivial;
    return t.strides()[a] < t.strides()[b];
  });
  int64_t expected = 1;
  for (int64_t d : order) {
    if (t.sizes()[d] < 2) return true;
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}

DimVector dense_strides_like(const DimVector& sizes, const DimVector& strides) {
  const int64_t nd = sizes.size();
  std::vector<int64_t> inner_first(nd);
  for (int64_t i = 0; i < nd; ++i) inner_first[i] = nd - 1 - i;
  // > 0: |a| belongs outside |b|; < 0: inside; 0: undecided.
  auto compare = [&](int64_t a, int64_t b) -> int {
    const int64_t sa = strides[a], sb = strides[b];
    if (sa == 0 || sb == 0) return 0;
    if (sa != sb) return sa < sb ? -1 : 1;
    return sizes[a] > sizes[b] ? 1 : 0;
  };
  for (int64_t i = 1; i < nd; ++i) {
    int64_t moving = i;
    for (int64_t j = i - 1; j >= 0; --j) {
      const int c = compare(inner_first[j], inner_first[moving]);
      if (c > 0) {
        std::swap(inner_first[j], inner_first[moving]);
        moving = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  DimVector out;
  out.resize(nd);
  int64_t acc = 1;
  for (int64_t d : inner_first) {
    out[d] = acc;
    acc *= std::max<int64_t>(sizes[d], 1);
  }
  return out;
}

DimVector empty_like_strides(const TensorImpl& t) {
  if (is_non_overlapping_and_dense(t)) return t.strides();
  return dense_strides_like(t.sizes(), t.strides());
}

bool is_channels_last(const DimVector& sizes, const DimVector& strides) {
  static const int kOrder4[] = {1, 3, 2, 0};
  static const int kOrder5[] = {1, 4, 3, 2, 0};
  const int nd = static_cast<int>(sizes.size());
  if (nd != 4 && nd != 5) return false;
  const int* order = nd == 4 ? kOrder4 : kOrder5;
  if (strides[1] == 0) return false;
  int64_t min = 0;
  for (int i = 0; i < nd; ++i) {
    const int d = order[i];
    if (sizes[d] == 0) return false;
    if (strides[d] < min) return false;
    if (d == 0 && min == strides[1]) return false;
    min = strides[d];
    if (sizes[d] > 1) min *= sizes[d];
  }
  return true;
}

DimVector channels_last_strides(const DimVector& sizes) {
  const int64_t nd = sizes.size();
  DimVector strides;
  strides.resize(nd);
  int64_t acc = 1;
  strides[1] = acc;
  acc *= sizes[1];
  for (int64_t d = nd - 1; d >= 2; --d) {
    strides[d] = acc;
    acc *= sizes[d];
  }
  strides[0] = acc;
  return strides;
}

TensorImpl reshape_contiguous(const TensorImpl& t, const DimVector& sizes) {
  return TensorImpl(t.storage(), t.dtype(), sizes, contiguous_strides(sizes), t.storage_offset());
}

}  // namespace ops
}  // namespace aotirt
