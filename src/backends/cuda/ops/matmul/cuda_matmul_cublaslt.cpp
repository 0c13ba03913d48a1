// GEMMs on cuBLASLt: one handle per device, each problem's descriptors and
// heuristic algorithm made once and kept in the device's caches. float32
// uses CUBLAS_COMPUTE_32F (no TF32 unless AOTIRT_CUDA_ALLOW_TF32=1, as
// PyTorch by default); float16 and bfloat16 accumulate in float32; a [N]
// bias runs in cuBLASLt's bias epilogue.
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/cuda/runtime/cuda_symbols.h"
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

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

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

}  // namespace

Status cublaslt_check_dtype(DType dtype) { return lt_types(dtype).take_status(); }

Status cublaslt_gemm(int device, cudaStream_t stream, const CudaGemm& g) {
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
      [] { return std::make_unique<LtPlanCache>("cuBLASLt plans", kMatmulMaxPlans); });
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

Status cublaslt_typed_gemm(int device, cudaStream_t stream, const LtTypedGemm& g) {
  AOTIRT_ASSIGN_OR_RETURN(const CublasLtApi* api, cublaslt_api());
  AOTIRT_ASSIGN_OR_RETURN(cublasLtHandle_t handle, lt_handle(*api, device));
  AOTIRT_ENSURE(g.m <= INT32_MAX && g.n <= INT32_MAX && g.k <= INT32_MAX, kUnimplemented,
                "matrix sizes m={} n={} k={} exceed cuBLASLt's limits", g.m, g.n, g.k);
  // Everything made here is destroyed on every return.
  struct Held {
    const CublasLtApi& api;
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    ~Held() {
      if (pref) api.cublasLtMatmulPreferenceDestroy(pref);
      if (d) api.cublasLtMatrixLayoutDestroy(d);
      if (b) api.cublasLtMatrixLayoutDestroy(b);
      if (a) api.cublasLtMatrixLayoutDestroy(a);
      if (op) api.cublasLtMatmulDescDestroy(op);
    }
  } h{*api};
  AOTIRT_CUBLAS_RETURN_IF_ERROR(api->cublasLtMatmulDescCreate(&h.op, g.compute, g.scale_type));
  int32_t ta = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  AOTIRT_CUBLAS_RETURN_IF_ERROR(api->cublasLtMatmulDescSetAttribute(h.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  AOTIRT_CUBLAS_RETURN_IF_ERROR(api->cublasLtMatmulDescSetAttribute(h.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  if (g.fast_accum) {
    const int8_t fast = 1;
    AOTIRT_CUBLAS_RETURN_IF_ERROR(
        api->cublasLtMatmulDescSetAttribute(h.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)));
  }
  AOTIRT_RETURN_IF_ERROR(lt_layout(*api, &h.a, g.a_type, g.ta ? g.k : g.m, g.ta ? g.m : g.k, g.lda, 1, 0));
  AOTIRT_RETURN_IF_ERROR(lt_layout(*api, &h.b, g.b_type, g.tb ? g.n : g.k, g.tb ? g.k : g.n, g.ldb, 1, 0));
  AOTIRT_RETURN_IF_ERROR(lt_layout(*api, &h.d, g.d_type, g.m, g.n, g.ldd, 1, 0));
  AOTIRT_CUBLAS_RETURN_IF_ERROR(api->cublasLtMatmulPreferenceCreate(&h.pref));
  uint64_t ws64 = kWorkspaceBytes;
  AOTIRT_CUBLAS_RETURN_IF_ERROR(api->cublasLtMatmulPreferenceSetAttribute(
      h.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws64, sizeof(ws64)));
  // The heuristic otherwise assumes 256-byte aligned pointers.
  const uint32_t align_a = cuda_pointer_alignment(g.a), align_b = cuda_pointer_alignment(g.b),
                 align_d = cuda_pointer_alignment(g.d);
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_d},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_d}};
  for (const auto& a : aligns)
    AOTIRT_CUBLAS_RETURN_IF_ERROR(
        api->cublasLtMatmulPreferenceSetAttribute(h.pref, a.first, &a.second, sizeof(a.second)));
  cublasLtMatmulHeuristicResult_t result = {};
  int returned = 0;
  AOTIRT_CUBLAS_RETURN_IF_ERROR(
      api->cublasLtMatmulAlgoGetHeuristic(handle, h.op, h.a, h.b, h.d, h.d, h.pref, 1, &result, &returned));
  if (returned == 0)
    return AOTIRT_STATUS(kUnimplemented, "cuBLASLt has no algorithm for this mixed-type GEMM m={} n={} k={}", g.m,
                         g.n, g.k);
  TensorImpl graph_ws;
  AOTIRT_ASSIGN_OR_RETURN(void* ws, cuda_op_workspace(device, stream, result.workspaceSize, &graph_ws));
  const float alpha_f = 1.f, beta_f = 0.f;
  const int32_t alpha_i = 1, beta_i = 0;
  const bool int_scale = g.scale_type == CUDA_R_32I;
  const void* alpha = int_scale ? static_cast<const void*>(&alpha_i) : &alpha_f;
  const void* beta = int_scale ? static_cast<const void*>(&beta_i) : &beta_f;
  ShimProfileScope profile("cublasLtMatmul (mixed types)");
  AOTIRT_CUBLAS_RETURN_IF_ERROR(api->cublasLtMatmul(handle, h.op, alpha, g.a, h.a, g.b, h.b, beta, g.d, h.d, g.d, h.d,
                                                    &result.algo, ws, result.workspaceSize, stream));
  return Status();
}

Status cublaslt_prewarm(int device) {
  AOTIRT_ASSIGN_OR_RETURN(const CublasLtApi* api, cublaslt_api());
  return lt_handle(*api, device).take_status();
}

}  // namespace aotirt
