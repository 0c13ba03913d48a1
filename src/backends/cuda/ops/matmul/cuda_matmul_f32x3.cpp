// float32 GEMMs on aotirt's own kernels (cuda_gemm_f32x3.h): 3xTF32 on
// tensor cores at float32 accuracy, and the few-row kernel for products of
// a few rows. Each problem shape's kernel and k split is chosen once per
// device; launches are replayed (cuda_op_replay.h).
#include <array>
#include <memory>

#include "backends/cuda/ops/matmul/cuda_gemm_f32x3.h"
#include "backends/cuda/ops/matmul/cuda_matmul_impl.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/launch/cuda_kernel_table.h"
#include "backends/cuda/launch/cuda_op_replay.h"
#include "base/status.h"
#include "shim/common/shim_profile.h"

namespace aotirt {

// AOTIRT_CUDA_GEMM=cublaslt keeps float32 GEMMs on cuBLASLt.
bool f32x3_enabled() { return cuda_options().gemm != CudaLibraryChoice::kVendor; }

namespace {

const KernelTable<CudaF32x3Config>& f32x3_device(int device) {
  return kernel_table<CudaF32x3Config, cuda_f32x3_config_count, cuda_f32x3_config, cuda_f32x3_blocks_per_sm>(
      device, "no 3xTF32 GEMM kernels (float32 GEMMs on cuBLASLt)");
}


// A problem shape's kernel (and k split), chosen once, and its call site
// for replays: a replayed launch of one of these kernels costs a fraction
// of a direct one's host time (cuda_op_replay.h).
struct F32x3Plan {
  bool gemv = false;  // the few-row kernel, else 3xTF32 kernel |index|
  int index = -1;     // among the build's 3xTF32 kernels
  int split = 1;
  size_t tiles = 0;
  CudaOpReplay replay{"aoti_torch_cuda_*mm_out / float32 kernel replay"};
};

bool aligned_rows(int64_t ld, int64_t stride) { return ld % 4 == 0 && stride % 4 == 0; }

using F32x3PlanCache = CudaPlanCache<std::array<int64_t, 16>, F32x3Plan>;

// The plan for |p| (null: none of aotirt's kernels takes it), kept in the
// device's caches.
Result<std::shared_ptr<F32x3Plan>> f32x3_plan(int device, const CudaF32x3Problem& p, int out_align) {
  const int64_t source = !p.c ? 0 : p.ldc == 0 ? 1 : 2;
  const bool aligned_ab = aligned16(p.a) && aligned16(p.b);
  const std::array<int64_t, 16> key = {device,      p.m,         p.n,         p.k,      p.batch, p.lda,
                                       p.ldb,       p.ldc,       p.ldd,       p.stride_a, p.stride_b, p.stride_c,
                                       p.stride_d,  source,      out_align,   p.b_row_major * 2 + aligned_ab};
  AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
  F32x3PlanCache& cache = dev->op_caches().get<F32x3PlanCache>(
      [] { return std::make_unique<F32x3PlanCache>("float32 GEMM plans", kMatmulMaxPlans); });
  return cache.get(key, [&]() -> Result<std::shared_ptr<F32x3Plan>> {
    std::shared_ptr<F32x3Plan> plan;
    if (p.batch == 1 && p.m <= kCudaGemvMaxRows && !p.b_row_major) {
      plan = std::make_shared<F32x3Plan>();
      plan->gemv = true;
    } else if (aligned_ab && p.k % kCudaF32x3KMultiple == 0 && aligned_rows(p.lda, p.stride_a) &&
               aligned_rows(p.ldb, p.stride_b)) {
      const KernelTable<CudaF32x3Config>& fd = f32x3_device(device);
      const CudaF32x3Choice choice = cuda_f32x3_choose(p, out_align, fd.sm_count, fd.configs.data(),
                                                       fd.blocks.data(), static_cast<int>(fd.configs.size()));
      if (choice.config >= 0) {
        plan = std::make_shared<F32x3Plan>();
        const CudaF32x3Config& c = fd.configs[choice.config];
        plan->index = fd.index[choice.config];
        plan->split = choice.split;
        plan->tiles = static_cast<size_t>((p.m + c.tile_m - 1) / c.tile_m) * ((p.n + c.tile_n - 1) / c.tile_n);
      }
    }
    return plan;
  });
}

}  // namespace

// Runs |g| on aotirt's float32 kernels when one takes it; false (nothing
// queued) when none does. With |dry_run| nothing is queued: the answer says
// whether a kernel would take |g|.
Result<bool> f32x3_gemm(int device, cudaStream_t stream, const LtGemm& g, bool dry_run) {
  if (g.dtype != DType::kFloat32 || g.tb || cuda_matmul_allow_tf32() || !f32x3_enabled() || !fits_int(g))
    return false;
  CudaF32x3Problem p = own_problem<CudaF32x3Problem, float>(g);
  p.batch = static_cast<int>(g.batch);
  p.stride_a = g.stride_b;
  p.stride_b = g.stride_a;
  p.stride_d = g.stride_d;
  if (!g.bias && g.beta != 0.0) p.stride_c = p.stride_d;
  const bool out_aligned = aligned16(p.d) && aligned_rows(p.ldd, p.stride_d) && (!g.bias || aligned16(g.bias));
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<F32x3Plan> plan, f32x3_plan(device, p, out_aligned ? 4 : 1));
  if (!plan) return false;
  if (dry_run) return true;
  int* semaphores = nullptr;
  if (plan->split > 1) {
    AOTIRT_ASSIGN_OR_RETURN(semaphores, cuda_op_semaphores(device, stream, plan->tiles));
  }
  const CudaReplayKey replay_key = own_replay_key(p, semaphores);
  AOTIRT_RETURN_IF_ERROR(plan->replay.run(device, replay_key, stream, [&](cudaStream_t s) -> Status {
    if (plan->gemv) {
      ShimProfileScope profile("aoti_torch_cuda_*mm_out / few-row float32 kernel launch");
      AOTIRT_CUDA_RETURN_IF_ERROR(cuda_gemv_rows_launch(p, s));
    } else {
      ShimProfileScope profile("aoti_torch_cuda_*mm_out / 3xTF32 kernel launch");
      AOTIRT_CUDA_RETURN_IF_ERROR(cuda_f32x3_launch(plan->index, p, plan->split, semaphores, s));
    }
    return Status();
  }));
  return true;
}

}  // namespace aotirt
