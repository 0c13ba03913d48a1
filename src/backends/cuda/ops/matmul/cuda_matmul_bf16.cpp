// bfloat16 GEMMs on aotirt's own kernels (cuda_gemm_bf16.h): the few-row
// kernel for up to eight rows, CUTLASS's tensor-core kernels (Hopper's and
// Ampere's) for larger products of one batch, each problem's kernel and
// split chosen once per device; launches are replayed (cuda_op_replay.h).
#include <array>
#include <memory>
#include <vector>

#include "backends/cuda/ops/matmul/cuda_gemm_bf16.h"
#include "backends/cuda/ops/matmul/cuda_matmul_impl.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/launch/cuda_kernel_table.h"
#include "backends/cuda/launch/cuda_op_replay.h"
#include "base/status.h"
#include "shim/common/shim_profile.h"

namespace aotirt {
namespace {

// Where bfloat16 GEMMs run (AOTIRT_CUDA_GEMM):
// - auto (the default): products of up to eight rows on the few-row kernel;
//   larger ones, on a GPU that runs CUTLASS's Hopper kernels (sm_90a;
//   AOTIRT_CUDA_DISABLE=bf16_sm90 leaves them out), on those or the Ampere
//   ones, as cuda_bf16_choose models them, so a bfloat16 package loads no
//   cuBLASLt; on other GPUs on cuBLASLt, whose Hopper kernels beat CUTLASS's
//   Ampere ones there by about two to one. Products of kCudaBf16VendorRows
//   rows or more go to cuBLASLt wherever it opens (bf16_prefers_cublaslt).
// - aotirt: larger ones on CUTLASS's kernels on any GPU, so that no
//   bfloat16 GEMM loads cuBLASLt (and the host memory it holds), at that
//   cost in speed where no Hopper kernel runs.
// - cublaslt: all on cuBLASLt.
enum class Bf16Mode { kAuto, kAotirt, kCublaslt };
Bf16Mode bf16_mode() {
  switch (cuda_options().gemm) {
    case CudaLibraryChoice::kVendor: return Bf16Mode::kCublaslt;
    case CudaLibraryChoice::kAotirt: return Bf16Mode::kAotirt;
    case CudaLibraryChoice::kAuto: break;
  }
  return Bf16Mode::kAuto;
}

bool bf16_sm90_enabled() { return cuda_options().enabled(CudaFeature::kBf16Sm90); }

// The bfloat16 tensor-core kernels that run on a device.
const KernelTable<CudaBf16Config>& bf16_device(int device) {
  return kernel_table<CudaBf16Config, cuda_bf16_config_count, cuda_bf16_config, cuda_bf16_blocks_per_sm>(
      device, "no bfloat16 tensor-core GEMM kernels (bfloat16 GEMMs over 8 rows on cuBLASLt)");
}

// Of |bd|'s configs, those the chooser may take: the Hopper ones while
// enabled, the Ampere ones beside them (each leads on some of GPT-2's
// prefill products) or when asked for (mode aotirt). Where no Hopper kernel
// runs, products of more than eight rows stay on cuBLASLt by default.
std::vector<CudaBf16Config> bf16_candidates(const KernelTable<CudaBf16Config>& bd) {
  std::vector<CudaBf16Config> out = bd.configs;
  bool hopper = false;
  for (const CudaBf16Config& c : out) hopper = hopper || (c.sm90 && bf16_sm90_enabled());
  for (CudaBf16Config& c : out) {
    const bool allowed = c.sm90 ? bf16_sm90_enabled() : hopper || bf16_mode() == Bf16Mode::kAotirt;
    if (!allowed) c.tile_m = c.tile_n = 0;  // the chooser skips empty tiles
  }
  return out;
}

struct Bf16Plan {
  bool gemv = false;  // the few-row kernel, else tensor-core kernel |index|
  // The few-row kernel with programmatic dependent launch (Hopper and later,
  // unless AOTIRT_CUDA_DISABLE names pdl): its weight loads overlap the end
  // of the kernel ahead of it.
  bool dependent_launch = false;
  int index = -1;
  int split = 1;
  size_t workspace_bytes = 0;  // a split's float32 slices, or what a Hopper kernel's scheduler asks for
  CudaOpReplay replay{"aoti_torch_cuda_*mm_out / bfloat16 kernel replay"};
};

using Bf16PlanCache = CudaPlanCache<std::array<int64_t, 11>, Bf16Plan>;

Result<std::shared_ptr<Bf16Plan>> bf16_plan(int device, const CudaBf16Problem& p, int out_align) {
  const int64_t source = !p.c ? 0 : p.ldc == 0 ? 1 : 2;
  const bool aligned_ab = aligned16(p.a) && aligned16(p.b);
  const std::array<int64_t, 11> key = {device, p.m, p.n, p.k, p.lda, p.ldb, p.ldc, p.ldd, source, out_align,
                                       p.b_row_major * 2 + aligned_ab};
  AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
  Bf16PlanCache& cache = dev->op_caches().get<Bf16PlanCache>(
      [] { return std::make_unique<Bf16PlanCache>("bfloat16 GEMM plans", kMatmulMaxPlans); });
  return cache.get(key, [&]() -> Result<std::shared_ptr<Bf16Plan>> {
    std::shared_ptr<Bf16Plan> plan;
    if (p.m <= kCudaBf16GemvMaxRows) {
      plan = std::make_shared<Bf16Plan>();
      plan->gemv = true;
      plan->dependent_launch = cuda_dependent_launches(*dev);
    } else if (aligned_ab && p.lda % kCudaBf16KMultiple == 0 && p.ldb % kCudaBf16KMultiple == 0) {
      const KernelTable<CudaBf16Config>& bd = bf16_device(device);
      const std::vector<CudaBf16Config> candidates = bf16_candidates(bd);
      const CudaBf16Choice choice =
          cuda_bf16_choose(p, out_align, bd.sm_count, candidates.data(), static_cast<int>(candidates.size()));
      size_t bytes = 0;
      if (choice.config >= 0 &&
          cuda_bf16_workspace_bytes(bd.index[choice.config], p, choice.split, &bytes) == cudaSuccess) {
        plan = std::make_shared<Bf16Plan>();
        plan->index = bd.index[choice.config];
        plan->split = choice.split;
        plan->workspace_bytes = bytes;
      }
    }
    return plan;
  });
}

}  // namespace

bool bf16_on_cublaslt() { return bf16_mode() == Bf16Mode::kCublaslt; }

bool bf16_prefers_cublaslt(const LtGemm& g) {
  if (g.dtype != DType::kBFloat16 || g.batch != 1 || bf16_mode() != Bf16Mode::kAuto) return false;
  return own_problem<CudaBf16Problem, void>(g).m >= kCudaBf16VendorRows;
}

// As f32x3_gemm, for bfloat16 products of one batch.
Result<bool> bf16_gemm(int device, cudaStream_t stream, const LtGemm& g, bool dry_run) {
  if (g.dtype != DType::kBFloat16 || g.tb || g.batch != 1 || bf16_mode() == Bf16Mode::kCublaslt || !fits_int(g))
    return false;
  const CudaBf16Problem p = own_problem<CudaBf16Problem, void>(g);
  const bool out_aligned = aligned16(p.d) && p.ldd % 8 == 0 && (!g.bias || aligned16(g.bias));
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<Bf16Plan> plan, bf16_plan(device, p, out_aligned ? 8 : 1));
  if (!plan) return false;
  if (dry_run) return true;
  TensorImpl graph_ws;
  float* ws = nullptr;
  if (plan->workspace_bytes > 0) {
    AOTIRT_ASSIGN_OR_RETURN(void* w, cuda_op_workspace(device, stream, plan->workspace_bytes, &graph_ws));
    ws = static_cast<float*>(w);
  }
  const CudaReplayKey replay_key = own_replay_key(p, ws);
  AOTIRT_RETURN_IF_ERROR(plan->replay.run(device, replay_key, stream, [&](cudaStream_t s) -> Status {
    if (plan->gemv) {
      ShimProfileScope profile("aoti_torch_cuda_*mm_out / few-row bfloat16 kernel launch");
      AOTIRT_CUDA_RETURN_IF_ERROR(cuda_bf16_gemv_rows_launch(p, s, plan->dependent_launch));
    } else {
      ShimProfileScope profile("aoti_torch_cuda_*mm_out / bfloat16 tensor-core kernel launch");
      AOTIRT_CUDA_RETURN_IF_ERROR(cuda_bf16_launch(plan->index, p, plan->split, ws, s));
    }
    return Status();
  }));
  return true;
}

}  // namespace aotirt
