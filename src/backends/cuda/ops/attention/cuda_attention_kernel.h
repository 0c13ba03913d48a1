// Launchers for aotirt's scaled-dot-product attention kernels: online softmax
// over key tiles with float32 accumulation, causal (top-left) and
// bool/additive masks, grouped KV heads. The general kernel
// (cuda_attention.cu) takes head dims up to 256 and any strides, and can split
// the keys across blocks for short queries; a decode kernel takes a few query
// rows with head dim 64 or 128 and 16-byte rows; the tensor-core kernel
// (cuda_attention_tc.cu) takes float16/bfloat16 prefills with head dim 64 or
// 128 and float32 ones with head dim 64; other float32 prefills go through
// cuBLASLt around the softmax kernel here.
// Plain C++ types only; cuda_attention.cpp builds the parameters.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/launch/cuda_kernel_occupancy.h"

namespace aotirt {

constexpr int kCudaAttentionMaxHeadDim = 256;

enum CudaAttentionMask : int { kCudaMaskNone = 0, kCudaMaskBool = 1, kCudaMaskAdditive = 2 };

struct CudaAttentionParams {
  int dtype = 6;  // of q, k, v and out: c10 numbers, float32 (6), float16 (5) or bfloat16 (15)
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  int64_t batch = 0, heads_q = 0, heads_kv = 0, len_q = 0, len_kv = 0, head_dim = 0, head_dim_v = 0;
  // Element strides of [batch, head, position, feature].
  int64_t q_strides[4] = {}, k_strides[4] = {}, v_strides[4] = {}, out_strides[4] = {};
  float scale = 1.f;
  bool causal = false;  // query i sees keys 0..i + causal_offset
  // 0: the diagonal from the top-left corner (SDPA's is_causal); len_kv -
  // len_q: from the bottom-right one (flash attention's). Never negative, so
  // every query sees at least one key.
  int64_t causal_offset = 0;
  int mask_kind = kCudaMaskNone;
  int mask_dtype = 6;  // additive masks: float32, float16 or bfloat16
  const void* mask = nullptr;
  int64_t mask_strides[4] = {};  // [batch, head_q, query, key], 0 where it broadcasts
  float* lse = nullptr;          // optional log-sum-exp per [batch, head_q, query]
  int64_t lse_strides[3] = {};
  // Optional, for the tensor-core kernels with a mask (made by
  // cuda_launch_attention_mask_tiles): what the mask does to each tile of
  // kCudaMaskTileRows queries and kCudaMaskTileKeys keys (a CudaMaskTile),
  // indexed [batch, head_q, row tile, key tile] by mask_tile_strides (0 where
  // the mask broadcasts; key tiles contiguous), and per [batch, head_q, row
  // tile] (mask_end_strides) the key tiles up to the last one that shows a
  // key. Blocks stop there and skip the tiles that hide every key.
  // With them, per query row (mask_row_strides; each [batch, head_q] run of
  // rows padded to whole row tiles) whether it sees a key above
  // kCudaMaskRealAbove, and per row tile the key tiles up to the last one
  // with such a key (mask_tile_end_real, strided as mask_tile_end).
  const uint8_t* mask_tiles = nullptr;
  int64_t mask_tile_strides[3] = {};
  const int32_t* mask_tile_end = nullptr;
  const int32_t* mask_tile_end_real = nullptr;
  int64_t mask_end_strides[3] = {};
  const uint8_t* mask_rows_real = nullptr;
  int64_t mask_row_strides[3] = {};
  // Key splits (1 = none). With more, the caller provides |num_splits| *
  // batch * heads_q * len_q * (head_dim_v + 1) floats of workspace.
  int num_splits = 1;
  float* workspace = nullptr;
  // Decode kernel (Hopper and later): launched with programmatic dependent
  // launch, it and its split merge start while the kernel ahead finishes
  // and wait for it before their first load; each lets the kernel after it
  // start early (cuda_dependent_launch.h).
  bool dependent_launch = false;
};

// The mask's tile map (CudaAttentionParams::mask_tiles).
constexpr int kCudaMaskTileRows = 16;
constexpr int kCudaMaskTileKeys = 64;
enum CudaMaskTile : uint8_t {
  kCudaMaskTileHidden = 0,  // no query of the tile sees a key of it
  kCudaMaskTileShown = 1,   // each sees each, unchanged (true; an additive 0)
  kCudaMaskTileMixed = 2,   // anything else: the keys are tested one by one
  // Or-ed into the above: every value is kCudaMaskNegligible or less.
  kCudaMaskTileNegligible = 4,
};
// Additive masks often hide a key with a finite value rather than -inf
// (torch's lowering for cuDNN's attention turns a boolean mask's false into
// -65504; other code uses the dtype's lowest). Such a key adds exactly
// nothing to a row that sees a key above kCudaMaskRealAbove: its exponent
// is over 32000 below that key's (less the scores' spread), far past where
// float32's exp reaches 0. So for rows that all see such a key the kernels
// take a tile of values at kCudaMaskNegligible or less as hidden; a row
// that sees none (every key hidden so) gets the exact sums.
constexpr float kCudaMaskNegligible = -65504.f;
constexpr float kCudaMaskRealAbove = kCudaMaskNegligible / 2;

// Bytes of the tile map for |p| (4-byte aligned); 0 when no map is worth
// making (no mask, or a single tile of keys).
size_t cuda_attention_mask_tiles_bytes(const CudaAttentionParams& p);
// Fills the tile map in |workspace| (cuda_attention_mask_tiles_bytes(p)
// bytes) from p's mask and points p's map fields at it.
cudaError_t cuda_launch_attention_mask_tiles(CudaAttentionParams& p, void* workspace, cudaStream_t stream);

// Keys each block handles per step; splits cover multiples of it.
constexpr int kCudaAttentionKeyTile = 32;

// float32 attention with many queries runs as two cuBLASLt GEMMs around a
// softmax kernel (q . k into a [B, H, L, S] float32 score buffer, softmax in
// place, then probabilities . v into the output): the GEMMs keep the SMs busy
// where one block per query tile of the fused kernel would not. Eligible:
// float32, at least kCudaAttentionGemmMinQueries queries, as many KV heads as
// query heads, contiguous features, and a score buffer of at most
// kCudaAttentionGemmMaxScores floats.
constexpr int64_t kCudaAttentionGemmMinQueries = 16;
constexpr int64_t kCudaAttentionGemmMaxScores = int64_t{1} << 26;
bool cuda_attention_gemm_eligible(const CudaAttentionParams& p);
// Row stride (floats) of the score buffer for |len_kv| keys.
int64_t cuda_attention_scores_ld(int64_t len_kv);
// Softmax of |scores| ([B, H, L] rows of |ld| floats holding q . k) in place,
// with |p|'s scale, causal flag and mask; writes p.lse when set.
cudaError_t cuda_launch_attention_softmax(const CudaAttentionParams& p, float* scores, int64_t ld,
                                          cudaStream_t stream);

// A few query rows against many keys (a decode step) with head dim 64 or 128
// (== head_dim_v), contiguous features and 16-byte aligned rows: a kernel of
// its own (one block per key/value head's query rows, up to 4 of them, and
// key split; 16-byte loads, no shared-memory tiles).
constexpr int64_t kCudaAttentionDecodeMaxQueries = 4;
constexpr int64_t kCudaAttentionDecodeKeysPerBlock = 2048;
// One-row blocks over caches of at least this many keys, and blocks of
// several rows over any cache, also split to fill the SMs, into whole
// passes of kCudaAttentionDecodePassKeys keys.
constexpr int64_t kCudaAttentionDecodeSplitMinKeys = 1024;
constexpr int64_t kCudaAttentionDecodePassKeys = 64;
bool cuda_attention_decode_eligible(const CudaAttentionParams& p);
// Query rows (1, 2 or 4) one decode block serves, all of one key/value
// head, and the decode kernel's blocks per key split.
int cuda_attention_decode_rows_per_block(const CudaAttentionParams& p);
int64_t cuda_attention_decode_blocks(const CudaAttentionParams& p);

// Key splits for |p| on a GPU with |sm_count| SMs (1: none); the launcher
// expects num_splits set to this, with its workspace.
int cuda_attention_key_splits(const CudaAttentionParams& p, int sm_count);

// Queues the attention on |stream|. |max_smem| is the device's opt-in shared
// memory per block.
cudaError_t cuda_launch_attention(const CudaAttentionParams& p, size_t max_smem, cudaStream_t stream);

// Query rows one block handles for |len_q| queries (to size the grid).
int cuda_attention_rows_per_block(int64_t len_q);

// Queries from which the tensor-core kernel is used (shorter: the general
// kernel with key splits keeps more SMs busy).
constexpr int64_t kCudaAttentionTcMinQueries = 16;

// Whether the tensor-core kernel takes |p| on a GPU of compute capability
// |compute_major|.x: float16 or bfloat16, head_dim == head_dim_v in {64, 128},
// no key splits, at least kCudaAttentionTcMinQueries queries, at most 65535
// (batch, head) pairs (grid y), and q, k, v with contiguous features and
// 16-byte aligned rows.
bool cuda_attention_tc_eligible(const CudaAttentionParams& p, int compute_major);
// |sm_count| sizes the blocks (smaller when few query tiles would leave SMs idle).
cudaError_t cuda_launch_attention_tc(const CudaAttentionParams& p, int sm_count, size_t max_smem,
                                     cudaStream_t stream);

// float32 on tensor cores at float32 accuracy (each value split into two
// TF32 parts, three products per pair): head_dim == head_dim_v == 64, at
// least kCudaAttentionTcMinQueries queries, no key splits, 16-byte aligned
// rows with contiguous features, compute capability 8.0 or newer.
bool cuda_attention_f32_tc_eligible(const CudaAttentionParams& p, int compute_major);
cudaError_t cuda_launch_attention_f32_tc(const CudaAttentionParams& p, size_t max_smem, cudaStream_t stream);

// Over a contiguous float32 logsumexp of |rows| rows of |padded_len|, whose
// first |len| entries the attention wrote: sets the rest to +inf and, with
// |masked_to_zero|, the -inf of fully masked queries to 0, as torch's
// memory-efficient kernel leaves them (cuda_attention_lse.cu).
cudaError_t cuda_launch_attention_lse_finish(float* lse, int64_t rows, int64_t len, int64_t padded_len,
                                             bool masked_to_zero, cudaStream_t stream);

}  // namespace aotirt
