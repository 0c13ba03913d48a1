// Timing of aotirt's int4 weight-only product of one row (torch's CUDA
// int4 packing, groups of 128, as torchao exports Llama's linear layers) on
// Llama-3.2-1B's decode products (CudaInt4Test.GemvTiming), launched
// plainly and as dependent launches, with the kernel's choice of tiles a
// block and each choice, and gate/up with SiLU-multiply in its store: the
// bytes a second it reads, packed weights and group scales together. Prints
// "[ timing ]" lines; fails only on a launch error. Its correctness is
// checked against torch by tests/ops (the weight-only quantized GEMMs).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backends/cuda/ops/matmul/cuda_matmul_extra_kernels.h"
#include "cuda_test_util.h"
#include "graph_timing.h"

namespace aotirt {
namespace {

using namespace cuda_test;

class CudaInt4Test : public CudaTest {};

// Each shape cycles through enough copies of its packed weights to exceed
// the L2 cache, so that they come from memory as in a decode step; the calls
// are recorded in a CUDA graph and replayed. AOTIRT_TIMING_SHAPES=gate/up
// (names separated by commas) times those shapes alone, so that a profiler's
// launch counts reach one product.
TEST_F(CudaInt4Test, GemvTiming) {
  struct Shape {
    int n, k;
    const char* what;
  };
  const Shape shapes[] = {{3072, 2048, "llama qkv"},
                          {2048, 2048, "llama o"},
                          {16384, 2048, "llama gate/up"},
                          {2048, 8192, "llama down"}};
  constexpr int kInnerKTiles = 8;  // torchao's choice for these k
  constexpr int kGroup = 128;
  // The shapes AOTIRT_TIMING_SHAPES names (past "llama "); empty: all.
  std::set<std::string> only;
  if (const char* list = std::getenv("AOTIRT_TIMING_SHAPES"); list && *list) {
    const std::string all(list);
    for (size_t at = 0; at <= all.size();) {
      size_t end = all.find(',', at);
      if (end == std::string::npos) end = all.size();
      const std::string name = all.substr(at, end - at);
      // A name that matches no shape would time nothing without a word.
      bool known = false;
      for (const Shape& s : shapes) known = known || name == s.what + 6;
      ASSERT_TRUE(known) << "AOTIRT_TIMING_SHAPES names '" << name << "', not one of qkv, o, gate/up, down";
      only.insert(name);
      at = end + 1;
    }
  }
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  std::mt19937 rng(11);
  for (const Shape& s : shapes) {
    if (!only.empty() && only.count(s.what + 6) == 0) continue;
    const size_t words = size_t(s.n) * s.k / 8;
    const size_t sz_elems = size_t(s.k / kGroup) * s.n * 2;
    const size_t bytes = words * 4 + sz_elems * 2;
    const size_t copies = std::max<size_t>(4, (size_t(256) << 20) / bytes);
    std::vector<uint32_t> host(words);
    std::vector<int32_t*> packed(copies, nullptr);
    for (auto& p : packed) {
      for (uint32_t& w : host) w = rng();
      ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), words * 4), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(p, host.data(), words * 4, cudaMemcpyHostToDevice), cudaSuccess);
    }
    // Scales near 1/8 and zeros near 0 keep the products finite.
    TensorImpl sz = to_device(host_random(DimVector{s.k / kGroup, s.n, 2}, DType::kBFloat16, rng(), -0.125, 0.125));
    TensorImpl x = to_device(host_random(DimVector{1, s.k}, DType::kBFloat16, rng()));
    TensorImpl out = device_empty(DimVector{1, s.n}, DType::kBFloat16);
    // Plain launches, then dependent ones (as the decode step's are on
    // Hopper), where a product's weight copies start under the one ahead;
    // the kernel's own choice of tiles a block (0), then each choice.
    // For gate/up, also with SiLU-multiply in the store (the int4 fused
    // decode export's MLP), which writes half the outputs.
    struct Variant {
      bool dependent;
      int tiles;
      bool silu_mul = false;
    };
    std::vector<Variant> variants = {{false, 0}, {true, 0}, {true, 1}, {true, 2}, {true, 4}};
    if (s.n == 16384) variants.push_back({true, 0, true});
    for (const Variant v : variants) {
      const bool dependent = v.dependent;
      auto call = [&](size_t copy) {
        if (v.silu_mul)
          return cuda_launch_int4pack_gemv_silu_mul(x.data_ptr(), packed[copy % copies], sz.data_ptr(),
                                                    out.data_ptr(), 1, s.n, s.k, kInnerKTiles, kGroup, stream,
                                                    dependent, v.tiles);
        return cuda_launch_int4pack_gemv(x.data_ptr(), packed[copy % copies], sz.data_ptr(), out.data_ptr(), 1, s.n,
                                         s.k, kInnerKTiles, kGroup, stream, dependent, v.tiles);
      };
      for (int r = 0; r < 2; ++r) ASSERT_EQ(call(r), cudaSuccess);
      const int iters = int(copies);
      const auto queue = [&] {
        for (int it = 0; it < iters; ++it) call(it);
      };
      const double us = cuda_bench::graph_replay_us(stream, queue, iters);
      char tiles[24] = "chosen";
      if (v.tiles > 0) std::snprintf(tiles, sizeof(tiles), "%d", v.tiles);
      std::printf("[ timing ] int4 gemv %s%s (1x%dx%d, groups of %d, %zu weight copies, %s, tiles a block %s): "
                  "%.2f us, %.0f GB/s\n",
                  s.what, v.silu_mul ? " with SiLU-multiply" : "", s.n, s.k, kGroup, copies,
                  dependent ? "dependent launch" : "plain launch", tiles, us, bytes / us * 1e-3);
    }
    for (auto* p : packed) cudaFree(p);
  }
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace aotirt
