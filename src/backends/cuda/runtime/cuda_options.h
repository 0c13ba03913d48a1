// The CUDA backend's switches, read from the environment once, at first use,
// and nowhere else in the backend. docs/cuda.md ("Switches") lists them:
// the user-facing ones, and AOTIRT_CUDA_DISABLE, a comma-separated list of
// aotirt's own kernels and paths to turn off when debugging.
#pragma once

#include <cstdint>
#include <string>

namespace aotirt {

// Which library runs a family of ops.
enum class CudaLibraryChoice {
  kAuto,    // aotirt's kernels where they are measured faster or spare a library's memory
  kAotirt,  // aotirt's kernels wherever they take the problem
  kVendor,  // cuDNN for convolutions, cuBLASLt for GEMMs
};

// What AOTIRT_CUDA_DISABLE may name.
enum class CudaFeature : uint32_t {
  kPatchConv = 1u << 0,          // patch_conv: patch embeddings as a copy and one GEMM
  kConvSm90 = 1u << 1,           // conv_sm90: Hopper implicit-GEMM convolutions
  kConvGemm = 1u << 2,           // conv_gemm: 1x1 convolutions as GEMMs
  kConvStem = 1u << 3,           // conv_stem: the stem kernel for 1-4 channels
  kConvParallelSplit = 1u << 4,  // conv_parallel_split: channel splits summed in a workspace
  kPdl = 1u << 5,                // pdl: dependent launches (convolutions, few-row and int4 products, decode attention)
  kBf16Sm90 = 1u << 6,           // bf16_sm90: Hopper bfloat16 GEMM kernels
  kAttentionTc = 1u << 7,        // attention_tc: tensor-core attention kernels
  kAttentionGemm = 1u << 8,      // attention_gemm: float32 attention as two GEMMs
  kL2Prefetch = 1u << 9,         // l2_prefetch: weights read into L2 while a graph is recorded
  kCudnnGraph = 1u << 10,        // cudnn_graph: cuDNN's graph API (the legacy API instead)
  kUpload = 1u << 11,            // upload: threaded weight uploads (the library's own copies instead)
  kUploadThreshold = 1u << 12,   // upload_threshold: small blobs skip the upload (so every blob takes it)
};

struct CudaOptions {
  // AOTIRT_CUDA_ALLOW_TF32: -1 unset (PyTorch's defaults: TF32 convolutions,
  // strict float32 matmuls), 0 strict everywhere, 1 TF32 everywhere.
  int allow_tf32 = -1;
  CudaLibraryChoice conv = CudaLibraryChoice::kAuto;  // AOTIRT_CUDA_CONV=auto|aotirt|cudnn
  CudaLibraryChoice gemm = CudaLibraryChoice::kAuto;  // AOTIRT_CUDA_GEMM=auto|aotirt|cublaslt
  bool op_replay = true;                              // AOTIRT_CUDA_OP_REPLAY=0 turns replays off
  bool allow_arch_mismatch = false;                   // AOTIRT_CUDA_ALLOW_ARCH_MISMATCH=1
  // AOTIRT_CUBLASLT_LIBRARY, AOTIRT_CUDNN_LIBRARY, AOTIRT_CUFFT_LIBRARY,
  // AOTIRT_CUSOLVER_LIBRARY, AOTIRT_CUBLAS_LIBRARY: empty for the names
  // aotirt was built against (cuda_symbols.h).
  std::string cublaslt_library, cudnn_library, cufft_library, cusolver_library, cublas_library;
  uint32_t disabled = 0;  // AOTIRT_CUDA_DISABLE
  // The random ops' seed as given (AOTIRT_SEED, the CPU backend's too;
  // empty: a random one); ops::parse_random_seed reads it.
  std::string random_seed;

  bool enabled(CudaFeature f) const { return (disabled & static_cast<uint32_t>(f)) == 0; }

  // The options |get| describes (a getenv-like lookup); unknown values and
  // names are warned about and ignored.
  static CudaOptions parse(const char* (*get)(const char* name));
};

// The process's options, parsed from the environment on first use.
const CudaOptions& cuda_options();
// Replaces them (null: back to the environment's). Tests only; not while ops run.
void set_cuda_options_for_testing(const CudaOptions* options);

}  // namespace aotirt
