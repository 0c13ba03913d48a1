// CPU amax (aoti_torch_cpu_aotirt_amax, aotirt's own op behind the
// device-generic aoti_torch_aten_amax for CPU tensors): the
// maximum over the listed dims (all when none are), NaN winning as in
// torch. When the input's innermost dim is reduced, each output element
// walks its reduced dims innermost-stride first (many outputs split over
// OpenMP threads; a few large reductions split each range instead); when it
// is kept, whole slices are folded into the output in memory order. max is
// exact in any order, so no split changes the result.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <vector>

#include "backends/cpu/ops/cpu_elementwise_loop.h"
#include "backends/cpu/ops/cpu_elementwise_types.h"
#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "device/device.h"
#include "ops/elementwise_args.h"
#include "shim/abi/cpu_elementwise.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;
using namespace aotirt::cpu_ops::ew;

namespace {

template <class C>
C max_of(C acc, C v) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(acc)) return acc;
    if (std::isnan(v)) return v;
    return v > acc ? v : acc;
  } else if constexpr (std::is_same_v<C, bool>) {
    return acc || v;
  } else {
    return v > acc ? v : acc;
  }
}

// The reduced dims of the input, innermost (smallest stride) last, as
// sizes and byte strides.
struct ReducedSpace {
  std::vector<int64_t> sizes, strides;
  int64_t count = 1;
};

// Max over the reduced elements [start, start + n) of the reduced space
// (row-major over |r|), from |base|; n >= 1. The innermost reduced dim runs
// as a plain strided loop; the odometer only steps the outer ones.
template <class T>
typename T::C reduce_range(const char* base, const ReducedSpace& r, int64_t start, int64_t n) {
  const int64_t nd = r.sizes.size();
  if (nd == 0) return T::load(base);
  // On the stack: this runs inside OpenMP regions, which nothing may throw
  // out of (amax_args caps the rank).
  int64_t idx[ops::ew::kMaxAmaxDims];
  int64_t rest = start, off = 0;
  for (int64_t d = nd - 1; d >= 0; --d) {
    idx[d] = rest % r.sizes[d];
    rest /= r.sizes[d];
    off += idx[d] * r.strides[d];
  }
  const int64_t last = nd - 1, len = r.sizes[last], step = r.strides[last];
  typename T::C acc = T::load(base + off);
  int64_t done = 0;
  while (true) {
    const int64_t run = std::min(n - done, len - idx[last]);
    const char* p = base + off;
    for (int64_t k = 0; k < run; ++k) acc = max_of(acc, T::load(p + k * step));
    done += run;
    if (done >= n) break;
    // Back to the row's start, then the next row: step the outer dims.
    off -= idx[last] * step;
    idx[last] = 0;
    for (int64_t d = last - 1; d >= 0; --d) {
      if (++idx[d] < r.sizes[d]) {
        off += r.strides[d];
        break;
      }
      off -= (r.sizes[d] - 1) * r.strides[d];
      idx[d] = 0;
    }
  }
  return acc;
}

// out = max over the reduced space of the input's slices: the first slice
// copied, each next one folded in elementwise (ElementLoop splits every
// slice over the threads).
template <class T>
void sweep_slices(const TensorImpl& out, const TensorImpl& in, const std::vector<int64_t>& kept_sizes,
                  const std::vector<int64_t>& kept_strides, const ReducedSpace& r) {
  const int64_t es = static_cast<int64_t>(in.element_size());
  LoopOperand o;
  o.data = static_cast<char*>(out.data_ptr());
  o.sizes = DimVector(kept_sizes);
  o.strides = contiguous_strides(o.sizes);
  o.element_size = static_cast<int64_t>(out.element_size());
  LoopOperand x;
  x.sizes = o.sizes;
  x.strides.resize(kept_strides.size());
  for (size_t d = 0; d < kept_strides.size(); ++d) x.strides[d] = kept_strides[d] / es;
  x.element_size = es;
  const int64_t nd = r.sizes.size();
  std::vector<int64_t> idx(nd, 0);
  int64_t off = 0;
  for (int64_t k = 0; k < r.count; ++k) {
    x.data = static_cast<char*>(in.data_ptr()) + off;
    ElementLoop loop(o.sizes, {o, x});
    if (k == 0)
      loop.run([](char* const* p, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) T::store(p[0] + i * s[0], T::load(p[1] + i * s[1]));
      });
    else
      loop.run([](char* const* p, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          T::store(p[0] + i * s[0], max_of(T::load(p[0] + i * s[0]), T::load(p[1] + i * s[1])));
      });
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < r.sizes[d]) {
        off += r.strides[d];
        break;
      }
      off -= (r.sizes[d] - 1) * r.strides[d];
      idx[d] = 0;
    }
  }
}

template <class T>
void amax_kernel(const ops::ew::AmaxArgs& a, const TensorImpl& out) {
  using C = typename T::C;
  const TensorImpl& in = *a.self;
  const int64_t es = static_cast<int64_t>(in.element_size());
  const int64_t rank = in.dim();
  std::vector<int64_t> kept_sizes, kept_strides;
  ReducedSpace r;
  std::vector<int64_t> red_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (a.reduced[d]) {
      red_dims.push_back(d);
    } else {
      kept_sizes.push_back(in.sizes()[d]);
      kept_strides.push_back(in.strides()[d] * es);
    }
  }
  std::stable_sort(red_dims.begin(), red_dims.end(),
                   [&](int64_t x, int64_t y) { return std::llabs(in.strides()[x]) > std::llabs(in.strides()[y]); });
  for (int64_t d : red_dims) {
    r.sizes.push_back(in.sizes()[d]);
    r.strides.push_back(in.strides()[d] * es);
    r.count *= in.sizes()[d];
  }
  const int64_t outputs = out.numel();
  const char* src = static_cast<const char*>(in.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  const int64_t osz = static_cast<int64_t>(out.element_size());
  auto base_of = [&](int64_t o) {
    int64_t off = 0;
    for (int64_t d = static_cast<int64_t>(kept_sizes.size()) - 1; d >= 0; --d) {
      off += (o % kept_sizes[d]) * kept_strides[d];
      o /= kept_sizes[d];
    }
    return src + off;
  };
  // When the input's innermost dim is kept, each output walking its own
  // reduced elements would stride across memory; instead sweep whole slices
  // (one reduced index each) into the output, which reads the input in order.
  int64_t innermost = -1;
  for (int64_t d = 0; d < rank; ++d)
    if (in.sizes()[d] > 1 && (innermost < 0 || std::llabs(in.strides()[d]) < std::llabs(in.strides()[innermost])))
      innermost = d;
  if (innermost >= 0 && !a.reduced[innermost] && outputs >= 64 && r.count > 1) {
    sweep_slices<T>(out, in, kept_sizes, kept_strides, r);
    return;
  }
  constexpr int64_t kParallelElements = int64_t{1} << 15;
  const int threads = omp_get_max_threads();
  const bool big = outputs * r.count >= kParallelElements && threads > 1;
  if (!big || outputs >= threads) {
#pragma omp parallel for schedule(static) if (big)
    for (int64_t o = 0; o < outputs; ++o) T::store(dst + o * osz, reduce_range<T>(base_of(o), r, 0, r.count));
    return;
  }
  // Few outputs, long reductions: split each range over the threads.
  // Not std::vector: vector<bool> packs bits, which threads cannot write apart.
  std::unique_ptr<C[]> partial(new C[static_cast<size_t>(threads)]);
  for (int64_t o = 0; o < outputs; ++o) {
    const char* base = base_of(o);
    const int64_t chunk = (r.count + threads - 1) / threads;
    const int64_t chunks = (r.count + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t c = 0; c < chunks; ++c)
      partial[c] = reduce_range<T>(base, r, c * chunk, std::min(chunk, r.count - c * chunk));
    C acc = partial[0];
    for (int64_t c = 1; c < chunks; ++c) acc = max_of(acc, partial[c]);
    T::store(dst + o * osz, acc);
  }
}

Status amax(AtenTensorHandle self, const int64_t* dim, int64_t dim_len, int32_t keepdim, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, require_tensor(self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*t, "self"));
  AOTIRT_ASSIGN_OR_RETURN(ops::ew::AmaxArgs a, ops::ew::amax_args(self, dim, dim_len, keepdim != 0));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(a.out_sizes, a.out_strides, a.self->dtype(), DeviceId{}));
  if (out.numel() > 0)
    AOTIRT_RETURN_IF_ERROR(dispatch(a.self->dtype(), [&](auto t) {
      using T = decltype(t);
      if constexpr (!kIsComplex<T>) amax_kernel<T>(a, out);
    }));
  *ret = new_handle(std::move(out));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_aotirt_amax(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                          int32_t keepdim, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return amax(self, dim, dim_len_, keepdim, ret0); });
}

}  // extern "C"
