// CUDA pooling kernels: one thread per output element (per input element
// for max_unpool), walking a [N, C, T, H, W] view through element strides,
// so 2-d and 3-d ops, batched and unbatched inputs and every layout share
// one kernel per family. Threads follow the output's memory order (channels
// innermost for channels-last outputs), so writes coalesce. The arithmetic
// is that of torch's CUDA kernels: sums of the half types in float, the
// divisions each op makes in the order it makes them, and max windows that
// a NaN wins (the last one), with indices flattened over the input plane.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/ops/pooling/cuda_pooling_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;
// Grid-stride loops cover anything beyond this many blocks.
constexpr int64_t kMaxBlocks = int64_t{1} << 20;

// Storage type S and the type A torch computes it in.
template <class S>
struct Elem {
  using A = S;
  __device__ static A load(S v) { return v; }
  __device__ static S store(A v) { return v; }
};
template <>
struct Elem<__half> {
  using A = float;
  __device__ static A load(__half v) { return __half2float(v); }
  __device__ static __half store(A v) { return __float2half_rn(v); }
};
template <>
struct Elem<__nv_bfloat16> {
  using A = float;
  __device__ static A load(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 store(A v) { return __float2bfloat16_rn(v); }
};

// |v| rounded to S's precision and back.
template <class S>
__device__ typename Elem<S>::A round_to(typename Elem<S>::A v) {
  return Elem<S>::load(Elem<S>::store(v));
}

// One output (or input) position of the 5-d view.
struct Pos {
  int64_t n, c, p[3];
};

// The position of the |i|-th element of a [N, C, T, H, W] walk with sizes
// |sizes|, channels innermost when |channels_inner|.
__device__ Pos position(int64_t i, int64_t channels, const int64_t sizes[3], bool channels_inner) {
  Pos o;
  if (channels_inner) {
    o.c = i % channels;
    i /= channels;
  }
  o.p[2] = i % sizes[2];
  i /= sizes[2];
  o.p[1] = i % sizes[1];
  i /= sizes[1];
  o.p[0] = i % sizes[0];
  i /= sizes[0];
  if (!channels_inner) {
    o.c = i % channels;
    i /= channels;
  }
  o.n = i;
  return o;
}

__device__ int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

__device__ int64_t offset(const Pos& o, const int64_t s[5]) {
  return o.n * s[0] + o.c * s[1] + o.p[0] * s[2] + o.p[1] * s[3] + o.p[2] * s[4];
}

// torch's adaptive windows: [start, end) of output |o| of |out| over |in|.
__device__ int64_t adaptive_start(int64_t o, int64_t out, int64_t in) { return (o * in) / out; }
__device__ int64_t adaptive_end(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

__device__ int64_t first_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ int64_t grid_step() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

template <class S>
__global__ void avg_pool_kernel(const S* __restrict__ in, S* __restrict__ out, CudaPoolGeometry g, CudaAvgParams p,
                                int64_t total) {
  using A = typename Elem<S>::A;
  for (int64_t i = first_index(); i < total; i += grid_step()) {
    const Pos o = position(i, g.channels, g.out, g.channels_inner);
    const S* plane = in + o.n * g.in_strides[0] + o.c * g.in_strides[1];
    S* dst = out + offset(o, g.out_strides);
    int64_t s[3], e[3];
    int64_t pool = 1;
    bool empty = false;
    for (int d = 0; d < 3; ++d) {
      if (p.mode == CudaAvgMode::kWindow) {
        s[d] = o.p[d] * p.stride[d] - p.pad[d];
        e[d] = imin(s[d] + p.kernel[d], g.in[d] + p.pad[d]);
        pool *= e[d] - s[d];
        s[d] = imax(s[d], int64_t{0});
        e[d] = imin(e[d], g.in[d]);
      } else {
        s[d] = adaptive_start(o.p[d], g.out[d], g.in[d]);
        e[d] = adaptive_end(o.p[d], g.out[d], g.in[d]);
      }
      empty = empty || s[d] >= e[d];
    }
    // A window wholly in the padding (ceil mode) averages to zero.
    if (empty) {
      *dst = Elem<S>::store(A(0));
      continue;
    }
    A sum = A(0);
    for (int64_t t = s[0]; t < e[0]; ++t)
      for (int64_t h = s[1]; h < e[1]; ++h)
        for (int64_t w = s[2]; w < e[2]; ++w)
          sum += Elem<S>::load(plane[t * g.in_strides[2] + h * g.in_strides[3] + w * g.in_strides[4]]);
    const int64_t kt = e[0] - s[0], kh = e[1] - s[1], kw = e[2] - s[2];
    A r;
    switch (p.mode) {
      case CudaAvgMode::kWindow: {
        const int64_t divide = p.has_divisor ? p.divisor : p.count_include_pad ? pool : kt * kh * kw;
        r = sum / static_cast<A>(divide);
        break;
      }
      case CudaAvgMode::kAdaptiveSteps: r = sum / static_cast<A>(kh) / static_cast<A>(kw); break;
      case CudaAvgMode::kAdaptiveVolume: r = sum / static_cast<A>(kt * kh * kw); break;
      default: {
        // torch forms 1 / area in the storage dtype (an area that dtype
        // cannot hold is rounded first).
        const A factor = round_to<S>(A(1) / round_to<S>(static_cast<A>(kh * kw)));
        r = sum * factor;
        break;
      }
    }
    *dst = Elem<S>::store(r);
  }
}

// torch's fractional window start for output |index| of |out| over |in|
// with windows of |k|, in the sample's arithmetic; kept inside the input.
template <class A>
__device__ int64_t fractional_start(A sample, int64_t index, int64_t in, int64_t out, int64_t k) {
  if (index == out - 1) return in - k;
  const A alpha = static_cast<A>(in - k) / static_cast<A>(out - 1);
  int64_t s = static_cast<int64_t>((static_cast<A>(index) + sample) * alpha) - static_cast<int64_t>(sample * alpha);
  // Samples outside [0, 1) could place a window outside the input; torch
  // reads out of bounds there, aotirt clamps.
  return imin(imax(s, int64_t{0}), in - k);
}

template <class S>
__global__ void max_pool_kernel(const S* __restrict__ in, S* __restrict__ values, int64_t* __restrict__ indices,
                                CudaPoolGeometry g, CudaMaxParams p, int64_t total) {
  using A = typename Elem<S>::A;
  const S* samples = static_cast<const S*>(p.samples);
  for (int64_t i = first_index(); i < total; i += grid_step()) {
    const Pos o = position(i, g.channels, g.out, g.channels_inner);
    const S* plane = in + o.n * g.in_strides[0] + o.c * g.in_strides[1];
    int64_t s[3], e[3], step[3];
    for (int d = 0; d < 3; ++d) {
      step[d] = 1;
      switch (p.mode) {
        case CudaMaxMode::kWindow: {
          int64_t start = o.p[d] * p.stride[d] - p.pad[d];
          e[d] = imin(start + (p.kernel[d] - 1) * p.dilation[d] + 1, g.in[d]);
          while (start < 0) start += p.dilation[d];
          s[d] = start;
          step[d] = p.dilation[d];
          break;
        }
        case CudaMaxMode::kAdaptive:
          s[d] = adaptive_start(o.p[d], g.out[d], g.in[d]);
          e[d] = adaptive_end(o.p[d], g.out[d], g.in[d]);
          break;
        default: {
          if (d < 3 - p.spatial) {  // a 2-d input's single T position
            s[d] = 0;
            e[d] = 1;
            break;
          }
          const int j = p.spatial == 3 ? d : (d == 2 ? 0 : 1);
          const A sample = Elem<S>::load(
              samples[o.n * p.sample_strides[0] + o.c * p.sample_strides[1] + j * p.sample_strides[2]]);
          s[d] = fractional_start<A>(sample, o.p[d], g.in[d], g.out[d], p.kernel[d]);
          e[d] = s[d] + p.kernel[d];
          break;
        }
      }
    }
    const int64_t H = g.in[1], W = g.in[2];
    A best = -INFINITY;
    S best_raw = Elem<S>::store(best);
    int64_t best_i = s[0] * H * W + s[1] * W + s[2];
    for (int64_t t = s[0]; t < e[0]; t += step[0])
      for (int64_t h = s[1]; h < e[1]; h += step[1])
        for (int64_t w = s[2]; w < e[2]; w += step[2]) {
          const S raw = plane[t * g.in_strides[2] + h * g.in_strides[3] + w * g.in_strides[4]];
          const A v = Elem<S>::load(raw);
          if (v > best || v != v) {
            best = v;
            best_raw = raw;
            best_i = t * H * W + h * W + w;
          }
        }
    const int64_t at = offset(o, g.out_strides);
    values[at] = best_raw;
    indices[at] = best_i;
  }
}

template <class S>
__global__ void max_unpool_kernel(const S* __restrict__ in, const int64_t* __restrict__ ind, CudaPoolGeometry g,
                                  int64_t xs0, int64_t xs1, int64_t xs2, int64_t xs3, int64_t xs4, S* __restrict__ out,
                                  int64_t total) {
  const int64_t plane_out = g.out[0] * g.out[1] * g.out[2];
  const int64_t xs[5] = {xs0, xs1, xs2, xs3, xs4};
  for (int64_t i = first_index(); i < total; i += grid_step()) {
    const Pos o = position(i, g.channels, g.in, false);
    const int64_t m = ind[offset(o, xs)];
    if (m < 0 || m >= plane_out) continue;
    Pos t;
    t.n = o.n;
    t.c = o.c;
    t.p[0] = m / (g.out[1] * g.out[2]);
    t.p[1] = (m / g.out[2]) % g.out[1];
    t.p[2] = m % g.out[2];
    out[offset(t, g.out_strides)] = in[offset(o, g.in_strides)];
  }
}

unsigned blocks_for(int64_t total) {
  return static_cast<unsigned>(std::min<int64_t>((total + kThreads - 1) / kThreads, kMaxBlocks));
}

template <class Fn>
cudaError_t dispatch(int dtype, Fn&& fn) {
  switch (dtype) {
    case 6: return fn(float{});
    case 7: return fn(double{});
    case 5: return fn(__half{});
    case 15: return fn(__nv_bfloat16{});
    default: return cudaErrorInvalidValue;
  }
}

int64_t walk_size(const CudaPoolGeometry& g, const int64_t sizes[3]) {
  return g.batch * g.channels * sizes[0] * sizes[1] * sizes[2];
}

}  // namespace

cudaError_t cuda_launch_avg_pool(int dtype, const void* in, void* out, const CudaPoolGeometry& g,
                                 const CudaAvgParams& p, cudaStream_t stream) {
  const int64_t total = walk_size(g, g.out);
  if (total == 0) return cudaSuccess;
  return dispatch(dtype, [&](auto tag) {
    using S = decltype(tag);
    avg_pool_kernel<S><<<blocks_for(total), kThreads, 0, stream>>>(static_cast<const S*>(in), static_cast<S*>(out),
                                                                   g, p, total);
    return cudaGetLastError();
  });
}

cudaError_t cuda_launch_max_pool(int dtype, const void* in, void* values, int64_t* indices,
                                 const CudaPoolGeometry& g, const CudaMaxParams& p, cudaStream_t stream) {
  const int64_t total = walk_size(g, g.out);
  if (total == 0) return cudaSuccess;
  return dispatch(dtype, [&](auto tag) {
    using S = decltype(tag);
    max_pool_kernel<S><<<blocks_for(total), kThreads, 0, stream>>>(static_cast<const S*>(in),
                                                                   static_cast<S*>(values), indices, g, p, total);
    return cudaGetLastError();
  });
}

cudaError_t cuda_launch_max_unpool(int dtype, const void* in, const int64_t* indices, const int64_t index_strides[5],
                                   void* out, size_t out_bytes, const CudaPoolGeometry& g, cudaStream_t stream) {
  if (walk_size(g, g.out) == 0) return cudaSuccess;
  cudaError_t err = cudaMemsetAsync(out, 0, out_bytes, stream);
  if (err != cudaSuccess) return err;
  const int64_t total = walk_size(g, g.in);
  if (total == 0) return cudaSuccess;
  return dispatch(dtype, [&](auto tag) {
    using S = decltype(tag);
    max_unpool_kernel<S><<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const S*>(in), indices, g, index_strides[0], index_strides[1], index_strides[2],
        index_strides[3], index_strides[4], static_cast<S*>(out), total);
    return cudaGetLastError();
  });
}

}  // namespace aotirt
