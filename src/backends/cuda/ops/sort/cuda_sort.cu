// CUDA sort and topk. Each value becomes an unsigned key of its width whose
// unsigned order is the order wanted: integers flip their sign bit, floats
// flip every bit when negative and only the sign bit otherwise (after NaN
// is made one positive NaN, above +inf, and -0.0 becomes 0.0, which torch
// treats as equal), and a descending sort inverts the key. Lines are then
// ordered ascending by one of these paths (choose_path), each stable and
// carrying every element's 32-bit position in its line, and the first k
// values are gathered from the input by position, bit for bit:
//  - lines up to 4096: one block per line sorts it in registers and shared
//    memory (cub::BlockRadixSort), reading the input once and writing the k
//    outputs once, in one kernel;
//  - one longer line: a device-wide radix sort (cub::DeviceRadixSort) of
//    keys and positions;
//  - several longer lines of keys up to 4 bytes: the same device-wide sort
//    of 64-bit keys holding the line above the value's key, which orders
//    every line at once; the line bits add ceil(log2(lines)) bits of passes;
//  - several longer lines of 8-byte keys: the device-wide sort of every
//    key, then a stable one of the lines (ceil(log2(lines)) bits), or CUB's
//    segmented sort past 2^32 elements.
// topk with k at most half of a line longer than 4096 does not sort whole
// lines: a radix select finds each line's k-th key, 8 bits per pass (one
// histogram pass over the line per key byte), then one more pass collects
// the k keys below or equal to it, and only those k are ordered by the
// paths above.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>

#include "backends/cuda/ops/sort/cuda_sort_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxGrid = 65535 * 16;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < kMaxGrid ? (b > 0 ? b : 1) : kMaxGrid);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Element width in bytes of c10 dtype |dtype| (the sortable ones), 0 else.
int width_of(int dtype) {
  switch (dtype) {
    case 0: case 1: case 11: return 1;   // uint8, int8, bool
    case 2: case 5: case 15: return 2;   // int16, float16, bfloat16
    case 3: case 6: return 4;            // int32, float32
    case 4: case 7: return 8;            // int64, float64
    default: return 0;
  }
}

enum class KeyKind { kUnsigned, kSigned, kFloat };

KeyKind kind_of(int dtype) {
  switch (dtype) {
    case 0: case 11: return KeyKind::kUnsigned;
    case 5: case 15: case 6: case 7: return KeyKind::kFloat;
    default: return KeyKind::kSigned;
  }
}

struct KeyRule {
  KeyKind kind;
  bool bf16;  // a 2-byte float is bfloat16, not float16
  bool descending;
};

// Float layouts by width: exponent and mantissa masks of float16/bfloat16
// (2 bytes; told apart by bf16), float32 and float64.
template <class U>
__device__ __forceinline__ U order_key(U bits, KeyRule rule) {
  constexpr U sign = U(U(1) << (sizeof(U) * 8 - 1));
  U key = bits;
  if (rule.kind == KeyKind::kSigned) {
    key = U(bits ^ sign);
  } else if (rule.kind == KeyKind::kFloat) {
    U exp_mask, man_mask;
    if constexpr (sizeof(U) == 1) {
      exp_mask = 0;  // no 1-byte float is sorted; keeps the template whole
      man_mask = 0;
    } else if constexpr (sizeof(U) == 2) {
      exp_mask = rule.bf16 ? U(0x7f80) : U(0x7c00);
      man_mask = rule.bf16 ? U(0x007f) : U(0x03ff);
    } else if constexpr (sizeof(U) == 4) {
      exp_mask = U(0x7f800000u);
      man_mask = U(0x007fffffu);
    } else {
      exp_mask = U(0x7ff0000000000000ull);
      man_mask = U(0x000fffffffffffffull);
    }
    if (exp_mask != 0 && (bits & exp_mask) == exp_mask && (bits & man_mask) != 0) {
      key = U(~U(0));  // every NaN: above the largest key a number makes
    } else {
      if (bits == sign) bits = 0;  // -0.0 sorts with 0.0
      key = (bits & sign) ? U(~bits) : U(bits | sign);
    }
  }
  return rule.descending ? U(~key) : key;
}

// Where the keys of the lines being sorted come from: the input's values
// (|keys| null; positions are the elements' own) or keys already made with
// their positions (the candidates of a radix select).
template <class U>
struct Source {
  const U* in;
  const U* keys;
  const int32_t* pos;
  KeyRule rule;
  __device__ __forceinline__ U key(int64_t i) const { return keys ? keys[i] : order_key<U>(in[i], rule); }
};

// ---------------------------------------------------------------------------
// One block per line.

// Each block sorts lines of |m| keys (m <= THREADS * ITEMS) and writes the
// first k: values from the input line (|n| long) by position. The line is
// loaded coalesced and transposed through shared memory so that thread t
// holds positions t * ITEMS and on (the blocked arrangement), which is the
// order BlockRadixSort, a stable sort, keeps among equal keys; the padding's
// keys are the largest and its positions the last, so it sorts after every
// real key.
template <class U, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS) block_sort_kernel(Source<U> src, const U* in, int64_t lines, int64_t m,
                                                             int64_t n, int64_t k, U* values, int64_t* indices) {
  using Sort = cub::BlockRadixSort<U, THREADS, ITEMS, int32_t>;
  using LoadKeys = cub::BlockLoad<U, THREADS, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using LoadPos = cub::BlockLoad<int32_t, THREADS, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  __shared__ union {
    typename Sort::TempStorage sort;
    typename LoadKeys::TempStorage keys;
    typename LoadPos::TempStorage pos;
  } temp;
  const int valid = static_cast<int>(m);
  for (int64_t l = blockIdx.x; l < lines; l += gridDim.x) {
    U keys[ITEMS];
    int32_t pos[ITEMS];
    const int64_t row = l * m;
    LoadKeys(temp.keys).Load(src.keys ? src.keys + row : src.in + row, keys, valid, U(0));
    if (src.pos) {
      __syncthreads();  // temp changes hands
      LoadPos(temp.pos).Load(src.pos + row, pos, valid, 0);
    }
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const int j = static_cast<int>(threadIdx.x) * ITEMS + i;
      if (j < valid) {
        if (!src.keys) keys[i] = order_key<U>(keys[i], src.rule);
        if (!src.pos) pos[i] = j;
      } else {
        keys[i] = U(~U(0));
        pos[i] = 2147483647;
      }
    }
    __syncthreads();  // temp changes hands
    Sort(temp.sort).SortBlockedToStriped(keys, pos);
    // Striped: item i of thread t holds rank i * THREADS + t (coalesced).
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const int64_t r = static_cast<int64_t>(i) * THREADS + threadIdx.x;
      if (r < k) {
        values[l * k + r] = in[l * n + pos[i]];
        indices[l * k + r] = pos[i];
      }
    }
    __syncthreads();  // temp is reused by the block's next line
  }
}

template <class U, int THREADS, int ITEMS>
cudaError_t launch_block_sort(const Source<U>& src, const U* in, int64_t lines, int64_t m, int64_t n, int64_t k,
                              U* values, int64_t* indices, cudaStream_t stream) {
  const int64_t grid = lines < 2147483647 ? lines : 2147483647;
  block_sort_kernel<U, THREADS, ITEMS>
      <<<static_cast<unsigned>(grid), THREADS, 0, stream>>>(src, in, lines, m, n, k, values, indices);
  return cudaGetLastError();
}

// ---------------------------------------------------------------------------
// Device-wide sorts.

// keys[i] and pos[i] of element i of [lines, m]; with K wider than U the
// line goes above the value's key (|key_bits| its width in bits).
template <class U, class K>
__global__ void prep_kernel(Source<U> src, int64_t total, int64_t m, int key_bits, K* keys, int32_t* pos) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t line = i / m;
    K key = K(src.key(i));
    if constexpr (sizeof(K) > sizeof(U)) key |= K(line) << key_bits;
    keys[i] = key;
    pos[i] = src.pos ? src.pos[i] : static_cast<int32_t>(i - line * m);
  }
}

// values[l, j] = in[l, pos[l, j]] and indices[l, j] = pos[l, j], j < k, of
// sorted lines |m| long and input lines |n| long.
template <class U>
__global__ void gather_kernel(const U* in, const int32_t* pos, int64_t lines, int64_t m, int64_t n, int64_t k,
                              U* values, int64_t* indices) {
  const int64_t total = lines * k;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t l = i / k, j = i - l * k;
    const int32_t p = pos[l * m + j];
    values[i] = in[l * n + p];
    indices[i] = p;
  }
}

struct LineStart {
  int64_t n;
  __host__ __device__ int64_t operator()(int64_t l) const { return l * n; }
};

// Carves the scratch: the same calls with a null base measure it.
struct Scratch {
  char* base = nullptr;
  size_t used = 0;
  void* take_bytes(size_t bytes) {
    used = (used + 255) & ~static_cast<size_t>(255);
    void* p = base ? static_cast<void*>(base + used) : nullptr;
    used += bytes;
    return p;
  }
  template <class T>
  T* take(int64_t count) {
    return static_cast<T*>(take_bytes(sizeof(T) * static_cast<size_t>(count)));
  }
};

constexpr int64_t kMaxRadixItems = 2147483647;

enum class Path { kBlock128, kBlock512, kBlock2048, kBlock4096, kOneLine, kComposite, kTwoPass, kSegmented };

// Bits that hold every value up to |v| (0 for 0).
int bits_for(int64_t v) {
  int b = 0;
  while (v > 0) {
    ++b;
    v >>= 1;
  }
  return b;
}

// Lines up to 4096 keys sort in one block (the smallest block that holds
// the line, so short lines waste few threads). Longer lines take the
// device-wide sort: a single one by itself; several of keys up to 4 bytes, with
// the line in the key (a 64-bit key holds 32 value bits and 32 line bits);
// several of 8-byte keys, by key and then stably by line. The device-wide
// sorts count their items in 32 bits (CUB's fastest offsets); more items
// than that take CUB's segmented sort.
Path choose_path(int64_t lines, int64_t m, int width) {
  if (m <= 128) return Path::kBlock128;
  if (m <= 512) return Path::kBlock512;
  if (m <= 2048) return Path::kBlock2048;
  if (m <= 4096) return Path::kBlock4096;
  if (lines * m > kMaxRadixItems) return Path::kSegmented;
  if (lines == 1) return Path::kOneLine;
  if (width <= 4 && 8 * width + bits_for(lines - 1) <= 64) return Path::kComposite;
  return Path::kTwoPass;
}

// The device-wide paths: keys of type K and positions made (one pass),
// sorted (CUB), and the first k of each line gathered (one pass).
template <class U, class K>
cudaError_t device_sort(Scratch& sc, bool run, Path path, const Source<U>& src, const U* in, int64_t lines, int64_t m,
                        int64_t n, int64_t k, U* values, int64_t* indices, cudaStream_t stream) {
  const int64_t total = lines * m;
  K* keys_in = sc.take<K>(total);
  K* keys_out = sc.take<K>(total);
  int32_t* pos_in = sc.take<int32_t>(total);
  int32_t* pos_out = sc.take<int32_t>(total);
  const int key_bits = static_cast<int>(sizeof(U)) * 8;
  const int end_bit = path == Path::kComposite ? key_bits + bits_for(lines - 1) : key_bits;
  const int items = static_cast<int>(total < kMaxRadixItems ? total : kMaxRadixItems);  // segmented: unused
  auto begins = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LineStart{m});
  auto ends = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(1), LineStart{m});
  size_t cub_bytes = 0;
  cudaError_t err;
  if (path == Path::kSegmented)
    err = cub::DeviceSegmentedSort::StableSortPairs(nullptr, cub_bytes, keys_in, keys_out, pos_in, pos_out, total,
                                                    lines, begins, ends, stream);
  else
    err = cub::DeviceRadixSort::SortPairs(nullptr, cub_bytes, keys_in, keys_out, pos_in, pos_out, items, 0, end_bit,
                                          stream);
  if (err != cudaSuccess) return err;
  void* cub_temp = sc.take_bytes(cub_bytes);
  if (!run) return cudaSuccess;
  prep_kernel<U, K><<<blocks_for(total), kThreads, 0, stream>>>(src, total, m, key_bits, keys_in, pos_in);
  err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  if (path == Path::kSegmented)
    err = cub::DeviceSegmentedSort::StableSortPairs(cub_temp, cub_bytes, keys_in, keys_out, pos_in, pos_out, total,
                                                    lines, begins, ends, stream);
  else
    err = cub::DeviceRadixSort::SortPairs(cub_temp, cub_bytes, keys_in, keys_out, pos_in, pos_out, items, 0,
                                          end_bit, stream);
  if (err != cudaSuccess) return err;
  gather_kernel<U><<<blocks_for(lines * k), kThreads, 0, stream>>>(in, pos_out, lines, m, n, k, values, indices);
  return cudaGetLastError();
}

// keys[i] and ids[i] = i of element i of [lines, m].
template <class U>
__global__ void prep_ids_kernel(Source<U> src, int64_t total, U* keys, uint32_t* ids) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    keys[i] = src.key(i);
    ids[i] = static_cast<uint32_t>(i);
  }
}

// The line and position of each element numbered in |ids|.
template <class U>
__global__ void split_ids_kernel(Source<U> src, const uint32_t* ids, int64_t total, int64_t m, uint32_t* line_keys,
                                 int32_t* pos) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t id = ids[i];
    const int64_t line = id / m;
    line_keys[i] = static_cast<uint32_t>(line);
    pos[i] = src.pos ? src.pos[id] : static_cast<int32_t>(id - line * m);
  }
}

// Several long lines of 8-byte keys: every element sorted by key with its
// number (one radix sort of all lines at once), then stably by line (a
// radix sort of ceil(log2(lines)) bits), which leaves each line in key
// order. The buffers of the first sort are reused by the second; element
// numbers are 32-bit (choose_path).
template <class U>
cudaError_t two_pass_sort(Scratch& sc, bool run, const Source<U>& src, const U* in, int64_t lines, int64_t m,
                          int64_t n, int64_t k, U* values, int64_t* indices, cudaStream_t stream) {
  static_assert(sizeof(U) == 8, "the second sort's buffers live in the first's keys");
  const int64_t total = lines * m;
  U* keys_in = sc.take<U>(total);
  U* keys_out = sc.take<U>(total);
  uint32_t* ids_in = sc.take<uint32_t>(total);
  uint32_t* ids_out = sc.take<uint32_t>(total);
  uint32_t* line_in = keys_in ? reinterpret_cast<uint32_t*>(keys_in) : nullptr;
  uint32_t* line_out = keys_in ? reinterpret_cast<uint32_t*>(keys_in) + total : nullptr;
  int32_t* pos_in = reinterpret_cast<int32_t*>(ids_in);
  int32_t* pos_out = keys_out ? reinterpret_cast<int32_t*>(keys_out) : nullptr;
  const int line_bits = bits_for(lines - 1);
  const int items = static_cast<int>(total);  // choose_path: at most kMaxRadixItems
  size_t bytes_keys = 0, bytes_lines = 0;
  cudaError_t err = cub::DeviceRadixSort::SortPairs(nullptr, bytes_keys, keys_in, keys_out, ids_in, ids_out, items,
                                                    0, 64, stream);
  if (err != cudaSuccess) return err;
  err = cub::DeviceRadixSort::SortPairs(nullptr, bytes_lines, line_in, line_out, pos_in, pos_out, items, 0, line_bits,
                                        stream);
  if (err != cudaSuccess) return err;
  size_t cub_bytes = bytes_keys > bytes_lines ? bytes_keys : bytes_lines;
  void* cub_temp = sc.take_bytes(cub_bytes);
  if (!run) return cudaSuccess;
  prep_ids_kernel<U><<<blocks_for(total), kThreads, 0, stream>>>(src, total, keys_in, ids_in);
  err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  err = cub::DeviceRadixSort::SortPairs(cub_temp, bytes_keys, keys_in, keys_out, ids_in, ids_out, items, 0, 64,
                                        stream);
  if (err != cudaSuccess) return err;
  // keys_in and ids_in are free now; keys_out is once ids_out is split.
  split_ids_kernel<U><<<blocks_for(total), kThreads, 0, stream>>>(src, ids_out, total, m, line_in, pos_in);
  err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  err = cub::DeviceRadixSort::SortPairs(cub_temp, bytes_lines, line_in, line_out, pos_in, pos_out, items, 0,
                                        line_bits, stream);
  if (err != cudaSuccess) return err;
  gather_kernel<U><<<blocks_for(lines * k), kThreads, 0, stream>>>(in, pos_out, lines, m, n, k, values, indices);
  return cudaGetLastError();
}

// Orders |lines| lines of |m| keys from |src| and writes the first k of
// each (values from |in|, lines |n| long).
template <class U>
cudaError_t sort_lines(Scratch& sc, bool run, const Source<U>& src, const U* in, int64_t lines, int64_t m, int64_t n,
                       int64_t k, U* values, int64_t* indices, cudaStream_t stream) {
  const Path path = choose_path(lines, m, static_cast<int>(sizeof(U)));
  switch (path) {
    case Path::kBlock128:
      return run ? launch_block_sort<U, 64, 2>(src, in, lines, m, n, k, values, indices, stream) : cudaSuccess;
    case Path::kBlock512:
      return run ? launch_block_sort<U, 128, 4>(src, in, lines, m, n, k, values, indices, stream) : cudaSuccess;
    case Path::kBlock2048:
      return run ? launch_block_sort<U, 256, 8>(src, in, lines, m, n, k, values, indices, stream) : cudaSuccess;
    case Path::kBlock4096:
      return run ? launch_block_sort<U, 512, 8>(src, in, lines, m, n, k, values, indices, stream) : cudaSuccess;
    case Path::kComposite:
      if constexpr (sizeof(U) <= 4)
        return device_sort<U, uint64_t>(sc, run, path, src, in, lines, m, n, k, values, indices, stream);
      return cudaErrorInvalidValue;  // choose_path gives it only to keys up to 4 bytes
    case Path::kTwoPass:
      if constexpr (sizeof(U) == 8)
        return two_pass_sort<U>(sc, run, src, in, lines, m, n, k, values, indices, stream);
      return cudaErrorInvalidValue;  // choose_path gives it only to 8-byte keys
    case Path::kOneLine:
    case Path::kSegmented:
      return device_sort<U, U>(sc, run, path, src, in, lines, m, n, k, values, indices, stream);
  }
  return cudaErrorInvalidValue;
}

// ---------------------------------------------------------------------------
// Radix select (topk).

constexpr int kSelectThreads = 256;
constexpr int kDigits = 256;  // 8-bit digits

// The bits of a U at and above bit |from|.
template <class U>
__device__ __forceinline__ U bits_from(int from) {
  return from >= static_cast<int>(sizeof(U) * 8) ? U(0) : U(~0ull << from);
}

// A line is split into |chunks| pieces of |chunk| elements, one block each;
// block b takes line b / chunks, piece b % chunks.
struct Chunks {
  int64_t lines, n, chunk, chunks;
};

__global__ void select_init_kernel(int64_t lines, int64_t k, uint64_t* prefix, uint32_t* remain, uint32_t* counters) {
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; l < lines;
       l += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    prefix[l] = 0;
    remain[l] = static_cast<uint32_t>(k);
    counters[2 * l] = 0;
    counters[2 * l + 1] = 0;
  }
}

// Counts, per line, the keys whose bits above |shift| + 8 equal the prefix
// found so far, by their digit at |shift|: a histogram in shared memory per
// block, added into the line's.
template <class U>
__global__ void __launch_bounds__(kSelectThreads) histogram_kernel(const U* in, KeyRule rule, Chunks c,
                                                                   const uint64_t* prefix, int shift,
                                                                   uint32_t* hist) {
  __shared__ uint32_t local[kDigits];
  const U high = bits_from<U>(shift + 8);
  for (int64_t b = blockIdx.x; b < c.lines * c.chunks; b += gridDim.x) {
    const int64_t l = b / c.chunks;
    const int64_t begin = (b - l * c.chunks) * c.chunk;
    const int64_t end = begin + c.chunk < c.n ? begin + c.chunk : c.n;
    for (int t = threadIdx.x; t < kDigits; t += blockDim.x) local[t] = 0;
    __syncthreads();
    const U want = static_cast<U>(prefix[l]);
    const U* row = in + l * c.n;
    for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
      const U key = order_key<U>(row[j], rule);
      if (((key ^ want) & high) == 0) atomicAdd(&local[(key >> shift) & 0xff], 1u);
    }
    __syncthreads();
    for (int t = threadIdx.x; t < kDigits; t += blockDim.x)
      if (local[t] != 0) atomicAdd(&hist[l * kDigits + t], local[t]);
    __syncthreads();  // local is cleared for the block's next piece
  }
}

// One block of kDigits threads per line: the digit whose bin holds the
// remain-th key still in the running (counting from the smallest) joins the
// prefix, and remain drops by the keys in the bins below it. The histogram
// is cleared for the next pass.
template <class U>
__global__ void __launch_bounds__(kDigits) select_digit_kernel(int64_t lines, int shift, uint32_t* hist,
                                                               uint64_t* prefix, uint32_t* remain) {
  using Scan = cub::BlockScan<uint32_t, kDigits>;
  __shared__ typename Scan::TempStorage temp;
  for (int64_t l = blockIdx.x; l < lines; l += gridDim.x) {
    const uint32_t count = hist[l * kDigits + threadIdx.x];
    const uint32_t want = remain[l];
    uint32_t before = 0;
    Scan(temp).ExclusiveSum(count, before);
    __syncthreads();  // every thread has read remain[l] before it changes
    if (before < want && want <= before + count) {
      remain[l] = want - before;
      prefix[l] |= static_cast<uint64_t>(threadIdx.x) << shift;
    }
    hist[l * kDigits + threadIdx.x] = 0;
    __syncthreads();  // temp is reused by the block's next line
  }
}

// A slot for each lane whose |flag| is set, from |counter|: one atomic per
// warp. Every lane of the warp calls it.
__device__ __forceinline__ uint32_t warp_slot(bool flag, uint32_t* counter, uint32_t* first) {
  const unsigned mask = __ballot_sync(0xffffffffu, flag);
  const int lane = static_cast<int>(threadIdx.x & 31);
  uint32_t base = 0;
  if (mask != 0) {
    const int leader = __ffs(mask) - 1;
    if (lane == leader) base = atomicAdd(counter, static_cast<uint32_t>(__popc(mask)));
    base = __shfl_sync(0xffffffffu, base, leader);
  }
  *first = base;
  return base + static_cast<uint32_t>(__popc(mask & ((1u << lane) - 1u)));
}

// With each line's k-th key known (prefix) and how many keys equal to it
// are taken (remain), writes the line's k keys and positions: every key
// below the k-th (k - remain of them) and the first remain equal ones to
// claim a slot.
template <class U>
__global__ void __launch_bounds__(kSelectThreads) collect_kernel(const U* in, KeyRule rule, Chunks c, int64_t k,
                                                                 const uint64_t* prefix, const uint32_t* remain,
                                                                 uint32_t* counters, U* cand_keys,
                                                                 int32_t* cand_pos) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int64_t warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int64_t b = blockIdx.x; b < c.lines * c.chunks; b += gridDim.x) {
    const int64_t l = b / c.chunks;
    const int64_t begin = (b - l * c.chunks) * c.chunk;
    const int64_t end = begin + c.chunk < c.n ? begin + c.chunk : c.n;
    const U kth = static_cast<U>(prefix[l]);
    const uint32_t take_equal = remain[l];
    const int64_t below = k - take_equal;
    const U* row = in + l * c.n;
    bool equal_full = false;  // this warp saw every equal slot taken
    // |base| is the same in every lane, so whole warps run each round.
    for (int64_t base = begin + warp * 32; base < end; base += warps * 32) {
      const int64_t j = base + lane;
      bool lt = false, eq = false;
      U key = 0;
      if (j < end) {
        key = order_key<U>(row[j], rule);
        lt = key < kth;
        eq = !equal_full && key == kth;
      }
      uint32_t first = 0;
      const uint32_t lt_slot = warp_slot(lt, &counters[2 * l], &first);
      const uint32_t eq_slot = warp_slot(eq, &counters[2 * l + 1], &first);
      if (first >= take_equal) equal_full = true;
      if (lt) {
        cand_keys[l * k + lt_slot] = key;
        cand_pos[l * k + lt_slot] = static_cast<int32_t>(j);
      } else if (eq && eq_slot < take_equal) {
        cand_keys[l * k + below + eq_slot] = key;
        cand_pos[l * k + below + eq_slot] = static_cast<int32_t>(j);
      }
    }
  }
}

// topk by radix select: (sizeof(U) histogram passes + one collecting pass
// over the input), then the [lines, k] candidates sorted by sort_lines.
template <class U>
cudaError_t select_then_sort(Scratch& sc, bool run, const CudaSortShape& s, const U* in, KeyRule rule, U* values,
                             int64_t* indices, cudaStream_t stream) {
  const int64_t lines = s.lines, n = s.n, k = s.k;
  // About 1024 blocks in all, each piece at least 2048 elements.
  int64_t chunks = ceil_div(1024, lines);
  const int64_t most = ceil_div(n, 2048);
  if (chunks > most) chunks = most;
  if (chunks < 1) chunks = 1;
  const Chunks c{lines, n, ceil_div(n, chunks), chunks};
  uint32_t* hist = sc.take<uint32_t>(lines * kDigits);
  uint64_t* prefix = sc.take<uint64_t>(lines);
  uint32_t* remain = sc.take<uint32_t>(lines);
  uint32_t* counters = sc.take<uint32_t>(2 * lines);
  U* cand_keys = sc.take<U>(lines * k);
  int32_t* cand_pos = sc.take<int32_t>(lines * k);
  if (run) {
    cudaError_t err = cudaMemsetAsync(hist, 0, sizeof(uint32_t) * kDigits * static_cast<size_t>(lines), stream);
    if (err != cudaSuccess) return err;
    select_init_kernel<<<blocks_for(lines), kThreads, 0, stream>>>(lines, k, prefix, remain, counters);
    const int64_t blocks = lines * chunks < kMaxGrid ? lines * chunks : kMaxGrid;
    const int64_t line_blocks = lines < kMaxGrid ? lines : kMaxGrid;
    for (int shift = static_cast<int>(sizeof(U)) * 8 - 8; shift >= 0; shift -= 8) {
      histogram_kernel<U><<<static_cast<unsigned>(blocks), kSelectThreads, 0, stream>>>(in, rule, c, prefix, shift,
                                                                                        hist);
      select_digit_kernel<U><<<static_cast<unsigned>(line_blocks), kDigits, 0, stream>>>(lines, shift, hist, prefix,
                                                                                         remain);
    }
    collect_kernel<U><<<static_cast<unsigned>(blocks), kSelectThreads, 0, stream>>>(in, rule, c, k, prefix, remain,
                                                                                    counters, cand_keys, cand_pos);
    err = cudaGetLastError();
    if (err != cudaSuccess) return err;
  }
  const Source<U> cand{in, cand_keys, cand_pos, rule};
  return sort_lines<U>(sc, run, cand, in, lines, k, n, k, values, indices, stream);
}

// A radix select pays off when k is at most half a line too long for one
// block: its passes read the input a few times, a sort of the whole line
// moves keys and positions many times.
bool use_select(const CudaSortShape& s) { return s.select && s.n > 4096 && s.k <= s.n / 2; }

template <class U>
cudaError_t sort_typed(const CudaSortShape& s, const void* in_v, void* values_v, int64_t* indices, Scratch& sc,
                       bool run, cudaStream_t stream) {
  const KeyRule rule{kind_of(s.dtype), s.dtype == 15, s.descending};
  const U* in = static_cast<const U*>(in_v);
  U* values = static_cast<U*>(values_v);
  if (use_select(s)) return select_then_sort<U>(sc, run, s, in, rule, values, indices, stream);
  const Source<U> src{in, nullptr, nullptr, rule};
  return sort_lines<U>(sc, run, src, in, s.lines, s.n, s.n, s.k, values, indices, stream);
}

cudaError_t dispatch(const CudaSortShape& s, const void* in, void* values, int64_t* indices, Scratch& sc, bool run,
                     cudaStream_t stream) {
  if (s.lines < 1 || s.n < 1 || s.n > kCudaSortMaxLine || s.k < 1 || s.k > s.n) return cudaErrorInvalidValue;
  switch (width_of(s.dtype)) {
    case 1: return sort_typed<uint8_t>(s, in, values, indices, sc, run, stream);
    case 2: return sort_typed<uint16_t>(s, in, values, indices, sc, run, stream);
    case 4: return sort_typed<uint32_t>(s, in, values, indices, sc, run, stream);
    case 8: return sort_typed<uint64_t>(s, in, values, indices, sc, run, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t cuda_sort_temp_bytes(const CudaSortShape& s, size_t* bytes) {
  Scratch sc;
  const cudaError_t err = dispatch(s, nullptr, nullptr, nullptr, sc, false, nullptr);
  *bytes = sc.used;
  return err;
}

cudaError_t cuda_launch_sort(const CudaSortShape& s, const void* in, void* values, int64_t* indices, void* temp,
                             size_t temp_bytes, cudaStream_t stream) {
  size_t need = 0;
  cudaError_t err = cuda_sort_temp_bytes(s, &need);
  if (err != cudaSuccess) return err;
  if (need > temp_bytes || (need > 0 && temp == nullptr)) return cudaErrorInvalidValue;
  Scratch sc;
  sc.base = static_cast<char*>(temp);
  return dispatch(s, in, values, indices, sc, true, stream);
}

}  // namespace aotirt
