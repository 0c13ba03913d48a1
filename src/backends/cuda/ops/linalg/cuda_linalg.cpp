// CUDA cholesky_solve, cholesky_inverse, triangular_solve, geqrf, ormqr
// (c_shim_cuda.h) on cuSOLVER and cuBLAS, both loaded with dlopen on first
// use (cuda_symbols.h), and lu_unpack on aotirt's own kernels
// (cuda_linalg.cu). The op layer (src/ops/linalg_args) checks the
// arguments and gives the shapes; as on the CPU, each operand is staged
// column-major with torch's batched-Fortran strides (broadcast over the
// batch), which is also the layout torch gives the results, and the
// library runs once per matrix of the batch.
//
// Errors follow torch's CUDA kernels: potrs and trsm report no singular or
// indefinite factor (the values come out inf or NaN), and neither does
// torch's cuSOLVER cholesky_inverse, which solves against the identity as
// this one does.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <utility>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/linalg/cuda_linalg_kernels.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_op_caches.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_symbols.h"
#include "base/status.h"
#include "core/dtype.h"
#include "ops/linalg_args.h"
#include "shim/abi/cuda_linalg.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

Status cusolver_status(int st, const char* expr, const char* file, int line) {
  StatusCode code = StatusCode::kInternal;
  if (st == CUSOLVER_STATUS_ALLOC_FAILED) code = StatusCode::kResourceExhausted;
  if (st == CUSOLVER_STATUS_INVALID_VALUE) code = StatusCode::kInvalidArgument;
  if (st == CUSOLVER_STATUS_NOT_SUPPORTED || st == CUSOLVER_STATUS_ARCH_MISMATCH) code = StatusCode::kUnimplemented;
  return Status(code, fmt::format("cuSOLVER error status {} [in {}]", st, expr), file, line);
}

#define AOTIRT_CUSOLVER_RETURN_IF_ERROR(expr)                                    \
  do {                                                                           \
    const int aotirt_cusolver_st_ = static_cast<int>(expr);                      \
    if (aotirt_cusolver_st_ != 0)                                                \
      return cusolver_status(aotirt_cusolver_st_, #expr, __FILE__, __LINE__);    \
  } while (0)

// The device's cuSOLVER and cuBLAS handles. Both keep the stream they run
// on, so an op holds |use| from setting the stream to its last call.
class LinalgHandles final : public CudaOpCache {
 public:
  ~LinalgHandles() override { clear(); }
  const char* name() const override { return "cuSOLVER and cuBLAS handles"; }
  size_t size() const override {
    std::lock_guard<std::mutex> lock(use);
    return (solver_ ? 1 : 0) + (blas_ ? 1 : 0);
  }
  void clear() override {
    std::lock_guard<std::mutex> lock(use);
    if (solver_) solver_api_->cusolverDnDestroy(solver_);
    if (blas_) blas_api_->cublasDestroy_v2(blas_);
    solver_ = nullptr;
    blas_ = nullptr;
  }
  // Callers hold |use|.
  Result<cusolverDnHandle_t> solver(const CusolverApi& api, cudaStream_t stream) {
    if (!solver_) {
      AOTIRT_CUSOLVER_RETURN_IF_ERROR(api.cusolverDnCreate(&solver_));
      solver_api_ = &api;
    }
    AOTIRT_CUSOLVER_RETURN_IF_ERROR(api.cusolverDnSetStream(solver_, stream));
    return solver_;
  }
  Result<cublasHandle_t> blas(const CublasApi& api, cudaStream_t stream) {
    if (!blas_) {
      AOTIRT_CUBLAS_RETURN_IF_ERROR(api.cublasCreate_v2(&blas_));
      blas_api_ = &api;
    }
    AOTIRT_CUBLAS_RETURN_IF_ERROR(api.cublasSetStream_v2(blas_, stream));
    return blas_;
  }
  mutable std::mutex use;

 private:
  const CusolverApi* solver_api_ = nullptr;
  const CublasApi* blas_api_ = nullptr;
  cusolverDnHandle_t solver_ = nullptr;
  cublasHandle_t blas_ = nullptr;
};

Result<LinalgHandles*> handles(int device) {
  AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
  return &dev->op_caches().get<LinalgHandles>([] { return std::make_unique<LinalgHandles>(); });
}

Status check_ints(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims)
    AOTIRT_ENSURE(d <= INT_MAX, kUnimplemented, "a matrix dim of {} exceeds cuSOLVER's and cuBLAS's int sizes", d);
  return Status();
}

// |src| broadcast to |sizes| in a new tensor with torch's batched-Fortran
// strides.
Result<TensorImpl> stage_fortran(const CudaOpScope& scope, const TensorImpl& src, const DimVector& sizes) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl t,
                          cuda_empty(sizes, ops::batched_fortran_strides(sizes), src.dtype(), scope.device()));
  if (t.numel() > 0) AOTIRT_RETURN_IF_ERROR(cuda_copy(scope.device(), scope.stream(), t, src, false));
  return t;
}

DimVector with_last(const DimVector& batch, int64_t last) {
  DimVector s = batch;
  s.resize(s.size() + 1);
  s[s.size() - 1] = last;
  return s;
}

// Hands two new tensors out only when both handles exist.
Status give2(TensorImpl a, TensorImpl b, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  std::unique_ptr<TensorImpl> ha(new TensorImpl(std::move(a)));
  std::unique_ptr<TensorImpl> hb(new TensorImpl(std::move(b)));
  *ret0 = handle_of(ha.release());
  *ret1 = handle_of(hb.release());
  return Status();
}

// Scratch for one library call sequence: the devInfo int, then |work_elems|
// elements of |elem| bytes.
struct Scratch {
  TensorImpl hold;
  int* info = nullptr;
  void* work = nullptr;
};
constexpr size_t kInfoBytes = 256;  // keeps the work area aligned

Result<Scratch> scratch(const CudaOpScope& scope, size_t work_elems, size_t elem) {
  Scratch s;
  AOTIRT_ASSIGN_OR_RETURN(void* p, cuda_op_workspace(scope.device(), scope.stream(), kInfoBytes + work_elems * elem,
                                                      &s.hold));
  s.info = static_cast<int*>(p);
  s.work = static_cast<char*>(p) + kInfoBytes;
  return s;
}

// ---- potrs: cholesky_solve and cholesky_inverse ----

// Solves A X = B in place for every matrix of |b| (n x nrhs, Fortran) with
// the factor in |a| (n x n, Fortran).
Status potrs_batches(const CudaOpScope& scope, bool upper, int64_t batch, int64_t n, int64_t nrhs,
                     const TensorImpl& a, const TensorImpl& b) {
  AOTIRT_RETURN_IF_ERROR(check_ints({n, nrhs}));
  AOTIRT_ASSIGN_OR_RETURN(const CusolverApi* api, cusolver_api());
  AOTIRT_ASSIGN_OR_RETURN(LinalgHandles * h, handles(scope.device()));
  AOTIRT_ASSIGN_OR_RETURN(Scratch s, scratch(scope, 0, 1));
  std::lock_guard<std::mutex> lock(h->use);
  AOTIRT_ASSIGN_OR_RETURN(cusolverDnHandle_t handle, h->solver(*api, scope.stream()));
  const cublasFillMode_t uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  const int in = static_cast<int>(n), irhs = static_cast<int>(nrhs), ld = std::max(in, 1);
  const bool dbl = a.dtype() == DType::kFloat64;
  for (int64_t i = 0; i < batch; ++i) {
    if (dbl) {
      const double* pa = static_cast<const double*>(a.data_ptr()) + i * n * n;
      double* pb = static_cast<double*>(b.data_ptr()) + i * n * nrhs;
      AOTIRT_CUSOLVER_RETURN_IF_ERROR(api->cusolverDnDpotrs(handle, uplo, in, irhs, pa, ld, pb, ld, s.info));
    } else {
      const float* pa = static_cast<const float*>(a.data_ptr()) + i * n * n;
      float* pb = static_cast<float*>(b.data_ptr()) + i * n * nrhs;
      AOTIRT_CUSOLVER_RETURN_IF_ERROR(api->cusolverDnSpotrs(handle, uplo, in, irhs, pa, ld, pb, ld, s.info));
    }
  }
  return Status();
}

Status cholesky_solve(AtenTensorHandle self, AtenTensorHandle input2, bool upper, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(ops::SolveArgs s, ops::cholesky_solve_args(self, input2, upper));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*s.b, "self"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*s.a, "input2"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, stage_fortran(*scope, *s.b, s.b_sizes));
  if (x.numel() > 0 && s.m > 0) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl a, stage_fortran(*scope, *s.a, s.a_sizes));
    AOTIRT_RETURN_IF_ERROR(potrs_batches(*scope, s.upper, numel_of(s.batch), s.m, s.k, a, x));
  }
  *ret = new_handle(std::move(x));
  return Status();
}

uint64_t one_bits(DType dtype) {
  uint64_t bits = 0;
  store_from_double(&bits, dtype, 1.0);
  return bits;
}

Status cholesky_inverse(AtenTensorHandle self, bool upper, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(ops::SolveArgs s, ops::cholesky_inverse_args(self, upper));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*s.a, "self"));
  const DType dtype = s.a->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl inv,
                          cuda_empty(s.a_sizes, ops::batched_fortran_strides(s.a_sizes), dtype, scope->device()));
  if (inv.numel() > 0) {
    // inverse(A) solves A X = I, which is how torch's cuSOLVER path computes
    // it too (a symmetric result, up to rounding).
    const int64_t batch = numel_of(s.batch);
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cuda_linalg_eye(inv.data_ptr(), dtype_size(dtype), one_bits(dtype), batch, s.m, scope->stream()));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl a, stage_fortran(*scope, *s.a, s.a_sizes));
    AOTIRT_RETURN_IF_ERROR(potrs_batches(*scope, s.upper, batch, s.m, s.m, a, inv));
  }
  *ret = new_handle(std::move(inv));
  return Status();
}

// ---- triangular_solve (cuBLAS trsm, as torch) ----

Status triangular_solve(AtenTensorHandle self, AtenTensorHandle A, bool upper, bool transpose, bool unitriangular,
                        AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_ASSIGN_OR_RETURN(ops::SolveArgs s, ops::triangular_solve_args(self, A, upper, transpose, unitriangular));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*s.b, "self"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*s.a, "A"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, stage_fortran(*scope, *s.b, s.b_sizes));
  // The second output is A's copy, broadcast to the batch.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl a, stage_fortran(*scope, *s.a, s.a_sizes));
  if (x.numel() > 0 && s.m > 0) {
    AOTIRT_RETURN_IF_ERROR(check_ints({s.m, s.k}));
    AOTIRT_ASSIGN_OR_RETURN(const CublasApi* api, cublas_api());
    AOTIRT_ASSIGN_OR_RETURN(LinalgHandles * h, handles(scope->device()));
    std::lock_guard<std::mutex> lock(h->use);
    AOTIRT_ASSIGN_OR_RETURN(cublasHandle_t handle, h->blas(*api, scope->stream()));
    const cublasFillMode_t uplo = s.upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    const cublasOperation_t op = s.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasDiagType_t diag = s.unitriangular ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
    const int m = static_cast<int>(s.m), n = static_cast<int>(s.k);
    const int64_t batch = numel_of(s.batch);
    for (int64_t i = 0; i < batch; ++i) {
      if (x.dtype() == DType::kFloat64) {
        const double one = 1.0;
        const double* pa = static_cast<const double*>(a.data_ptr()) + i * s.m * s.m;
        double* pb = static_cast<double*>(x.data_ptr()) + i * s.m * s.k;
        AOTIRT_CUBLAS_RETURN_IF_ERROR(
            api->cublasDtrsm_v2(handle, CUBLAS_SIDE_LEFT, uplo, op, diag, m, n, &one, pa, m, pb, m));
      } else {
        const float one = 1.0f;
        const float* pa = static_cast<const float*>(a.data_ptr()) + i * s.m * s.m;
        float* pb = static_cast<float*>(x.data_ptr()) + i * s.m * s.k;
        AOTIRT_CUBLAS_RETURN_IF_ERROR(
            api->cublasStrsm_v2(handle, CUBLAS_SIDE_LEFT, uplo, op, diag, m, n, &one, pa, m, pb, m));
      }
    }
  }
  return give2(std::move(x), std::move(a), ret0, ret1);
}

// ---- geqrf and ormqr ----

Status geqrf(AtenTensorHandle self, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_ASSIGN_OR_RETURN(ops::QrArgs q, ops::geqrf_args(self));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*q.a, "self"));
  const DType dtype = q.a->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl a, stage_fortran(*scope, *q.a, q.a->sizes()));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl tau, cuda_empty_contiguous(with_last(q.batch, q.k), dtype, scope->device()));
  if (a.numel() > 0) {
    AOTIRT_RETURN_IF_ERROR(check_ints({q.m, q.n}));
    AOTIRT_ASSIGN_OR_RETURN(const CusolverApi* api, cusolver_api());
    AOTIRT_ASSIGN_OR_RETURN(LinalgHandles * h, handles(scope->device()));
    std::lock_guard<std::mutex> lock(h->use);
    AOTIRT_ASSIGN_OR_RETURN(cusolverDnHandle_t handle, h->solver(*api, scope->stream()));
    const int m = static_cast<int>(q.m), n = static_cast<int>(q.n), ld = std::max(m, 1);
    const bool dbl = dtype == DType::kFloat64;
    int lwork = 0;
    if (dbl)
      AOTIRT_CUSOLVER_RETURN_IF_ERROR(
          api->cusolverDnDgeqrf_bufferSize(handle, m, n, static_cast<double*>(a.data_ptr()), ld, &lwork));
    else
      AOTIRT_CUSOLVER_RETURN_IF_ERROR(
          api->cusolverDnSgeqrf_bufferSize(handle, m, n, static_cast<float*>(a.data_ptr()), ld, &lwork));
    AOTIRT_ASSIGN_OR_RETURN(Scratch s, scratch(*scope, static_cast<size_t>(std::max(lwork, 1)), dtype_size(dtype)));
    const int64_t batch = numel_of(q.batch);
    for (int64_t i = 0; i < batch; ++i) {
      if (dbl) {
        double* pa = static_cast<double*>(a.data_ptr()) + i * q.m * q.n;
        double* pt = static_cast<double*>(tau.data_ptr()) + i * q.k;
        AOTIRT_CUSOLVER_RETURN_IF_ERROR(
            api->cusolverDnDgeqrf(handle, m, n, pa, ld, pt, static_cast<double*>(s.work), lwork, s.info));
      } else {
        float* pa = static_cast<float*>(a.data_ptr()) + i * q.m * q.n;
        float* pt = static_cast<float*>(tau.data_ptr()) + i * q.k;
        AOTIRT_CUSOLVER_RETURN_IF_ERROR(
            api->cusolverDnSgeqrf(handle, m, n, pa, ld, pt, static_cast<float*>(s.work), lwork, s.info));
      }
    }
  }
  return give2(std::move(a), std::move(tau), ret0, ret1);
}

Status ormqr(AtenTensorHandle self, AtenTensorHandle input2, AtenTensorHandle input3, bool left, bool transpose,
             AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(ops::QrArgs q, ops::ormqr_args(self, input2, input3, left, transpose));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*q.a, "self"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*q.tau, "input2"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*q.other, "input3"));
  const DType dtype = q.a->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, stage_fortran(*scope, *q.other, q.other->sizes()));
  if (c.numel() > 0 && q.k > 0) {
    const int64_t nq = q.left ? q.m : q.n, acols = q.a->sizes()[q.a->dim() - 1];
    AOTIRT_RETURN_IF_ERROR(check_ints({q.m, q.n, q.k, acols}));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl a, stage_fortran(*scope, *q.a, q.a->sizes()));
    TensorImpl tau = *q.tau;
    if (!tau.is_contiguous()) {
      AOTIRT_ASSIGN_OR_RETURN(tau, cuda_empty_contiguous(q.tau->sizes(), dtype, scope->device()));
      AOTIRT_RETURN_IF_ERROR(cuda_copy(scope->device(), scope->stream(), tau, *q.tau, false));
    }
    AOTIRT_ASSIGN_OR_RETURN(const CusolverApi* api, cusolver_api());
    AOTIRT_ASSIGN_OR_RETURN(LinalgHandles * h, handles(scope->device()));
    std::lock_guard<std::mutex> lock(h->use);
    AOTIRT_ASSIGN_OR_RETURN(cusolverDnHandle_t handle, h->solver(*api, scope->stream()));
    const cublasSideMode_t side = q.left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
    const cublasOperation_t op = q.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int m = static_cast<int>(q.m), n = static_cast<int>(q.n), k = static_cast<int>(q.k);
    const int lda = static_cast<int>(std::max<int64_t>(nq, 1)), ldc = std::max(m, 1);
    const bool dbl = dtype == DType::kFloat64;
    int lwork = 0;
    if (dbl)
      AOTIRT_CUSOLVER_RETURN_IF_ERROR(api->cusolverDnDormqr_bufferSize(
          handle, side, op, m, n, k, static_cast<const double*>(a.data_ptr()), lda,
          static_cast<const double*>(tau.data_ptr()), static_cast<const double*>(c.data_ptr()), ldc, &lwork));
    else
      AOTIRT_CUSOLVER_RETURN_IF_ERROR(api->cusolverDnSormqr_bufferSize(
          handle, side, op, m, n, k, static_cast<const float*>(a.data_ptr()), lda,
          static_cast<const float*>(tau.data_ptr()), static_cast<const float*>(c.data_ptr()), ldc, &lwork));
    AOTIRT_ASSIGN_OR_RETURN(Scratch s, scratch(*scope, static_cast<size_t>(std::max(lwork, 1)), dtype_size(dtype)));
    const int64_t batch = numel_of(q.batch);
    for (int64_t i = 0; i < batch; ++i) {
      if (dbl) {
        const double* pa = static_cast<const double*>(a.data_ptr()) + i * nq * acols;
        const double* pt = static_cast<const double*>(tau.data_ptr()) + i * q.k;
        double* pc = static_cast<double*>(c.data_ptr()) + i * q.m * q.n;
        AOTIRT_CUSOLVER_RETURN_IF_ERROR(api->cusolverDnDormqr(handle, side, op, m, n, k, pa, lda, pt, pc, ldc,
                                                              static_cast<double*>(s.work), lwork, s.info));
      } else {
        const float* pa = static_cast<const float*>(a.data_ptr()) + i * nq * acols;
        const float* pt = static_cast<const float*>(tau.data_ptr()) + i * q.k;
        float* pc = static_cast<float*>(c.data_ptr()) + i * q.m * q.n;
        AOTIRT_CUSOLVER_RETURN_IF_ERROR(api->cusolverDnSormqr(handle, side, op, m, n, k, pa, lda, pt, pc, ldc,
                                                              static_cast<float*>(s.work), lwork, s.info));
      }
    }
  }
  *ret = new_handle(std::move(c));
  return Status();
}

// ---- lu_unpack ----

Status lu_unpack(AtenTensorHandle lu_data, AtenTensorHandle lu_pivots, bool unpack_data, bool unpack_pivots,
                 AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_REQUIRE_OUT(ret2);
  AOTIRT_ASSIGN_OR_RETURN(ops::LuUnpackArgs u, ops::lu_unpack_args(lu_data, lu_pivots, unpack_data, unpack_pivots));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*u.lu, "LU_data"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*u.pivots, "LU_pivots"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  const DType dtype = u.lu->dtype();
  const size_t es = dtype_size(dtype);
  const uint64_t one = one_bits(dtype);
  const int64_t batch = numel_of(u.batch);
  auto sized = [&](int64_t rows, int64_t cols) { return with_last(with_last(u.batch, rows), cols); };
  TensorImpl p, l, r;
  if (u.unpack_data) {
    AOTIRT_ASSIGN_OR_RETURN(l, cuda_empty_contiguous(sized(u.m, u.k), dtype, device));
    AOTIRT_ASSIGN_OR_RETURN(r, cuda_empty_contiguous(sized(u.k, u.n), dtype, device));
    if (l.numel() > 0 || r.numel() > 0) {
      TensorImpl lu = *u.lu;
      if (!lu.is_contiguous()) {
        AOTIRT_ASSIGN_OR_RETURN(lu, cuda_empty_contiguous(u.lu->sizes(), dtype, device));
        AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, lu, *u.lu, false));
      }
      AOTIRT_CUDA_RETURN_IF_ERROR(
          cuda_lu_unpack_data(lu.data_ptr(), l.data_ptr(), r.data_ptr(), es, one, batch, u.m, u.n, u.k, stream));
    }
  } else {
    AOTIRT_ASSIGN_OR_RETURN(l, cuda_empty_contiguous(DimVector{0}, dtype, device));
    AOTIRT_ASSIGN_OR_RETURN(r, cuda_empty_contiguous(DimVector{0}, dtype, device));
  }
  if (u.unpack_pivots) {
    AOTIRT_ASSIGN_OR_RETURN(p, cuda_empty_contiguous(sized(u.m, u.m), dtype, device));
    if (p.numel() > 0) {
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl perm, cuda_empty_contiguous(DimVector{batch, u.m}, DType::kInt64, device));
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl bad, cuda_empty_contiguous(DimVector{1}, DType::kInt32, device));
      AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(bad.data_ptr(), 0, sizeof(int32_t), stream));
      AOTIRT_CUDA_RETURN_IF_ERROR(cuda_lu_unpack_pivots(static_cast<const int32_t*>(u.pivots->data_ptr()),
                                                        static_cast<int64_t*>(perm.data_ptr()), p.data_ptr(), es, one,
                                                        batch, u.m, u.k, static_cast<int32_t*>(bad.data_ptr()),
                                                        stream));
      // torch's CUDA kernel traps (a device assert, which ends the
      // context) on a pivot out of range; reading the flag back instead
      // turns that into an error the caller can handle. The host needs the
      // flag, so this waits for the stream, except while a graph is
      // recorded, where nothing can be read back (the kernel then skips the
      // bad pivots).
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamIsCapturing(stream, &capture));
      if (capture == cudaStreamCaptureStatusNone) {
        int32_t flag = 0;
        AOTIRT_CUDA_RETURN_IF_ERROR(
            cudaMemcpyAsync(&flag, bad.data_ptr(), sizeof(flag), cudaMemcpyDeviceToHost, stream));
        AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
        AOTIRT_ENSURE(flag == 0, kInvalidArgument,
                      "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive, got {}. Did you "
                      "properly pass the result of lu_factor?",
                      flag == -1 ? 0 : flag);
      }
    }
  } else {
    AOTIRT_ASSIGN_OR_RETURN(p, cuda_empty_contiguous(DimVector{0}, dtype, device));
  }
  std::unique_ptr<TensorImpl> hp(new TensorImpl(std::move(p)));
  std::unique_ptr<TensorImpl> hl(new TensorImpl(std::move(l)));
  std::unique_ptr<TensorImpl> hr(new TensorImpl(std::move(r)));
  *ret0 = handle_of(hp.release());
  *ret1 = handle_of(hl.release());
  *ret2 = handle_of(hr.release());
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda_cholesky_solve(AtenTensorHandle self, AtenTensorHandle input2, int32_t upper,
                                              AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return cholesky_solve(self, input2, upper != 0, ret0); });
}

AOTITorchError aoti_torch_cuda_cholesky_inverse(AtenTensorHandle self, int32_t upper, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return cholesky_inverse(self, upper != 0, ret0); });
}

AOTITorchError aoti_torch_cuda_triangular_solve(AtenTensorHandle self, AtenTensorHandle A, int32_t upper,
                                                int32_t transpose, int32_t unitriangular, AtenTensorHandle* ret0,
                                                AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] {
    return triangular_solve(self, A, upper != 0, transpose != 0, unitriangular != 0, ret0, ret1);
  });
}

AOTITorchError aoti_torch_cuda_geqrf(AtenTensorHandle self, AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&] { return geqrf(self, ret0, ret1); });
}

AOTITorchError aoti_torch_cuda_ormqr(AtenTensorHandle self, AtenTensorHandle input2, AtenTensorHandle input3,
                                     int32_t left, int32_t transpose, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return ormqr(self, input2, input3, left != 0, transpose != 0, ret0); });
}

AOTITorchError aoti_torch_cuda_lu_unpack(AtenTensorHandle LU_data, AtenTensorHandle LU_pivots, int32_t unpack_data,
                                         int32_t unpack_pivots, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                         AtenTensorHandle* ret2) noexcept {
  return shim_call(__func__, [&] {
    return lu_unpack(LU_data, LU_pivots, unpack_data != 0, unpack_pivots != 0, ret0, ret1, ret2);
  });
}

}  // extern "C"
