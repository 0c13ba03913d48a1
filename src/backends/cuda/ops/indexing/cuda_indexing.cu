// CUDA indexing kernels (cuda_indexing_kernels.h):
//  - advanced indexing in two steps: one thread per broadcast index position
//    turns the index values into self offsets (wrapping negatives, flagging
//    out-of-range ones), then a row kernel walks the result, a block row
//    per innermost result line, so a KV-cache write (rows of head_dim
//    elements at given positions) is a plain coalesced row copy;
//  - scatter and its reductions, one thread per index element, combining
//    into out with atomics (native adds where the hardware has them, a
//    compare-and-swap loop on the enclosing word otherwise);
//  - nonzero / masked_select / masked_scatter compaction through CUB's
//    DeviceReduce and DeviceSelect.
// Index values are never trusted: one outside its range is skipped and
// reported through a flag the host reads back.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backends/cuda/ops/indexing/cuda_indexing_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = int64_t{1} << 20;

int blocks_for(int64_t n, int per_block = kThreads) {
  const int64_t b = (n + per_block - 1) / per_block;
  return static_cast<int>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

// ---- element types ----

enum Kind { kInt = 0, kFloat = 1, kHalfLike = 2, kBool = 3 };

// Storage S, arithmetic A: half types compute in float, integers in int64
// (wrapping on store), bool as 0/1.
template <class S_, class A_, int kKind_>
struct Ty {
  using S = S_;
  using A = A_;
  static constexpr int kKind = kKind_;
  __device__ static A load(S v) {
    if constexpr (kKind_ == kBool) return v != 0 ? 1 : 0;
    else if constexpr (std::is_same_v<S_, __half>) return __half2float(v);
    else if constexpr (std::is_same_v<S_, __nv_bfloat16>) return __bfloat162float(v);
    else return static_cast<A>(v);
  }
  __device__ static S store(A v) {
    if constexpr (kKind_ == kBool) return static_cast<S>(v != 0 ? 1 : 0);
    else if constexpr (std::is_same_v<S_, __half>) return __float2half_rn(v);
    else if constexpr (std::is_same_v<S_, __nv_bfloat16>) return __float2bfloat16_rn(v);
    else if constexpr (kKind_ == kInt) return static_cast<S>(static_cast<uint64_t>(v));
    else return static_cast<S>(v);
  }
};

using TyU8 = Ty<uint8_t, int64_t, kInt>;
using TyI8 = Ty<int8_t, int64_t, kInt>;
using TyI16 = Ty<int16_t, int64_t, kInt>;
using TyI32 = Ty<int32_t, int64_t, kInt>;
using TyI64 = Ty<int64_t, int64_t, kInt>;
using TyF16 = Ty<__half, float, kHalfLike>;
using TyF32 = Ty<float, float, kFloat>;
using TyF64 = Ty<double, double, kFloat>;
using TyBool = Ty<uint8_t, int64_t, kBool>;
using TyBF16 = Ty<__nv_bfloat16, float, kHalfLike>;

template <class Fn>
cudaError_t by_dtype(int dtype, Fn&& fn) {
  switch (dtype) {
    case 0: return fn(TyU8{});
    case 1: return fn(TyI8{});
    case 2: return fn(TyI16{});
    case 3: return fn(TyI32{});
    case 4: return fn(TyI64{});
    case 5: return fn(TyF16{});
    case 6: return fn(TyF32{});
    case 7: return fn(TyF64{});
    case 11: return fn(TyBool{});
    case 15: return fn(TyBF16{});
    default: return cudaErrorInvalidValue;
  }
}

// Unsigned words of each element size: copies and compaction move bits.
template <int kSize>
struct Word;
template <>
struct Word<1> {
  using U = uint8_t;
};
template <>
struct Word<2> {
  using U = uint16_t;
};
template <>
struct Word<4> {
  using U = uint32_t;
};
template <>
struct Word<8> {
  using U = unsigned long long;
};

template <class Fn>
cudaError_t by_size(int element_size, Fn&& fn) {
  switch (element_size) {
    case 1: return fn(Word<1>{});
    case 2: return fn(Word<2>{});
    case 4: return fn(Word<4>{});
    case 8: return fn(Word<8>{});
    default: return cudaErrorInvalidValue;
  }
}

template <class T>
__device__ bool is_nan(typename T::A v) {
  if constexpr (T::kKind == kFloat || T::kKind == kHalfLike) return v != v;
  return false;
}

// One reduction step. Bool sums are "or" and products "and"; amax/amin
// propagate NaN; integer arithmetic wraps.
template <class T>
__device__ typename T::A combine(CudaScatterOp op, typename T::A a, typename T::A b) {
  using A = typename T::A;
  switch (op) {
    case CudaScatterOp::kSum:
      if constexpr (T::kKind == kBool) return (a != 0 || b != 0) ? 1 : 0;
      else if constexpr (T::kKind == kInt) return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
      else return a + b;
    case CudaScatterOp::kProd:
      if constexpr (T::kKind == kBool) return (a != 0 && b != 0) ? 1 : 0;
      else if constexpr (T::kKind == kInt) return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
      else return a * b;
    case CudaScatterOp::kAmax:
      if (is_nan<T>(a) || is_nan<T>(b)) return a + b;  // NaN
      return a < b ? b : a;
    case CudaScatterOp::kAmin:
      if (is_nan<T>(a) || is_nan<T>(b)) return a + b;
      return b < a ? b : a;
    default: return b;
  }
}

// The value include_self=False starts a reduction from, in storage.
template <class T>
__device__ typename T::S identity(CudaScatterOp op) {
  using S = typename T::S;
  using A = typename T::A;
  switch (op) {
    case CudaScatterOp::kProd: return T::store(A(1));
    case CudaScatterOp::kAmax:
      if constexpr (T::kKind == kBool) return T::store(A(0));
      else if constexpr (T::kKind == kInt) return std::numeric_limits<S>::lowest();
      else return T::store(-std::numeric_limits<A>::infinity());
    case CudaScatterOp::kAmin:
      if constexpr (T::kKind == kBool) return T::store(A(1));
      else if constexpr (T::kKind == kInt) return std::numeric_limits<S>::max();
      else return T::store(std::numeric_limits<A>::infinity());
    default: return T::store(A(0));
  }
}

// *p = f(*p) atomically, for any element size: a compare-and-swap loop on
// the element, or on the aligned 32-bit word holding a 1- or 2-byte one.
template <class S, class F>
__device__ void atomic_update(S* p, F f) {
  if constexpr (sizeof(S) == 8) {
    auto* w = reinterpret_cast<unsigned long long*>(p);
    unsigned long long old = *w, assumed;
    do {
      assumed = old;
      S cur;
      memcpy(&cur, &assumed, 8);
      const S next = f(cur);
      unsigned long long nw;
      memcpy(&nw, &next, 8);
      if (nw == assumed) return;
      old = atomicCAS(w, assumed, nw);
    } while (old != assumed);
  } else if constexpr (sizeof(S) == 4) {
    auto* w = reinterpret_cast<unsigned int*>(p);
    unsigned int old = *w, assumed;
    do {
      assumed = old;
      S cur;
      memcpy(&cur, &assumed, 4);
      const S next = f(cur);
      unsigned int nw;
      memcpy(&nw, &next, 4);
      if (nw == assumed) return;
      old = atomicCAS(w, assumed, nw);
    } while (old != assumed);
  } else {
    static_assert(sizeof(S) == 1 || sizeof(S) == 2, "element size");
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    auto* w = reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3});
    const unsigned int shift = static_cast<unsigned int>(addr & 3) * 8;
    const unsigned int mask = (sizeof(S) == 1 ? 0xffu : 0xffffu) << shift;
    unsigned int old = *w, assumed;
    do {
      assumed = old;
      const unsigned int bits = (assumed & mask) >> shift;
      S cur;
      if constexpr (sizeof(S) == 1) {
        const uint8_t b = static_cast<uint8_t>(bits);
        memcpy(&cur, &b, 1);
      } else {
        const uint16_t b = static_cast<uint16_t>(bits);
        memcpy(&cur, &b, 2);
      }
      const S next = f(cur);
      unsigned int nbits;
      if constexpr (sizeof(S) == 1) {
        uint8_t b;
        memcpy(&b, &next, 1);
        nbits = b;
      } else {
        uint16_t b;
        memcpy(&b, &next, 2);
        nbits = b;
      }
      const unsigned int nw = (assumed & ~mask) | (nbits << shift);
      if (nw == assumed) return;
      old = atomicCAS(w, assumed, nw);
    } while (old != assumed);
  }
}

// *p op= x atomically; native adds where there is one.
template <class T>
__device__ void atomic_combine(CudaScatterOp op, typename T::S* p, typename T::A x) {
  using S = typename T::S;
  if (op == CudaScatterOp::kSum) {
    if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
      atomicAdd(p, x);
      return;
    } else if constexpr (std::is_same_v<S, __half>) {
      atomicAdd(p, __float2half_rn(x));
      return;
    } else if constexpr (std::is_same_v<S, __nv_bfloat16>) {
      atomicAdd(p, __float2bfloat16_rn(x));
      return;
    } else if constexpr (std::is_same_v<S, int32_t>) {
      atomicAdd(reinterpret_cast<unsigned int*>(p), static_cast<unsigned int>(static_cast<uint64_t>(x)));
      return;
    } else if constexpr (std::is_same_v<S, int64_t>) {
      atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(x));
      return;
    } else if constexpr (T::kKind == kBool) {
      if (x != 0) *p = 1;  // every writer stores the same byte
      return;
    }
  }
  atomic_update(p, [op, x](S cur) { return T::store(combine<T>(op, T::load(cur), x)); });
}

__device__ void report(int64_t* flag, int64_t value, int64_t which) {
  if (atomicCAS(reinterpret_cast<unsigned long long*>(flag), 0ull, 1ull) == 0ull) {
    flag[1] = value;
    flag[2] = which;
  }
}

__device__ __forceinline__ int64_t load_index(const void* base, bool is64, int64_t off) {
  return is64 ? static_cast<const int64_t*>(base)[off] : static_cast<const int32_t*>(base)[off];
}

// ---- advanced indexing ----

__global__ void index_offsets_kernel(CudaIndexOffsets p, int64_t nb, int64_t* offsets, int64_t* flag) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < nb;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t at[kCudaIndexMaxIndices];
    for (int k = 0; k < p.nidx; ++k) at[k] = 0;
    int64_t rem = i;
    for (int d = p.bdims - 1; d >= 0; --d) {
      const int64_t c = rem % p.bsizes[d];
      rem /= p.bsizes[d];
      for (int k = 0; k < p.nidx; ++k) at[k] += c * p.index_strides[k][d];
    }
    int64_t off = 0;
    for (int k = 0; k < p.nidx; ++k) {
      int64_t v = load_index(p.index[k], p.index64[k], at[k]);
      const int64_t limit = p.limit[k];
      if (v < -limit || v >= limit) {
        report(flag, v, k);
        off = -1;
        break;
      }
      if (v < 0) v += limit;
      off += v * p.stride[k];
    }
    offsets[i] = off;
  }
}

// skip(): a position whose index was out of range (offset -1); the run
// fails, but nothing is read or written out of bounds.
template <class S>
struct GatherOp {
  __device__ void operator()(S* indexed, S* dense) const { *dense = *indexed; }
  __device__ void skip(S* dense) const { *dense = S{}; }
};
template <class S>
struct PutOp {
  __device__ void operator()(S* indexed, S* dense) const { *indexed = *dense; }
  __device__ void skip(S*) const {}
};
template <class T>
struct AccumulateOp {
  __device__ void operator()(typename T::S* indexed, typename T::S* dense) const {
    atomic_combine<T>(CudaScatterOp::kSum, indexed, T::load(*dense));
  }
  __device__ void skip(typename T::S*) const {}
};

// threadIdx.y picks a result line, threadIdx.x walks along it; the line's
// outer coordinates are decoded once per thread.
template <class S, class Op>
__global__ void index_walk_kernel(S* indexed, S* dense, const int64_t* offsets, CudaIndexWalk w, int64_t rows,
                                  Op op) {
  const int last = w.ndim - 1;
  const int64_t len = w.sizes[last];
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; row < rows;
       row += static_cast<int64_t>(gridDim.x) * blockDim.y) {
    int64_t rem = row, b = 0, io = 0, dn = 0;
    for (int d = last - 1; d >= 0; --d) {
      const int64_t c = rem % w.sizes[d];
      rem /= w.sizes[d];
      b += c * w.b_strides[d];
      io += c * w.indexed_strides[d];
      dn += c * w.dense_strides[d];
    }
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
      const int64_t base = offsets[b + j * w.b_strides[last]];
      S* at_dense = dense + dn + j * w.dense_strides[last];
      if (base < 0)
        op.skip(at_dense);
      else
        op(indexed + base + io + j * w.indexed_strides[last], at_dense);
    }
  }
}

template <class S, class Op>
cudaError_t launch_walk(void* indexed, void* dense, const int64_t* offsets, const CudaIndexWalk& w, Op op,
                        cudaStream_t stream) {
  const int64_t len = w.sizes[w.ndim - 1];
  int64_t rows = 1;
  for (int d = 0; d < w.ndim - 1; ++d) rows *= w.sizes[d];
  int tx = 1;
  while (tx < len && tx < kThreads) tx *= 2;
  const dim3 block(tx, kThreads / tx);
  index_walk_kernel<S, Op><<<blocks_for(rows, kThreads / tx), block, 0, stream>>>(
      static_cast<S*>(indexed), static_cast<S*>(dense), offsets, w, rows, op);
  return cudaGetLastError();
}

// ---- scatter ----

template <class T, bool kIdentity>
__global__ void scatter_kernel(CudaScatterOp op, typename T::S* out, const typename T::S* src, uint64_t value_bits,
                               const void* index, bool index64, CudaScatterWalk w, int64_t n, int32_t* counts,
                               int64_t* flag) {
  using S = typename T::S;
  S value;
  memcpy(&value, &value_bits, sizeof(S));
  if constexpr (kIdentity) value = identity<T>(op);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rem = i, io = 0, oo = 0, so = 0;
    for (int d = w.ndim - 1; d >= 0; --d) {
      const int64_t c = rem % w.sizes[d];
      rem /= w.sizes[d];
      io += c * w.index_strides[d];
      so += c * w.src_strides[d];
      if (d != w.dim) oo += c * w.out_strides[d];
    }
    const int64_t v = load_index(index, index64, io);
    if (v < 0 || v >= w.limit) {
      report(flag, v, w.dim);
      continue;
    }
    S* dst = out + oo + v * w.out_strides[w.dim];
    if (kIdentity || op == CudaScatterOp::kAssign) {
      *dst = (kIdentity || src == nullptr) ? value : src[so];
    } else {
      atomic_combine<T>(op, dst, T::load(src ? src[so] : value));
      if (counts) atomicAdd(counts + (dst - out), 1);
    }
  }
}

template <class T>
__global__ void scatter_mean_kernel(typename T::S* out, const int32_t* counts, int extra, CudaScatterWalk w,
                                    int64_t n) {
  using A = typename T::A;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rem = i, off = 0;
    for (int d = w.ndim - 1; d >= 0; --d) {
      off += (rem % w.sizes[d]) * w.out_strides[d];
      rem /= w.sizes[d];
    }
    const int32_t c = counts[off];
    if (c == 0) continue;
    const A v = T::load(out[off]);
    const A k = static_cast<A>(c + extra);
    if constexpr (T::kKind == kInt) {
      A q = v / k;
      if ((v % k != 0) && ((v < 0) != (k < 0))) --q;  // floor, as torch's div(rounding_mode="floor")
      out[off] = T::store(q);
    } else {
      out[off] = T::store(v / k);
    }
  }
}

int64_t walk_numel(const CudaScatterWalk& w) {
  int64_t n = 1;
  for (int d = 0; d < w.ndim; ++d) n *= w.sizes[d];
  return n;
}

// ---- compaction ----

// Nonzero test on the bits: a floating value is nonzero unless all its bits
// but the sign are clear (so -0.0 is zero and NaN is not).
template <class U, bool kFloating>
struct NonzeroAt {
  const U* in;
  __host__ __device__ bool operator()(int64_t i) const {
    U v = in[i];
    if constexpr (kFloating) v &= static_cast<U>(~(static_cast<U>(1) << (sizeof(U) * 8 - 1)));
    return v != 0;
  }
};
template <class U, bool kFloating>
struct NonzeroCount {
  const U* in;
  __host__ __device__ int64_t operator()(int64_t i) const { return NonzeroAt<U, kFloating>{in}(i) ? 1 : 0; }
};

template <class Fn>
cudaError_t by_nonzero_kind(int dtype, Fn&& fn) {
  switch (dtype) {
    case 0:
    case 1:
    case 11: return fn(Word<1>{}, std::false_type{});
    case 2: return fn(Word<2>{}, std::false_type{});
    case 3: return fn(Word<4>{}, std::false_type{});
    case 4: return fn(Word<8>{}, std::false_type{});
    case 5:
    case 15: return fn(Word<2>{}, std::true_type{});
    case 6: return fn(Word<4>{}, std::true_type{});
    case 7: return fn(Word<8>{}, std::true_type{});
    default: return cudaErrorInvalidValue;
  }
}

__global__ void positions_to_coords_kernel(int64_t* out, const int64_t* positions, int64_t rows,
                                           const int64_t* count, int64_t fill, CudaIndexSizes s) {
  int64_t limit = rows;
  if (count && *count < limit) limit = *count;
  const int nd = s.ndim;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (r >= limit) {
      for (int j = 0; j < nd; ++j) out[r + j * rows] = fill;
      continue;
    }
    int64_t lin = positions ? positions[r] : out[r + (nd - 1) * rows];
    for (int j = nd - 1; j >= 0; --j) {
      out[r + j * rows] = lin % s.sizes[j];
      lin /= s.sizes[j];
    }
  }
}

template <class U>
__global__ void scatter_positions_kernel(U* out, const U* src, const int64_t* positions, int64_t n) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[positions[k]] = src[k];
}

}  // namespace

cudaError_t cuda_launch_index_offsets(const CudaIndexOffsets& p, int64_t nb, int64_t* offsets, int64_t* flag,
                                      cudaStream_t stream) {
  if (nb == 0) return cudaSuccess;
  index_offsets_kernel<<<blocks_for(nb), kThreads, 0, stream>>>(p, nb, offsets, flag);
  return cudaGetLastError();
}

cudaError_t cuda_launch_index_walk(CudaIndexMode mode, int dtype, int element_size, void* indexed, void* dense,
                                   const int64_t* offsets, const CudaIndexWalk& w, cudaStream_t stream) {
  if (w.ndim < 1) return cudaErrorInvalidValue;
  for (int d = 0; d < w.ndim; ++d)
    if (w.sizes[d] == 0) return cudaSuccess;
  if (mode == CudaIndexMode::kAccumulate) {
    return by_dtype(dtype, [&](auto t) {
      using T = decltype(t);
      return launch_walk<typename T::S>(indexed, dense, offsets, w, AccumulateOp<T>{}, stream);
    });
  }
  return by_size(element_size, [&](auto word) {
    using U = typename decltype(word)::U;
    if (mode == CudaIndexMode::kGather) return launch_walk<U>(indexed, dense, offsets, w, GatherOp<U>{}, stream);
    return launch_walk<U>(indexed, dense, offsets, w, PutOp<U>{}, stream);
  });
}

cudaError_t cuda_launch_scatter(CudaScatterOp op, int dtype, void* out, const void* src, uint64_t value_bits,
                                const void* index, bool index64, const CudaScatterWalk& w, int32_t* counts,
                                int64_t* flag, cudaStream_t stream) {
  const int64_t n = walk_numel(w);
  if (n == 0) return cudaSuccess;
  return by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    scatter_kernel<T, false><<<blocks_for(n), kThreads, 0, stream>>>(
        op, static_cast<S*>(out), static_cast<const S*>(src), value_bits, index, index64, w, n, counts, flag);
    return cudaGetLastError();
  });
}

cudaError_t cuda_launch_scatter_identity(CudaScatterOp op, int dtype, void* out, const void* index, bool index64,
                                         const CudaScatterWalk& w, int64_t* flag, cudaStream_t stream) {
  const int64_t n = walk_numel(w);
  if (n == 0) return cudaSuccess;
  return by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    scatter_kernel<T, true><<<blocks_for(n), kThreads, 0, stream>>>(op, static_cast<S*>(out), nullptr, 0, index,
                                                                     index64, w, n, nullptr, flag);
    return cudaGetLastError();
  });
}

cudaError_t cuda_launch_scatter_mean(int dtype, void* out, const int32_t* counts, int extra,
                                     const CudaScatterWalk& w, cudaStream_t stream) {
  const int64_t n = walk_numel(w);
  if (n == 0) return cudaSuccess;
  return by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (T::kKind == kBool) {
      return cudaErrorInvalidValue;  // torch has no bool mean
    } else {
      scatter_mean_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<typename T::S*>(out), counts,
                                                                      extra, w, n);
      return cudaGetLastError();
    }
  });
}

cudaError_t cuda_count_nonzero(void* temp, size_t& bytes, int dtype, const void* in, int64_t n, int64_t* count,
                               cudaStream_t stream) {
  return by_nonzero_kind(dtype, [&](auto word, auto floating) {
    using U = typename decltype(word)::U;
    constexpr bool kF = decltype(floating)::value;
    auto it = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0),
                                              NonzeroCount<U, kF>{static_cast<const U*>(in)});
    return cub::DeviceReduce::Sum(temp, bytes, it, count, n, stream);
  });
}

cudaError_t cuda_select_nonzero(void* temp, size_t& bytes, int dtype, const void* in, int64_t n, int64_t* positions,
                                int64_t* count, cudaStream_t stream) {
  return by_nonzero_kind(dtype, [&](auto word, auto floating) {
    using U = typename decltype(word)::U;
    constexpr bool kF = decltype(floating)::value;
    return cub::DeviceSelect::If(temp, bytes, thrust::counting_iterator<int64_t>(0), positions, count, n,
                                 NonzeroAt<U, kF>{static_cast<const U*>(in)}, stream);
  });
}

cudaError_t cuda_select_flagged(void* temp, size_t& bytes, int element_size, const void* in, const bool* flags,
                                int64_t n, void* out, int64_t* count, cudaStream_t stream) {
  return by_size(element_size, [&](auto word) {
    using U = typename decltype(word)::U;
    return cub::DeviceSelect::Flagged(temp, bytes, static_cast<const U*>(in), flags, static_cast<U*>(out), count, n,
                                      stream);
  });
}

cudaError_t cuda_launch_positions_to_coords(int64_t* out, const int64_t* positions, int64_t rows,
                                            const int64_t* count, int64_t fill, const CudaIndexSizes& sizes,
                                            cudaStream_t stream) {
  if (rows == 0 || sizes.ndim == 0) return cudaSuccess;
  positions_to_coords_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(out, positions, rows, count, fill, sizes);
  return cudaGetLastError();
}

cudaError_t cuda_launch_scatter_positions(int element_size, void* out, const void* src, const int64_t* positions,
                                          int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return by_size(element_size, [&](auto word) {
    using U = typename decltype(word)::U;
    scatter_positions_kernel<U><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<U*>(out),
                                                                        static_cast<const U*>(src), positions, n);
    return cudaGetLastError();
  });
}

}  // namespace aotirt
