// The three CUDA SDPA shims (flash, efficient, cuDNN) against a float64 host
// reference of softmax(q k^T * scale + mask) v, over random shapes: batch,
// heads (including grouped KV heads), query and key lengths (decode L=1 with
// long keys, which splits the keys across blocks), head dims up to 256,
// causal (top-left), bool and additive masks, strided inputs. Each output's
// sizes, strides and dtype must be what torch's meta function gives. Skipped
// without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "backends/cuda/ops/attention/cuda_attention_kernel.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "cuda_attention_fixture.h"
#include "cuda_test_util.h"
#include "device/device.h"

namespace aotirt {
namespace {

using namespace cuda_test;

// out [B, H, L, Ev] and lse [B, H, L] in float64.
void reference(const AttnCase& c, const Inputs& in, std::vector<double>* out, std::vector<double>* lse) {
  std::vector<double> q = values(in.q), k = values(in.k), v = values(in.v);
  std::vector<double> mask = c.mask != Mask::kNone ? values(in.mask) : std::vector<double>();
  const double scale = c.scale ? c.scale : 1.0 / std::sqrt(static_cast<double>(c.e));
  out->assign(c.b * c.hq * c.l * c.ev, 0.0);
  lse->assign(c.b * c.hq * c.l, -std::numeric_limits<double>::infinity());
  std::vector<double> s(c.s);
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t h = 0; h < c.hq; ++h) {
      const int64_t hk = h / (c.hq / c.hkv);
      for (int64_t i = 0; i < c.l; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < c.s; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < c.e; ++e)
            dot += q[((b * c.hq + h) * c.l + i) * c.e + e] * k[((b * c.hkv + hk) * c.s + j) * c.e + e];
          double x = dot * scale;
          if (c.causal && j > i) x = -std::numeric_limits<double>::infinity();
          if (c.mask != Mask::kNone) {
            const int64_t mi = c.mask_broadcast ? i * c.s + j : ((b * c.hq + h) * c.l + i) * c.s + j;
            if (c.mask == Mask::kBool) {
              if (mask[mi] == 0) x = -std::numeric_limits<double>::infinity();
            } else {
              x += mask[mi];
            }
          }
          s[j] = x;
          mx = std::max(mx, x);
        }
        if (mx == -std::numeric_limits<double>::infinity()) continue;  // fully masked: zeros
        double sum = 0;
        for (int64_t j = 0; j < c.s; ++j) sum += std::exp(s[j] - mx);
        (*lse)[(b * c.hq + h) * c.l + i] = mx + std::log(sum);
        for (int64_t d = 0; d < c.ev; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < c.s; ++j) acc += std::exp(s[j] - mx) / sum * v[((b * c.hkv + hk) * c.s + j) * c.ev + d];
          (*out)[((b * c.hq + h) * c.l + i) * c.ev + d] = acc;
        }
      }
    }
}

TensorImpl host_f64(const DimVector& sizes, const std::vector<double>& v) {
  TensorImpl t = host_empty(sizes, DType::kFloat64);
  std::copy(v.begin(), v.end(), static_cast<double*>(t.data_ptr()));
  return t;
}

double out_atol(DType dt) { return dt == DType::kFloat32 ? 2e-5 : dt == DType::kBFloat16 ? 2e-2 : 4e-3; }

enum class Op { kFlash, kEfficient, kCudnn };

void check_case(const AttnCase& c, DType dt, Op op, uint32_t seed) {
  SCOPED_TRACE(describe(c, dt) + (op == Op::kFlash ? " flash" : op == Op::kEfficient ? " efficient" : " cudnn"));
  Inputs in = make_inputs(c, dt, seed);
  std::vector<double> ref_out, ref_lse;
  reference(c, in, &ref_out, &ref_lse);
  double scale = c.scale;
  double* scale_p = c.scale ? &scale : nullptr;
  OwnedHandle mask_h(in.dmask);
  AtenTensorHandle mask_raw = mask_h;
  AtenTensorHandle* mask_p = c.mask != Mask::kNone ? &mask_raw : nullptr;
  AtenTensorHandle r[9] = {};
  int64_t ri[2] = {-1, -1};
  TensorImpl out, lse;
  const int64_t B = c.b, H = c.hq, L = c.l, Ev = c.ev;
  if (op == Op::kFlash) {
    ASSERT_EQ(aoti_torch_cuda__scaled_dot_product_flash_attention(handle(in.dq), handle(in.dk), handle(in.dv), 0.0,
                                                                  c.causal, 0, scale_p, &r[0], &r[1], &r[2], &r[3],
                                                                  &ri[0], &ri[1], &r[6], &r[7], &r[8]),
              0)
        << last_error_text();
    out = take(r[0]);
    lse = take(r[1]);
    // Meta: out = empty_like(query); lse [B, H, L] float32; seed [2] / offset [] uint64.
    EXPECT_EQ(out.strides(), in.dq.strides());
    EXPECT_EQ(lse.sizes(), (DimVector{B, H, L}));
    EXPECT_FALSE(take(r[2]).defined());
    EXPECT_FALSE(take(r[3]).defined());
    EXPECT_EQ(ri[0], L);
    EXPECT_EQ(ri[1], c.s);
    TensorImpl seed_t = take(r[6]), offset_t = take(r[7]), debug = take(r[8]);
    EXPECT_EQ(seed_t.sizes(), DimVector{2});
    EXPECT_EQ(seed_t.dtype(), DType::kUInt64);
    EXPECT_EQ(offset_t.dim(), 0);
    EXPECT_EQ(debug.sizes(), DimVector{0});
    EXPECT_EQ(debug.dtype(), dt);
  } else if (op == Op::kEfficient) {
    ASSERT_EQ(aoti_torch_cuda__scaled_dot_product_efficient_attention(handle(in.dq), handle(in.dk), handle(in.dv),
                                                                      mask_p, 1, 0.0, c.causal, scale_p, &r[0], &r[1],
                                                                      &r[2], &r[3]),
              0)
        << last_error_text();
    out = take(r[0]);
    lse = take(r[1]);
    // Meta: out = empty(B, L, H, Ev).transpose(1, 2); lse [B, H, ceil(L/32)*32].
    EXPECT_EQ(out.strides(), (DimVector{L * H * Ev, Ev, H * Ev, 1}));
    const int64_t padded = (L + 31) / 32 * 32;
    EXPECT_EQ(lse.sizes(), (DimVector{B, H, padded}));
    lse = TensorImpl(lse.storage(), lse.dtype(), DimVector{B, H, L}, DimVector{H * padded, padded, 1}, 0);
    TensorImpl seed_t = take(r[2]), offset_t = take(r[3]);
    EXPECT_EQ(seed_t.dtype(), DType::kInt64);
    EXPECT_EQ(offset_t.dim(), 0);
  } else {
    ASSERT_EQ(aoti_torch_cuda__scaled_dot_product_cudnn_attention(handle(in.dq), handle(in.dk), handle(in.dv), mask_p,
                                                                  1, 0.0, c.causal, 0, scale_p, &r[0], &r[1], &r[2],
                                                                  &r[3], &ri[0], &ri[1], &r[6], &r[7], &r[8]),
              0)
        << last_error_text();
    out = take(r[0]);
    lse = take(r[1]);
    EXPECT_EQ(lse.sizes(), (DimVector{B, H, L, 1}));
    lse = TensorImpl(lse.storage(), lse.dtype(), DimVector{B, H, L}, DimVector{H * L, L, 1}, 0);
    // Meta: follows query's stride order.
    DimVector want = c.transposed_q ? permuted_strides(DimVector{B, H, L, Ev}, {0, 2, 1, 3})
                                    : contiguous_strides(DimVector{B, H, L, Ev});
    EXPECT_EQ(out.strides(), want);
    for (int i : {2, 3, 6, 7, 8}) take(r[i]);
  }
  EXPECT_EQ(out.sizes(), (DimVector{B, H, L, Ev}));
  EXPECT_EQ(out.dtype(), dt);
  EXPECT_EQ(lse.dtype(), DType::kFloat32);
  EXPECT_LE(max_scaled_error(out, host_f64(DimVector{B, H, L, Ev}, ref_out), out_atol(dt), out_atol(dt)), 1.0);
  EXPECT_LE(max_scaled_error(lse, host_f64(DimVector{B, H, L}, ref_lse), 1e-3, 1e-4), 1.0);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

std::vector<AttnCase> flash_cases() {
  return {
      {1, 1, 1, 1, 1, 16, 16, false, Mask::kNone, false, false, 0},
      {2, 4, 4, 33, 33, 64, 64, true, Mask::kNone, false, true, 0},
      {1, 8, 2, 17, 70, 128, 128, false, Mask::kNone, false, false, 0.3},   // grouped KV heads
      {1, 32, 32, 1, 512, 128, 128, false, Mask::kNone, false, false, 0},   // decode: split keys
      {2, 2, 2, 130, 130, 80, 80, true, Mask::kNone, false, true, 0},
      {1, 2, 1, 5, 300, 256, 256, false, Mask::kNone, false, false, 0},
      {1, 3, 3, 9, 1000, 32, 32, true, Mask::kNone, false, false, 0},
      // Tensor-core kernel (float16/bfloat16): a GPT-2 prefill, more queries
      // than keys, several query tiles with a partial last one.
      {1, 12, 12, 512, 512, 64, 64, true, Mask::kNone, false, true, 0},
      {2, 2, 1, 100, 60, 128, 128, true, Mask::kNone, false, false, 0},
      {1, 3, 3, 197, 197, 64, 64, false, Mask::kNone, false, false, 0},
      // Enough query tiles for the tensor-core kernel's 64-row blocks (the
      // cases above take its key-split blocks).
      {1, 8, 2, 2100, 300, 64, 64, true, Mask::kNone, false, false, 0},
      // ViT-B/16's 197 tokens in 12 heads (float32: two GEMMs around a
      // softmax); odd head dims.
      {1, 12, 12, 197, 197, 64, 64, false, Mask::kNone, false, false, 0},
      {1, 2, 2, 40, 90, 30, 30, true, Mask::kNone, false, true, 0},
      {2, 3, 3, 21, 45, 6, 6, false, Mask::kNone, false, false, 0},
      // The decode kernel: grouped KV heads, a few causal rows, a cache long
      // enough to split.
      {2, 8, 2, 1, 300, 64, 64, false, Mask::kNone, false, false, 0},
      {1, 4, 4, 3, 40, 128, 128, true, Mask::kNone, false, true, 0},
      {1, 2, 2, 1, 5000, 64, 64, false, Mask::kNone, false, false, 0},
      // One row over 16,384 keys: 64 splits, the most the merge takes.
      {1, 1, 1, 1, 16384, 128, 128, false, Mask::kNone, false, false, 0},
  };
}

std::vector<AttnCase> masked_cases() {
  return {
      {1, 2, 2, 7, 11, 32, 48, false, Mask::kAdditive, true, false, 0},
      {2, 4, 4, 20, 64, 64, 64, true, Mask::kAdditive, false, true, 0},
      {1, 4, 2, 3, 200, 128, 64, false, Mask::kBool, false, false, 0},
      {1, 16, 16, 1, 512, 64, 64, false, Mask::kAdditive, true, false, 0},  // decode with a mask
      {1, 1, 1, 40, 40, 256, 256, true, Mask::kBool, true, false, 0.1},
      {2, 2, 2, 80, 130, 128, 128, false, Mask::kBool, false, false, 0},  // tensor cores, bool mask
      {1, 4, 4, 70, 70, 64, 64, true, Mask::kAdditive, true, true, 0},     // tensor cores, additive
      {1, 2, 2, 40, 90, 30, 20, true, Mask::kBool, false, true, 0},        // Ev != E
      {2, 3, 3, 21, 45, 6, 7, false, Mask::kAdditive, false, false, 0},
      {1, 4, 2, 2, 700, 64, 64, false, Mask::kBool, false, false, 0},  // decode kernel, bool mask
      // Llama-3.2-1B's decode step: 4 query heads a key/value head in one
      // block over 32 splits, a mask broadcast over heads; then 6 rows a
      // key/value head (a block of 4 and one of 2 rows with two missing),
      // causal rows and a mask per head; 3 rows (one of 4 missing).
      {1, 32, 8, 1, 2048, 128, 128, false, Mask::kAdditive, true, false, 0},
      {2, 6, 2, 2, 1100, 128, 128, true, Mask::kBool, false, false, 0},
      {1, 12, 4, 1, 1500, 64, 64, false, Mask::kAdditive, false, false, 0},
  };
}

TEST_F(CudaAttentionTest, FlashMatchesReference) {
  uint32_t seed = 1;
  for (DType dt : {DType::kFloat32, DType::kBFloat16, DType::kFloat16})
    for (const AttnCase& c : flash_cases()) check_case(c, dt, Op::kFlash, seed++);
}

TEST_F(CudaAttentionTest, EfficientMatchesReference) {
  uint32_t seed = 100;
  for (DType dt : {DType::kFloat32, DType::kBFloat16}) {
    for (const AttnCase& c : flash_cases()) check_case(c, dt, Op::kEfficient, seed++);
    for (const AttnCase& c : masked_cases()) check_case(c, dt, Op::kEfficient, seed++);
  }
}

TEST_F(CudaAttentionTest, CudnnMatchesReference) {
  uint32_t seed = 200;
  for (DType dt : {DType::kBFloat16, DType::kFloat16, DType::kFloat32}) {
    for (const AttnCase& c : flash_cases()) check_case(c, dt, Op::kCudnn, seed++);
    for (const AttnCase& c : masked_cases()) check_case(c, dt, Op::kCudnn, seed++);
  }
}

// Masks in bands (AttnCase::band) over enough keys for the tensor-core
// kernel's tile map: the tiles it skips or takes unmasked give what the
// reference does, in its key-split blocks and its 64-row ones, with the mask
// per head or broadcast, alone or with is_causal; and decode steps over a
// static cache that is partly filled.
TEST_F(CudaAttentionTest, BandMasksMatchReference) {
  const std::vector<AttnCase> cases = {
      {1, 4, 4, 200, 330, 64, 64, false, Mask::kBool, false, false, 0, true},
      {2, 2, 2, 100, 260, 128, 128, false, Mask::kAdditive, true, false, 0, true},
      {1, 32, 8, 530, 600, 64, 64, false, Mask::kAdditive, false, false, 0, true},
      {1, 32, 32, 520, 520, 64, 64, true, Mask::kBool, true, false, 0, true},
      // Hidden with -65504: the rows hidden whole (every 97th) take every
      // key at that value; the others skip its tiles.
      {1, 32, 8, 530, 600, 64, 64, false, Mask::kAdditive, false, false, 0, true, true},
      {1, 4, 4, 200, 330, 64, 64, false, Mask::kAdditive, true, false, 0, true, true},
      // Decode steps over a cache filled to two thirds.
      {2, 8, 2, 3, 2048, 64, 64, false, Mask::kAdditive, false, false, 0, true},
      {1, 4, 4, 1, 1500, 128, 128, false, Mask::kBool, true, false, 0, true},
  };
  uint32_t seed = 900;
  for (DType dt : {DType::kBFloat16, DType::kFloat16})
    for (const AttnCase& c : cases) check_case(c, dt, Op::kEfficient, seed++);
}

// The tile map of an additive mask that hides keys with -65504: a tile of
// such values is hidden for row tiles whose rows each see a key above
// kCudaMaskRealAbove, and their blocks stop after the last tile with one;
// rows that see none keep the exact map (the tile is mixed, the end is the
// last tile that is not -inf).
TEST_F(CudaAttentionTest, MaskMapTakesLowestValuesAsHiddenForRowsThatSeeAKey) {
  const int64_t L = 40, S = 256;  // 3 row tiles (the last partial), 4 key tiles
  TensorImpl mask = host_empty(DimVector{L, S}, DType::kBFloat16);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < S; ++j) {
      // Row tile 0 sees key tile 0, row tile 1 key tiles 0-1 (row 20 one
      // key only, at -20000), row tile 2 nothing; -inf past key 192.
      double x = j >= 192 ? -std::numeric_limits<double>::infinity() : -65504.0;
      if (i < 16 && j < 64) x = 0.0;
      if (i >= 16 && i < 32 && j < 128) x = i == 20 ? (j == 70 ? -20000.0 : -65504.0) : 0.0;
      store_from_double(static_cast<char*>(mask.data_ptr()) + (i * S + j) * 2, DType::kBFloat16, x);
    }
  TensorImpl dmask = to_device(mask);
  CudaAttentionParams p;
  p.dtype = 15;
  p.batch = p.heads_q = p.heads_kv = 1;
  p.len_q = L;
  p.len_kv = S;
  p.head_dim = p.head_dim_v = 64;
  p.mask_kind = kCudaMaskAdditive;
  p.mask_dtype = 15;
  p.mask = dmask.data_ptr();
  p.mask_strides[2] = S;
  p.mask_strides[3] = 1;
  const size_t bytes = cuda_attention_mask_tiles_bytes(p);
  ASSERT_GT(bytes, 0u);
  TensorImpl ws = device_empty(DimVector{static_cast<int64_t>(bytes)}, DType::kUInt8);
  ASSERT_EQ(cuda_launch_attention_mask_tiles(p, ws.data_ptr(), nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> tiles(12), real(48);
  std::vector<int32_t> ends(3), ends_real(3);
  ASSERT_EQ(cudaMemcpy(tiles.data(), p.mask_tiles, 12, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(ends.data(), p.mask_tile_end, 12, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(ends_real.data(), p.mask_tile_end_real, 12, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(real.data(), p.mask_rows_real, 48, cudaMemcpyDeviceToHost), cudaSuccess);
  const int neg = kCudaMaskTileNegligible;
  const std::vector<uint8_t> want_tiles = {
      kCudaMaskTileShown, kCudaMaskTileMixed | neg, kCudaMaskTileMixed | neg, kCudaMaskTileHidden | neg,
      kCudaMaskTileMixed, kCudaMaskTileMixed,       kCudaMaskTileMixed | neg, kCudaMaskTileHidden | neg,
      kCudaMaskTileMixed | neg, kCudaMaskTileMixed | neg, kCudaMaskTileMixed | neg, kCudaMaskTileHidden | neg};
  EXPECT_EQ(tiles, want_tiles);
  EXPECT_EQ(ends, (std::vector<int32_t>{3, 3, 3}));
  EXPECT_EQ(ends_real, (std::vector<int32_t>{1, 2, 0}));
  for (int64_t i = 0; i < 48; ++i) EXPECT_EQ(real[i], i < 32 ? 1 : 0) << "row " << i;
}

TEST_F(CudaAttentionTest, QueryViewsIntoAFusedBufferKeepTheirStrideOrder) {
  // q, k and v as Inductor hands them over after one fused qkv projection:
  // [B, H, L, E] views into a [B, L, 3, H, E] buffer. empty_like(query) (the
  // flash and cuDNN metas) keeps that stride order: [B, L, H, E] physically.
  const int64_t B = 2, H = 2, L = 64, E = 64;
  for (DType dt : {DType::kBFloat16, DType::kFloat32}) {
    SCOPED_TRACE(dtype_name(dt));
    AttnCase c{B, H, H, L, L, E, E, true, Mask::kNone, false, false, 0};
    Inputs in = make_inputs(c, dt, 21);
    TensorImpl buffer = device_empty(DimVector{B * L * 3 * H * E}, dt);
    const DimVector view_strides{L * 3 * H * E, E, 3 * H * E, 1};
    TensorImpl views[3];
    const TensorImpl* hosts[3] = {&in.q, &in.k, &in.v};
    for (int i = 0; i < 3; ++i) {
      views[i] = TensorImpl(buffer.storage(), dt, DimVector{B, H, L, E}, view_strides, i * H * E);
      AOTIRT_ASSERT_OK(copy_tensor(views[i], *hosts[i], false));
    }
    std::vector<double> ref_out, ref_lse;
    reference(c, in, &ref_out, &ref_lse);
    const DimVector want{L * H * E, E, H * E, 1};
    const double tol = out_atol(dt);

    AtenTensorHandle r[9] = {};
    int64_t ri[2];
    ASSERT_EQ(aoti_torch_cuda__scaled_dot_product_flash_attention(handle(views[0]), handle(views[1]), handle(views[2]),
                                                                  0.0, 1, 0, nullptr, &r[0], &r[1], &r[2], &r[3],
                                                                  &ri[0], &ri[1], &r[6], &r[7], &r[8]),
              0)
        << last_error_text();
    TensorImpl out = take(r[0]);
    EXPECT_EQ(out.strides(), want);
    EXPECT_LE(max_scaled_error(out, host_f64(DimVector{B, H, L, E}, ref_out), tol, tol), 1.0);
    for (int i : {1, 2, 3, 6, 7, 8}) take(r[i]);

    ASSERT_EQ(aoti_torch_cuda__scaled_dot_product_cudnn_attention(handle(views[0]), handle(views[1]), handle(views[2]),
                                                                  nullptr, 1, 0.0, 1, 0, nullptr, &r[0], &r[1], &r[2],
                                                                  &r[3], &ri[0], &ri[1], &r[6], &r[7], &r[8]),
              0)
        << last_error_text();
    out = take(r[0]);
    EXPECT_EQ(out.strides(), want);
    EXPECT_LE(max_scaled_error(out, host_f64(DimVector{B, H, L, E}, ref_out), tol, tol), 1.0);
    for (int i : {1, 2, 3, 6, 7, 8}) take(r[i]);
  }
}

TEST_F(CudaAttentionTest, FullyMaskedRowsGiveZeros) {
  AttnCase c{1, 1, 1, 4, 8, 16, 16, false, Mask::kBool, true, false, 0};
  Inputs in = make_inputs(c, DType::kFloat32, 5);
  uint8_t* m = static_cast<uint8_t*>(in.mask.data_ptr());
  for (int j = 0; j < 8; ++j) m[2 * 8 + j] = 0;  // row 2 sees nothing
  in.dmask = to_device(in.mask);
  OwnedHandle mask_h(in.dmask);
  AtenTensorHandle mask_raw = mask_h;
  AtenTensorHandle r[4] = {};
  ASSERT_EQ(aoti_torch_cuda__scaled_dot_product_efficient_attention(handle(in.dq), handle(in.dk), handle(in.dv),
                                                                    &mask_raw, 1, 0.0, 0, nullptr, &r[0], &r[1], &r[2],
                                                                    &r[3]),
            0)
      << last_error_text();
  std::vector<double> out = values(take(r[0]));
  for (int d = 0; d < 16; ++d) EXPECT_EQ(out[2 * 16 + d], 0.0);
  for (double v : out) EXPECT_FALSE(std::isnan(v));
  take(r[1]);
  take(r[2]);
  take(r[3]);
}

TEST_F(CudaAttentionTest, LogSumExpCanBeSkipped) {
  AttnCase c{1, 2, 2, 5, 6, 16, 16, false, Mask::kNone, false, false, 0};
  Inputs in = make_inputs(c, DType::kFloat32, 6);
  AtenTensorHandle r[4] = {};
  ASSERT_EQ(aoti_torch_cuda__scaled_dot_product_efficient_attention(handle(in.dq), handle(in.dk), handle(in.dv),
                                                                    nullptr, 0, 0.0, 0, nullptr, &r[0], &r[1], &r[2],
                                                                    &r[3]),
            0);
  EXPECT_EQ(take(r[1]).sizes(), (DimVector{1, 2, 0}));
  take(r[0]);
  take(r[2]);
  take(r[3]);
}

// The cases above must reach the tensor-core kernel where they are meant to:
// a change to its eligibility would otherwise send them all to the general
// kernel unnoticed.
TEST(CudaAttentionKernelChoice, PrefillsInHalfPrecisionUseTensorCores) {
  CudaAttentionParams p;
  alignas(16) static char buf[64];
  p.dtype = 15;
  p.q = p.k = p.v = buf;
  p.batch = 1;
  p.heads_q = p.heads_kv = 12;
  p.len_q = p.len_kv = 512;
  p.head_dim = p.head_dim_v = 64;
  const int64_t fused[4] = {512 * 2304, 64, 2304, 1};  // GPT-2's q, k, v: views into one [L, 3 * 768] buffer
  for (int i = 0; i < 4; ++i) p.q_strides[i] = p.k_strides[i] = p.v_strides[i] = fused[i];
  EXPECT_TRUE(cuda_attention_tc_eligible(p, 9));
  EXPECT_FALSE(cuda_attention_tc_eligible(p, 7));  // no mma.sync bf16 before sm_80
  CudaAttentionParams q = p;
  q.dtype = 6;
  EXPECT_FALSE(cuda_attention_tc_eligible(q, 9));
  q = p;
  q.len_q = 1;  // decode: the general kernel splits the keys
  EXPECT_FALSE(cuda_attention_tc_eligible(q, 9));
  q = p;
  q.head_dim = q.head_dim_v = 80;
  EXPECT_FALSE(cuda_attention_tc_eligible(q, 9));
  q = p;
  q.k_strides[2] = 2303;  // rows not 16-byte aligned
  EXPECT_FALSE(cuda_attention_tc_eligible(q, 9));
  q = p;
  q.v_strides[3] = 2;  // features not contiguous
  EXPECT_FALSE(cuda_attention_tc_eligible(q, 9));
}

// Key splits for the fused kernel: as many as fill 4 blocks per SM, in whole
// key tiles.
TEST(CudaAttentionKernelChoice, KeysSplitWhenQueryTilesAreFew) {
  auto splits = [](int64_t heads, int64_t len_q, int64_t len_kv) {
    CudaAttentionParams p;
    p.batch = 1;
    p.heads_q = p.heads_kv = heads;
    p.len_q = len_q;
    p.len_kv = len_kv;
    p.head_dim = p.head_dim_v = 64;
    return cuda_attention_key_splits(p, 132);
  };
  EXPECT_EQ(splits(12, 1, 513), 17);  // GPT-2 decode: 12 one-row blocks
  EXPECT_EQ(splits(32, 1, 512), 16);
  EXPECT_EQ(splits(12, 197, 197), 4);  // 156 blocks of 16 rows
  EXPECT_EQ(splits(3, 9, 1000), 32);
  EXPECT_EQ(splits(2, 20, 250), 8);
  EXPECT_EQ(splits(12, 700, 700), 1);  // 528 blocks: enough
  EXPECT_EQ(splits(1, 1, 64), 1);      // too few keys to split
  EXPECT_EQ(splits(0, 1, 512), 1);
}

// A decode step (up to 4 query rows, head dim 64 or 128, 16-byte rows) takes
// the decode kernel, one block per key/value head's query rows (up to 4 a
// block), split for caches over 2048 keys and, from 1024 keys or with
// several rows a block, until the blocks fill the SMs twice, in whole
// passes of 64 keys.
TEST(CudaAttentionKernelChoice, DecodeStepsUseTheDecodeKernel) {
  CudaAttentionParams p;
  p.dtype = 15;
  p.batch = 1;
  p.heads_q = p.heads_kv = 12;
  p.len_q = 1;
  p.len_kv = 513;
  p.head_dim = p.head_dim_v = 64;
  const int64_t st[4] = {12 * 1024 * 64, 1024 * 64, 64, 1};  // GPT-2's static cache
  for (int i = 0; i < 4; ++i) p.q_strides[i] = p.k_strides[i] = p.v_strides[i] = p.out_strides[i] = st[i];
  EXPECT_TRUE(cuda_attention_decode_eligible(p));
  EXPECT_EQ(cuda_attention_decode_rows_per_block(p), 1);
  EXPECT_EQ(cuda_attention_decode_blocks(p), 12);
  EXPECT_EQ(cuda_attention_key_splits(p, 132), 1);
  CudaAttentionParams q = p;
  q.len_kv = 5000;
  EXPECT_EQ(cuda_attention_key_splits(q, 132), 20);  // 12 blocks: 22 splits fill the SMs, 20 of 256 keys
  q.len_kv = 1023;
  EXPECT_EQ(cuda_attention_key_splits(q, 132), 1);  // short: one block per row
  // Llama-3.2-1B's decode step on a static cache of 2048: the 4 query heads
  // of each of 8 key/value heads in one block, 32 splits of 64 keys.
  CudaAttentionParams l = p;
  l.heads_q = 32;
  l.heads_kv = 8;
  l.len_kv = 2048;
  EXPECT_EQ(cuda_attention_decode_rows_per_block(l), 4);
  EXPECT_EQ(cuda_attention_decode_blocks(l), 8);
  EXPECT_EQ(cuda_attention_key_splits(l, 132), 32);
  l.len_kv = 8192;  // 33 would fill the SMs: 32 of 256 keys
  EXPECT_EQ(cuda_attention_key_splits(l, 132), 32);
  l.len_kv = 300;  // several rows a block: split even under 1024 keys
  EXPECT_EQ(cuda_attention_key_splits(l, 132), 3);  // 4 of 64+ keys, in whole passes: 3 of 128
  // 3 query heads a key/value head and 2 queries: 6 rows, blocks of 4 and 2.
  l.heads_q = 6;
  l.heads_kv = 2;
  l.len_q = 2;
  l.batch = 3;
  EXPECT_EQ(cuda_attention_decode_rows_per_block(l), 4);
  EXPECT_EQ(cuda_attention_decode_blocks(l), 12);
  l.heads_q = 2;
  l.len_q = 1;
  EXPECT_EQ(cuda_attention_decode_rows_per_block(l), 1);
  l.heads_q = 4;
  EXPECT_EQ(cuda_attention_decode_rows_per_block(l), 2);
  q = p;
  q.len_q = 5;  // more rows: the general kernel
  EXPECT_FALSE(cuda_attention_decode_eligible(q));
  q = p;
  q.head_dim = q.head_dim_v = 80;
  EXPECT_FALSE(cuda_attention_decode_eligible(q));
  q = p;
  q.head_dim_v = 128;
  EXPECT_FALSE(cuda_attention_decode_eligible(q));
  q = p;
  q.k_strides[2] = 68;  // bfloat16 rows 136 bytes apart: not 16-byte aligned
  EXPECT_FALSE(cuda_attention_decode_eligible(q));
  q = p;
  q.v_strides[3] = 2;
  EXPECT_FALSE(cuda_attention_decode_eligible(q));
  q = p;
  q.q = reinterpret_cast<const void*>(uintptr_t{8});
  EXPECT_FALSE(cuda_attention_decode_eligible(q));
  q = p;
  q.dtype = 6;
  q.k_strides[2] = 68;  // float32 rows 272 bytes apart: fine
  EXPECT_TRUE(cuda_attention_decode_eligible(q));
}

// float32 attention over many queries with head dim 64 takes the float32
// tensor-core kernel, other head dims the GEMM path; the cases above reach
// both (and the fused kernel where they are meant to).
TEST(CudaAttentionKernelChoice, Float32PrefillsUseTensorCoresOrGemms) {
  CudaAttentionParams p;
  p.dtype = 6;
  p.batch = 1;
  p.heads_q = p.heads_kv = 12;
  p.len_q = p.len_kv = 197;
  p.head_dim = p.head_dim_v = 64;
  const int64_t fused[4] = {197 * 2304, 64, 2304, 1};  // ViT's q, k, v: views into one [L, 3 * 768] buffer
  for (int i = 0; i < 4; ++i) p.q_strides[i] = p.k_strides[i] = p.v_strides[i] = fused[i];
  const int64_t out[4] = {197 * 768, 64, 768, 1};  // efficient attention's [B, L, H, Ev] output, transposed
  for (int i = 0; i < 4; ++i) p.out_strides[i] = out[i];
  EXPECT_TRUE(cuda_attention_f32_tc_eligible(p, 9));
  EXPECT_FALSE(cuda_attention_f32_tc_eligible(p, 7));  // no TF32 mma.sync before sm_80
  EXPECT_TRUE(cuda_attention_gemm_eligible(p));
  CudaAttentionParams q = p;
  q.head_dim = q.head_dim_v = 80;  // the GEMM path
  EXPECT_FALSE(cuda_attention_f32_tc_eligible(q, 9));
  EXPECT_TRUE(cuda_attention_gemm_eligible(q));
  q = p;
  q.k_strides[2] = 2302;  // rows not 16-byte aligned
  EXPECT_FALSE(cuda_attention_f32_tc_eligible(q, 9));
  q = p;
  q.len_q = 8;  // few queries: the fused kernel
  EXPECT_FALSE(cuda_attention_f32_tc_eligible(q, 9));
  q = p;
  q.heads_kv = 4;  // grouped KV heads: the tensor-core kernel maps them
  EXPECT_TRUE(cuda_attention_f32_tc_eligible(q, 9));
  q = p;
  q.dtype = 15;  // half precision: tensor-core kernel
  EXPECT_FALSE(cuda_attention_gemm_eligible(q));
  EXPECT_FALSE(cuda_attention_f32_tc_eligible(q, 9));
  q = p;
  q.len_q = 1;  // decode: the fused kernel with key splits
  EXPECT_FALSE(cuda_attention_gemm_eligible(q));
  q = p;
  q.heads_kv = 4;  // grouped KV heads
  EXPECT_FALSE(cuda_attention_gemm_eligible(q));
  q = p;
  q.v_strides[3] = 2;  // features not contiguous
  EXPECT_FALSE(cuda_attention_gemm_eligible(q));
  q = p;
  q.batch = 64;
  q.len_q = q.len_kv = 4096;  // a score buffer over the limit
  EXPECT_FALSE(cuda_attention_gemm_eligible(q));
  EXPECT_EQ(cuda_attention_scores_ld(197), 200);
}

TEST_F(CudaAttentionTest, UnsupportedArgumentsFailCleanly) {
  AttnCase c{1, 2, 2, 4, 4, 16, 16, false, Mask::kNone, false, false, 0};
  Inputs in = make_inputs(c, DType::kFloat32, 7);
  AtenTensorHandle r[9] = {};
  int64_t ri[2];
  EXPECT_EQ(aoti_torch_cuda__scaled_dot_product_flash_attention(handle(in.dq), handle(in.dk), handle(in.dv), 0.1, 0,
                                                                0, nullptr, &r[0], &r[1], &r[2], &r[3], &ri[0], &ri[1],
                                                                &r[6], &r[7], &r[8]),
            1);
  EXPECT_NE(last_error_text().find("dropout"), std::string::npos) << last_error_text();
  Inputs big = make_inputs({1, 1, 1, 2, 2, 300, 300, false, Mask::kNone, false, false, 0}, DType::kFloat32, 8);
  EXPECT_EQ(aoti_torch_cuda__scaled_dot_product_efficient_attention(handle(big.dq), handle(big.dk), handle(big.dv),
                                                                    nullptr, 1, 0.0, 0, nullptr, &r[0], &r[1], &r[2],
                                                                    &r[3]),
            1);
  EXPECT_NE(last_error_text().find("UNIMPLEMENTED"), std::string::npos) << last_error_text();
  TensorImpl k3 = device_empty(DimVector{1, 3, 4, 16}, DType::kFloat32);  // 2 query heads over 3 KV heads
  EXPECT_EQ(aoti_torch_cuda__scaled_dot_product_efficient_attention(handle(in.dq), handle(k3), handle(k3), nullptr, 1,
                                                                    0.0, 0, nullptr, &r[0], &r[1], &r[2], &r[3]),
            1);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace
}  // namespace aotirt
