// Scaled-dot-product attention: one block per (batch, head) x query tile x key
// split. The block's warps share each key/value tile in shared memory (as
// float32); each warp owns some query rows. Per tile a lane scores one key,
// the warp updates the row's running max and sum (online softmax, in base 2),
// and each lane accumulates its slice of the output features. With several
// key splits, each block writes a normalized partial result and its
// log-sum-exp, and a second kernel merges them. A decode step (a few query
// rows against a key cache) has a kernel of its own, decode_kernel below,
// one block per key/value head's query rows.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "backends/cuda/launch/cuda_dependent_launch.h"
#include "backends/cuda/ops/attention/cuda_attention_kernel.h"

namespace aotirt {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kTile = kCudaAttentionKeyTile;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <class T>
__device__ __forceinline__ float load_f(const T* p) { return static_cast<float>(*p); }
template <>
__device__ __forceinline__ float load_f(const __half* p) { return __half2float(*p); }
template <>
__device__ __forceinline__ float load_f(const __nv_bfloat16* p) { return __bfloat162float(*p); }

template <class T>
__device__ __forceinline__ T store_f(float v) { return static_cast<T>(v); }
template <>
__device__ __forceinline__ __half store_f(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 store_f(float v) { return __float2bfloat16_rn(v); }

__device__ __forceinline__ float load_any(const void* p, int dtype) {
  switch (dtype) {
    case 5: return __half2float(*static_cast<const __half*>(p));
    case 15: return __bfloat162float(*static_cast<const __nv_bfloat16*>(p));
    default: return *static_cast<const float*>(p);
  }
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Shared-memory row stride for q and k: odd, so lanes reading different keys
// at the same feature hit different banks.
__host__ __device__ __forceinline__ int padded_dim(int64_t d) { return static_cast<int>(d | 1); }

__host__ __device__ __forceinline__ size_t smem_floats(int rows, int64_t e, int64_t dv) {
  const int es = padded_dim(e);
  return static_cast<size_t>(rows) * es + static_cast<size_t>(kTile) * es + static_cast<size_t>(kTile) * dv +
         static_cast<size_t>(rows) * kTile;
}

template <class T, int kRows, int kChunks>
__global__ void __launch_bounds__(kThreads)
    attention_kernel(CudaAttentionParams p) {
  constexpr int kBlockRows = kRows * kWarps;
  extern __shared__ float smem[];
  const int es = padded_dim(p.head_dim);
  const int E = static_cast<int>(p.head_dim), DV = static_cast<int>(p.head_dim_v);
  float* q_s = smem;                      // [kBlockRows][es]
  float* k_s = q_s + kBlockRows * es;     // [kTile][es]
  float* v_s = k_s + kTile * es;          // [kTile][DV]
  float* p_s = v_s + kTile * DV;          // [kBlockRows][kTile]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t bh = blockIdx.x;
  const int64_t b = bh / p.heads_q, h = bh % p.heads_q;
  const int64_t hk = h / (p.heads_q / p.heads_kv);
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kBlockRows;
  const int split = blockIdx.z;

  const T* q = static_cast<const T*>(p.q) + b * p.q_strides[0] + h * p.q_strides[1];
  const T* k = static_cast<const T*>(p.k) + b * p.k_strides[0] + hk * p.k_strides[1];
  const T* v = static_cast<const T*>(p.v) + b * p.v_strides[0] + hk * p.v_strides[1];

  // This block's key range.
  const int64_t per_split =
      ((p.len_kv + p.num_splits - 1) / p.num_splits + kTile - 1) / kTile * kTile;
  const int64_t kv_begin = split * per_split;
  int64_t kv_end = min(p.len_kv, kv_begin + per_split);
  const int64_t last_row = min(row0 + kBlockRows, p.len_q) - 1;
  if (p.causal) kv_end = min(kv_end, last_row + 1 + p.causal_offset);

  for (int idx = threadIdx.x; idx < kBlockRows * E; idx += kThreads) {
    const int r = idx / E, e = idx % E;
    const int64_t i = row0 + r;
    q_s[r * es + e] = i < p.len_q ? load_f(q + i * p.q_strides[2] + e * p.q_strides[3]) : 0.f;
  }

  float m[kRows], l[kRows], acc[kRows][kChunks];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) acc[r][c] = 0.f;
  }
  const float qk_scale = p.scale * kLog2e;

  for (int64_t t0 = kv_begin; t0 < kv_end; t0 += kTile) {
    __syncthreads();
    for (int idx = threadIdx.x; idx < kTile * E; idx += kThreads) {
      const int j = idx / E, e = idx % E;
      const int64_t key = t0 + j;
      k_s[j * es + e] = key < kv_end ? load_f(k + key * p.k_strides[2] + e * p.k_strides[3]) : 0.f;
    }
    for (int idx = threadIdx.x; idx < kTile * DV; idx += kThreads) {
      const int j = idx / DV, d = idx % DV;
      const int64_t key = t0 + j;
      v_s[j * DV + d] = key < kv_end ? load_f(v + key * p.v_strides[2] + d * p.v_strides[3]) : 0.f;
    }
    __syncthreads();

#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int br = warp * kRows + r;
      const int64_t i = row0 + br;
      if (i >= p.len_q) continue;  // uniform across the warp
      const int64_t key = t0 + lane;
      bool valid = key < kv_end && (!p.causal || key <= i + p.causal_offset);
      float s = -INFINITY;
      if (valid) {
        const float* qr = q_s + br * es;
        const float* kr = k_s + lane * es;
        float dot = 0.f;
        for (int e = 0; e < E; ++e) dot = fmaf(qr[e], kr[e], dot);
        s = dot * qk_scale;
        if (p.mask_kind != kCudaMaskNone) {
          const char* mp = static_cast<const char*>(p.mask);
          const int64_t off = b * p.mask_strides[0] + h * p.mask_strides[1] + i * p.mask_strides[2] +
                              key * p.mask_strides[3];
          if (p.mask_kind == kCudaMaskBool) {
            if (!mp[off]) s = -INFINITY;
          } else {
            const int size = p.mask_dtype == 6 ? 4 : 2;
            s += load_any(mp + off * size, p.mask_dtype) * kLog2e;
          }
        }
      }
      const float m_new = fmaxf(m[r], warp_max(s));
      float pj = 0.f;
      if (m_new != -INFINITY && s != -INFINITY) pj = exp2f(s - m_new);
      const float corr = m[r] == -INFINITY ? 0.f : exp2f(m[r] - m_new);
      if (m_new != -INFINITY) {
        l[r] = l[r] * corr + warp_sum(pj);
#pragma unroll
        for (int c = 0; c < kChunks; ++c) acc[r][c] *= corr;
        m[r] = m_new;
      }
      p_s[br * kTile + lane] = pj;
      __syncwarp();
      const int tile_keys = kv_end - t0 < kTile ? static_cast<int>(kv_end - t0) : kTile;
      for (int j = 0; j < tile_keys; ++j) {
        const float pv = p_s[br * kTile + j];
        const float* vr = v_s + j * DV;
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
          const int d = lane + 32 * c;
          if (d < DV) acc[r][c] = fmaf(pv, vr[d], acc[r][c]);
        }
      }
      __syncwarp();
    }
  }

#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t i = row0 + warp * kRows + r;
    if (i >= p.len_q) continue;
    // A row that saw no key (all masked) gives zeros and lse = -inf.
    const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;
    const float lse = l[r] > 0.f ? (m[r] + log2f(l[r])) * kLn2 : -INFINITY;
    if (p.num_splits == 1) {
      T* o = static_cast<T*>(p.out) + b * p.out_strides[0] + h * p.out_strides[1] + i * p.out_strides[2];
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        const int d = lane + 32 * c;
        if (d < DV) o[d * p.out_strides[3]] = store_f<T>(acc[r][c] * inv);
      }
      if (p.lse && lane == 0) p.lse[b * p.lse_strides[0] + h * p.lse_strides[1] + i * p.lse_strides[2]] = lse;
    } else {
      const int64_t rowid = (bh * p.len_q + i);
      const int64_t rows_total = p.batch * p.heads_q * p.len_q;
      float* po = p.workspace + (static_cast<int64_t>(split) * rows_total + rowid) * (DV + 1);
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        const int d = lane + 32 * c;
        if (d < DV) po[d] = acc[r][c] * inv;
      }
      if (lane == 0) po[DV] = lse;
    }
  }
}

// Merges the splits' partial rows: one block a row. Every split's
// log-sum-exp is read at once (a thread each) and its weight kept in shared
// memory, and the partial rows are read eight splits at a time with the
// loads issued before any is used: read one after another, the dependent
// round trips to L2 made this kernel as long as the split kernel's own work
// on a decode step.
constexpr int kCombineThreads = 128;
constexpr int kCombineMaxSplits = 64;
constexpr int kCombineUnroll = 8;

template <class T>
__global__ void __launch_bounds__(kCombineThreads) combine_kernel(CudaAttentionParams p) {
  dependency_wait();  // a no-op unless launched dependent on the decode kernel
  dependents_may_start();
  __shared__ float w_s[kCombineMaxSplits];
  __shared__ float lse_s;
  const int64_t rowid = blockIdx.x;
  const int64_t rows_total = p.batch * p.heads_q * p.len_q;
  const int64_t i = rowid % p.len_q;
  const int64_t bh = rowid / p.len_q;
  const int64_t b = bh / p.heads_q, h = bh % p.heads_q;
  const int DV = static_cast<int>(p.head_dim_v);
  const int64_t pitch = DV + 1;
  const int splits = p.num_splits;
  const int tid = threadIdx.x;
  if (tid < 32) {
    // Splits 0..63 over the warp's lanes, two a lane.
    const float a = tid < splits ? p.workspace[(tid * rows_total + rowid) * pitch + DV] : -INFINITY;
    const float c = tid + 32 < splits ? p.workspace[((tid + 32) * rows_total + rowid) * pitch + DV] : -INFINITY;
    const float mx = warp_max(fmaxf(a, c));
    float total = 0.f;
    if (mx != -INFINITY) total = warp_sum((a == -INFINITY ? 0.f : expf(a - mx)) + (c == -INFINITY ? 0.f : expf(c - mx)));
    const float lse = mx == -INFINITY ? -INFINITY : mx + logf(total);
    if (tid < splits) w_s[tid] = (a == -INFINITY || lse == -INFINITY) ? 0.f : expf(a - lse);
    if (tid + 32 < splits) w_s[tid + 32] = (c == -INFINITY || lse == -INFINITY) ? 0.f : expf(c - lse);
    if (tid == 0) lse_s = lse;
  }
  __syncthreads();
  T* o = static_cast<T*>(p.out) + b * p.out_strides[0] + h * p.out_strides[1] + i * p.out_strides[2];
  for (int d = tid; d < DV; d += blockDim.x) {
    float sum = 0.f;
    for (int s0 = 0; s0 < splits; s0 += kCombineUnroll) {
      float part[kCombineUnroll];
#pragma unroll
      for (int u = 0; u < kCombineUnroll; ++u)
        part[u] = s0 + u < splits ? p.workspace[((s0 + u) * rows_total + rowid) * pitch + d] : 0.f;
#pragma unroll
      for (int u = 0; u < kCombineUnroll; ++u)
        if (s0 + u < splits) sum += w_s[s0 + u] * part[u];
    }
    o[d * p.out_strides[3]] = store_f<T>(sum);
  }
  if (p.lse && tid == 0) p.lse[b * p.lse_strides[0] + h * p.lse_strides[1] + i * p.lse_strides[2]] = lse_s;
}

// Decode: a few query rows against a cache of keys, bound by latency: the
// time of one warp's chain of instructions and memory round trips, not the
// bytes. One block of kDecodeThreads threads serves the query rows that
// share a key/value head (the grouped query heads times the step's queries,
// up to R of them) over one split of the keys, so each key and value is
// loaded and unpacked once for all of them, not once a row. A group of
// lanes holds one key's features in 16-byte loads (8 lanes for 64 bfloat16
// features), so a warp scores several keys at once with a shuffle
// reduction; each group keeps an online softmax per row, and the groups and
// warps merge at the end. A pass loads P keys a block (their keys, values
// and mask entries, before any is used), so a warp waits on memory once a
// pass. Long caches split into many blocks of one pass each (P = 64), which
// keeps each warp's chain short and the SMs full; an unsplit cache with one
// row a block takes passes of 8 keys a group (256 keys of 64 bfloat16
// features a block). Where a block starts (its head, rows and keys) comes
// from the host in DecodeGeometry, so the kernel does no 64-bit divisions. The general kernel above, which staged 32-key tiles
// through shared memory and scored them one key per lane, took more than
// twice the time on GPT-2's decode step (bench/notes.md, row 13).
constexpr int kDecodeThreads = 256;

// A mask entry of |size| bytes (1: bool, 2: float16 or bfloat16, 4:
// float32) as raw bits, and the additive value of such bits: loaded with the
// keys, converted when used.
__device__ __forceinline__ uint32_t load_mask_bits(const char* p, int size) {
  switch (size) {
    case 1: return static_cast<uint32_t>(*reinterpret_cast<const unsigned char*>(p));
    case 2: return static_cast<uint32_t>(*reinterpret_cast<const unsigned short*>(p));
    default: return *reinterpret_cast<const uint32_t*>(p);
  }
}
__device__ __forceinline__ float mask_bits_value(uint32_t bits, int dtype) {
  switch (dtype) {
    case 5: return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
    case 15: return __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(bits)));
    default: return __uint_as_float(bits);
  }
}

template <class T>
__device__ __forceinline__ void unpack16(const uint4& raw, float* out);
template <>
__device__ __forceinline__ void unpack16<float>(const uint4& raw, float* out) {
  out[0] = __uint_as_float(raw.x);
  out[1] = __uint_as_float(raw.y);
  out[2] = __uint_as_float(raw.z);
  out[3] = __uint_as_float(raw.w);
}
template <>
__device__ __forceinline__ void unpack16<__half>(const uint4& raw, float* out) {
  const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __half22float2(h[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}
template <>
__device__ __forceinline__ void unpack16<__nv_bfloat16>(const uint4& raw, float* out) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(h[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

// The decode kernel's split merge: one block a row, as combine_kernel, but
// every load (each split's log-sum-exp and its partial row) is issued at
// once, before any is used, so the merge waits on memory once; the row's
// place in the output comes from 32-bit arithmetic while the loads are in
// flight. A block's threads are D features times G groups of splits.
constexpr int kDecodeCombineThreads = 256;

template <class T, int D>
__global__ void __launch_bounds__(kDecodeCombineThreads) decode_combine_kernel(CudaAttentionParams p) {
  dependency_wait();  // a no-op unless launched dependent on the decode kernel
  dependents_may_start();
  constexpr int G = kDecodeCombineThreads / D;  // groups of splits
  constexpr int S = kCombineMaxSplits / G;      // splits a thread reads at most
  __shared__ float w_s[kCombineMaxSplits];
  __shared__ float sum_s[G][D];
  __shared__ float lse_s;
  const int row = static_cast<int>(blockIdx.x);
  const int64_t rows_total = gridDim.x;
  const int splits = p.num_splits;
  const int tid = static_cast<int>(threadIdx.x);
  const int d = tid % D, grp = tid / D;
  float part[S];
#pragma unroll
  for (int u = 0; u < S; ++u) {
    const int s = grp + u * G;
    part[u] = s < splits ? p.workspace[(s * rows_total + row) * (D + 1) + d] : 0.f;
  }
  float a = -INFINITY, c = -INFINITY;
  if (tid < 32) {
    a = tid < splits ? p.workspace[(tid * rows_total + row) * (D + 1) + D] : -INFINITY;
    c = tid + 32 < splits ? p.workspace[((tid + 32) * rows_total + row) * (D + 1) + D] : -INFINITY;
  }
  const int len_q = static_cast<int>(p.len_q), heads_q = static_cast<int>(p.heads_q);
  const int i = row % len_q, bh = row / len_q;
  const int b = bh / heads_q, h = bh - b * heads_q;
  if (tid < 32) {
    // Splits 0..63 over the warp's lanes, two a lane.
    const float mx = warp_max(fmaxf(a, c));
    float total = 0.f;
    if (mx != -INFINITY) total = warp_sum((a == -INFINITY ? 0.f : expf(a - mx)) + (c == -INFINITY ? 0.f : expf(c - mx)));
    const float lse = mx == -INFINITY ? -INFINITY : mx + logf(total);
    w_s[tid] = (a == -INFINITY || lse == -INFINITY) ? 0.f : expf(a - lse);
    w_s[tid + 32] = (c == -INFINITY || lse == -INFINITY) ? 0.f : expf(c - lse);
    if (tid == 0) lse_s = lse;
  }
  __syncthreads();
  float sum = 0.f;
#pragma unroll
  for (int u = 0; u < S; ++u) {
    const int s = grp + u * G;
    if (s < splits) sum += w_s[s] * part[u];
  }
  sum_s[grp][d] = sum;
  __syncthreads();
  if (grp != 0) return;
#pragma unroll
  for (int g = 1; g < G; ++g) sum += sum_s[g][d];
  T* o = static_cast<T*>(p.out) + b * p.out_strides[0] + h * p.out_strides[1] + i * p.out_strides[2];
  o[d * p.out_strides[3]] = store_f<T>(sum);
  if (p.lse && d == 0) p.lse[b * p.lse_strides[0] + h * p.lse_strides[1] + i * p.lse_strides[2]] = lse_s;
}

// A decode launch's layout, computed on the host: blockIdx.x walks the
// (batch, key/value head, chunk of R rows) triples, blockIdx.y the key
// splits of |per| keys.
struct DecodeGeometry {
  int group;   // query heads a key/value head
  int rows;    // query rows a key/value head: group * len_q
  int chunks;  // blocks a key/value head: rows / R, rounded up
  int heads_kv;
  int len_q;
  int64_t per;  // keys a split
};

// Keys a decode block scores at once: a group of lanes a key, 16 bytes of
// its features a lane.
template <class T, int D>
constexpr int decode_step() {
  return (kDecodeThreads / 32) * (32 / (D / (16 / static_cast<int>(sizeof(T)))));
}

// Two blocks an SM where a thread's state (sums, queries, a pass's keys,
// values and mask entries, in 32-bit registers) leaves room in 128
// registers; else one, so that nothing spills.
template <class T, int D, int R, int U>
constexpr int decode_min_blocks() {
  constexpr int v = 16 / static_cast<int>(sizeof(T));
  return R * v + R * 4 + U * 8 + U * v + R * U <= 96 ? 2 : 1;
}

template <class T, int D, int R, int U>
__global__ void __launch_bounds__(kDecodeThreads, (decode_min_blocks<T, D, R, U>())) decode_kernel(CudaAttentionParams p, DecodeGeometry g) {
  dependency_wait();  // a no-op unless launched dependent
  dependents_may_start();
  constexpr int V = 16 / sizeof(T);  // features per lane
  constexpr int kLanesPerKey = D / V;
  constexpr int kKeysPerWarp = 32 / kLanesPerKey;
  constexpr int kWarpsPerBlock = kDecodeThreads / 32;
  constexpr int kStep = decode_step<T, D>();
  static_assert(kStep == kWarpsPerBlock * kKeysPerWarp, "keys the block scores at once");
  constexpr int P = U * kStep;                          // keys a pass
  static_assert(U >= 1 && U <= 8, "keys a group loads a pass");
  __shared__ float m_s[kWarpsPerBlock][R], l_s[kWarpsPerBlock][R], acc_s[kWarpsPerBlock][R][D];
  __shared__ int64_t row_out_s[R], row_lse_s[R], row_ws_s[R];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int grp = lane / kLanesPerKey, li = lane % kLanesPerKey;
  const int bhk = static_cast<int>(blockIdx.x) / g.chunks;
  const int chunk = static_cast<int>(blockIdx.x) - bhk * g.chunks;
  const int b = bhk / g.heads_kv, hk = bhk - b * g.heads_kv;
  const int64_t kb = static_cast<int64_t>(blockIdx.y) * g.per;
  const int64_t kend = min(p.len_kv, kb + g.per);

  // Each row's query (raw bytes, scaled in its scores), causal end and mask
  // row. The loop runs to the furthest end; keys past a row's own end score
  // -inf. A row past the head's last (the last chunk's) sees no key.
  uint4 q_raw[R];
  int64_t ke_r[R], mrow[R];
  int64_t ke = kb;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int gr = chunk * R + r;
    const bool valid = gr < g.rows;
    const int qh = g.len_q == 1 ? gr : gr / g.len_q;  // query head within the group
    const int i = gr - qh * g.len_q;
    const int64_t h = static_cast<int64_t>(hk) * g.group + qh;
    int64_t e = kend;
    if (p.causal) e = min(e, i + 1 + p.causal_offset);
    ke_r[r] = valid ? e : kb;
    ke = max(ke, ke_r[r]);
    q_raw[r] = make_uint4(0, 0, 0, 0);
    if (valid)
      q_raw[r] = *reinterpret_cast<const uint4*>(static_cast<const T*>(p.q) + b * p.q_strides[0] + h * p.q_strides[1] +
                                                 i * p.q_strides[2] + li * V);
    // A missing row reads row 0's mask (always a row: chunks round up).
    mrow[r] = valid ? b * p.mask_strides[0] + h * p.mask_strides[1] + i * p.mask_strides[2] : mrow[0];
    if (threadIdx.x == 0) {
      // Where the row's results go (-1: nowhere), for the threads that write them.
      row_out_s[r] = valid ? b * p.out_strides[0] + h * p.out_strides[1] + i * p.out_strides[2] : -1;
      row_lse_s[r] = valid && p.lse ? b * p.lse_strides[0] + h * p.lse_strides[1] + i * p.lse_strides[2] : -1;
      row_ws_s[r] = valid ? (static_cast<int64_t>(blockIdx.y) * (p.batch * p.heads_q * p.len_q) +
                             (static_cast<int64_t>(b) * p.heads_q + h) * p.len_q + i) * (D + 1)
                          : -1;
    }
  }
  // Rows that share one mask row (a mask broadcast over heads and queries),
  // or see no key here, load its entries once.
  bool mask_shared = true;
#pragma unroll
  for (int r = 1; r < R; ++r) mask_shared = mask_shared && (mrow[r] == mrow[0] || ke_r[r] <= kb);
  const char* mp = static_cast<const char*>(p.mask);
  const int msize = p.mask_kind == kCudaMaskBool ? 1 : p.mask_dtype == 6 ? 4 : 2;
  const float qk_scale = p.scale * kLog2e;
  const T* kp = static_cast<const T*>(p.k) + b * p.k_strides[0] + hk * p.k_strides[1] + li * V;
  const T* vp = static_cast<const T*>(p.v) + b * p.v_strides[0] + hk * p.v_strides[1] + li * V;

  float m[R], l[R], acc[R][V];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.f;
#pragma unroll
    for (int e = 0; e < V; ++e) acc[r][e] = 0.f;
  }

  // The loop bound is uniform across the warp (the shuffles need every lane).
  for (int64_t base = kb + warp * kKeysPerWarp; base < ke; base += P) {
    uint4 kr[U], vr[U];
    uint32_t mb[R][U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t key = base + grp + u * kStep;
      kr[u] = vr[u] = make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int r = 0; r < R; ++r) mb[r][u] = 0;
      if (key < ke) {
        kr[u] = *reinterpret_cast<const uint4*>(kp + key * p.k_strides[2]);
        vr[u] = *reinterpret_cast<const uint4*>(vp + key * p.v_strides[2]);
        if (p.mask_kind != kCudaMaskNone) {
#pragma unroll
          for (int r = 0; r < R; ++r)
            if (r == 0 || !mask_shared)
              mb[r][u] = load_mask_bits(mp + (mrow[r] + key * p.mask_strides[3]) * msize, msize);
        }
      }
    }
    float kf[U][V];
#pragma unroll
    for (int u = 0; u < U; ++u) unpack16<T>(kr[u], kf[u]);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (ke_r[r] <= base) continue;  // uniform: the warp's keys are all past this row's end
      float q[V];
      unpack16<T>(q_raw[r], q);
      float s[U];
      float mx = -INFINITY;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        float dot = 0.f;
#pragma unroll
        for (int e = 0; e < V; ++e) dot = fmaf(q[e], kf[u][e], dot);
#pragma unroll
        for (int o = kLanesPerKey / 2; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
        const int64_t key = base + grp + u * kStep;
        s[u] = -INFINITY;
        if (key < ke_r[r]) {
          s[u] = dot * qk_scale;
          const uint32_t bits = mask_shared ? mb[0][u] : mb[r][u];
          if (p.mask_kind == kCudaMaskBool) {
            if (!bits) s[u] = -INFINITY;
          } else if (p.mask_kind == kCudaMaskAdditive) {
            s[u] += mask_bits_value(bits, p.mask_dtype) * kLog2e;
          }
        }
        mx = fmaxf(mx, s[u]);
      }
      const float mn = fmaxf(m[r], mx);
      if (mn == -INFINITY) continue;  // nothing seen yet by this group for this row
      const float corr = m[r] == -INFINITY ? 0.f : exp2f(m[r] - mn);
      l[r] *= corr;
#pragma unroll
      for (int e = 0; e < V; ++e) acc[r][e] *= corr;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const float pw = s[u] == -INFINITY ? 0.f : exp2f(s[u] - mn);
        float vf[V];
        unpack16<T>(vr[u], vf);
        l[r] += pw;
#pragma unroll
        for (int e = 0; e < V; ++e) acc[r][e] = fmaf(pw, vf[e], acc[r][e]);
      }
      m[r] = mn;
    }
  }

  // Merge the warp's key groups (lanes li, li + kLanesPerKey, ...): scale
  // each to the warp's max, then sum; then the warps, through shared memory.
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float mw = m[r];
#pragma unroll
    for (int o = kLanesPerKey; o < 32; o <<= 1) mw = fmaxf(mw, __shfl_xor_sync(0xffffffffu, mw, o));
    const float f = m[r] == -INFINITY ? 0.f : exp2f(m[r] - mw);
    float lw = l[r] * f;
#pragma unroll
    for (int o = kLanesPerKey; o < 32; o <<= 1) lw += __shfl_xor_sync(0xffffffffu, lw, o);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      float a = acc[r][e] * f;
#pragma unroll
      for (int o = kLanesPerKey; o < 32; o <<= 1) a += __shfl_xor_sync(0xffffffffu, a, o);
      if (grp == 0) acc_s[warp][r][li * V + e] = a;
    }
    if (lane == 0) {
      m_s[warp][r] = mw;
      l_s[warp][r] = lw;
    }
  }
  __syncthreads();
  for (int t = threadIdx.x; t < R * D; t += kDecodeThreads) {
    const int r = t / D, d = t % D;
    const int64_t out_at = row_out_s[r];
    if (out_at < 0) continue;
    float mt = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarpsPerBlock; ++w) mt = fmaxf(mt, m_s[w][r]);
    float lt = 0.f, o = 0.f;
    if (mt != -INFINITY) {
#pragma unroll
      for (int w = 0; w < kWarpsPerBlock; ++w) {
        const float f = m_s[w][r] == -INFINITY ? 0.f : exp2f(m_s[w][r] - mt);
        lt += l_s[w][r] * f;
        o += acc_s[w][r][d] * f;
      }
    }
    // A row that saw no key (all masked) gives zeros and lse = -inf.
    const float out = lt > 0.f ? o / lt : 0.f;
    const float lse = lt > 0.f ? (mt + log2f(lt)) * kLn2 : -INFINITY;
    if (p.num_splits == 1) {
      static_cast<T*>(p.out)[out_at + d * p.out_strides[3]] = store_f<T>(out);
      if (d == 0 && row_lse_s[r] >= 0) p.lse[row_lse_s[r]] = lse;
    } else {
      float* po = p.workspace + row_ws_s[r];
      po[d] = out;
      if (d == 0) po[D] = lse;
    }
  }
}

// Keys a group loads a pass: a pass of kCudaAttentionDecodePassKeys keys a
// block where the keys split (short chains, many blocks), and 8 (up to 256
// keys a pass) for a block of one row over a whole cache.
template <class T, int D>
constexpr int decode_short_unroll() {
  return kCudaAttentionDecodePassKeys > decode_step<T, D>()
             ? static_cast<int>(kCudaAttentionDecodePassKeys) / decode_step<T, D>()
             : 1;
}

template <class T, int D, int R, int U>
cudaError_t launch_decode(const CudaAttentionParams& p, const DecodeGeometry& g, cudaStream_t stream) {
  if (p.num_splits > kCombineMaxSplits) return cudaErrorInvalidConfiguration;
  // launch_decode_rows checked the blocks' count against INT32_MAX.
  const dim3 grid(static_cast<unsigned>(p.batch * g.heads_kv * g.chunks), static_cast<unsigned>(p.num_splits));
  cudaError_t err;
  if (p.dependent_launch) {
    err = cuda_launch_dependent(decode_kernel<T, D, R, U>, grid, dim3(kDecodeThreads), 0, stream, p, g);
  } else {
    decode_kernel<T, D, R, U><<<grid, kDecodeThreads, 0, stream>>>(p, g);
    err = cudaGetLastError();
  }
  if (err != cudaSuccess || p.num_splits == 1) return err;
  const unsigned rows = static_cast<unsigned>(p.batch * p.heads_q * p.len_q);
  if (p.dependent_launch)
    return cuda_launch_dependent(decode_combine_kernel<T, D>, dim3(rows), dim3(kDecodeCombineThreads), 0, stream, p);
  decode_combine_kernel<T, D><<<rows, kDecodeCombineThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

template <class T, int D>
cudaError_t launch_decode_rows(const CudaAttentionParams& p, cudaStream_t stream) {
  const int r = cuda_attention_decode_rows_per_block(p);
  if (p.heads_q > INT32_MAX || p.len_q > INT32_MAX || cuda_attention_decode_blocks(p) > INT32_MAX)
    return cudaErrorInvalidConfiguration;
  DecodeGeometry g;
  g.group = static_cast<int>(p.heads_q / p.heads_kv);
  g.rows = static_cast<int>(g.group * p.len_q);
  g.chunks = (g.rows + r - 1) / r;
  g.heads_kv = static_cast<int>(p.heads_kv);
  g.len_q = static_cast<int>(p.len_q);
  g.per = (p.len_kv + p.num_splits - 1) / p.num_splits;
  constexpr int kShort = decode_short_unroll<T, D>();
  switch (r) {
    case 1:
      return g.per > kCudaAttentionDecodePassKeys ? launch_decode<T, D, 1, 8>(p, g, stream)
                                                  : launch_decode<T, D, 1, kShort>(p, g, stream);
    case 2: return launch_decode<T, D, 2, kShort>(p, g, stream);
    default: return launch_decode<T, D, 4, kShort>(p, g, stream);
  }
}

template <class T>
cudaError_t launch_decode_dim(const CudaAttentionParams& p, cudaStream_t stream) {
  return p.head_dim == 64 ? launch_decode_rows<T, 64>(p, stream) : launch_decode_rows<T, 128>(p, stream);
}

// Row softmax of the float32 scores q . k (unscaled) in place, one warp per
// [batch, head, query] row of |ld| floats: scale, causal and mask as in
// attention_kernel; the probabilities of keys a causal row does not see are
// zeroed, so the product with V that follows reads only valid terms.
__global__ void attention_softmax_kernel(CudaAttentionParams p, float* scores, int64_t ld) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= p.batch * p.heads_q * p.len_q) return;
  const int64_t i = row % p.len_q, bh = row / p.len_q;
  const int64_t b = bh / p.heads_q, h = bh % p.heads_q;
  float* s = scores + row * ld;
  const int64_t n = p.causal ? min(p.len_kv, i + 1 + p.causal_offset) : p.len_kv;
  const float qk_scale = p.scale * kLog2e;
  const char* mp = static_cast<const char*>(p.mask);
  const int64_t mrow = b * p.mask_strides[0] + h * p.mask_strides[1] + i * p.mask_strides[2];
  const int msize = p.mask_dtype == 6 ? 4 : 2;
  float m = -INFINITY;
  for (int64_t j = lane; j < n; j += 32) {
    float x = s[j] * qk_scale;
    if (p.mask_kind == kCudaMaskBool) {
      if (!mp[mrow + j * p.mask_strides[3]]) x = -INFINITY;
    } else if (p.mask_kind == kCudaMaskAdditive) {
      x += load_any(mp + (mrow + j * p.mask_strides[3]) * msize, p.mask_dtype) * kLog2e;
    }
    s[j] = x;
    m = fmaxf(m, x);
  }
  m = warp_max(m);
  float l = 0.f;
  for (int64_t j = lane; j < n; j += 32) {
    const float e = m == -INFINITY ? 0.f : exp2f(s[j] - m);
    s[j] = e;
    l += e;
  }
  l = warp_sum(l);
  // A row that sees no key (all masked) gives zeros and lse = -inf.
  const float inv = l > 0.f ? 1.f / l : 0.f;
  for (int64_t j = lane; j < n; j += 32) s[j] *= inv;
  for (int64_t j = n + lane; j < p.len_kv; j += 32) s[j] = 0.f;
  if (p.lse && lane == 0)
    p.lse[b * p.lse_strides[0] + h * p.lse_strides[1] + i * p.lse_strides[2]] =
        l > 0.f ? (m + log2f(l)) * kLn2 : -INFINITY;
}

template <class T, int kRows, int kChunks>
cudaError_t launch_typed(const CudaAttentionParams& p, size_t max_smem, cudaStream_t stream) {
  const int block_rows = kRows * kWarps;
  const size_t smem = smem_floats(block_rows, p.head_dim, p.head_dim_v) * sizeof(float);
  if (smem > max_smem) return cudaErrorInvalidConfiguration;
  auto kernel = attention_kernel<T, kRows, kChunks>;
  if (smem > 48 * 1024) {
    cudaError_t err = cuda_reserve_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
    if (err != cudaSuccess) return err;
  }
  const int64_t q_tiles = (p.len_q + block_rows - 1) / block_rows;
  if (q_tiles > 65535 || p.num_splits > kCombineMaxSplits) return cudaErrorInvalidConfiguration;
  dim3 grid(static_cast<unsigned>(p.batch * p.heads_q), static_cast<unsigned>(q_tiles),
            static_cast<unsigned>(p.num_splits));
  kernel<<<grid, kThreads, smem, stream>>>(p);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess || p.num_splits == 1) return err;
  combine_kernel<T><<<static_cast<unsigned>(p.batch * p.heads_q * p.len_q), kCombineThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

template <class T, int kRows>
cudaError_t launch_rows(const CudaAttentionParams& p, size_t max_smem, cudaStream_t stream) {
  const int64_t chunks = (p.head_dim_v + 31) / 32;
  if (chunks <= 1) return launch_typed<T, kRows, 1>(p, max_smem, stream);
  if (chunks <= 2) return launch_typed<T, kRows, 2>(p, max_smem, stream);
  if (chunks <= 4) return launch_typed<T, kRows, 4>(p, max_smem, stream);
  return launch_typed<T, kRows, 8>(p, max_smem, stream);
}

template <class T>
cudaError_t launch_dtype(const CudaAttentionParams& p, size_t max_smem, cudaStream_t stream) {
  if (cuda_attention_rows_per_block(p.len_q) == kWarps) return launch_rows<T, 1>(p, max_smem, stream);
  return launch_rows<T, 4>(p, max_smem, stream);
}

}  // namespace

cudaError_t cuda_reserve_dynamic_smem(const void* kernel, size_t bytes) {
  // cudaFuncSetAttribute costs microseconds per call; each kernel and device
  // needs it only when the size grows.
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, size_t> reserved;
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  std::lock_guard<std::mutex> lock(mutex);
  size_t& have = reserved[{kernel, device}];
  if (have >= bytes) return cudaSuccess;
  err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  if (err == cudaSuccess) have = bytes;
  return err;
}

int cuda_attention_rows_per_block(int64_t len_q) { return len_q <= 8 ? kWarps : 4 * kWarps; }

bool cuda_attention_decode_eligible(const CudaAttentionParams& p) {
  if (p.dtype != 6 && p.dtype != 5 && p.dtype != 15) return false;
  if (p.len_q < 1 || p.len_q > kCudaAttentionDecodeMaxQueries) return false;
  if (p.head_dim != p.head_dim_v || (p.head_dim != 64 && p.head_dim != 128)) return false;
  // 16-byte loads of q, k and v rows.
  const int64_t vec = p.dtype == 6 ? 4 : 8;
  const auto rows_ok = [vec](const void* ptr, const int64_t* st) {
    return reinterpret_cast<uintptr_t>(ptr) % 16 == 0 && st[3] == 1 && st[0] % vec == 0 && st[1] % vec == 0 &&
           st[2] % vec == 0;
  };
  return rows_ok(p.q, p.q_strides) && rows_ok(p.k, p.k_strides) && rows_ok(p.v, p.v_strides);
}

int cuda_attention_decode_rows_per_block(const CudaAttentionParams& p) {
  const int64_t rows = p.heads_kv > 0 ? p.heads_q / p.heads_kv * p.len_q : p.len_q;
  return rows <= 1 ? 1 : rows == 2 ? 2 : 4;
}

int64_t cuda_attention_decode_blocks(const CudaAttentionParams& p) {
  if (p.heads_kv < 1) return 0;
  const int64_t r = cuda_attention_decode_rows_per_block(p);
  return p.batch * p.heads_kv * ((p.heads_q / p.heads_kv * p.len_q + r - 1) / r);
}

int cuda_attention_key_splits(const CudaAttentionParams& p, int sm_count) {
  if (cuda_attention_decode_eligible(p)) {
    // A block of one row reads a few thousand keys in a handful of passes;
    // longer caches split so that more SMs share them. Blocks of several
    // rows (grouped heads), and one-row blocks over 1024 keys or more, also
    // split until the blocks fill every SM twice (two fit an SM), down to
    // one pass of kCudaAttentionDecodePassKeys keys a block, so that each
    // warp's chain of work is short. A short cache read by one-row blocks
    // (GPT-2's 513 keys) is read faster whole than split and merged by a
    // second kernel.
    int64_t splits = (p.len_kv + kCudaAttentionDecodeKeysPerBlock - 1) / kCudaAttentionDecodeKeysPerBlock;
    const int64_t blocks = cuda_attention_decode_blocks(p);
    if (blocks > 0 && (p.len_kv >= kCudaAttentionDecodeSplitMinKeys || cuda_attention_decode_rows_per_block(p) > 1)) {
      const int64_t cover = (2 * static_cast<int64_t>(sm_count > 0 ? sm_count : 1) + blocks - 1) / blocks;
      splits = std::max(splits, std::min(cover, p.len_kv / kCudaAttentionDecodePassKeys));
    }
    splits = std::max<int64_t>(1, std::min<int64_t>(splits, kCombineMaxSplits));
    if (splits == 1) return 1;
    // Whole passes a split.
    const int64_t per = ((p.len_kv + splits - 1) / splits + kCudaAttentionDecodePassKeys - 1) /
                        kCudaAttentionDecodePassKeys * kCudaAttentionDecodePassKeys;
    return static_cast<int>((p.len_kv + per - 1) / per);
  }
  // Few query tiles (decode): split the keys so that every SM gets several
  // short blocks; their latency, not arithmetic, bounds a decode step.
  const int rows = cuda_attention_rows_per_block(p.len_q);
  const int64_t blocks = p.batch * p.heads_q * ((p.len_q + rows - 1) / rows);
  const int64_t target = 4 * static_cast<int64_t>(sm_count > 0 ? sm_count : 1);
  if (blocks <= 0 || blocks >= target || p.len_kv <= 2 * kTile) return 1;
  int64_t splits = std::min<int64_t>((target + blocks - 1) / blocks, kCombineMaxSplits);
  splits = std::min<int64_t>(splits, (p.len_kv + kTile - 1) / kTile);
  const int64_t per = ((p.len_kv + splits - 1) / splits + kTile - 1) / kTile * kTile;
  return static_cast<int>((p.len_kv + per - 1) / per);
}

bool cuda_attention_gemm_eligible(const CudaAttentionParams& p) {
  const bool rows_ok = p.q_strides[3] == 1 && p.k_strides[3] == 1 && p.v_strides[3] == 1 &&
                       p.out_strides[3] == 1 && p.q_strides[2] >= p.head_dim && p.k_strides[2] >= p.head_dim &&
                       p.v_strides[2] >= p.head_dim_v && p.out_strides[2] >= p.head_dim_v;
  const int64_t ld = cuda_attention_scores_ld(p.len_kv);
  return p.dtype == 6 && p.len_q >= kCudaAttentionGemmMinQueries && p.heads_q == p.heads_kv && rows_ok &&
         p.batch >= 1 && p.batch <= 64 && p.len_kv >= 1 &&
         p.batch * p.heads_q * p.len_q * ld <= kCudaAttentionGemmMaxScores;
}

int64_t cuda_attention_scores_ld(int64_t len_kv) { return (len_kv + 3) / 4 * 4; }

cudaError_t cuda_launch_attention_softmax(const CudaAttentionParams& p, float* scores, int64_t ld,
                                          cudaStream_t stream) {
  const int64_t rows = p.batch * p.heads_q * p.len_q;
  if (rows == 0) return cudaSuccess;
  constexpr int kRowsPerBlock = 8;
  const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  if (blocks > INT32_MAX) return cudaErrorInvalidConfiguration;
  attention_softmax_kernel<<<static_cast<unsigned>(blocks), kRowsPerBlock * 32, 0, stream>>>(p, scores, ld);
  return cudaGetLastError();
}

cudaError_t cuda_launch_attention(const CudaAttentionParams& p, size_t max_smem, cudaStream_t stream) {
  if (p.batch * p.heads_q * p.len_q == 0) return cudaSuccess;
  if (p.head_dim < 1 || p.head_dim > kCudaAttentionMaxHeadDim || p.head_dim_v < 1 ||
      p.head_dim_v > kCudaAttentionMaxHeadDim || p.heads_kv < 1 || p.heads_q % p.heads_kv != 0)
    return cudaErrorInvalidValue;
  if (cuda_attention_decode_eligible(p)) {
    switch (p.dtype) {
      case 6: return launch_decode_dim<float>(p, stream);
      case 5: return launch_decode_dim<__half>(p, stream);
      case 15: return launch_decode_dim<__nv_bfloat16>(p, stream);
    }
  }
  switch (p.dtype) {
    case 6: return launch_dtype<float>(p, max_smem, stream);
    case 5: return launch_dtype<__half>(p, max_smem, stream);
    case 15: return launch_dtype<__nv_bfloat16>(p, max_smem, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace aotirt
