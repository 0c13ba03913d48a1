// Timing of aotirt's TF32 and 3xTF32 convolutions and its stem kernel:
// every built kernel and split on ResNet-50's convolutions against the
// chooser's pick and the shim (CudaConvTf32Test.Timing), and the stem
// kernel against the padded path (CudaConvStemTest.Timing). Each launch is
// timed as a model sees it, after an L2 eviction (AOTIRT_TIMING_WARM=1:
// back to back instead). Prints "[ timing ]" lines; fails only on a launch
// error. Their correctness tests are tests/cuda/cuda_conv_tf32_test.cpp.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/ops/conv/cuda_conv_stem.h"
#include "backends/cuda/ops/conv/cuda_conv_tf32.h"
#include "backends/cuda/ops/cuda_op_kernels.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "cuda_conv_tf32_fixture.h"
#include "cuda_test_util.h"
#include "ops/layout.h"

namespace aotirt {
namespace {

using namespace cuda_test;

// A kernel's GPU time as a model sees it: 20 launches recorded as one CUDA
// graph and replayed, as the shim replays them (timed one by one, the small
// problems measured the host's launch cost instead), each after a 96 MiB
// memset that evicts the L2 cache, whose time alone is taken off: in a
// model the weights come from memory (ResNet-50's 100 MB do not fit the
// H200's 50 MB L2), and with warm caches the few-block kernels of batch 1
// timed up to twice as fast as they run there.
class EvictedGraphTimer {
 public:
  static constexpr size_t kFlushBytes = size_t(96) << 20;
  EvictedGraphTimer() {
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&flush_, kFlushBytes), cudaSuccess);
    cudaEventCreate(&e0_);
    cudaEventCreate(&e1_);
    flush_us_ = raw_us([](cudaStream_t) {}, true);
  }
  ~EvictedGraphTimer() {
    cudaEventDestroy(e0_);
    cudaEventDestroy(e1_);
    cudaStreamDestroy(stream_);
    cudaFree(flush_);
  }
  EvictedGraphTimer(const EvictedGraphTimer&) = delete;
  EvictedGraphTimer& operator=(const EvictedGraphTimer&) = delete;

  // Microseconds a launch of |launch| (called with the stream to use),
  // each after an eviction (|evict|) whose time is left in.
  template <class F>
  double raw_us(F&& launch, bool evict) {
    const int iters = 20;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    launch(stream_);  // outside the capture: a first launch's setup
    EXPECT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    for (int it = 0; it < iters; ++it) {
      if (evict) evict_on(stream_, it);
      launch(stream_);
    }
    EXPECT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
    EXPECT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    cudaGraphLaunch(exec, stream_);
    cudaEventRecord(e0_, stream_);
    cudaGraphLaunch(exec, stream_);
    cudaGraphLaunch(exec, stream_);
    cudaEventRecord(e1_, stream_);
    EXPECT_EQ(cudaEventSynchronize(e1_), cudaSuccess);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0_, e1_);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return 1000.0 * ms / (2 * iters);
  }
  // The same after an eviction each, the eviction's time taken off; with
  // AOTIRT_TIMING_WARM=1 back to back instead, as for operands already in
  // L2 (what the weights' prefetch could give at most).
  template <class F>
  double us(F&& launch) {
    static const bool warm = [] {
      const char* v = std::getenv("AOTIRT_TIMING_WARM");
      return v && std::string(v) == "1";
    }();
    return warm ? raw_us(launch, false) : raw_us(launch, true) - flush_us_;
  }
  double flush_us() const { return flush_us_; }
  // Queues an eviction on |s| (|it| varies the bytes written).
  void evict_on(cudaStream_t s, int it) { cudaMemsetAsync(flush_, it & 0xff, kFlushBytes, s); }
  cudaEvent_t e0() const { return e0_; }
  cudaEvent_t e1() const { return e1_; }

 private:
  cudaStream_t stream_ = nullptr;
  void* flush_ = nullptr;
  cudaEvent_t e0_ = nullptr, e1_ = nullptr;
  double flush_us_ = 0;
};

// Its time on ResNet-50's stem at batch 1 to 32, beside the padded
// problem's best kernel (CudaConvTf32Test.Timing has every kernel); fails
// only on a launch error.
TEST_F(CudaConvStemTest, Timing) {
  EvictedGraphTimer timer;
  for (const int n : {1, 2, 4, 8, 16, 32}) {
    CudaConvProblem p = conv(n, 224, 224, 3, 64, 7, 7, 2, 3);
    float *dx = nullptr, *dw = nullptr, *dy = nullptr;
    const size_t xn = size_t(n) * 224 * 224 * 4, wn = 64 * 49 * 4, yn = size_t(n) * 112 * 112 * 64;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dx), xn * 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dw), wn * 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dy), yn * 4), cudaSuccess);
    cudaMemset(dx, 0, xn * 4);
    cudaMemset(dw, 0, wn * 4);
    p.x = dx;
    p.filter = dw;
    p.y = dy;
    const double us = timer.us([&](cudaStream_t s) { cuda_conv_stem_launch(p, s); });
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    CudaConvStemGeometry g;
    ASSERT_TRUE(cuda_conv_stem_geometry(p, &g));
    std::printf("[ timing ] stem kernel n=%d 224x224 c=3 k=64 7x7/2: %.1f us (%lld tiles, %lld bytes of shared memory)\n",
                n, us, static_cast<long long>(g.tiles), static_cast<long long>(g.smem_bytes));
    // The padded path's copies and its best kernel, for comparison.
    if (cuda_conv_tf32_config_count() > 0) {
      CudaConvProblem q = conv(n, 224, 224, 4, 64, 7, 7, 2, 3);
      q.x = dx;
      q.filter = dw;
      q.y = dy;
      double best = 1e30;
      for (int i = 0; i < cuda_conv_tf32_config_count(); ++i) {
        int blocks = 0;
        if (cuda_conv_tf32_config(i).three_pass || cuda_conv_tf32_blocks_per_sm(i, &blocks) != cudaSuccess ||
            blocks < 1 || cuda_conv_tf32_check(i, q, 1) != cudaSuccess) {
          (void)cudaGetLastError();
          continue;
        }
        best = std::min(best, timer.us([&](cudaStream_t s) { cuda_conv_tf32_launch(i, q, 1, nullptr, nullptr, s); }));
      }
      const double pad_us = timer.us([&](cudaStream_t s) {
        cuda_launch_pad_channels(dx, int64_t(n) * 224 * 224, 3, 4, dy, s);
        cuda_launch_pad_channels(dw, 64 * 49, 3, 4, dy + xn, s);
      });
      ASSERT_EQ(cudaGetLastError(), cudaSuccess);
      std::printf("[ timing ] stem padded to 4 channels n=%d: best kernel %.1f us, copies %.1f us\n", n, best, pad_us);
    }
    cudaFree(dx);
    cudaFree(dw);
    cudaFree(dy);
  }
}

// Every built kernel and split on ResNet-50's convolutions at batch 1 and
// 32, against the chooser's pick and the shim (whatever runs it in this
// process: AOTIRT_CUDA_ALLOW_TF32=1 for aotirt's kernels, with
// AOTIRT_CUDA_CONV=cudnn for cuDNN's TF32 ones). For tuning
// cuda_conv_tf32_choose; it fails only on a launch error.
TEST_F(CudaConvTf32Test, Timing) {
  struct Shape {
    int h, c, k, r, stride;
    int pad = -1;        // -1: r / 2
    bool extra = false;  // not one of ResNet-50's own: left out of the sums
  };
  // Input size, channels in and out, kernel, stride (padding r / 2).
  const Shape shapes[] = {{224, 3, 64, 7, 2},   {56, 64, 64, 1, 1},    {56, 64, 64, 3, 1},    {56, 64, 256, 1, 1},
                          {56, 256, 64, 1, 1},  {56, 256, 128, 1, 1},  {56, 128, 128, 3, 2},  {28, 128, 512, 1, 1},
                          {56, 256, 512, 1, 2}, {28, 512, 128, 1, 1},  {28, 128, 128, 3, 1},  {28, 512, 256, 1, 1},
                          {28, 256, 256, 3, 2}, {14, 256, 1024, 1, 1}, {28, 512, 1024, 1, 2}, {14, 1024, 256, 1, 1},
                          {14, 256, 256, 3, 1}, {14, 1024, 512, 1, 1}, {14, 512, 512, 3, 2},  {7, 512, 2048, 1, 1},
                          {14, 1024, 2048, 1, 2}, {7, 2048, 512, 1, 1}, {7, 512, 512, 3, 1}};
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const int count = cuda_conv_tf32_config_count();
  std::vector<CudaConvConfig> configs(count);
  std::vector<int> blocks(count);
  for (int i = 0; i < count; ++i) {
    configs[i] = cuda_conv_tf32_config(i);
    if (runs(i)) {
      ASSERT_EQ(cuda_conv_tf32_blocks_per_sm(i, &blocks[i]), cudaSuccess);
    }
  }
  int* sem = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&sem), 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMemset(sem, 0, 1 << 20), cudaSuccess);
  float* partials = nullptr;  // parallel splits' workspace
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&partials), kCudaConvMaxPartialFloats * 4), cudaSuccess);
  EvictedGraphTimer timer;
  std::printf("[ timing ] L2 eviction (a %zu MiB memset): %.1f us\n", EvictedGraphTimer::kFlushBytes >> 20,
              timer.flush_us());
  auto time_us = [&](auto&& launch) { return timer.us(launch); };
  double sum_best[2] = {0, 0}, sum_pick[2] = {0, 0}, sum_shim[2] = {0, 0};
  for (int bi = 0; bi < 2; ++bi) {
    const int n = bi == 0 ? 1 : 32;
    for (const Shape& s : shapes) {
      // The kernels take a stem padded to 4 channels, as the shim's padded path gives
      // it (with TF32 the shim row below is the stem kernel: CudaConvStemTest.Timing).
      const int pad = s.pad < 0 ? s.r / 2 : s.pad;
      CudaConvProblem p = conv(n, s.h, s.h, std::max(s.c, kCudaConvStemChannels), s.k, s.r, s.r, s.stride, pad);
      const size_t xn = size_t(p.n) * p.h * p.w * p.c, wn = size_t(p.k) * p.r * p.s * p.c,
                   yn = size_t(p.n) * p.p * p.q * p.k;
      float *dx = nullptr, *dw = nullptr, *dy = nullptr;
      ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dx), xn * 4), cudaSuccess);
      ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dw), wn * 4), cudaSuccess);
      ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dy), yn * 4), cudaSuccess);
      cudaMemset(dx, 0, xn * 4);
      cudaMemset(dw, 0, wn * 4);
      p.x = dx;
      p.filter = dw;
      p.y = dy;
      std::unique_ptr<bool[]> takes(new bool[count]);
      // As the shim chooses: TF32 kernels where TF32 is allowed, else 3xTF32.
      for (int i = 0; i < count; ++i)
        takes[i] = runs(i) && configs[i].three_pass == !cuda_conv_allow_tf32() &&
                   cuda_conv_tf32_check(i, p, 1) == cudaSuccess;
      const CudaConvChoice pick = cuda_conv_tf32_choose(p, sms, configs.data(), blocks.data(), takes.get(), count);
      double best = 1e30, picked = 0;
      std::string best_name;
      for (int i = 0; i < count; ++i)
        for (int split : {1, 2, 3, 4, 6, 8, 12, 16})
          for (const bool parallel : {false, true}) {
            if (!runs(i) || cuda_conv_tf32_check(i, p, split) != cudaSuccess) continue;
            if (parallel && (split == 1 || cuda_conv_tf32_partial_floats(p, split) > kCudaConvMaxPartialFloats))
              continue;
            if (configs[i].sm90 && split > 1 && !parallel) continue;  // parallel only
            float* parts = parallel ? partials : nullptr;
            const double us = time_us([&](cudaStream_t st) { cuda_conv_tf32_launch(i, p, split, sem, parts, st); });
            ASSERT_EQ(cudaGetLastError(), cudaSuccess);
            const std::string name = std::to_string(configs[i].tile_m) + "x" + std::to_string(configs[i].tile_n) +
                                     (configs[i].fixed_channels ? "f" : "") + (configs[i].three_pass ? "x3" : "") +
                                     (configs[i].gemm_1x1 ? "g" : "") +
                                     (configs[i].sm90 ? "h" + std::to_string(blocks[i]) : "") + "/" +
                                     std::to_string(split) + (parallel ? "p" : "");
            std::printf("[ timing ] conv n=%d %dx%d c=%d k=%d r=%d s=%d %s: %.1f us\n", n, s.h, s.h, s.c, s.k, s.r,
                        s.stride, name.c_str(), us);
            if (us < best) {
              best = us;
              best_name = name;
            }
            if (i == pick.config && split == pick.split && parallel == pick.parallel) picked = us;
          }
      // The shim on the same problem, channels-last, no bias.
      TensorImpl x = device_empty(DimVector{p.n, s.c, p.h, p.w}, DType::kFloat32,
                                  ops::channels_last_strides(DimVector{p.n, s.c, p.h, p.w}));
      TensorImpl w = device_empty(DimVector{p.k, s.c, p.r, p.s}, DType::kFloat32,
                                  ops::channels_last_strides(DimVector{p.k, s.c, p.r, p.s}));
      cudaMemset(x.data_ptr(), 0, x.nbytes());
      cudaMemset(w.data_ptr(), 0, w.nbytes());
      const int64_t st[2] = {s.stride, s.stride}, pd[2] = {pad, pad}, dl[2] = {1, 1}, op[2] = {0, 0};
      void* stream = nullptr;
      ASSERT_EQ(aoti_torch_get_current_cuda_stream(0, &stream), 0);
      OwnedHandle xh(x), wh(w);
      bool shim_ok = true;
      auto shim = [&] {
        AtenTensorHandle out_h = nullptr;
        if (aoti_torch_cuda_convolution(xh, wh, nullptr, st, 2, pd, 2, dl, 2, 0, op, 2, 1, &out_h) != 0) {
          shim_ok = false;
          return;
        }
        aoti_torch_delete_tensor_object(out_h);
      };
      for (int w2 = 0; w2 < 3; ++w2) shim();
      // Each call after an L2 eviction too (whose time hides the host's
      // part of the call), the evictions' own time taken off.
      const cudaStream_t ss = static_cast<cudaStream_t>(stream);
      auto stream_us = [&](bool call) {
        cudaEventRecord(timer.e0(), ss);
        for (int it = 0; it < 20; ++it) {
          timer.evict_on(ss, it);
          if (call) shim();
        }
        cudaEventRecord(timer.e1(), ss);
        EXPECT_EQ(cudaEventSynchronize(timer.e1()), cudaSuccess);
        float ms = 0;
        cudaEventElapsedTime(&ms, timer.e0(), timer.e1());
        return 1000.0 * ms / 20;
      };
      const double shim_us = stream_us(true) - stream_us(false);
      ASSERT_TRUE(shim_ok) << last_error_text();
      std::printf("[ timing ] conv n=%d %dx%d c=%d k=%d r=%d s=%d: best %s %.1f us; chosen %s/%d%s %.1f us; shim %.1f us\n",
                  n, s.h, s.h, s.c, s.k, s.r, s.stride, best_name.c_str(), best,
                  pick.config >= 0 ? (std::to_string(configs[pick.config].tile_m) + "x" +
                                      std::to_string(configs[pick.config].tile_n) +
                                      (configs[pick.config].gemm_1x1 ? "g" : "") +
                                      (configs[pick.config].sm90 ? "h" : ""))
                                         .c_str()
                                   : "none",
                  pick.split, pick.parallel ? "p" : "", picked, shim_us);
      if (!s.extra) {
        sum_best[bi] += best;
        sum_pick[bi] += picked;
        sum_shim[bi] += shim_us;
      }
      cudaFree(dx);
      cudaFree(dw);
      cudaFree(dy);
    }
    std::printf("[ timing ] conv batch %d, one of each ResNet-50 shape: best %.1f us, chosen %.1f us, shim %.1f us\n", n,
                sum_best[bi], sum_pick[bi], sum_shim[bi]);
  }
  cudaFree(sem);
  cudaFree(partials);
}

}  // namespace
}  // namespace aotirt
