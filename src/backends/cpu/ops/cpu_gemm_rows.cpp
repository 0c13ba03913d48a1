// Few-row GEMM kernels (see cpu_gemm_rows.h). One body, written with GCC's
// vector extensions, is compiled three times: for AVX-512, for AVX2+FMA and
// portably; the running CPU picks one on first use. Columns are split into
// blocks that OpenMP threads share out; each block streams its part of B once.
#include "backends/cpu/ops/cpu_gemm_rows.h"

#include <omp.h>

// The vector helpers below are always inlined, so their by-value vector
// arguments never cross a call boundary whose ABI could differ.
#pragma GCC diagnostic ignored "-Wpsabi"

#include <algorithm>
#include <cstring>

#include "backends/cpu/cpu_options.h"
#include "backends/cpu/ops/cpu_op_util.h"
#include "package/cpu_features.h"

namespace aotirt {
namespace cpu_ops {
namespace {

// Vector types of L float lanes, and the 16-bit and 32-bit integer vectors of
// as many lanes that widen bfloat16.
template <int L>
struct Lanes;
template <>
struct Lanes<16> {
  typedef float F __attribute__((vector_size(64)));
  typedef uint16_t H __attribute__((vector_size(32)));
  typedef uint32_t U __attribute__((vector_size(64)));
};
template <>
struct Lanes<8> {
  typedef float F __attribute__((vector_size(32)));
  typedef uint16_t H __attribute__((vector_size(16)));
  typedef uint32_t U __attribute__((vector_size(32)));
};
template <>
struct Lanes<4> {
  typedef float F __attribute__((vector_size(16)));
  typedef uint16_t H __attribute__((vector_size(8)));
  typedef uint32_t U __attribute__((vector_size(16)));
};

#define AOTIRT_ROWS_INLINE inline __attribute__((always_inline))

// L values of B from element |i| on, widened to float32.
template <int L, bool kBf16>
AOTIRT_ROWS_INLINE typename Lanes<L>::F load_b(const void* b, int64_t i) {
  typename Lanes<L>::F f;
  if constexpr (kBf16) {
    typename Lanes<L>::H h;
    std::memcpy(&h, static_cast<const uint16_t*>(b) + i, sizeof(h));
    typename Lanes<L>::U u = __builtin_convertvector(h, typename Lanes<L>::U) << 16;
    std::memcpy(&f, &u, sizeof(f));
  } else {
    std::memcpy(&f, static_cast<const float*>(b) + i, sizeof(f));
  }
  return f;
}

template <bool kBf16>
AOTIRT_ROWS_INLINE float scalar_b(const void* b, int64_t i) {
  if constexpr (kBf16) {
    uint32_t u = static_cast<uint32_t>(static_cast<const uint16_t*>(b)[i]) << 16;
    float f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
  } else {
    return static_cast<const float*>(b)[i];
  }
}

template <int L>
AOTIRT_ROWS_INLINE typename Lanes<L>::F load_a(const float* a) {
  typename Lanes<L>::F f;
  std::memcpy(&f, a, sizeof(f));
  return f;
}

template <int L>
AOTIRT_ROWS_INLINE float sum_lanes(typename Lanes<L>::F v) {
  float s = 0.0f;
  for (int i = 0; i < L; ++i) s += v[i];
  return s;
}

AOTIRT_ROWS_INLINE void put(const RowsProblem& p, int64_t r, int64_t n, float s) {
  float* c = p.c + r * p.c_rs + n * p.c_cs;
  *c = p.beta == 0.0f ? p.alpha * s : p.alpha * s + p.beta * *c;
}

// B k-contiguous: R rows of C times C columns, each a dot product over K.
template <int L, bool kBf16, int R, int C>
AOTIRT_ROWS_INLINE void k_tile(const RowsProblem& p, int64_t r0, int64_t n0) {
  using F = typename Lanes<L>::F;
  F acc[R][C] = {};
  const float* a = p.a + r0 * p.k;
  int64_t k = 0;
  for (; k + L <= p.k; k += L) {
    F w[C];
    for (int c = 0; c < C; ++c) w[c] = load_b<L, kBf16>(p.b, (n0 + c) * p.ldb + k);
    for (int r = 0; r < R; ++r) {
      const F x = load_a<L>(a + r * p.k + k);
      for (int c = 0; c < C; ++c) acc[r][c] += x * w[c];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      float s = sum_lanes<L>(acc[r][c]);
      for (int64_t kk = k; kk < p.k; ++kk) s += a[r * p.k + kk] * scalar_b<kBf16>(p.b, (n0 + c) * p.ldb + kk);
      put(p, r0 + r, n0 + c, s);
    }
}

// B n-contiguous: R rows of C times V vectors of columns, summed over K.
template <int L, bool kBf16, int R, int V>
AOTIRT_ROWS_INLINE void n_tile(const RowsProblem& p, int64_t r0, int64_t n0) {
  using F = typename Lanes<L>::F;
  F acc[R][V] = {};
  const float* a = p.a + r0 * p.k;
  for (int64_t k = 0; k < p.k; ++k) {
    F w[V];
    for (int v = 0; v < V; ++v) w[v] = load_b<L, kBf16>(p.b, k * p.ldb + n0 + v * L);
    for (int r = 0; r < R; ++r) {
      const float x = a[r * p.k + k];
      for (int v = 0; v < V; ++v) acc[r][v] += w[v] * x;
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v)
      for (int i = 0; i < L; ++i) put(p, r0 + r, n0 + v * L + i, acc[r][v][i]);
}

// Columns of B the n-contiguous kernel leaves to scalar code (fewer than a vector).
template <bool kBf16>
void n_columns_scalar(const RowsProblem& p, int64_t n_begin, int64_t n_end) {
  for (int64_t r = 0; r < p.m; ++r)
    for (int64_t n = n_begin; n < n_end; ++n) {
      float s = 0.0f;
      for (int64_t k = 0; k < p.k; ++k) s += p.a[r * p.k + k] * scalar_b<kBf16>(p.b, k * p.ldb + n);
      put(p, r, n, s);
    }
}

constexpr int kKCols = 4;  // columns per k-contiguous block
constexpr int kNVecs = 4;  // vectors per n-contiguous block

// The columns of block |blk|: [n0, n0 + width).
template <int L>
int64_t block_width(RowsLayout layout) {
  return layout == RowsLayout::kKContiguous ? kKCols : int64_t(kNVecs) * L;
}

// Every row of C for the column blocks [begin, end).
template <int L, bool kBf16>
AOTIRT_ROWS_INLINE void run_blocks(const RowsProblem& p, int64_t begin, int64_t end) {
  const int64_t width = block_width<L>(p.layout);
  for (int64_t blk = begin; blk < end; ++blk) {
    const int64_t n0 = blk * width;
    const int64_t cols = std::min(width, p.n - n0);
    int64_t r0 = 0;
    if (p.layout == RowsLayout::kKContiguous) {
      if (cols == kKCols) {
        for (; r0 + 2 <= p.m; r0 += 2) k_tile<L, kBf16, 2, kKCols>(p, r0, n0);
        if (r0 < p.m) k_tile<L, kBf16, 1, kKCols>(p, r0, n0);
      } else {
        for (int64_t c = 0; c < cols; ++c)
          for (r0 = 0; r0 < p.m; ++r0) k_tile<L, kBf16, 1, 1>(p, r0, n0 + c);
      }
    } else if (cols == width) {
      for (; r0 + 2 <= p.m; r0 += 2) n_tile<L, kBf16, 2, kNVecs>(p, r0, n0);
      if (r0 < p.m) n_tile<L, kBf16, 1, kNVecs>(p, r0, n0);
    } else {
      int64_t n = n0;
      for (; n + L <= p.n; n += L)
        for (r0 = 0; r0 < p.m; ++r0) n_tile<L, kBf16, 1, 1>(p, r0, n);
      n_columns_scalar<kBf16>(p, n, p.n);
    }
  }
}

using BlocksFn = void (*)(const RowsProblem&, int64_t, int64_t);

template <bool kBf16>
void blocks_portable(const RowsProblem& p, int64_t begin, int64_t end) {
  run_blocks<4, kBf16>(p, begin, end);
}

#if defined(__x86_64__)
template <bool kBf16>
__attribute__((target("avx2,fma"))) void blocks_avx2(const RowsProblem& p, int64_t begin, int64_t end) {
  run_blocks<8, kBf16>(p, begin, end);
}

template <bool kBf16>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma"))) void blocks_avx512(const RowsProblem& p,
                                                                                   int64_t begin, int64_t end) {
  run_blocks<16, kBf16>(p, begin, end);
}
#endif

struct Kernels {
  BlocksFn f32 = blocks_portable<false>;
  BlocksFn bf16 = blocks_portable<true>;
  int lanes = 4;
};

const Kernels& kernels() {
  static const Kernels k = [] {
    Kernels out;
#if defined(__x86_64__)
    switch (cpu_kernel_isa(cpu_options().aten_cpu_capability)) {
      case CpuKernelIsa::kAvx512:
        out = {blocks_avx512<false>, blocks_avx512<true>, 16};
        break;
      case CpuKernelIsa::kAvx2:
        out = {blocks_avx2<false>, blocks_avx2<true>, 8};
        break;
      case CpuKernelIsa::kPortable:
        break;
    }
#endif
    return out;
  }();
  return k;
}

}  // namespace

void gemm_rows(const RowsProblem& p) {
  if (p.m <= 0 || p.n <= 0) return;
  const Kernels& ks = kernels();
  const BlocksFn fn = p.b_bf16 ? ks.bf16 : ks.f32;
  const int64_t width = p.layout == RowsLayout::kKContiguous ? kKCols : int64_t(kNVecs) * ks.lanes;
  const int64_t blocks = (p.n + width - 1) / width;
  // Threads only pay off once each has a few hundred KiB of B to stream.
  const int64_t bytes = p.n * p.k * (p.b_bf16 ? 2 : 4);
  const int threads = static_cast<int>(std::min<int64_t>({omp_get_max_threads(), blocks, bytes / (256 << 10) + 1}));
  parallel_ranges(blocks, threads, [&](int64_t begin, int64_t end) { fn(p, begin, end); });
}

}  // namespace cpu_ops
}  // namespace aotirt
