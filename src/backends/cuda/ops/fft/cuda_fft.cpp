// CUDA _fft_c2c and _fft_r2c (c_shim_cuda.h) on cuFFT, loaded with dlopen on
// first use (cuda_symbols.h). The op layer (src/ops/random_args) checks the
// arguments and replays torch's split of the transform into cuFFT passes of
// at most three dims, whose layouts decide the output strides; here each
// pass's input is made dense in the pass's dim order (copied when it is
// not), so every cuFFT plan is a plain batched transform of dense data.
// Plans live in a bounded per-device cache; their work area is the op
// workspace of the stream they run on. Normalization and the Hermitian half
// of a two-sided r2c are small kernels (cuda_fft.cu).
#include <cufft.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/fft/cuda_fft_kernels.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_op_caches.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_symbols.h"
#include "base/status.h"
#include "ops/random_args.h"
#include "shim/abi/cuda_fft.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

constexpr size_t kCufftMaxPlans = 128;

const char* cufft_result_name(int r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "cufftResult";
  }
}

Status cufft_status(int r, const char* expr, const char* file, int line) {
  StatusCode code = StatusCode::kInternal;
  if (r == CUFFT_ALLOC_FAILED) code = StatusCode::kResourceExhausted;
  if (r == CUFFT_INVALID_SIZE || r == CUFFT_NOT_SUPPORTED) code = StatusCode::kUnimplemented;
  return Status(code, fmt::format("cuFFT error {} ({}) [in {}]", cufft_result_name(r), r, expr), file, line);
}

#define AOTIRT_CUFFT_RETURN_IF_ERROR(expr)                                         \
  do {                                                                             \
    const int aotirt_cufft_r_ = static_cast<int>(expr);                            \
    if (aotirt_cufft_r_ != CUFFT_SUCCESS)                                          \
      return cufft_status(aotirt_cufft_r_, #expr, __FILE__, __LINE__);             \
  } while (0)

// A cuFFT plan and the work-area bytes it needs. cuFFT keeps the stream and
// work area in the plan, so one call at a time sets them and executes.
struct CufftPlan {
  const CufftApi* api = nullptr;
  cufftHandle handle = 0;
  bool made = false;
  size_t work_bytes = 0;
  std::mutex mu;
  CufftPlan() = default;
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;
  ~CufftPlan() {
    if (made) api->cufftDestroy(handle);
  }
};

using CufftPlanCache = CudaPlanCache<std::vector<int64_t>, CufftPlan>;

// One batched transform over dense data: |batch| signals of sizes |n|
// (slowest first), each followed by the next. |out_last| is the output's
// extent along the last signal dim: n's for c2c, n / 2 + 1 (one-sided) or n
// (two-sided, the rest left for the Hermitian fill) for r2c.
struct FftShape {
  cufftType type;
  std::vector<long long> n;
  long long batch = 1;
  long long out_last = 0;
};

Result<std::shared_ptr<CufftPlan>> make_plan(const CufftApi& api, const FftShape& s) {
  auto plan = std::make_shared<CufftPlan>();
  plan->api = &api;
  AOTIRT_CUFFT_RETURN_IF_ERROR(api.cufftCreate(&plan->handle));
  plan->made = true;
  // The work area comes from the op workspace at each call.
  AOTIRT_CUFFT_RETURN_IF_ERROR(api.cufftSetAutoAllocation(plan->handle, 0));
  std::vector<long long> n = s.n, in_embed = s.n, out_embed = s.n;
  out_embed.back() = s.out_last;
  long long idist = 1, odist = 1;
  for (size_t i = 0; i < n.size(); ++i) {
    idist *= in_embed[i];
    odist *= out_embed[i];
  }
  size_t work = 0;
  AOTIRT_CUFFT_RETURN_IF_ERROR(api.cufftMakePlanMany64(plan->handle, static_cast<int>(n.size()), n.data(),
                                                       in_embed.data(), 1, idist, out_embed.data(), 1, odist, s.type,
                                                       s.batch, &work));
  plan->work_bytes = work;
  return plan;
}

Status run_plan(int device, cudaStream_t stream, const FftShape& s, void* in, void* out, bool forward) {
  AOTIRT_ASSIGN_OR_RETURN(const CufftApi* api, cufft_api());
  AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
  CufftPlanCache& cache = dev->op_caches().get<CufftPlanCache>(
      [] { return std::make_unique<CufftPlanCache>("cuFFT plans", kCufftMaxPlans); });
  std::vector<int64_t> key = {static_cast<int64_t>(s.type), s.batch, s.out_last};
  for (long long v : s.n) key.push_back(v);
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<CufftPlan> plan, cache.get(key, [&] { return make_plan(*api, s); }));
  std::lock_guard<std::mutex> lock(plan->mu);
  AOTIRT_CUFFT_RETURN_IF_ERROR(api->cufftSetStream(plan->handle, stream));
  TensorImpl hold;
  AOTIRT_ASSIGN_OR_RETURN(void* work, cuda_op_workspace(device, stream, plan->work_bytes, &hold));
  if (plan->work_bytes > 0) AOTIRT_CUFFT_RETURN_IF_ERROR(api->cufftSetWorkArea(plan->handle, work));
  const int direction = forward ? CUFFT_FORWARD : CUFFT_INVERSE;
  switch (s.type) {
    case CUFFT_C2C:
      AOTIRT_CUFFT_RETURN_IF_ERROR(api->cufftExecC2C(plan->handle, static_cast<cufftComplex*>(in),
                                                     static_cast<cufftComplex*>(out), direction));
      break;
    case CUFFT_Z2Z:
      AOTIRT_CUFFT_RETURN_IF_ERROR(api->cufftExecZ2Z(plan->handle, static_cast<cufftDoubleComplex*>(in),
                                                     static_cast<cufftDoubleComplex*>(out), direction));
      break;
    case CUFFT_R2C:
      AOTIRT_CUFFT_RETURN_IF_ERROR(
          api->cufftExecR2C(plan->handle, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out)));
      break;
    case CUFFT_D2Z:
      AOTIRT_CUFFT_RETURN_IF_ERROR(api->cufftExecD2Z(plan->handle, static_cast<cufftDoubleReal*>(in),
                                                     static_cast<cufftDoubleComplex*>(out)));
      break;
    default: return AOTIRT_STATUS(kInternal, "unexpected cuFFT transform type {}", static_cast<int>(s.type));
  }
  // The work area is the stream's: later work on it is ordered after this
  // transform, and the next call sets the area again.
  return Status();
}

// Whether |t| is laid out densely in |order| (size-1 dims may have any stride).
bool dense_in_order(const TensorImpl& t, const std::vector<int64_t>& order) {
  const DimVector want = ops::dense_strides_in_order(t.sizes(), order);
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.sizes()[d] > 1 && t.strides()[d] != want[d]) return false;
  return true;
}

// Runs one pass from |in| into a new tensor in the pass's layout.
Result<TensorImpl> run_pass(const CudaOpScope& scope, const ops::FftPass& p, const TensorImpl& in, DType out_dtype,
                            bool forward) {
  const int device = scope.device();
  cudaStream_t stream = scope.stream();
  // cuFFT reads dense signals; a real input must also be aligned as its
  // complex type is (torch makes the same demand).
  const size_t align = p.r2c ? 2 * in.element_size() : in.element_size();
  TensorImpl src = in;
  if (!dense_in_order(in, p.order) || reinterpret_cast<uintptr_t>(in.data_ptr()) % align != 0) {
    AOTIRT_ASSIGN_OR_RETURN(src, cuda_empty(in.sizes(), ops::dense_strides_in_order(in.sizes(), p.order), in.dtype(),
                                            device));
    AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, src, in, false));
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(p.out_sizes, p.out_strides, out_dtype, device));
  if (out.numel() == 0) return out;
  const bool dbl = out_dtype == DType::kComplex128;
  FftShape s;
  s.type = p.r2c ? (dbl ? CUFFT_D2Z : CUFFT_R2C) : (dbl ? CUFFT_Z2Z : CUFFT_C2C);
  for (int64_t d : p.dims) s.n.push_back(in.sizes()[d]);
  s.out_last = p.out_sizes[p.dims.back()];
  const size_t batch_dims = p.order.size() - p.dims.size();
  for (size_t i = 0; i < batch_dims; ++i) s.batch *= in.sizes()[p.order[i]];
  AOTIRT_RETURN_IF_ERROR(run_plan(device, stream, s, src.data_ptr(), out.data_ptr(), forward));
  return out;
}

Status run_fft(const ops::FftArgs& a, bool r2c, bool forward, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.self, "self"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  if (a.dims.empty()) {
    // No dims: torch returns a clone.
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(a.out_sizes, a.out_strides, a.out_dtype, device));
    AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, out, *a.self, false));
    *ret = new_handle(std::move(out));
    return Status();
  }
  AOTIRT_ENSURE(a.self->dim() <= kCudaFftMaxDims, kUnimplemented,
                "'self' has {} dims; aotirt's CUDA FFTs take at most {}", a.self->dim(), kCudaFftMaxDims);
  const size_t complex_size = 2 * a.self->element_size();
  const bool aligned = reinterpret_cast<uintptr_t>(a.self->data_ptr()) % complex_size == 0;
  const ops::FftCudaPasses f = ops::fft_cuda_passes(a, r2c, aligned);
  TensorImpl result;
  if (numel_of(a.out_sizes) == 0) {
    AOTIRT_ASSIGN_OR_RETURN(result, cuda_empty(a.out_sizes, f.out_strides, a.out_dtype, device));
    *ret = new_handle(std::move(result));
    return Status();
  }
  TensorImpl working = *a.self;
  for (const ops::FftPass& p : f.passes) {
    // An r2c's passes all run forward; c2c's run in the asked direction.
    AOTIRT_ASSIGN_OR_RETURN(working, run_pass(*scope, p, working, a.out_dtype, r2c || forward));
  }
  const bool dbl = a.out_dtype == DType::kComplex128;
  // Every pass's output is dense, so the scale runs over it as one array
  // (for a two-sided single-dim r2c that includes the half filled below).
  if (a.scale != 1.0)
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_fft_scale(working.data_ptr(), dbl, working.numel(), a.scale, stream));
  if (f.expand) {
    AOTIRT_ASSIGN_OR_RETURN(result, cuda_empty(a.out_sizes, f.out_strides, a.out_dtype, device));
    const TensorImpl half(result.storage(), result.dtype(), working.sizes(), result.strides(),
                          result.storage_offset());
    AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, half, working, false));
  } else {
    result = std::move(working);
  }
  if (r2c && !a.onesided) {
    CudaFftFill fill;
    fill.ndim = static_cast<int>(result.dim());
    for (int64_t d = 0; d < result.dim(); ++d) {
      fill.sizes[d] = result.sizes()[d];
      fill.strides[d] = result.strides()[d];
    }
    for (int64_t d : a.dims) fill.mirrored[d] = true;
    fill.last = static_cast<int>(a.dims.back());
    fill.numel = result.numel();
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_fft_fill_conjugate(result.data_ptr(), dbl, fill, stream));
  }
  *ret = new_handle(std::move(result));
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda__fft_c2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                        int64_t normalization, int32_t forward, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::FftArgs a, ops::fft_c2c_args(self, dim, dim_len_, normalization));
    return run_fft(a, false, forward != 0, ret0);
  });
}

AOTITorchError aoti_torch_cuda__fft_r2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                        int64_t normalization, int32_t onesided, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::FftArgs a, ops::fft_r2c_args(self, dim, dim_len_, normalization, onesided != 0));
    return run_fft(a, true, true, ret0);
  });
}

}  // extern "C"
