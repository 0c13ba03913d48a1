// Timing of aotirt's GEMMs: every built bfloat16 shape and split on GPT-2's
// and Llama-3.2-1B's prefill products (CudaBf16Test.Timing), the few-row
// kernel on Llama's decode products (CudaBf16Test.GemvTiming), and every built
// 3xTF32 one on ViT-B/16's and BERT-base's (CudaF32x3Test.Timing), each beside the
// chooser's pick and the shim on the same problem. Prints "[ timing ]"
// lines; fails only on a launch error. Their correctness tests are
// tests/cuda/cuda_gemm_bf16_test.cpp and cuda_gemm_f32x3_test.cpp.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/ops/matmul/cuda_gemm_bf16.h"
#include "backends/cuda/ops/matmul/cuda_gemm_f32x3.h"
#include "cuda_gemm_bf16_fixture.h"
#include "cuda_gemm_f32x3_fixture.h"
#include "graph_timing.h"
#include "cuda_test_util.h"

namespace aotirt {
namespace {

using namespace cuda_test;

// Time per call of every built shape and split on GPT-2's prefill GEMMs
// (512 tokens) and Llama-3.2-1B's (1920 and 128 tokens), and of the shim on
// the same problem (with AOTIRT_CUDA_GEMM=cublaslt in a second process:
// cuBLASLt's time);
// marks the chooser's pick. Each kernel's 30 calls are recorded in a CUDA
// graph and replayed, so the time is the GPU's, not the host's (a Hopper
// launch has the driver encode its tensor maps). For tuning
// cuda_bf16_choose; it fails only on a launch error.
TEST_F(CudaBf16Test, Timing) {
  if (cuda_bf16_config_count() == 0) GTEST_SKIP() << "this build has no bfloat16 tensor-core kernels (no CUTLASS)";
  struct Shape {
    int m, n, k;
    bool col;   // B column-major: a Linear's [n, k] weight, or mm(x, wte^T) for the tied output layer
    bool bias;  // addmm with a bias row
    const char* what;
    int ldd_pad;  // D's rows padded by this many elements
  };
  // GPT-2's 512-token products with Conv1D weights (B row-major, as the
  // original model), then with Linear ones (column-major, as the
  // benchmark's model), then the tied output layer (50257 columns, 50264 as
  // inductor pads them).
  const Shape shapes[] = {{512, 2304, 768, false, true, "qkv", 0},
                          {512, 768, 768, false, true, "attn proj", 0},
                          {512, 3072, 768, false, true, "fc", 0},
                          {512, 768, 3072, false, true, "mlp proj", 0},
                          {512, 2304, 768, true, true, "qkv, Linear", 0},
                          {512, 768, 768, true, true, "attn proj, Linear", 0},
                          {512, 3072, 768, true, true, "fc, Linear", 0},
                          {512, 768, 3072, true, true, "mlp proj, Linear", 0},
                          {512, 50257, 768, true, false, "lm head", 0},
                          {512, 50264, 768, true, false, "lm head, padded", 0},
                          // Llama-3.2-1B's prefill of 1920 and 128 tokens
                          // (bench/llm.py), as export_llm stacks its
                          // projections: q/k/v, o, gate/up, down.
                          {1920, 3072, 2048, true, false, "llama qkv 1920", 0},
                          {1920, 2048, 2048, true, false, "llama o 1920", 0},
                          {1920, 16384, 2048, true, false, "llama gate/up 1920", 0},
                          {1920, 2048, 8192, true, false, "llama down 1920", 0},
                          {128, 3072, 2048, true, false, "llama qkv 128", 0},
                          {128, 2048, 2048, true, false, "llama o 128", 0},
                          {128, 16384, 2048, true, false, "llama gate/up 128", 0},
                          {128, 2048, 8192, true, false, "llama down 128", 0}};
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  std::vector<CudaBf16Config> configs;
  for (int i = 0; i < cuda_bf16_config_count(); ++i) configs.push_back(cuda_bf16_config(i));
  float* ws = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&ws), 64 << 20), cudaSuccess);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::mt19937 rng(8);
  for (const Shape& s : shapes) {
    TensorImpl x = to_device(host_random(DimVector{s.m, s.k}, DType::kBFloat16, rng()));
    TensorImpl w = s.col ? to_device(host_random(DimVector{s.n, s.k}, DType::kBFloat16, rng()))
                         : to_device(host_random(DimVector{s.k, s.n}, DType::kBFloat16, rng()));
    TensorImpl bias = to_device(host_random(DimVector{s.n}, DType::kBFloat16, rng()));
    TensorImpl out = device_empty(DimVector{s.m, s.n}, DType::kBFloat16, DimVector{s.n + s.ldd_pad, 1});
    CudaBf16Problem q;
    q.m = s.m;
    q.n = s.n;
    q.k = s.k;
    q.a = x.data_ptr();
    q.lda = s.k;
    q.b = w.data_ptr();
    q.ldb = s.col ? s.k : s.n;
    q.b_row_major = !s.col;
    if (s.bias) {
      q.c = bias.data_ptr();
      q.ldc = 0;
      q.beta = 1.f;
    }
    q.d = out.data_ptr();
    q.ldd = s.n + s.ldd_pad;
    const int align = q.ldd % 8 == 0 ? 8 : 1;
    const CudaBf16Choice pick = cuda_bf16_choose(q, align, sms, configs.data(), int(configs.size()));
    double best = 1e30;
    std::string best_name, pick_line;
    for (size_t i = 0; i < configs.size(); ++i) {
      int blocks = 0;
      if (configs[i].b_row_major != q.b_row_major || configs[i].out_align > align ||
          cuda_bf16_blocks_per_sm(int(i), &blocks) != cudaSuccess || blocks < 1) {
        cudaGetLastError();
        continue;
      }
      for (int split = configs[i].split_k ? 2 : 1; split <= (configs[i].split_k ? 8 : 1); ++split) {
        size_t bytes = 0;
        if (cuda_bf16_workspace_bytes(int(i), q, split, &bytes) != cudaSuccess) break;  // not taken
        if (bytes > (64 << 20)) break;
        for (int r = 0; r < 3; ++r) ASSERT_EQ(cuda_bf16_launch(int(i), q, split, ws, stream), cudaSuccess);
        const int iters = 30;
        const auto queue = [&] {
          for (int it = 0; it < iters; ++it) cuda_bf16_launch(int(i), q, split, ws, stream);
        };
        const double us = cuda_bench::graph_replay_us(stream, queue, iters);
        const std::string name = std::to_string(configs[i].tile_m) + "x" + std::to_string(configs[i].tile_n) +
                                 (configs[i].sm90 ? " sm90" : "") + " align " + std::to_string(configs[i].out_align) +
                                 " split " + std::to_string(split);
        std::printf("[ timing ] bf16 %s %s: %.1f us\n", s.what, name.c_str(), us);
        if (us < best) {
          best = us;
          best_name = name;
        }
        if (int(i) == pick.config && split == pick.split) pick_line = name + " " + std::to_string(us);
      }
    }
    TensorImpl wv = s.col ? transposed(w, 0, 1) : w;
    auto shim = [&] {
      return s.bias ? aoti_torch_cuda_addmm_out(handle(out), handle(bias), handle(x), handle(wv), 1.0, 1.0)
                    : aoti_torch_cuda_mm_out(handle(out), handle(x), handle(wv));
    };
    for (int r = 0; r < 3; ++r) ASSERT_EQ(shim(), 0) << last_error_text();
    void* stream = nullptr;
    ASSERT_EQ(aoti_torch_get_current_cuda_stream(0, &stream), 0);
    cudaEventRecord(e0, static_cast<cudaStream_t>(stream));
    for (int it = 0; it < 30; ++it) shim();
    cudaEventRecord(e1, static_cast<cudaStream_t>(stream));
    ASSERT_EQ(cudaEventSynchronize(e1), cudaSuccess);
    float shim_ms = 0;
    cudaEventElapsedTime(&shim_ms, e0, e1);
    std::printf("[ timing ] bf16 %s (%dx%dx%d): best %s %.1f us; chosen %s us; shim %.1f us\n", s.what, s.m, s.n,
                s.k, best_name.c_str(), best, pick_line.c_str(), 1000.0 * shim_ms / 30);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(stream);
  cudaFree(ws);
}

// Time per call of the few-row kernel on a Llama-3.2-1B decode step's
// products (one row; export_llm's stacked q/k/v and gate/up weights, the
// output layer), and of a whole step's sixteen layers of them in a row, as
// the bytes a second they read. Each shape cycles through enough weight
// copies to exceed the L2 cache, so the weights come from memory, as in a
// decode step; the calls are recorded in a CUDA graph and replayed, with
// plain launches and (Hopper and later) with programmatic dependent ones,
// with the kernel's choice of warps a column and with each fixed one.
// Fails only on a launch error.
TEST_F(CudaBf16Test, GemvTiming) {
  struct Shape {
    int n, k;
    const char* what;
  };
  const Shape shapes[] = {{3072, 2048, "llama qkv"},
                          {2048, 2048, "llama o"},
                          {16384, 2048, "llama gate/up"},
                          {2048, 8192, "llama down"},
                          {128256, 2048, "llama output"}};
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  std::mt19937 rng(9);
  struct Held {
    TensorImpl x, out;
    std::vector<TensorImpl> w;
  };
  std::vector<Held> held;
  auto problem = [](const Held& h, size_t copy, int n, int k) {
    CudaBf16Problem q;
    q.m = 1;
    q.n = n;
    q.k = k;
    q.a = h.x.data_ptr();
    q.lda = k;
    q.b = h.w[copy % h.w.size()].data_ptr();
    q.ldb = k;
    q.d = h.out.data_ptr();
    q.ldd = n;
    return q;
  };
  int dev = 0, major = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  // Plain launches, then (Hopper and later) programmatic dependent ones.
  std::vector<bool> modes = {false};
  if (major >= 9) modes.push_back(true);
  for (const Shape& s : shapes) {
    const size_t bytes = size_t(s.n) * s.k * 2;
    const size_t copies = std::max<size_t>(1, (size_t(256) << 20) / bytes);
    Held h;
    h.x = to_device(host_random(DimVector{1, s.k}, DType::kBFloat16, rng()));
    h.out = device_empty(DimVector{1, s.n}, DType::kBFloat16);
    for (size_t c = 0; c < copies; ++c)
      h.w.push_back(to_device(host_random(DimVector{s.n, s.k}, DType::kBFloat16, rng())));
    const int iters = int(std::max<size_t>(copies, 4));
    // The kernel's own choice of warps a column (0), then each fixed one.
    for (int warps : {0, 1, 2, 4, 8})
      for (bool dep : modes) {
        for (int r = 0; r < 2; ++r)
          ASSERT_EQ(cuda_bf16_gemv_rows_launch(problem(h, r, s.n, s.k), stream, dep, warps), cudaSuccess);
        const double us = cuda_bench::graph_replay_us(
            stream,
            [&] {
              for (int it = 0; it < iters; ++it)
                cuda_bf16_gemv_rows_launch(problem(h, it, s.n, s.k), stream, dep, warps);
            },
            iters);
        const std::string how = (warps ? std::to_string(warps) + " warps a column" : std::string("chosen")) +
                                (dep ? ", dependent launch" : "");
        std::printf("[ timing ] bf16 gemv %s (1x%dx%d, %zu weight copies), %s: %.2f us, %.0f GB/s\n", s.what, s.n,
                    s.k, copies, how.c_str(), us, bytes / us * 1e-3);
      }
    held.push_back(std::move(h));
  }
  // Sixteen layers' q/k/v, o, gate/up and down (their own weights), then
  // the output layer: a decode step's products without the rest.
  const double layer_bytes = 2.0 * 2048 * (3072 + 2048 + 16384) + 2.0 * 8192 * 2048;
  const double step_bytes = 16 * layer_bytes + 2.0 * 128256 * 2048;
  for (bool dep : modes) {
    const double step_us = cuda_bench::graph_replay_us(
        stream,
        [&] {
          for (int layer = 0; layer < 16; ++layer)
            for (int i = 0; i < 4; ++i)
              cuda_bf16_gemv_rows_launch(problem(held[i], layer, shapes[i].n, shapes[i].k), stream, dep);
          cuda_bf16_gemv_rows_launch(problem(held[4], 0, shapes[4].n, shapes[4].k), stream, dep);
        },
        1);
    std::printf(
        "[ timing ] bf16 gemv llama decode step (16 layers' products and the output layer)%s: %.1f us, %.0f GB/s\n",
        dep ? ", dependent launch" : "", step_us, step_bytes / step_us * 1e-3);
  }
  cudaStreamDestroy(stream);
}

// The build's 3xTF32 kernel shapes, in its order.
std::vector<CudaF32x3Config> built_configs() {
  std::vector<CudaF32x3Config> c;
  for (int i = 0; i < cuda_f32x3_config_count(); ++i) c.push_back(cuda_f32x3_config(i));
  return c;
}

// Time per call of every built shape and split against cuBLASLt's float32
// GEMM (AOTIRT_CUDA_GEMM=cublaslt in a second process gives the shim's
// cuBLASLt time), on the GEMMs of ViT-B/16 and BERT-base; marks the chooser's
// pick. For tuning cuda_f32x3_choose; it fails only on a launch error.
TEST_F(CudaF32x3Test, Timing) {
  struct Shape {
    int m, n, k;
    const char* what;
  };
  const Shape shapes[] = {{197, 2304, 768, "ViT qkv"},  {197, 768, 768, "ViT proj"}, {197, 3072, 768, "ViT fc1"},
                          {197, 768, 3072, "ViT fc2"},  {128, 2304, 768, "BERT qkv"}, {128, 768, 768, "BERT proj"},
                          {128, 3072, 768, "BERT fc1"}, {128, 768, 3072, "BERT fc2"}};
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  std::vector<CudaF32x3Config> configs = built_configs();
  std::vector<int> blocks(configs.size(), 0);
  for (size_t i = 0; i < configs.size(); ++i) ASSERT_EQ(cuda_f32x3_blocks_per_sm(int(i), &blocks[i]), cudaSuccess);
  int* sem = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&sem), 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMemset(sem, 0, 1 << 20), cudaSuccess);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (const Shape& s : shapes) {
    std::mt19937 gen(size_t(s.m) * s.n + s.k);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> a(size_t(s.m) * s.k), b(size_t(s.n) * s.k), bias(s.n);
    for (auto* v : {&a, &b, &bias})
      for (float& x : *v) x = u(gen);
    float *da = upload(a), *db = upload(b), *dbias = upload(bias), *dd = nullptr;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dd), size_t(s.m) * s.n * sizeof(float)), cudaSuccess);
    CudaF32x3Problem q;
    q.m = s.m;
    q.n = s.n;
    q.k = s.k;
    q.a = da;
    q.lda = s.k;
    q.b = db;
    q.ldb = s.k;
    q.c = dbias;
    q.ldc = 0;
    q.beta = 1.f;
    q.d = dd;
    q.ldd = s.n;
    const CudaF32x3Choice pick =
        cuda_f32x3_choose(dims(s.m, s.n, s.k), 4, sms, configs.data(), blocks.data(), int(configs.size()));
    double best = 1e30;
    std::string best_name, pick_line;
    for (size_t i = 0; i < configs.size(); ++i)
      for (int split = 1; split <= 8; ++split) {
        if ((s.k / 16) < split || configs[i].batched || configs[i].b_row_major) break;
        for (int w = 0; w < 3; ++w) ASSERT_EQ(cuda_f32x3_launch(int(i), q, split, sem, nullptr), cudaSuccess);
        const int iters = 50;
        cudaEventRecord(e0);
        for (int it = 0; it < iters; ++it) cuda_f32x3_launch(int(i), q, split, sem, nullptr);
        cudaEventRecord(e1);
        ASSERT_EQ(cudaEventSynchronize(e1), cudaSuccess);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        const double us = 1000.0 * ms / iters;
        const std::string name = std::to_string(configs[i].tile_m) + "x" + std::to_string(configs[i].tile_n) +
                                 " split " + std::to_string(split);
        std::printf("[ timing ] 3xTF32 %s %s: %.1f us\n", s.what, name.c_str(), us);
        if (us < best) {
          best = us;
          best_name = name;
        }
        if (int(i) == pick.config && split == pick.split) pick_line = name + " " + std::to_string(us);
      }
    // The shim on the same problem: addmm(bias, x, W^T), as nn.Linear calls it.
    TensorImpl x = TensorImpl(), w = TensorImpl();
    {
      std::mt19937 rng(1);
      x = to_device(host_random(DimVector{s.m, s.k}, DType::kFloat32, rng()));
      w = to_device(host_random(DimVector{s.n, s.k}, DType::kFloat32, rng()));
    }
    TensorImpl bias_t = to_device(host_random(DimVector{s.n}, DType::kFloat32, 2));
    TensorImpl wt = transposed(w, 0, 1);
    TensorImpl out = device_empty(DimVector{s.m, s.n}, DType::kFloat32);
    auto shim = [&] {
      return aoti_torch_cuda_addmm_out(handle(out), handle(bias_t), handle(x), handle(wt), 1.0, 1.0);
    };
    for (int w2 = 0; w2 < 3; ++w2) ASSERT_EQ(shim(), 0) << last_error_text();
    void* stream = nullptr;
    ASSERT_EQ(aoti_torch_get_current_cuda_stream(0, &stream), 0);
    cudaEventRecord(e0, static_cast<cudaStream_t>(stream));
    for (int it = 0; it < 50; ++it) shim();
    cudaEventRecord(e1, static_cast<cudaStream_t>(stream));
    ASSERT_EQ(cudaEventSynchronize(e1), cudaSuccess);
    float shim_ms = 0;
    cudaEventElapsedTime(&shim_ms, e0, e1);
    std::printf("[ timing ] 3xTF32 %s (%dx%dx%d): best %s %.1f us; chosen %s us; shim addmm %.1f us\n", s.what, s.m,
                s.n, s.k, best_name.c_str(), best, pick_line.c_str(), 1000.0 * shim_ms / 50);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dbias);
    cudaFree(dd);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(sem);
}

}  // namespace
}  // namespace aotirt
