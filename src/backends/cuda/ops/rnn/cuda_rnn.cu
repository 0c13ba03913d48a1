// CUDA kernel of _thnn_fused_lstm_cell: one thread per element of the cell
// state, striding over the grid. Each reads its four gate pre-activations
// from both gate tensors (and biases), and writes hy, cy and the four
// activated gates, with torch's order of additions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "backends/cuda/ops/rnn/cuda_rnn_kernels.h"

namespace aotirt {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;  // further elements are reached by striding

// Storage type S, accumulation type A.
template <class S>
struct Acc {
  using A = float;
  __device__ static A load(S v) { return v; }
  __device__ static S store(A v) { return v; }
};
template <>
struct Acc<double> {
  using A = double;
  __device__ static A load(double v) { return v; }
  __device__ static double store(A v) { return v; }
};
template <>
struct Acc<__half> {
  using A = float;
  __device__ static A load(__half v) { return __half2float(v); }
  __device__ static __half store(A v) { return __float2half_rn(v); }
};
template <>
struct Acc<__nv_bfloat16> {
  using A = float;
  __device__ static A load(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 store(A v) { return __float2bfloat16_rn(v); }
};

__device__ __forceinline__ float exp_of(float v) { return expf(v); }
__device__ __forceinline__ double exp_of(double v) { return exp(v); }
__device__ __forceinline__ float tanh_of(float v) { return tanhf(v); }
__device__ __forceinline__ double tanh_of(double v) { return tanh(v); }

template <class A>
__device__ __forceinline__ A sigmoid(A v) {
  return A(1) / (A(1) + exp_of(-v));
}

template <class S>
__global__ void __launch_bounds__(kThreads)
    lstm_cell(const S* __restrict__ ig, const S* __restrict__ hg, const S* __restrict__ bi,
              const S* __restrict__ bh, const S* __restrict__ cx, S* __restrict__ hy, S* __restrict__ cy,
              S* __restrict__ ws, int64_t total, int64_t h) {
  using A = typename Acc<S>::A;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < total; e += step) {
    const int64_t j = e % h;
    const int64_t base = (e / h) * 4 * h + j;  // gate 0 of this element in its row
    A pre[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      A v = Acc<S>::load(ig[base + q * h]) + Acc<S>::load(hg[base + q * h]);
      if (bi) v = v + Acc<S>::load(bi[j + q * h]) + Acc<S>::load(bh[j + q * h]);
      pre[q] = v;
    }
    const A in_gate = sigmoid(pre[0]);
    const A forget_gate = sigmoid(pre[1]);
    const A cell_gate = tanh_of(pre[2]);
    const A out_gate = sigmoid(pre[3]);
    const A c_new = forget_gate * Acc<S>::load(cx[e]) + in_gate * cell_gate;
    const A h_new = out_gate * tanh_of(c_new);
    hy[e] = Acc<S>::store(h_new);
    cy[e] = Acc<S>::store(c_new);
    ws[base] = Acc<S>::store(in_gate);
    ws[base + h] = Acc<S>::store(forget_gate);
    ws[base + 2 * h] = Acc<S>::store(cell_gate);
    ws[base + 3 * h] = Acc<S>::store(out_gate);
  }
}

template <class S>
cudaError_t launch(const void* ig, const void* hg, const void* bi, const void* bh, const void* cx, void* hy, void* cy,
                   void* ws, int64_t batch, int64_t hidden, cudaStream_t stream) {
  const int64_t total = batch * hidden;
  if (total <= 0) return cudaSuccess;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((total + kThreads - 1) / kThreads, kMaxBlocks));
  lstm_cell<S><<<blocks, kThreads, 0, stream>>>(
      static_cast<const S*>(ig), static_cast<const S*>(hg), static_cast<const S*>(bi), static_cast<const S*>(bh),
      static_cast<const S*>(cx), static_cast<S*>(hy), static_cast<S*>(cy), static_cast<S*>(ws), total, hidden);
  return cudaGetLastError();
}

}  // namespace

cudaError_t cuda_launch_lstm_cell(int dtype, const void* input_gates, const void* hidden_gates,
                                  const void* input_bias, const void* hidden_bias, const void* cx, void* hy,
                                  void* cy, void* workspace, int64_t batch, int64_t hidden, cudaStream_t stream) {
  switch (dtype) {
    case 5:
      return launch<__half>(input_gates, hidden_gates, input_bias, hidden_bias, cx, hy, cy, workspace, batch, hidden,
                            stream);
    case 6:
      return launch<float>(input_gates, hidden_gates, input_bias, hidden_bias, cx, hy, cy, workspace, batch, hidden,
                           stream);
    case 7:
      return launch<double>(input_gates, hidden_gates, input_bias, hidden_bias, cx, hy, cy, workspace, batch, hidden,
                            stream);
    case 15:
      return launch<__nv_bfloat16>(input_gates, hidden_gates, input_bias, hidden_bias, cx, hy, cy, workspace, batch,
                                   hidden, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace aotirt
