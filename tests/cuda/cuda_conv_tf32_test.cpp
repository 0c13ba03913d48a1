// aotirt's TF32 and 3xTF32 convolutions (cuda_conv_tf32.h): the choice of
// kernel shape and channel split (no GPU needed); what the kernels refuse;
// every built kernel at several splits against a float64 reference at TF32
// (or, for 3xTF32, float32) tolerances
// (bias, stride, padding, dilation, 1x1, 7x7, a 3-channel stem, edges that
// are not whole tiles); and the convolution shim taking them for
// channels-last float32 input when TF32 is allowed (ctest runs
// CudaConvTf32Shim.* again with AOTIRT_CUDA_ALLOW_TF32=1), and the 3xTF32
// ones when it is not. Skipped without a GPU; the kernel tests also when
// the build has no CUTLASS kernels.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <aotirt/model.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ops/layout.h"
#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_symbols.h"
#include "backends/cuda/ops/conv/cuda_conv_stem.h"
#include "backends/cuda/ops/conv/cuda_conv_tf32.h"
#include "backends/cuda/launch/cuda_fork.h"
#include "backends/cuda/ops/cuda_op_kernels.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "cuda_conv_tf32_fixture.h"
#include "cuda_test_util.h"
#include "device/device.h"

namespace aotirt {
namespace {

using namespace cuda_test;

CudaConvConfig shape(int tm, int tn, int threads, int fixed) {
  CudaConvConfig c;
  c.tile_m = tm;
  c.tile_n = tn;
  c.tile_k = 32;
  c.threads = threads;
  c.smem_bytes = 65536;
  c.fixed_channels = fixed;
  return c;
}
// Shapes like the build's, so the chooser tests run on any build.
const CudaConvConfig kShapes[] = {shape(256, 128, 256, 0), shape(128, 256, 256, 0), shape(128, 128, 128, 0),
                                  shape(128, 64, 128, 0),  shape(64, 64, 128, 0),   shape(32, 64, 64, 0),
                                  shape(128, 64, 128, 4),  shape(64, 64, 128, 4)};
const int kBlocks[] = {1, 1, 2, 2, 2, 4, 2, 2};
constexpr int kCount = 8;

// kShapes and their blocks, then two Hopper implicit-GEMM shapes (one block
// an SM, parallel channel splits in whole k steps).
void with_hopper_shapes(std::vector<CudaConvConfig>* configs, std::vector<int>* blocks) {
  configs->assign(kShapes, kShapes + kCount);
  blocks->assign(kBlocks, kBlocks + kCount);
  for (int tn : {128, 64}) {
    CudaConvConfig h = shape(128, tn, 256, 0);
    h.sm90 = true;
    configs->push_back(h);
    blocks->push_back(1);
  }
}

// The Hopper GEMM kernels for plain 1x1 convolutions (64x64, 64x128 and
// 64x256 tiles, one block an SM), appended.
void with_hopper_gemms(std::vector<CudaConvConfig>* configs, std::vector<int>* blocks) {
  for (int tn : {64, 128, 256}) {
    CudaConvConfig g = shape(64, tn, 384, 0);
    g.sm90 = g.gemm_1x1 = true;
    configs->push_back(g);
    blocks->push_back(1);
  }
}

// The chooser over |configs|: the GEMM kernels take plain 1x1 convolutions
// alone, the fixed-channels kernels none of these problems.
CudaConvChoice choose_among(const std::vector<CudaConvConfig>& configs, const std::vector<int>& blocks,
                            const CudaConvProblem& p) {
  std::unique_ptr<bool[]> takes(new bool[configs.size()]);
  const bool plain = p.r == 1 && p.s == 1 && p.stride_h == 1 && p.pad_h == 0;
  for (size_t i = 0; i < configs.size(); ++i)
    takes[i] = !configs[i].fixed_channels && (plain || !configs[i].gemm_1x1);
  return cuda_conv_tf32_choose(p, 132, configs.data(), blocks.data(), takes.get(), static_cast<int>(configs.size()));
}

// The chooser with the kernels that take |p| by channel count alone.
CudaConvChoice choose(const CudaConvProblem& p, uint64_t max_partial_floats = kCudaConvMaxPartialFloats) {
  bool takes[kCount];
  for (int i = 0; i < kCount; ++i) takes[i] = kShapes[i].fixed_channels ? p.c == kShapes[i].fixed_channels : p.c % 4 == 0;
  return cuda_conv_tf32_choose(p, 132, kShapes, kBlocks, takes, kCount, max_partial_floats);
}

TEST(CudaConvTf32Choice, SplitsChannelsWhenFewTilesAndNotWhenMany) {
  // ResNet-50's last 3x3 convolution at batch 1: 49 output pixels by 512
  // channels is at most 8 tiles for 132 SMs, so the 4608-long reduction is
  // split.
  // Its slices meet in a workspace: serial ones would each wait about
  // 2-4 us for the one before (measured 22.8 us at 4 serial slices, 11.9 at
  // 16 parallel ones).
  CudaConvChoice c = choose(conv(1, 7, 7, 512, 512, 3, 3, 1, 1));
  ASSERT_GE(c.config, 0);
  EXPECT_GE(c.split, 8);
  EXPECT_TRUE(c.parallel);
  EXPECT_LE(kShapes[c.config].tile_m, 64);
  // Without room for the parts, the split is serial and shallower.
  c = choose(conv(1, 7, 7, 512, 512, 3, 3, 1, 1), /*max_partial_floats=*/0);
  ASSERT_GE(c.config, 0);
  EXPECT_GT(c.split, 1);
  EXPECT_LT(c.split, 8);
  EXPECT_FALSE(c.parallel);
  // The first 1x1 at batch 32: 100352 rows, many waves of whole reductions.
  c = choose(conv(32, 56, 56, 64, 256, 1, 1, 1, 0));
  ASSERT_GE(c.config, 0);
  EXPECT_EQ(c.split, 1);
  EXPECT_FALSE(c.parallel);
  EXPECT_GE(kShapes[c.config].tile_m, 128);
  // A reduction of one k step per tap is not cut.
  c = choose(conv(1, 7, 7, 32, 64, 1, 1, 1, 0));
  ASSERT_GE(c.config, 0);
  EXPECT_EQ(c.split, 1);
}

TEST(CudaConvTf32Choice, PaddedStemsTakeTheFixedChannelsKernels) {
  // ResNet-50's stem, its 3 channels padded to 4: the optimized kernels
  // would spend a 32-channel k step on each 4-channel tap.
  for (int n : {1, 32}) {
    const CudaConvChoice c = choose(conv(n, 224, 224, kCudaConvStemChannels, 64, 7, 7, 2, 3));
    ASSERT_GE(c.config, 0);
    EXPECT_EQ(kShapes[c.config].fixed_channels, kCudaConvStemChannels);
    EXPECT_EQ(c.split, 1);
  }
}

TEST(CudaConvTf32Choice, ThreePassKernelsPreferTheirLargerTile) {
  // The 3xTF32 shapes alone, as the shim offers them in strict mode: at
  // batch 32 the 64x64 tiles ran 10-15% faster than 32x64 ones.
  CudaConvConfig three[] = {shape(64, 64, 128, 0), shape(32, 64, 64, 0)};
  for (CudaConvConfig& c : three) c.three_pass = true;
  const int blocks[] = {2, 4};
  const bool takes[] = {true, true};
  const CudaConvChoice c = cuda_conv_tf32_choose(conv(32, 14, 14, 1024, 512, 1, 1, 1, 0), 132, three, blocks, takes, 2);
  EXPECT_EQ(c.config, 0);
  EXPECT_EQ(c.split, 1);
}

TEST(CudaConvTf32Choice, HopperKernelsTakeLargeProblemsWholeAndLeaveSmallOnesToSplits) {
  // The Ampere shapes plus Hopper ones (one block an SM).
  std::vector<CudaConvConfig> all;
  std::vector<int> blocks;
  with_hopper_shapes(&all, &blocks);
  std::unique_ptr<bool[]> takes(new bool[all.size()]);
  std::fill(takes.get(), takes.get() + all.size(), true);
  auto pick = [&](const CudaConvProblem& p) {
    return cuda_conv_tf32_choose(p, 132, all.data(), blocks.data(), takes.get(), static_cast<int>(all.size()));
  };
  // Batch 32's 14x14 1x1, 1024 -> 512 channels: 49 x 4 tiles of whole
  // 1024-long reductions.
  CudaConvChoice c = pick(conv(32, 14, 14, 1024, 512, 1, 1, 1, 0));
  ASSERT_GE(c.config, kCount);
  EXPECT_EQ(c.split, 1);
  // Batch 1's last 3x3: 8 tiles; Ampere tiles split in parallel fill more
  // SMs.
  c = pick(conv(1, 7, 7, 512, 512, 3, 3, 1, 1));
  ASSERT_GE(c.config, 0);
  EXPECT_LT(c.config, kCount);
  EXPECT_GT(c.split, 1);
  EXPECT_TRUE(c.parallel);
  // Where the caller rules the Hopper ones out (a bias, another GPU), the
  // Ampere shapes are judged by their own fitted terms: 128x128 tiles, as
  // measured fastest among them (the terms fitted beside the Hopper kernels
  // would pick 64x64 ones, 58.5 us against 43.5 with cold caches).
  takes[kCount] = takes[kCount + 1] = false;
  c = pick(conv(32, 14, 14, 1024, 512, 1, 1, 1, 0));
  ASSERT_GE(c.config, 0);
  EXPECT_EQ(all[c.config].tile_m, 128);
  EXPECT_EQ(all[c.config].tile_n, 128);
  EXPECT_EQ(c.split, 1);
  // And the same with no Hopper shape in the list at all.
  c = choose(conv(32, 7, 7, 2048, 512, 1, 1, 1, 0));
  ASSERT_GE(c.config, 0);
  EXPECT_EQ(kShapes[c.config].tile_m, 128);
  EXPECT_EQ(kShapes[c.config].tile_n, 128);
  EXPECT_EQ(c.split, 2);
}

TEST(CudaConvTf32Choice, HopperKernelsSplitDeepProblemsOfFewTiles) {
  std::vector<CudaConvConfig> all;
  std::vector<int> blocks;
  with_hopper_shapes(&all, &blocks);
  std::unique_ptr<bool[]> takes(new bool[all.size()]);
  std::fill(takes.get(), takes.get() + all.size(), true);
  auto pick = [&](const CudaConvProblem& p, uint64_t max_partial_floats = kCudaConvMaxPartialFloats) {
    return cuda_conv_tf32_choose(p, 132, all.data(), blocks.data(), takes.get(), static_cast<int>(all.size()),
                                 max_partial_floats);
  };
  // Batch 32's 3x3 convolutions with 7x7 outputs: 52 tiles of 128x128 for
  // 132 SMs, each a reduction of 4608 (46.3 us whole on an H200 machine).
  // Two slices of 256 channels fill 104 SMs.
  CudaConvChoice c = pick(conv(32, 7, 7, 512, 512, 3, 3, 1, 1));
  ASSERT_GE(c.config, kCount);
  EXPECT_EQ(c.split, 2);
  EXPECT_TRUE(c.parallel);
  // No room for the parts: whole, never serial slices.
  c = pick(conv(32, 7, 7, 512, 512, 3, 3, 1, 1), 0);
  ASSERT_GE(c.config, kCount);
  EXPECT_EQ(c.split, 1);
  // Slices are whole k steps: 96 channels split no way but 3.
  c = pick(conv(32, 7, 7, 96, 512, 3, 3, 1, 1));
  ASSERT_GE(c.config, 0);
  if (c.config >= kCount) {
    EXPECT_TRUE(c.split == 1 || c.split == 3);
  }
  // Many tiles: whole.
  c = pick(conv(32, 28, 28, 128, 128, 3, 3, 1, 1));
  ASSERT_GE(c.config, kCount);
  EXPECT_EQ(c.split, 1);
}

TEST(CudaConvTf32Choice, PlainOneByOneConvolutionsTakeTheHopperGemms) {
  // The Ampere and Hopper implicit-GEMM shapes, plus the GEMM kernels that
  // take 1x1 convolutions of stride 1 alone (the caller's |takes| says
  // which problems those are).
  std::vector<CudaConvConfig> all;
  std::vector<int> blocks;
  with_hopper_shapes(&all, &blocks);
  const int first_gemm = static_cast<int>(all.size());
  with_hopper_gemms(&all, &blocks);
  auto pick = [&](const CudaConvProblem& p) { return choose_among(all, blocks, p); };
  // Batch 32's first expanding 1x1 (56x56, 64 -> 256): bound by its 103 MB
  // of output, which the GEMMs store while they multiply (measured 39-41 us
  // on them against 53 on the best implicit-GEMM kernel).
  CudaConvChoice c = pick(conv(32, 56, 56, 64, 256, 1, 1, 1, 0));
  ASSERT_GE(c.config, first_gemm);
  EXPECT_EQ(c.split, 1);
  EXPECT_FALSE(c.parallel);
  // 64 output channels: not on tiles four times as wide (95.7 us on 64x256
  // against 38.3 on 64x64 for 256 -> 64).
  c = pick(conv(32, 56, 56, 256, 64, 1, 1, 1, 0));
  ASSERT_GE(c.config, first_gemm);
  EXPECT_EQ(all[c.config].tile_n, 64);
  // The deep reduction of the last stage (7x7, 2048 -> 512): 64x128 tiles
  // (15.6 us; 64x256 took 24.1, the 128x128 implicit GEMM 23.6).
  c = pick(conv(32, 7, 7, 2048, 512, 1, 1, 1, 0));
  ASSERT_GE(c.config, first_gemm);
  EXPECT_EQ(all[c.config].tile_n, 128);
  // A 3x3 and a strided 1x1 stay on the other kernels.
  c = pick(conv(32, 28, 28, 128, 128, 3, 3, 1, 1));
  ASSERT_GE(c.config, 0);
  EXPECT_LT(c.config, first_gemm);
  c = pick(conv(32, 56, 56, 256, 512, 1, 1, 2, 0));
  ASSERT_GE(c.config, 0);
  EXPECT_LT(c.config, first_gemm);
}

TEST(CudaConvTf32Choice, PersistentHopperKernelTakesWhatItRunsFastest) {
  // As above, with the 128x128 Hopper shape in the persistent ping-pong
  // kernel (its times: CudaConvTf32Test.Timing in aotirt_cuda_bench, batch
  // 32, one H200 machine).
  std::vector<CudaConvConfig> all;
  std::vector<int> blocks;
  with_hopper_shapes(&all, &blocks);
  const int persistent = kCount;
  ASSERT_EQ(all[persistent].tile_n, 128);
  all[persistent].persistent = true;
  with_hopper_gemms(&all, &blocks);
  auto pick = [&](const CudaConvProblem& p) { return choose_among(all, blocks, p); };
  // The strided downsample at 56x56 (27.4 us; the kernel of a block a tile
  // took 47.9, cuDNN 31).
  CudaConvChoice c = pick(conv(32, 56, 56, 256, 512, 1, 1, 2, 0));
  EXPECT_EQ(c.config, persistent);
  EXPECT_EQ(c.split, 1);
  // A plain 1x1 whose output it stores under the next tile's products
  // (17.0 us; the GEMMs 17.8-18.8).
  c = pick(conv(32, 14, 14, 1024, 256, 1, 1, 1, 0));
  EXPECT_EQ(c.config, persistent);
  // Plain 1x1s that the GEMMs' bytes floor gave them while the persistent
  // kernel ran faster (H100 machine: 56x56 64 -> 256 48.7 us against 51.4
  // on 64x64 GEMM tiles; 28x28 512 -> 256 30.6 against 32.9 on 64x256).
  for (const CudaConvProblem& p : {conv(32, 56, 56, 64, 256, 1, 1, 1, 0), conv(32, 28, 28, 512, 256, 1, 1, 1, 0),
                                   conv(32, 28, 28, 128, 512, 1, 1, 1, 0)}) {
    c = pick(p);
    EXPECT_EQ(c.config, persistent) << p.c << " -> " << p.k << " channels at " << p.h << "x" << p.w;
  }
  // The deep 3x3 of 7x7 outputs: 52 tiles, split in two (29.5 us).
  c = pick(conv(32, 7, 7, 512, 512, 3, 3, 1, 1));
  EXPECT_EQ(c.config, persistent);
  EXPECT_EQ(c.split, 2);
  EXPECT_TRUE(c.parallel);
  // 64 output channels fill half its tile's width (83.2 us against 43.3 on
  // 128x64 tiles): left out.
  c = pick(conv(32, 56, 56, 64, 64, 3, 3, 1, 1));
  ASSERT_GE(c.config, 0);
  EXPECT_NE(c.config, persistent);
}

TEST(CudaConvTf32Choice, NoneWhenNoKernelTakesIt) {
  CudaConvProblem p = conv(1, 8, 8, 6, 16, 3, 3, 1, 1);  // 6 channels: neither kind
  EXPECT_EQ(choose(p).config, -1);
  bool all[kCount] = {true, true, true, true, true, true, true, true};
  EXPECT_EQ(cuda_conv_tf32_choose(conv(1, 8, 8, 8, 16, 3, 3, 1, 1), 0, kShapes, kBlocks, all, kCount).config, -1);
  p = conv(1, 8, 8, 8, 16, 3, 3, 1, 1);
  p.k = 0;
  EXPECT_EQ(cuda_conv_tf32_choose(p, 132, kShapes, kBlocks, all, kCount).config, -1);
}

// y = conv(x, w) + bias in float64 on the host; also sum |x| |w| per
// output, the scale of TF32's rounding error.
void reference(const CudaConvProblem& p, const std::vector<float>& x, const std::vector<float>& w,
               const std::vector<float>& bias, std::vector<double>* y, std::vector<double>* scale) {
  y->assign(size_t(p.n) * p.p * p.q * p.k, 0.0);
  scale->assign(y->size(), 0.0);
  for (int n = 0; n < p.n; ++n)
    for (int oh = 0; oh < p.p; ++oh)
      for (int ow = 0; ow < p.q; ++ow)
        for (int k = 0; k < p.k; ++k) {
          double s = bias.empty() ? 0.0 : bias[k], a = 0;
          for (int r = 0; r < p.r; ++r) {
            const int ih = oh * p.stride_h - p.pad_h + r * p.dil_h;
            if (ih < 0 || ih >= p.h) continue;
            for (int t = 0; t < p.s; ++t) {
              const int iw = ow * p.stride_w - p.pad_w + t * p.dil_w;
              if (iw < 0 || iw >= p.w) continue;
              const float* xp = &x[((size_t(n) * p.h + ih) * p.w + iw) * p.c];
              const float* wp = &w[((size_t(k) * p.r + r) * p.s + t) * p.c];
              for (int c = 0; c < p.c; ++c) {
                s += double(xp[c]) * wp[c];
                a += std::fabs(double(xp[c]) * wp[c]);
              }
            }
          }
          const size_t i = ((size_t(n) * p.p + oh) * p.q + ow) * p.k + k;
          (*y)[i] = s;
          (*scale)[i] = a;
        }
}

template <class T>
T* upload(const std::vector<T>& v) {
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), std::max<size_t>(v.size(), 1) * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

// A reference case on the device: random x and w in [-1, 1] (and a bias in
// [2, 3], far above the tolerance, so that a dropped bias fails), the
// float64 reference and its scale, |p|'s pointers set to device copies and
// an output buffer, freed when it goes.
struct DeviceCase {
  std::vector<double> want, scale;
  float *dx = nullptr, *dw = nullptr, *db = nullptr, *dy = nullptr;
  DeviceCase(CudaConvProblem* p, bool with_bias, std::mt19937* gen) {
    std::uniform_real_distribution<float> u(-1.f, 1.f), ub(2.f, 3.f);
    std::vector<float> x(size_t(p->n) * p->h * p->w * p->c), w(size_t(p->k) * p->r * p->s * p->c), bias;
    for (float& v : x) v = u(*gen);
    for (float& v : w) v = u(*gen);
    if (with_bias) {
      bias.resize(p->k);
      for (float& v : bias) v = ub(*gen);
    }
    reference(*p, x, w, bias, &want, &scale);
    dx = upload(x);
    dw = upload(w);
    db = with_bias ? upload(bias) : nullptr;
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&dy), want.size() * sizeof(float)), cudaSuccess);
    p->x = dx;
    p->filter = dw;
    p->bias = db;
    p->y = dy;
  }
  ~DeviceCase() {
    cudaFree(dx);
    cudaFree(dw);
    cudaFree(db);
    cudaFree(dy);
  }
  DeviceCase(const DeviceCase&) = delete;
  DeviceCase& operator=(const DeviceCase&) = delete;
  // The output's worst error in units of |rel| times the scale plus
  // |abs_tol| (a non-finite output counts as 1e30), where it is (|at|), and
  // the output (|got|).
  double worst(double rel, double abs_tol, size_t* at, std::vector<float>* got) const {
    got->assign(want.size(), 0.f);
    EXPECT_EQ(cudaMemcpy(got->data(), dy, got->size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    double worst = 0;
    *at = 0;
    for (size_t j = 0; j < got->size(); ++j) {
      const double e = std::fabs((*got)[j] - want[j]) / (rel * scale[j] + abs_tol);
      const double ee = std::isfinite(e) ? e : 1e30;
      if (ee > worst) {
        worst = ee;
        *at = j;
      }
    }
    return worst;
  }
};

TEST_F(CudaConvTf32Test, KernelsRefuseWhatTheyCannotTake) {
  CudaConvProblem p = conv(1, 8, 8, 8, 16, 3, 3, 1, 1);
  std::vector<float> buf(4096);
  float* d = upload(buf);
  p.x = p.filter = d;
  p.y = d;
  for (int i = 0; i < cuda_conv_tf32_config_count(); ++i) {
    const bool fixed = cuda_conv_tf32_config(i).fixed_channels != 0;
    SCOPED_TRACE("kernel " + std::to_string(i));
    if (cuda_conv_tf32_config(i).gemm_1x1) {
      // The GEMMs take plain 1x1 convolutions alone: no larger filter, no
      // stride, no padding, no bias, no split, and channel counts and
      // pointers as the other kernels need them.
      EXPECT_TRUE(cuda_conv_tf32_config(i).sm90);
      EXPECT_FALSE(cuda_conv_tf32_config(i).three_pass);
      EXPECT_EQ(cuda_conv_tf32_check(i, p, 1), cudaErrorInvalidValue);  // 3x3
      CudaConvProblem g = conv(2, 5, 7, 64, 36, 1, 1, 1, 0);
      g.x = g.filter = g.y = d;
      EXPECT_EQ(cuda_conv_tf32_check(i, g, 1), cudaSuccess);
      EXPECT_EQ(cuda_conv_tf32_check(i, g, 2), cudaErrorInvalidValue);
      CudaConvProblem b = conv(2, 6, 6, 64, 36, 1, 1, 2, 0);
      b.x = b.filter = b.y = d;
      EXPECT_EQ(cuda_conv_tf32_check(i, b, 1), cudaErrorInvalidValue);  // stride 2
      b = conv(2, 5, 7, 64, 36, 1, 1, 1, 1);
      b.x = b.filter = b.y = d;
      EXPECT_EQ(cuda_conv_tf32_check(i, b, 1), cudaErrorInvalidValue);  // padded
      b = g;
      b.bias = d;
      EXPECT_EQ(cuda_conv_tf32_check(i, b, 1), cudaErrorInvalidValue);
      b = g;
      b.q = 6;  // an output of another size
      EXPECT_EQ(cuda_conv_tf32_check(i, b, 1), cudaErrorInvalidValue);
      b = g;
      b.k = 18;
      EXPECT_EQ(cuda_conv_tf32_check(i, b, 1), cudaErrorInvalidValue);
      b = g;
      b.c = 6;
      EXPECT_EQ(cuda_conv_tf32_check(i, b, 1), cudaErrorInvalidValue);
      b = g;
      b.filter = d + 1;
      EXPECT_EQ(cuda_conv_tf32_check(i, b, 1), cudaErrorInvalidValue);
      EXPECT_EQ(cuda_conv_tf32_launch(i, b, 1, nullptr, nullptr, nullptr), cudaErrorInvalidValue);
      b = g;
      b.y = nullptr;
      EXPECT_EQ(cuda_conv_tf32_check(i, b, 1), cudaErrorInvalidValue);
      continue;
    }
    EXPECT_EQ(cuda_conv_tf32_check(i, p, 1) == cudaSuccess, !fixed);  // 8 channels: not the stem kernels'
    CudaConvProblem q = p;
    q.k = 18;  // the epilogue writes 4 channels at a time
    EXPECT_EQ(cuda_conv_tf32_check(i, q, 1), cudaErrorInvalidValue);
    q = p;
    q.x = d + 1;  // not 16-byte aligned
    EXPECT_EQ(cuda_conv_tf32_check(i, q, 1), cudaErrorInvalidValue);
    q = p;
    q.y = nullptr;
    EXPECT_EQ(cuda_conv_tf32_check(i, q, 1), cudaErrorInvalidValue);
    // 8 channels are one k step: no second slice to give.
    EXPECT_EQ(cuda_conv_tf32_check(i, p, 2), cudaErrorInvalidValue);
    q = conv(1, 8, 8, 6, 16, 3, 3, 1, 1);
    q.x = q.filter = q.y = d;
    EXPECT_EQ(cuda_conv_tf32_check(i, q, 1), cudaErrorInvalidValue);
    EXPECT_EQ(cuda_conv_tf32_launch(i, q, 1, nullptr, nullptr, nullptr), cudaErrorInvalidValue);
    // 3 channels: the shim pads them to 4 first; 4 every kernel takes.
    q = conv(1, 8, 8, 3, 16, 3, 3, 1, 1);
    q.x = q.filter = q.y = d;
    EXPECT_EQ(cuda_conv_tf32_check(i, q, 1), cudaErrorInvalidValue);
    q.c = 4;
    EXPECT_EQ(cuda_conv_tf32_check(i, q, 1), cudaSuccess);
    if (cuda_conv_tf32_config(i).sm90) {
      // No bias on the Hopper kernels, a channel split only in slices of
      // as many whole 32-channel k steps, parallel only, and an output of
      // the size the convolution gives.
      q = conv(1, 8, 8, 64, 16, 3, 3, 1, 1);
      q.x = q.filter = q.y = d;
      EXPECT_EQ(cuda_conv_tf32_check(i, q, 1), cudaSuccess);
      EXPECT_EQ(cuda_conv_tf32_check(i, q, 2), cudaSuccess);
      EXPECT_EQ(cuda_conv_tf32_check(i, q, 3), cudaErrorInvalidValue);  // 64 channels in 3
      EXPECT_EQ(cuda_conv_tf32_check(i, q, 4), cudaErrorInvalidValue);  // 16 channels a slice
      EXPECT_EQ(cuda_conv_tf32_check(i, q, 0), cudaErrorInvalidValue);
      EXPECT_EQ(cuda_conv_tf32_launch(i, q, 2, nullptr, nullptr, nullptr), cudaErrorInvalidValue);  // serial
      EXPECT_EQ(cuda_conv_tf32_launch(i, q, 2, nullptr, d + 1, nullptr), cudaErrorInvalidValue);    // unaligned
      CudaConvProblem deep = conv(1, 8, 8, 32 * 17, 16, 1, 1, 1, 0);
      deep.x = deep.filter = deep.y = d;
      EXPECT_EQ(cuda_conv_tf32_check(i, deep, 17), cudaErrorInvalidValue);  // more slices than forks
      EXPECT_EQ(cuda_conv_tf32_launch(i, deep, 17, nullptr, d, nullptr), cudaErrorInvalidValue);
      CudaConvProblem b = q;
      b.bias = d;
      EXPECT_EQ(cuda_conv_tf32_check(i, b, 1), cudaErrorInvalidValue);
      b = q;
      b.p = 7;
      EXPECT_EQ(cuda_conv_tf32_check(i, b, 1), cudaErrorInvalidValue);
      EXPECT_FALSE(cuda_conv_tf32_config(i).three_pass);
    }
  }
  // A split needs its semaphores or its workspace, the workspace 16-byte
  // aligned.
  CudaConvProblem deep = conv(1, 4, 4, 64, 16, 1, 1, 1, 0);
  deep.x = deep.filter = deep.y = d;
  for (int i = 0; i < cuda_conv_tf32_config_count(); ++i) {
    if (cuda_conv_tf32_check(i, deep, 2) != cudaSuccess) continue;
    SCOPED_TRACE("kernel " + std::to_string(i) + ", two slices");
    EXPECT_FALSE(cuda_conv_tf32_config(i).gemm_1x1);
    EXPECT_EQ(cuda_conv_tf32_launch(i, deep, 2, nullptr, nullptr, nullptr), cudaErrorInvalidValue);
    EXPECT_EQ(cuda_conv_tf32_launch(i, deep, 2, nullptr, d + 1, nullptr), cudaErrorInvalidValue);
  }
  EXPECT_EQ(cuda_conv_tf32_partial_floats(deep, 1), 0u);
  EXPECT_EQ(cuda_conv_tf32_partial_floats(deep, 3), 3u * 4 * 4 * 16);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cuda_conv_tf32_check(-1, p, 1), cudaErrorInvalidValue);
  EXPECT_EQ(cuda_conv_tf32_launch(cuda_conv_tf32_config_count(), p, 1, nullptr, nullptr, nullptr),
            cudaErrorInvalidValue);
  cudaFree(d);
}

TEST_F(CudaConvTf32Test, EveryKernelMatchesTheReference) {
  struct Case {
    CudaConvProblem p;
    bool bias;
    const char* what;
  };
  const Case cases[] = {
      {conv(2, 9, 11, 64, 68, 3, 3, 1, 1), true, "3x3, padded, edges"},
      {conv(1, 13, 13, 128, 64, 3, 3, 2, 1), false, "3x3 stride 2"},
      {conv(2, 10, 10, 96, 32, 1, 1, 1, 0), true, "1x1"},
      {conv(3, 7, 9, 72, 100, 1, 1, 1, 0), false, "1x1 without a bias, edges (the Hopper GEMMs too)"},
      {conv(2, 28, 28, 256, 516, 1, 1, 1, 0), false, "1x1, many tiles, each GEMM block walks several"},
      {conv(1, 12, 12, 64, 128, 1, 1, 2, 0), false, "1x1 stride 2 (downsample)"},
      // 98 x 3 tiles of 128x128 for 132 SMs: each persistent ping-pong block
      // walks two or three, in both warpgroups.
      {conv(16, 56, 56, 64, 260, 1, 1, 2, 0), false, "1x1 stride 2, many tiles, the last column a part"},
      {conv(12, 30, 30, 64, 136, 3, 3, 1, 1), false, "3x3, many tiles, edges in both dimensions"},
      {conv(1, 12, 10, 32, 20, 3, 3, 1, 2, 2), true, "dilation 2"},
      {conv(1, 7, 7, 256, 64, 3, 3, 1, 1), false, "deep and small (splits)"},
      {conv(1, 5, 6, 128, 36, 3, 3, 1, 1), true, "deep and small with a bias (splits)"},
      {conv(2, 30, 30, 4, 64, 7, 7, 2, 3), true, "a 4-channel stem"},
      {conv(1, 17, 15, 4, 8, 5, 5, 1, 2), false, "a 4-channel 5x5"},
  };
  int* sem = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&sem), 1 << 16), cudaSuccess);
  ASSERT_EQ(cudaMemset(sem, 0, 1 << 16), cudaSuccess);
  constexpr uint64_t kPartials = uint64_t(1) << 20;  // a parallel split's workspace
  float* partials = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&partials), kPartials * sizeof(float)), cudaSuccess);
  std::vector<int> ran(cuda_conv_tf32_config_count(), 0);
  int split_runs = 0, parallel_runs = 0;
  std::mt19937 gen(5);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    CudaConvProblem p = c.p;
    const DeviceCase d(&p, c.bias, &gen);
    for (int i = 0; i < cuda_conv_tf32_config_count(); ++i)
      for (int split : {1, 2, 3, 8})
        for (const bool parallel : {false, true}) {
          if (!runs(i) || cuda_conv_tf32_check(i, p, split) != cudaSuccess || (parallel && split == 1)) continue;
          // The Hopper kernels' splits are parallel only (refused below).
          if (cuda_conv_tf32_config(i).sm90 && split > 1 && !parallel) continue;
          // This test's workspace holds a million floats: the larger cases'
          // deep parallel splits are left to the smaller ones.
          if (parallel && cuda_conv_tf32_partial_floats(p, split) > kPartials) continue;
          SCOPED_TRACE("kernel " + std::to_string(i) + " split " + std::to_string(split) +
                       (parallel ? " parallel" : " serial"));
          // NaN where nothing is written.
          ASSERT_EQ(cudaMemset(d.dy, 0xff, d.want.size() * sizeof(float)), cudaSuccess);
          ASSERT_EQ(cudaMemset(partials, 0xff, kPartials * sizeof(float)), cudaSuccess);
          int* const semaphores = parallel ? nullptr : sem;
          float* const parts = parallel ? partials : nullptr;
          ASSERT_EQ(cuda_conv_tf32_launch(i, p, split, semaphores, parts, nullptr), cudaSuccess);
          // TF32 keeps 11 significand bits of each operand: each product is off
          // by at most about 2^-10 of its size. 3xTF32 keeps about 22: a TF32
          // kernel fails its bound by some 50 times.
          const bool three = cuda_conv_tf32_config(i).three_pass;
          std::vector<float> got;
          size_t at = 0;
          const double worst = d.worst(three ? 1e-5 : 1e-3, three ? 1e-6 : 1e-5, &at, &got);
          EXPECT_LE(worst, 1.0) << "at " << at << ": " << got[at] << " against " << d.want[at];
          std::vector<int> left(1 << 14);
          ASSERT_EQ(cudaMemcpy(left.data(), sem, left.size() * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
          EXPECT_TRUE(std::all_of(left.begin(), left.end(), [](int v) { return v == 0; }))
              << "the semaphores were not left zero";
          ++ran[i];
          if (split > 1) ++(parallel ? parallel_runs : split_runs);
        }
  }
  for (int i = 0; i < cuda_conv_tf32_config_count(); ++i)
    if (runs(i)) {
      EXPECT_GT(ran[i], 0) << "kernel " << i << " never ran";
    }
  EXPECT_GT(split_runs, 0);
  EXPECT_GT(parallel_runs, 0);
  cudaFree(sem);
  cudaFree(partials);
}

// The stem kernel's block shape (cuda_conv_stem.h), which needs no GPU:
// ResNet-50's stem fits two blocks an SM (the kernel's launch bounds) and
// no row of its output is left to a tile of its own.
TEST(CudaConvStemGeometry, ResNetStemBlocksFitTwoAnSm) {
  CudaConvStemGeometry g;
  ASSERT_TRUE(cuda_conv_stem_geometry(conv(32, 224, 224, 3, 64, 7, 7, 2, 3), &g));
  EXPECT_EQ(g.frags_per_row, 7);
  EXPECT_EQ(g.rows, 2);
  EXPECT_EQ(g.cols, 112);
  EXPECT_EQ(g.in_rows, 9);                  // 2 output rows of stride 2, 7 taps
  EXPECT_EQ(g.in_row_floats, 229 * 3);      // 112 columns of stride 2, 7 taps
  EXPECT_EQ(g.reduction, 147);
  EXPECT_EQ(g.padded_reduction, 152);
  EXPECT_EQ(g.filter_row % 32, 8);          // conflict-free B loads: rows t are 8 banks apart
  EXPECT_TRUE(g.fast);
  EXPECT_LE(2 * g.smem_bytes, 227 * 1024);  // an H100's or H200's shared memory
  EXPECT_EQ(g.tiles, 56 * 32);
  EXPECT_EQ(g.channel_blocks, 1);
  // Narrow outputs take more rows a block, so a block keeps its 14 fragments.
  ASSERT_TRUE(cuda_conv_stem_geometry(conv(1, 32, 32, 3, 64, 3, 3, 2, 1), &g));
  EXPECT_EQ(g.frags_per_row, 1);
  EXPECT_EQ(g.rows, 14);
  EXPECT_FALSE(g.fast);
  // Wide ones take windows of 112 columns.
  ASSERT_TRUE(cuda_conv_stem_geometry(conv(1, 10, 300, 1, 32, 3, 3, 1, 1), &g));
  EXPECT_EQ(g.cols, 112);
  EXPECT_EQ(g.tiles, 5 * 3);
}

TEST(CudaConvStemGeometry, RefusesWhatTheKernelCannotTake) {
  CudaConvStemGeometry g;
  EXPECT_FALSE(cuda_conv_stem_geometry(conv(1, 32, 32, 5, 64, 3, 3, 1, 1), &g)) << "5 channels";
  EXPECT_FALSE(cuda_conv_stem_geometry(conv(1, 32, 32, 3, 48, 3, 3, 1, 1), &g)) << "48 output channels";
  EXPECT_FALSE(cuda_conv_stem_geometry(conv(1, 32, 32, 3, 64, 11, 11, 1, 5), &g)) << "a reduction of 363";
  EXPECT_TRUE(cuda_conv_stem_geometry(conv(1, 32, 32, 4, 64, 8, 8, 1, 3), &g)) << "a reduction of 256";
  EXPECT_FALSE(cuda_conv_stem_geometry(conv(1, 8, 8, 3, 64 * 70000, 3, 3, 1, 1), &g)) << "channels past the grid";
  EXPECT_TRUE(cuda_conv_stem_geometry(conv(70000, 8, 8, 3, 64, 3, 3, 1, 1), &g)) << "tiles are walked";
  CudaConvProblem p = conv(1, 32, 32, 3, 64, 3, 3, 1, 1);
  p.pad_h = -1;
  EXPECT_FALSE(cuda_conv_stem_geometry(p, &g)) << "negative padding";
  p = conv(1, 32, 32, 3, 64, 3, 3, 1, 1);
  p.stride_w = 0;
  EXPECT_FALSE(cuda_conv_stem_geometry(p, &g)) << "stride 0";
  p = conv(1, 32, 32, 3, 64, 3, 3, 1, 1);
  p.q = 0;
  EXPECT_FALSE(cuda_conv_stem_geometry(p, &g)) << "no output";
  // A window past any GPU's shared memory: the device check refuses it.
  ASSERT_TRUE(cuda_conv_stem_geometry(conv(1, 8, 2000, 4, 32, 8, 8, 16, 0), &g));
  EXPECT_GT(g.smem_bytes, 228 * 1024);
}

TEST_F(CudaConvStemTest, RefusesWhatItCannotTake) {
  std::vector<float> buf(1 << 16);
  float* d = upload(buf);
  CudaConvProblem p = conv(1, 16, 16, 3, 64, 7, 7, 2, 3);
  p.x = p.filter = d;
  p.y = d;
  EXPECT_EQ(cuda_conv_stem_check(p), cudaSuccess);
  CudaConvProblem q = p;
  q.y = d + 1;  // 4-byte aligned: the kernel stores pairs of floats
  EXPECT_EQ(cuda_conv_stem_check(q), cudaErrorInvalidValue);
  EXPECT_EQ(cuda_conv_stem_launch(q, nullptr), cudaErrorInvalidValue);
  q = p;
  q.filter = nullptr;
  EXPECT_EQ(cuda_conv_stem_launch(q, nullptr), cudaErrorInvalidValue);
  q = conv(1, 8, 2000, 4, 32, 8, 8, 16, 0);  // more shared memory than a block has
  q.x = q.filter = d;
  q.y = d;
  EXPECT_EQ(cuda_conv_stem_check(q), cudaErrorInvalidValue);
  q = conv(1, 16, 16, 3, 16, 7, 7, 2, 3);
  q.x = q.filter = d;
  q.y = d;
  EXPECT_EQ(cuda_conv_stem_launch(q, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cudaFree(d);
}

TEST_F(CudaConvStemTest, MatchesTheReference) {
  struct Case {
    CudaConvProblem p;
    bool bias;
    const char* what;
  };
  CudaConvProblem rect = conv(1, 21, 17, 2, 32, 5, 3, 1, 2);
  rect.pad_w = 1;
  rect.stride_h = 2;
  rect.p = (21 + 4 - 5) / 2 + 1;
  rect.q = (17 + 2 - 3) / 1 + 1;
  const Case cases[] = {
      {conv(2, 40, 36, 3, 64, 7, 7, 2, 3), false, "ResNet's stem, smaller images"},
      {conv(1, 45, 47, 3, 64, 7, 7, 2, 3), true, "odd sizes, a bias, an output row left over"},
      {conv(2, 19, 23, 1, 32, 3, 3, 1, 1), true, "one channel, 32 outputs"},
      {conv(1, 30, 30, 4, 128, 7, 7, 2, 3), false, "4 channels, two blocks of channels"},
      {conv(1, 12, 14, 3, 96, 3, 3, 1, 1), true, "96 outputs: the last block's upper half idle"},
      {conv(1, 9, 250, 3, 32, 3, 3, 1, 1), false, "250 columns: three windows"},
      {conv(1, 16, 16, 2, 64, 3, 3, 1, 2, 2), true, "dilation 2"},
      {conv(3, 8, 8, 3, 32, 1, 1, 1, 0), false, "1x1, 8 columns: many rows a block"},
      {rect, true, "5x3 taps, stride 2 by 1, padding 2 by 1"},
      // The fast path (3 channels of stride 2, at least 97 columns).
      {conv(1, 30, 200, 3, 64, 7, 7, 2, 3), false, "fast: 100 columns of a 112-column window, an odd row left"},
      {conv(2, 20, 230, 3, 32, 7, 7, 2, 3), true, "fast: 115 columns in two windows, 32 outputs, a bias"},
      {conv(1, 17, 240, 3, 64, 3, 3, 2, 2, 2), true, "fast: dilation 2"},
  };
  int fast_runs = 0;
  std::mt19937 gen(9);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    CudaConvProblem p = c.p;
    const DeviceCase d(&p, c.bias, &gen);
    ASSERT_EQ(cudaMemset(d.dy, 0xff, d.want.size() * sizeof(float)), cudaSuccess);  // NaN where nothing is written
    ASSERT_EQ(cuda_conv_stem_launch(p, nullptr), cudaSuccess);
    CudaConvStemGeometry g;
    ASSERT_TRUE(cuda_conv_stem_geometry(p, &g));
    fast_runs += g.fast;
    // TF32's bound, as for the other kernels (EveryKernelMatchesTheReference).
    std::vector<float> got;
    size_t at = 0;
    const double worst = d.worst(1e-3, 1e-5, &at, &got);
    EXPECT_LE(worst, 1.0) << "at " << at << ": " << got[at] << " against " << d.want[at];
  }
  EXPECT_EQ(fast_runs, 3);
}

// Counts out of range are refused before any CUDA call (so on any machine);
// one branch is the caller's stream alone.
TEST(CudaFork, RefusesCountsOutOfRange) {
  cudaStream_t streams[kCudaMaxForks + 1] = {};
  const cudaStream_t mine = reinterpret_cast<cudaStream_t>(uintptr_t{0x100});
  EXPECT_EQ(cuda_fork(mine, 0, streams), cudaErrorInvalidValue);
  EXPECT_EQ(cuda_fork(mine, kCudaMaxForks + 1, streams), cudaErrorInvalidValue);
  EXPECT_EQ(cuda_fork(mine, 2, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cuda_join(mine, 0, streams), cudaErrorInvalidValue);
  EXPECT_EQ(cuda_join(mine, kCudaMaxForks + 1, streams), cudaErrorInvalidValue);
  EXPECT_EQ(cuda_join(mine, 2, nullptr), cudaErrorInvalidValue);
  ASSERT_EQ(cuda_fork(mine, 1, streams), cudaSuccess);
  EXPECT_EQ(streams[0], mine);
  EXPECT_EQ(cuda_join(mine, 1, streams), cudaSuccess);
}

// A Hopper split forks its slices to side streams and joins them: recorded
// in a CUDA graph (as replays and --cuda-graph record it) the fork and the
// join are the graph's branches, and a replay gives what a direct launch
// gave, bit for bit.
TEST_F(CudaConvTf32Test, HopperSplitsRecordInAGraph) {
  CudaConvProblem p = conv(4, 7, 7, 256, 64, 3, 3, 1, 1);
  std::mt19937 gen(9);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> x(size_t(p.n) * p.h * p.w * p.c), w(size_t(p.k) * p.r * p.s * p.c);
  for (float& v : x) v = u(gen);
  for (float& v : w) v = u(gen);
  const size_t yn = size_t(p.n) * p.p * p.q * p.k;
  float *dx = upload(x), *dw = upload(w), *dy = nullptr, *parts = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dy), yn * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&parts), 8 * yn * sizeof(float)), cudaSuccess);
  p.x = dx;
  p.filter = dw;
  p.y = dy;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  int tried = 0;
  for (int i = 0; i < cuda_conv_tf32_config_count(); ++i)
    for (int split : {2, 8}) {
      if (!runs(i) || !cuda_conv_tf32_config(i).sm90 || cuda_conv_tf32_check(i, p, split) != cudaSuccess) continue;
      SCOPED_TRACE("kernel " + std::to_string(i) + " split " + std::to_string(split));
      std::vector<float> direct(yn), replayed(yn);
      ASSERT_EQ(cudaMemsetAsync(dy, 0xff, yn * sizeof(float), stream), cudaSuccess);
      ASSERT_EQ(cuda_conv_tf32_launch(i, p, split, nullptr, parts, stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(direct.data(), dy, yn * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
      ASSERT_EQ(cudaMemsetAsync(dy, 0xff, yn * sizeof(float), stream), cudaSuccess);
      ASSERT_EQ(cudaMemsetAsync(parts, 0xff, 8 * yn * sizeof(float), stream), cudaSuccess);
      cudaGraph_t graph = nullptr;
      ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
      const cudaError_t queued = cuda_conv_tf32_launch(i, p, split, nullptr, parts, stream);
      ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
      ASSERT_EQ(queued, cudaSuccess);
      size_t nodes = 0;
      ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
      EXPECT_GE(nodes, size_t(split) + 1);  // a kernel a slice and the sum, at least
      cudaGraphExec_t exec = nullptr;
      ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
      ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(replayed.data(), dy, yn * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
      EXPECT_TRUE(std::all_of(direct.begin(), direct.end(), [](float v) { return std::isfinite(v); }));
      EXPECT_EQ(std::memcmp(direct.data(), replayed.data(), yn * sizeof(float)), 0);
      ++tried;
    }
  cudaStreamDestroy(stream);
  cudaFree(dx);
  cudaFree(dw);
  cudaFree(dy);
  cudaFree(parts);
  if (tried == 0) GTEST_SKIP() << "no Hopper kernel runs on this GPU";
}

// A Hopper kernel launched with programmatic dependent launch right after a
// kernel that writes its input (the input held NaN before) computes what
// its plain launch does, bit for bit, on every unsplit Hopper kernel: the
// implicit-GEMM ones and the 1x1 GEMMs.
TEST_F(CudaConvTf32Test, HopperDependentLaunchesWaitForTheKernelBefore) {
  const CudaConvProblem problems[] = {conv(4, 14, 14, 128, 128, 3, 3, 1, 1), conv(8, 14, 14, 256, 256, 1, 1, 1, 0)};
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  int tried = 0;
  for (CudaConvProblem p : problems) {
    const size_t xn = size_t(p.n) * p.h * p.w * p.c, yn = size_t(p.n) * p.p * p.q * p.k;
    std::vector<float> x(xn), w(size_t(p.k) * p.r * p.s * p.c);
    for (float& v : x) v = u(gen);
    for (float& v : w) v = u(gen);
    float *src = upload(x), *dx = upload(x), *dw = upload(w), *dy = nullptr;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dy), yn * sizeof(float)), cudaSuccess);
    p.x = dx;
    p.filter = dw;
    p.y = dy;
    for (int i = 0; i < cuda_conv_tf32_config_count(); ++i) {
      if (!runs(i) || !cuda_conv_tf32_config(i).sm90 || cuda_conv_tf32_check(i, p, 1) != cudaSuccess) continue;
      SCOPED_TRACE("kernel " + std::to_string(i) + (cuda_conv_tf32_config(i).gemm_1x1 ? " (1x1 GEMM)" : ""));
      std::vector<float> plain(yn), dependent(yn);
      ASSERT_EQ(cudaMemsetAsync(dy, 0xff, yn * sizeof(float), stream), cudaSuccess);
      p.pdl = false;
      ASSERT_EQ(cuda_conv_tf32_launch(i, p, 1, nullptr, nullptr, stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(plain.data(), dy, yn * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
      ASSERT_EQ(cudaMemsetAsync(dy, 0xff, yn * sizeof(float), stream), cudaSuccess);
      ASSERT_EQ(cudaMemsetAsync(dx, 0xff, xn * sizeof(float), stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      // The input's values arrive by a kernel (a copy of its rows). Every fill
  // is on |stream|: a legacy-stream cudaMemset does not order with a
  // non-blocking stream, and could land after the kernels.
      ASSERT_EQ(cuda_launch_pad_channels(src, int64_t(p.n) * p.h * p.w, p.c, p.c, dx, stream), cudaSuccess);
      p.pdl = true;
      ASSERT_EQ(cuda_conv_tf32_launch(i, p, 1, nullptr, nullptr, stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(dependent.data(), dy, yn * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_TRUE(std::all_of(plain.begin(), plain.end(), [](float v) { return std::isfinite(v); }));
      EXPECT_EQ(std::memcmp(plain.data(), dependent.data(), yn * sizeof(float)), 0);
      ++tried;
    }
    cudaFree(src);
    cudaFree(dx);
    cudaFree(dw);
    cudaFree(dy);
  }
  cudaStreamDestroy(stream);
  if (tried == 0) GTEST_SKIP() << "no Hopper kernel runs on this GPU";
}

// Through the shim, as a channels-last model calls it.
struct ShimCase {
  int64_t n, c, h, w, k, r, stride, pad;
  bool bias;
};

struct ShimResult {
  TensorImpl out;
  double own_launches = 0, three_pass_launches = 0, cudnn_calls = 0, stem_launches = 0;
  double worst = 0;
};

ShimResult run_shim(const ShimCase& c, uint32_t seed) {
  ShimResult res;
  std::mt19937 rng(seed);
  const DimVector xs{c.n, c.c, c.h, c.w}, ws{c.k, c.c, c.r, c.r};
  TensorImpl hx = host_random(xs, DType::kFloat32, rng());
  TensorImpl hw = host_random(ws, DType::kFloat32, rng());
  TensorImpl hb = host_random(DimVector{c.k}, DType::kFloat32, rng(), 2.0, 3.0);
  TensorImpl dx = to_device(hx, ops::channels_last_strides(xs));
  TensorImpl dw = to_device(hw, ops::channels_last_strides(ws));
  TensorImpl db = to_device(hb);
  OwnedHandle bias_h(db);
  AtenTensorHandle bias_raw = bias_h;
  const int64_t stride[2] = {c.stride, c.stride}, pad[2] = {c.pad, c.pad}, dil[2] = {1, 1}, outpad[2] = {0, 0};
  AtenTensorHandle out_h = nullptr;
  set_shim_profiling(true);
  shim_profile(true);
  EXPECT_EQ(aoti_torch_cuda_convolution(handle(dx), handle(dw), c.bias ? &bias_raw : nullptr, stride, 2, pad, 2, dil,
                                        2, 0, outpad, 2, 1, &out_h),
            0)
      << last_error_text();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto prof = shim_profile(true);
  set_shim_profiling(false);
  if (!out_h) return res;
  res.out = take(out_h);
  res.own_launches = profiled_calls(prof, "TF32 kernel");  // 3xTF32 ones too
  res.three_pass_launches = profiled_calls(prof, "3xTF32 kernel");
  res.cudnn_calls = profiled_calls(prof, "cuDNN") + profiled_calls(prof, "cudnnBackendExecute");
  res.stem_launches = profiled_calls(prof, "(stem)");
  // The CPU op in float64 is the reference.
  TensorImpl ref = reference_conv2d(hx, hw, c.bias ? &hb : nullptr, stride, pad, dil);
  if (!ref.defined()) return res;
  const std::vector<double> got = values(res.out), want = values(ref);
  // Products of values in [-1, 1]: TF32 rounding stays within about 2^-10
  // of sqrt(c * r * r) for random signs; 1e-3 of the whole sum of |x w|
  // bounds it outright.
  const double bound = 1e-3 * double(c.c * c.r * c.r) * 0.25 + 1e-5;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    res.worst = std::max(res.worst, std::isfinite(got[i]) ? std::fabs(got[i] - want[i]) / bound : 1e30);
  return res;
}

const ShimCase kShimCases[] = {
    {2, 64, 14, 14, 64, 3, 1, 1, true},    // bias in the epilogue
    {1, 256, 7, 7, 128, 3, 1, 1, false},   // split channels
    {1, 512, 7, 7, 64, 3, 1, 1, true},     // split channels and a bias (the parallel split's second kernel adds it)
    {2, 3, 32, 32, 16, 7, 2, 3, false},    // a stem, padded to 4 channels
    {1, 1, 9, 11, 8, 3, 1, 1, true},       // one channel, padded
    {1, 64, 12, 12, 256, 1, 2, 0, false},  // strided 1x1
    {2, 4, 17, 15, 12, 3, 2, 1, true},     // a 4-channel stem of stride 2, odd sizes, a bias
    {16, 512, 7, 7, 512, 3, 1, 1, false},  // deep, 28 tiles of 128x128: on Hopper, slices on forked streams
    {2, 3, 40, 36, 64, 7, 2, 3, false},    // ResNet's stem, smaller: the stem kernel with TF32
    {1, 1, 19, 23, 32, 3, 1, 1, true},     // one channel and a bias: the stem kernel with TF32
};

std::string conv_mode_env() {
  switch (cuda_options().conv) {
    case CudaLibraryChoice::kVendor: return "cudnn";
    case CudaLibraryChoice::kAotirt: return "aotirt";
    case CudaLibraryChoice::kAuto: break;
  }
  return "";
}

// The stem kernel's launches a case makes with TF32: one for 1-4 channels
// and a multiple of 32 outputs, unless AOTIRT_CUDA_DISABLE names conv_stem.
double expected_stem_launches(const ShimCase& c) {
  const bool on = cuda_options().enabled(CudaFeature::kConvStem);
  return on && c.c <= 4 && c.k % 32 == 0 ? 1.0 : 0.0;
}

// Why the shim would not take aotirt's kernels in this process ("" when it
// would): the build, the convolution mode, cuDNN already loaded in auto mode.
std::string own_kernels_off_reason() {
  if (cuda_conv_tf32_config_count() == 0) return "this build has no TF32 convolution kernels (no CUTLASS)";
  if (conv_mode_env() == "cudnn") return "AOTIRT_CUDA_CONV=cudnn";
  if (conv_mode_env() != "aotirt" && cudnn_api_if_loaded())
    return "an earlier test loaded cuDNN, so the automatic choice is cuDNN: run CudaConvTf32Shim.* alone (as ctest "
           "does) or with AOTIRT_CUDA_CONV=aotirt";
  return "";
}

TEST(CudaConvTf32Shim, ChannelsLastFloat32TakesTheKernels) {
  AOTIRT_REQUIRE_GPU();
  if (!cuda_conv_allow_tf32())
    GTEST_SKIP() << "TF32 convolutions are off (AOTIRT_CUDA_ALLOW_TF32=0); ctest runs this test again with it on";
  const std::string off = own_kernels_off_reason();
  if (!off.empty()) GTEST_SKIP() << off;
  uint32_t seed = 31;
  for (const ShimCase& c : kShimCases) {
    SCOPED_TRACE("n=" + std::to_string(c.n) + " c=" + std::to_string(c.c) + " k=" + std::to_string(c.k) +
                 " r=" + std::to_string(c.r));
    ShimResult r = run_shim(c, seed++);
    ASSERT_TRUE(r.out.defined());
    EXPECT_EQ(r.own_launches, 1.0);
    EXPECT_EQ(r.three_pass_launches, 0.0);
    EXPECT_EQ(r.cudnn_calls, 0.0);
    EXPECT_EQ(r.stem_launches, expected_stem_launches(c));
    EXPECT_EQ(r.out.strides(), ops::channels_last_strides(r.out.sizes()));
    EXPECT_LE(r.worst, 1.0);
  }
}

// The automatic choice: once cuDNN is loaded (by this test here; by a
// grouped or a contiguous convolution in a model), its kernels take the
// channels-last convolutions too. Runs after the test above.
TEST(CudaConvTf32Shim, AutoMovesToCudnnOnceItIsLoaded) {
  AOTIRT_REQUIRE_CUDNN();
  if (cuda_conv_tf32_config_count() == 0) GTEST_SKIP() << "this build has no TF32 convolution kernels (no CUTLASS)";
  if (!cuda_conv_allow_tf32()) GTEST_SKIP() << "TF32 convolutions are off (AOTIRT_CUDA_ALLOW_TF32=0)";
  if (!conv_mode_env().empty() && conv_mode_env() != "auto") GTEST_SKIP() << "AOTIRT_CUDA_CONV=" << conv_mode_env();
  ASSERT_TRUE(cudnn_api().ok());
  ShimResult r = run_shim(kShimCases[0], 11);
  ASSERT_TRUE(r.out.defined());
  EXPECT_EQ(r.own_launches, 0.0);
  EXPECT_GT(r.cudnn_calls, 0.0);
  EXPECT_EQ(r.out.strides(), ops::channels_last_strides(r.out.sizes()));
  EXPECT_LE(r.worst, 1.0);
}

// Strict float32: the 3xTF32 kernels, at float32 accuracy (100 times inside
// the TF32 bound; CudaConvolutionTest's channels-last float32 cases check
// them at its float32 tolerances too).
TEST(CudaConvTf32Shim, StrictFloat32TakesTheThreePassKernels) {
  AOTIRT_REQUIRE_GPU();
  if (cuda_conv_allow_tf32()) GTEST_SKIP() << "TF32 convolutions are allowed here";
  const std::string off = own_kernels_off_reason();
  if (!off.empty()) GTEST_SKIP() << off;
  uint32_t seed = 7;
  for (const ShimCase& c : kShimCases) {
    SCOPED_TRACE("n=" + std::to_string(c.n) + " c=" + std::to_string(c.c) + " k=" + std::to_string(c.k) +
                 " r=" + std::to_string(c.r));
    ShimResult r = run_shim(c, seed++);
    ASSERT_TRUE(r.out.defined());
    EXPECT_EQ(r.three_pass_launches, 1.0);
    EXPECT_EQ(r.stem_launches, 0.0);  // TF32 only
    EXPECT_EQ(r.cudnn_calls, 0.0);
    EXPECT_EQ(r.out.strides(), ops::channels_last_strides(r.out.sizes()));
    EXPECT_LE(r.worst, 1e-2);
  }
}

}  // namespace
}  // namespace aotirt
