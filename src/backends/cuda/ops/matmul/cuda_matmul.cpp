// aoti_torch_cuda_{mm,addmm,bmm,baddbmm}_out through cuBLASLt.
//
// cuBLASLt is column-major; a row-major matrix is the transpose of a
// column-major one, so each strided operand is described as op(S) with S
// column-major whenever its strides allow (either dim of stride 1), and copied
// to a contiguous temporary otherwise. float32 uses CUBLAS_COMPUTE_32F (no
// TF32 unless AOTIRT_CUDA_ALLOW_TF32=1, as PyTorch by default); float16 and bfloat16 accumulate in float32.
// addmm with a [N] bias and beta 1 uses cuBLASLt's bias epilogue; other `self`
// tensors are broadcast into the output first and scaled through beta.
// float32 GEMMs run on aotirt's own kernels where one takes them (3xTF32 on
// tensor cores at float32 accuracy, or the few-row kernel: cuda_gemm_f32x3.h),
// unless TF32 is allowed (then cuBLASLt's TF32 kernels are the faster choice)
// or AOTIRT_CUDA_GEMM=cublaslt. bfloat16 GEMMs of up to eight rows run on
// aotirt's few-row kernel, and larger ones on CUTLASS's tensor-core GEMM
// where bf16_mode says (cuda_gemm_bf16.h).
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/host_copy.h"
#include "ops/layout.h"
#include "ops/matmul_args.h"
#include "ops/op_args.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_symbols.h"
#include "backends/cuda/ops/matmul/cuda_gemm_bf16.h"
#include "backends/cuda/ops/matmul/cuda_gemm_f32x3.h"
#include "backends/cuda/launch/cuda_kernel_table.h"
#include "backends/cuda/launch/cuda_l2_prefetch.h"
#include "backends/cuda/launch/cuda_op_replay.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "base/status.h"
#include "device/device.h"
#include "shim/common/shim_profile.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

using ops::shape_str;

constexpr size_t kWorkspaceBytes = size_t{32} << 20;
// Plans kept per device and cache; the least recently used go first.
constexpr size_t kMaxPlans = 4096;

// A logical [rows, cols] matrix as op(S) with S column-major, leading dim ld.
struct ColMajor {
  bool trans = false;
  int64_t ld = 1;
};

bool describe(int64_t rows, int64_t cols, int64_t sr, int64_t sc, ColMajor* out) {
  // Row-major (S = X^T, [cols, rows], ld = row stride).
  if ((cols <= 1 || sc == 1) && (rows <= 1 || sr >= std::max<int64_t>(cols, 1))) {
    out->trans = true;
    out->ld = rows <= 1 ? std::max<int64_t>(cols, 1) : sr;
    return true;
  }
  // Column-major (S = X, [rows, cols], ld = column stride).
  if ((rows <= 1 || sr == 1) && (cols <= 1 || sc >= std::max<int64_t>(rows, 1))) {
    out->trans = false;
    out->ld = cols <= 1 ? std::max<int64_t>(rows, 1) : sc;
    return true;
  }
  return false;
}

struct LtTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

Result<LtTypes> lt_types(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return LtTypes{CUDA_R_32F, cuda_matmul_allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case DType::kFloat16: return LtTypes{CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case DType::kBFloat16: return LtTypes{CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case DType::kFloat64: return LtTypes{CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
    default:
      return AOTIRT_STATUS(kUnimplemented, "dtype {} is not supported; use float32, float16, bfloat16 or float64",
                           dtype_name(dtype));
  }
}

// The device's cuBLASLt handle, made on first use and kept with its caches.
class LtHandleCache final : public CudaOpCache {
 public:
  explicit LtHandleCache(const CublasLtApi& api) : api_(api) {}
  ~LtHandleCache() override { clear(); }
  const char* name() const override { return "cuBLASLt handle"; }
  size_t size() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return handle_ ? 1 : 0;
  }
  void clear() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (handle_) api_.cublasLtDestroy(handle_);
    handle_ = nullptr;
  }
  Result<cublasLtHandle_t> get() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!handle_) AOTIRT_CUBLAS_RETURN_IF_ERROR(api_.cublasLtCreate(&handle_));
    return handle_;
  }

 private:
  const CublasLtApi& api_;
  mutable std::mutex mu_;
  cublasLtHandle_t handle_ = nullptr;
};

Result<cublasLtHandle_t> lt_handle(const CublasLtApi& api, int device) {
  AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
  return dev->op_caches().get<LtHandleCache>([&] { return std::make_unique<LtHandleCache>(api); }).get();
}

// A problem's descriptors and algorithm, made once and reused: creating the
// four descriptors and querying the heuristic costs more than launching many
// small GEMMs.
struct LtPlan {
  const CublasLtApi* api = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo;
  size_t workspace = 0;
  CudaOpReplay replay{"aoti_torch_cuda_*mm_out / replay"};
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {
    if (!api) return;
    if (d) api->cublasLtMatrixLayoutDestroy(d);
    if (b) api->cublasLtMatrixLayoutDestroy(b);
    if (a) api->cublasLtMatrixLayoutDestroy(a);
    if (op) api->cublasLtMatmulDescDestroy(op);
  }
};

using LtGemm = CudaGemm;

Status lt_layout(const CublasLtApi& api, cublasLtMatrixLayout_t* layout, cudaDataType_t type, int64_t rows,
                 int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  AOTIRT_CUBLAS_RETURN_IF_ERROR(api.cublasLtMatrixLayoutCreate(layout, type, static_cast<uint64_t>(rows),
                                                               static_cast<uint64_t>(cols), ld));
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    AOTIRT_CUBLAS_RETURN_IF_ERROR(api.cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                                       &count, sizeof(count)));
    AOTIRT_CUBLAS_RETURN_IF_ERROR(api.cublasLtMatrixLayoutSetAttribute(
        *layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return Status();
}

Result<std::shared_ptr<LtPlan>> make_plan(const CublasLtApi& api, cublasLtHandle_t handle, const LtGemm& g,
                                          const LtTypes& types, size_t ws_bytes, uint32_t align_a, uint32_t align_b,
                                          uint32_t align_d) {
  // A half-made plan destroys what it has on every early return.
  auto plan = std::make_shared<LtPlan>();
  LtPlan& p = *plan;
  p.api = &api;
  struct Guard {
    const CublasLtApi& api;
    cublasLtMatmulPreference_t pref = nullptr;
    ~Guard() {
      if (pref) api.cublasLtMatmulPreferenceDestroy(pref);
    }
  } guard{api};
  AOTIRT_CUBLAS_RETURN_IF_ERROR(api.cublasLtMatmulDescCreate(&p.op, types.compute, types.scale));
  int32_t ta = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  AOTIRT_CUBLAS_RETURN_IF_ERROR(api.cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  AOTIRT_CUBLAS_RETURN_IF_ERROR(api.cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  if (g.bias) {
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    AOTIRT_CUBLAS_RETURN_IF_ERROR(
        api.cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    AOTIRT_CUBLAS_RETURN_IF_ERROR(
        api.cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias, sizeof(g.bias)));
    const int32_t bias_type = types.data;
    AOTIRT_CUBLAS_RETURN_IF_ERROR(api.cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                                     &bias_type, sizeof(bias_type)));
  }
  AOTIRT_RETURN_IF_ERROR(
      lt_layout(api, &p.a, types.data, g.ta ? g.k : g.m, g.ta ? g.m : g.k, g.lda, g.batch, g.stride_a));
  AOTIRT_RETURN_IF_ERROR(
      lt_layout(api, &p.b, types.data, g.tb ? g.n : g.k, g.tb ? g.k : g.n, g.ldb, g.batch, g.stride_b));
  AOTIRT_RETURN_IF_ERROR(lt_layout(api, &p.d, types.data, g.m, g.n, g.ldd, g.batch, g.stride_d));

  AOTIRT_CUBLAS_RETURN_IF_ERROR(api.cublasLtMatmulPreferenceCreate(&guard.pref));
  uint64_t ws64 = ws_bytes;
  AOTIRT_CUBLAS_RETURN_IF_ERROR(api.cublasLtMatmulPreferenceSetAttribute(
      guard.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws64, sizeof(ws64)));
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_d},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_d}};
  for (const auto& a : aligns)
    AOTIRT_CUBLAS_RETURN_IF_ERROR(
        api.cublasLtMatmulPreferenceSetAttribute(guard.pref, a.first, &a.second, sizeof(a.second)));
  cublasLtMatmulHeuristicResult_t result = {};
  int returned = 0;
  AOTIRT_CUBLAS_RETURN_IF_ERROR(
      api.cublasLtMatmulAlgoGetHeuristic(handle, p.op, p.a, p.b, p.d, p.d, guard.pref, 1, &result, &returned));
  if (returned == 0)
    return AOTIRT_STATUS(kUnimplemented, "cuBLASLt has no algorithm for {} m={} n={} k={} batch={}{}",
                         dtype_name(g.dtype), g.m, g.n, g.k, g.batch, g.bias ? " with a bias epilogue" : "");
  p.algo = result.algo;
  p.workspace = result.workspaceSize;
  return plan;
}

using LtPlanCache = CudaPlanCache<std::vector<int64_t>, LtPlan>;

// ---- float32 on aotirt's kernels (3xTF32 and few-row, cuda_gemm_f32x3.h) ----

// AOTIRT_CUDA_GEMM=cublaslt keeps float32 GEMMs on cuBLASLt.
bool f32x3_enabled() { return cuda_options().gemm != CudaLibraryChoice::kVendor; }

const KernelTable<CudaF32x3Config>& f32x3_device(int device) {
  return kernel_table<CudaF32x3Config, cuda_f32x3_config_count, cuda_f32x3_config, cuda_f32x3_blocks_per_sm>(
      device, "no 3xTF32 GEMM kernels (float32 GEMMs on cuBLASLt)");
}

bool aligned16(const void* p) { return cuda_pointer_alignment(p) >= 16; }

// A problem shape's kernel (and k split), chosen once, and its call site
// for replays: a direct launch of one of these kernels cost 8 us of host
// time on an H200 machine, a replayed one about 2 (cuda_op_replay.h).
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
      [] { return std::make_unique<F32x3PlanCache>("float32 GEMM plans", kMaxPlans); });
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

// In cuBLASLt's column-major terms D = op(A) op(B) is the row-major
// D^T[n, m] = op(B)^T[n, k] @ op(A)^T[k, m] that aotirt's kernels take when
// op(B)^T is k-contiguous (tb false); op(A)^T is then their B, column-major
// (k contiguous) when ta, row-major when not. The bias runs along m: one
// row of D^T, repeated. Fills the fields CudaF32x3Problem and
// CudaBf16Problem share.
template <class P, class T>
P own_problem(const LtGemm& g) {
  P p;
  p.m = static_cast<int>(g.n);
  p.n = static_cast<int>(g.m);
  p.k = static_cast<int>(g.k);
  p.a = static_cast<const T*>(g.b);
  p.lda = g.ldb;
  p.b = static_cast<const T*>(g.a);
  p.ldb = g.lda;
  p.b_row_major = !g.ta;
  p.d = static_cast<T*>(g.d);
  p.ldd = g.ldd;
  p.alpha = static_cast<float>(g.alpha);
  if (g.bias) {
    p.c = static_cast<const T*>(g.bias);
    p.ldc = 0;
    p.beta = 1.f;
  } else if (g.beta != 0.0) {
    p.c = p.d;
    p.ldc = p.ldd;
    p.beta = static_cast<float>(g.beta);
  }
  return p;
}

// A launch of aotirt's GEMM kernels for replays: the operands, the scratch
// memory (|extra|) and the scalars.
template <class P>
CudaReplayKey own_replay_key(const P& p, const void* extra) {
  uint32_t alpha_bits = 0, beta_bits = 0;
  std::memcpy(&alpha_bits, &p.alpha, sizeof(alpha_bits));
  std::memcpy(&beta_bits, &p.beta, sizeof(beta_bits));
  return {reinterpret_cast<uintptr_t>(p.a), reinterpret_cast<uintptr_t>(p.b), reinterpret_cast<uintptr_t>(p.c),
          reinterpret_cast<uintptr_t>(p.d), reinterpret_cast<uintptr_t>(extra),
          (static_cast<uint64_t>(alpha_bits) << 32) | beta_bits};
}

bool fits_int(const LtGemm& g) {
  return g.m <= INT32_MAX && g.n <= INT32_MAX && g.k <= INT32_MAX && g.batch <= INT32_MAX;
}

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

// ---- bfloat16 on aotirt's kernels (cuda_gemm_bf16.h) ----

// Where bfloat16 GEMMs run (AOTIRT_CUDA_GEMM):
// - auto (the default): products of up to eight rows on the few-row kernel;
//   larger ones, on a GPU that runs CUTLASS's Hopper kernels (sm_90a;
//   AOTIRT_CUDA_DISABLE=bf16_sm90 leaves them out), on those or the Ampere
//   ones, as cuda_bf16_choose models them, so a bfloat16 package loads no
//   cuBLASLt; on other GPUs on cuBLASLt, whose Hopper kernels beat CUTLASS's
//   Ampere ones there by about two to one.
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
      [] { return std::make_unique<Bf16PlanCache>("bfloat16 GEMM plans", kMaxPlans); });
  return cache.get(key, [&]() -> Result<std::shared_ptr<Bf16Plan>> {
    std::shared_ptr<Bf16Plan> plan;
    if (p.m <= kCudaBf16GemvMaxRows) {
      plan = std::make_shared<Bf16Plan>();
      plan->gemv = true;
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
      AOTIRT_CUDA_RETURN_IF_ERROR(cuda_bf16_gemv_rows_launch(p, s));
    } else {
      ShimProfileScope profile("aoti_torch_cuda_*mm_out / bfloat16 tensor-core kernel launch");
      AOTIRT_CUDA_RETURN_IF_ERROR(cuda_bf16_launch(plan->index, p, plan->split, ws, s));
    }
    return Status();
  }));
  return true;
}

// aotirt's own kernels for |g|, when one takes it.
Result<bool> own_gemm(int device, cudaStream_t stream, const LtGemm& g, bool dry_run = false) {
  if (g.dtype == DType::kBFloat16) return bf16_gemm(device, stream, g, dry_run);
  return f32x3_gemm(device, stream, g, dry_run);
}

// The bytes op(A) or op(B) of a single GEMM spans in memory, from its first
// element to its last (not past it: the operand may be a view that ends
// where its allocation does, short of a whole leading dimension).
size_t operand_bytes(const LtGemm& g, bool a) {
  const int64_t ld = a ? g.lda : g.ldb;
  const int64_t rows = a ? (g.ta ? g.k : g.m) : (g.tb ? g.n : g.k);
  const int64_t cols = a ? (g.ta ? g.m : g.k) : (g.tb ? g.k : g.n);
  if (rows <= 0 || cols <= 0) return 0;
  return static_cast<size_t>((cols - 1) * ld + rows) * dtype_size(g.dtype);
}

Status queue_gemm(int device, cudaStream_t stream, const LtGemm& g);

Status lt_gemm(int device, cudaStream_t stream, const LtGemm& g) {
  // While a graph is recorded: the larger operand of a single GEMM (at the
  // batch sizes where this pays, the weights) read into L2 beside the
  // kernels since the previous GEMM or convolution (cuda_l2_prefetch.h).
  unsigned long long capture = 0;
  if (cuda_l2_prefetch_enabled()) AOTIRT_CUDA_RETURN_IF_ERROR(cuda_l2_prefetch_capture(stream, &capture));
  if (capture && g.batch == 1) {
    const size_t a = operand_bytes(g, true), b = operand_bytes(g, false);
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_l2_prefetch(stream, capture, a >= b ? g.a : g.b, std::max(a, b)));
  }
  AOTIRT_RETURN_IF_ERROR(queue_gemm(device, stream, g));
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_l2_prefetch_mark(stream, capture));
  return Status();
}

Status queue_gemm(int device, cudaStream_t stream, const LtGemm& g) {
  AOTIRT_ASSIGN_OR_RETURN(bool ran, own_gemm(device, stream, g));
  if (ran) return Status();
  AOTIRT_ASSIGN_OR_RETURN(const CublasLtApi* api, cublaslt_api());
  AOTIRT_ASSIGN_OR_RETURN(cublasLtHandle_t handle, lt_handle(*api, device));
  AOTIRT_ASSIGN_OR_RETURN(LtTypes types, lt_types(g.dtype));
  AOTIRT_ENSURE(g.m <= INT32_MAX && g.n <= INT32_MAX && g.k <= INT32_MAX && g.batch <= INT32_MAX, kUnimplemented,
                "matrix sizes m={} n={} k={} batch={} exceed cuBLASLt's limits", g.m, g.n, g.k, g.batch);

  const uint32_t align_a = cuda_pointer_alignment(g.a), align_b = cuda_pointer_alignment(g.b),
                 align_d = cuda_pointer_alignment(g.d);
  // The bias pointer is part of the key: it is a descriptor attribute, and
  // biases are weights, whose addresses do not change.
  const std::vector<int64_t> key = {static_cast<int64_t>(g.dtype), g.batch, g.m, g.n, g.k, g.ta, g.tb, g.lda, g.ldb,
                                    g.ldd, g.stride_a, g.stride_b, g.stride_d,
                                    static_cast<int64_t>(reinterpret_cast<uintptr_t>(g.bias)), align_a, align_b,
                                    align_d, device, static_cast<int64_t>(types.compute)};
  AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
  LtPlanCache& cache = dev->op_caches().get<LtPlanCache>(
      [] { return std::make_unique<LtPlanCache>("cuBLASLt plans", kMaxPlans); });
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<LtPlan> held, cache.get(key, [&] {
    return make_plan(*api, handle, g, types, kWorkspaceBytes, align_a, align_b, align_d);
  }));
  const LtPlan& plan = *held;

  TensorImpl graph_ws;
  AOTIRT_ASSIGN_OR_RETURN(void* ws, cuda_op_workspace(device, stream, plan.workspace, &graph_ws));

  float alpha_f = static_cast<float>(g.alpha), beta_f = static_cast<float>(g.beta);
  double alpha_d = g.alpha, beta_d = g.beta;
  const void* alpha = types.scale == CUDA_R_64F ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = types.scale == CUDA_R_64F ? static_cast<const void*>(&beta_d) : &beta_f;
  uint64_t alpha_bits = 0, beta_bits = 0;
  std::memcpy(&alpha_bits, &alpha_d, sizeof(alpha_bits));
  std::memcpy(&beta_bits, &beta_d, sizeof(beta_bits));
  const CudaReplayKey replay_key = {reinterpret_cast<uintptr_t>(g.a), reinterpret_cast<uintptr_t>(g.b),
                                    reinterpret_cast<uintptr_t>(g.d), reinterpret_cast<uintptr_t>(ws), alpha_bits,
                                    beta_bits};
  return held->replay.run(device, replay_key, stream, [&](cudaStream_t s) -> Status {
    ShimProfileScope profile("aoti_torch_cuda_*mm_out / cublasLtMatmul");
    AOTIRT_CUBLAS_RETURN_IF_ERROR(api->cublasLtMatmul(handle, plan.op, alpha, g.a, plan.a, g.b, plan.b, beta, g.d,
                                                      plan.d, g.d, plan.d, &plan.algo, ws, plan.workspace, s));
    return Status();
  });
}

// A [.., rows, cols] operand as cuBLASLt can read it: itself, or a contiguous
// copy (always one when |dense|).
struct Operand {
  TensorImpl tensor;  // keeps a temporary alive
  ColMajor cm;
  int64_t batch_stride = 0;
};

Result<Operand> prepare_operand(const TensorImpl& t, bool batched, int device, bool dense) {
  const int64_t nd = t.dim();
  const int64_t rows = t.sizes()[nd - 2], cols = t.sizes()[nd - 1];
  Operand op;
  if (!dense && describe(rows, cols, t.strides()[nd - 2], t.strides()[nd - 1], &op.cm)) {
    op.tensor = t;
  } else {
    AOTIRT_ASSIGN_OR_RETURN(op.tensor, cuda_empty_contiguous(t.sizes(), t.dtype(), device));
    AOTIRT_RETURN_IF_ERROR(copy_tensor(op.tensor, t, false));
    describe(rows, cols, cols, 1, &op.cm);
  }
  if (batched && t.sizes()[0] > 1) op.batch_stride = op.tensor.strides()[0];
  return op;
}

bool is_bias_vector(const TensorImpl& self, int64_t n) {
  if (self.dim() == 1) return self.sizes()[0] == n && (n == 1 || self.strides()[0] == 1);
  if (self.dim() == 2) return self.sizes()[0] == 1 && self.sizes()[1] == n && (n == 1 || self.strides()[1] == 1);
  return false;
}

// One try at out = beta * self + alpha * (a @ b) through cuBLASLt. With
// |dense| every operand and the target are dense temporaries.
Status matmul_attempt(const CudaOpScope& scope, const TensorImpl* out, const TensorImpl* self, bool has_c,
                      const TensorImpl& a, const TensorImpl& b, double beta, double alpha, bool batched,
                      bool dense) {
  const int device = scope.device();
  const int64_t nd = batched ? 3 : 2;
  const int64_t batch = batched ? a.sizes()[0] : 1;
  const int64_t m = a.sizes()[nd - 2], k = a.sizes()[nd - 1], n = b.sizes()[nd - 1];
  // The target: out itself when cuBLASLt can write it, else a temporary.
  TensorImpl target = *out;
  ColMajor tc;
  bool out_ok = !dense && describe(m, n, out->strides()[nd - 2], out->strides()[nd - 1], &tc);
  if (out_ok && batched && batch > 1 && out->strides()[0] == 0) out_ok = false;
  if (!out_ok) {
    AOTIRT_ASSIGN_OR_RETURN(target, cuda_empty_contiguous(out->sizes(), out->dtype(), device));
    describe(m, n, n, 1, &tc);
  }
  const int64_t stride_t = batched && batch > 1 ? target.strides()[0] : 0;
  AOTIRT_ASSIGN_OR_RETURN(Operand oa, prepare_operand(a, batched, device, dense));
  AOTIRT_ASSIGN_OR_RETURN(Operand ob, prepare_operand(b, batched, device, dense));

  LtGemm g;
  g.dtype = a.dtype();
  g.batch = batch;
  g.k = k;
  g.d = target.data_ptr();
  g.ldd = tc.ld;
  g.stride_d = stride_t;
  g.alpha = alpha;
  if (tc.trans) {
    // target^T [n, m] = b^T @ a^T: cuBLASLt's A is b, its B is a, ops flipped.
    g.m = n;
    g.n = m;
    g.a = ob.tensor.data_ptr();
    g.ta = !ob.cm.trans;
    g.lda = ob.cm.ld;
    g.stride_a = ob.batch_stride;
    g.b = oa.tensor.data_ptr();
    g.tb = !oa.cm.trans;
    g.ldb = oa.cm.ld;
    g.stride_b = oa.batch_stride;
  } else {
    g.m = m;
    g.n = n;
    g.a = oa.tensor.data_ptr();
    g.ta = oa.cm.trans;
    g.lda = oa.cm.ld;
    g.stride_a = oa.batch_stride;
    g.b = ob.tensor.data_ptr();
    g.tb = ob.cm.trans;
    g.ldb = ob.cm.ld;
    g.stride_b = ob.batch_stride;
  }

  bool done = false;
  if (has_c && beta == 1.0 && !batched && tc.trans && is_bias_vector(*self, n) && self->dtype() == g.dtype) {
    // In target^T's column-major terms the bias runs along m (= n here).
    LtGemm with_bias = g;
    with_bias.bias = self->data_ptr();
    with_bias.beta = 0.0;
    Status s = lt_gemm(device, scope.stream(), with_bias);
    if (s.ok())
      done = true;
    else if (s.code() != StatusCode::kUnimplemented)
      return s;
  }
  if (!done) {
    if (has_c) {
      AOTIRT_RETURN_IF_ERROR(copy_tensor(target, *self, false));
      g.beta = beta;
    }
    AOTIRT_RETURN_IF_ERROR(lt_gemm(device, scope.stream(), g));
  }
  if (target.data_ptr() != out->data_ptr()) AOTIRT_RETURN_IF_ERROR(copy_tensor(*out, target, false));
  return Status();
}

// out = beta * self + alpha * (a @ b), self optional; [B,] M x K @ K x N.
Status run_matmul(ops::MatmulKind kind, AtenTensorHandle out_h, AtenTensorHandle self_h, AtenTensorHandle mat1_h,
                  AtenTensorHandle mat2_h, double beta, double alpha) {
  AOTIRT_ASSIGN_OR_RETURN(ops::MatmulArgs args, ops::matmul_args(kind, out_h, self_h, mat1_h, mat2_h, beta, alpha));
  const TensorImpl* out = args.out;
  const TensorImpl* self = args.self;
  const TensorImpl* a = args.a;
  const TensorImpl* b = args.b;
  const char* a_name = args.a_name;
  const char* b_name = args.b_name;
  const bool batched = args.batched;
  beta = args.beta;
  alpha = args.alpha;

  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a, a_name));
  const int device = scope->device();
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*b, b_name));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*out, "out"));
  if (self) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*self, "self"));
  AOTIRT_RETURN_IF_ERROR(lt_types(a->dtype()).take_status());
  const int64_t batch = args.batch, m = args.m, k = args.k, n = args.n;
  const DimVector& out_sizes = out->sizes();
  const bool has_c = self && beta != 0.0;
  if (m == 0 || n == 0 || batch == 0) return Status();
  AOTIRT_ENSURE(out->data_ptr() && a->data_ptr() && b->data_ptr(), kInvalidArgument, "a tensor has no data");

  if (k == 0) {
    // The product is empty: out = beta * self, or zeros.
    AOTIRT_ASSIGN_OR_RETURN(Device * dev, get_device(out->device()));
    if (!has_c) return dev->zero(*out);
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl tmp, cuda_empty_contiguous(out_sizes, out->dtype(), device));
    AOTIRT_RETURN_IF_ERROR(copy_tensor(tmp, *self, false));
    if (beta != 1.0)
      AOTIRT_CUDA_RETURN_IF_ERROR(
          cuda_launch_scale(tmp.data_ptr(), static_cast<int>(tmp.dtype()), tmp.numel(), beta, scope->stream()));
    return copy_tensor(*out, tmp, false);
  }

  // First try in place (out and operands as they are); if cuBLASLt has no
  // algorithm for their strides or alignment, retry on dense, freshly
  // allocated (256-byte aligned) copies.
  Status s = matmul_attempt(*scope, out, self, has_c, *a, *b, beta, alpha, batched, false);
  if (s.code() == StatusCode::kUnimplemented && s.message().find("no algorithm") != std::string::npos)
    s = matmul_attempt(*scope, out, self, has_c, *a, *b, beta, alpha, batched, true);
  return s;
}

}  // namespace

Status cuda_gemm(int device, cudaStream_t stream, const CudaGemm& g) { return lt_gemm(device, stream, g); }

Result<bool> cuda_gemm_own(int device, cudaStream_t stream, const CudaGemm& g, bool dry_run) {
  return own_gemm(device, stream, g, dry_run);
}

bool cuda_matmul_prewarm_useful(const std::vector<std::string>& imported) {
  // Generated code names every dtype it allocates or views by its getter.
  // Any library may make float32 GEMMs; one that names bfloat16 may make
  // bfloat16 ones, and float16 and float64 GEMMs are cuBLASLt's alone.
  if (cuda_f32x3_config_count() == 0 || !f32x3_enabled() || cuda_matmul_allow_tf32()) return true;
  // A bfloat16 library whose GEMMs all have few rows (a decode step) runs
  // them on the few-row kernel; one with larger GEMMs opens cuBLASLt at its
  // first, unless AOTIRT_CUDA_GEMM=aotirt.
  const bool bf16_own = bf16_mode() != Bf16Mode::kCublaslt;
  for (const std::string& s : imported) {
    if (s == "aoti_torch_dtype_float16" || s == "aoti_torch_dtype_float64") return true;
    if (s == "aoti_torch_dtype_bfloat16" && !bf16_own) return true;
  }
  return false;
}

Status cuda_matmul_prewarm(int device) {
  AOTIRT_ASSIGN_OR_RETURN(const CublasLtApi* api, cublaslt_api());
  return lt_handle(*api, device).take_status();
}

}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) noexcept {
  return shim_call(__func__, [&]() -> Status { return run_matmul(ops::MatmulKind::kMm, out, self, nullptr, mat2, 0.0, 1.0); });
}

AOTITorchError aoti_torch_cuda_addmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                                         AtenTensorHandle mat2, double beta, double alpha) noexcept {
  return shim_call(__func__, [&]() -> Status { return run_matmul(ops::MatmulKind::kAddmm, out, self, mat1, mat2, beta, alpha); });
}

AOTITorchError aoti_torch_cuda_bmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) noexcept {
  return shim_call(__func__, [&]() -> Status { return run_matmul(ops::MatmulKind::kBmm, out, self, nullptr, mat2, 0.0, 1.0); });
}

AOTITorchError aoti_torch_cuda_baddbmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle batch1,
                                           AtenTensorHandle batch2, double beta, double alpha) noexcept {
  return shim_call(__func__, [&]() -> Status { return run_matmul(ops::MatmulKind::kBaddbmm, out, self, batch1, batch2, beta, alpha); });
}

}  // extern "C"
