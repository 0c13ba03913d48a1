#include "backends/cpu/ops/cpu_op_util.h"

#include "backends/cpu/cpu_options.h"
#include "backends/cpu/cpu_run_threads.h"

#include <omp.h>

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/host_copy.h"
#include "device/device.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace cpu_ops {

Status check_cpu(const TensorImpl& t, const char* what) {
  AOTIRT_ENSURE(t.defined() || t.numel() == 0, kInvalidArgument, "'{}' has no storage", what);
  AOTIRT_ENSURE(t.device().is_cpu(), kInvalidArgument, "'{}' is on {}, expected a CPU tensor", what,
                t.device().to_string());
  return Status();
}

Result<TensorImpl> contiguous_as(const TensorImpl& t, DType dtype) {
  if (t.dtype() == dtype && (t.numel() == 0 || t.is_contiguous())) return t;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(t.sizes(), dtype, DeviceId{}));
  AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, t));
  return out;
}

Status check_blas_int(int64_t v, const char* what) {
  AOTIRT_ENSURE(v >= 0 && v <= INT_MAX, kInvalidArgument,
                "{} = {} exceeds what the BLAS library accepts (32-bit)", what, v);
  return Status();
}

bool blas_matrix(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, BlasMatrix* out) {
  // A stride of a size-1 dim is never used, so any value works there.
  const int64_t min_row_ld = std::max<int64_t>(cols, 1);
  const int64_t min_col_ld = std::max<int64_t>(rows, 1);
  if (col_stride == 1 || cols <= 1) {
    int64_t ld = rows <= 1 ? min_row_ld : row_stride;
    if (ld >= min_row_ld && ld <= INT_MAX) {
      *out = BlasMatrix{false, ld};
      return true;
    }
  }
  if (row_stride == 1 || rows <= 1) {
    int64_t ld = cols <= 1 ? min_col_ld : col_stride;
    if (ld >= min_col_ld && ld <= INT_MAX) {
      *out = BlasMatrix{true, ld};
      return true;
    }
  }
  return false;
}

namespace {

// The two CBLAS entry points aotirt uses, with CBLAS's enum values (row-major
// 101, no-transpose 111, transpose 112), so no BLAS header is needed.
enum BlasOrder { kRowMajor = 101 };
enum BlasTrans { kNoTrans = 111, kTrans = 112 };
using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                         int);
using DgemmFn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                         double*, int);

struct BlasTable {
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  Status status;
};

const BlasTable& blas_table() {
  static const BlasTable table = [] {
    BlasTable t;
    const std::string& name = cpu_options().blas_library;
    // RTLD_GLOBAL is not needed: only these two symbols are used. The
    // search follows libaotirt.so's RUNPATH, which names the OpenMP build.
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      t.status = Status(StatusCode::kUnavailable,
                        fmt::format("CPU GEMM and convolution need OpenBLAS, which could not be loaded ({}): {}; "
                                    "install libopenblas0-openmp or point AOTIRT_BLAS_LIBRARY at a CBLAS library",
                                    name, why ? why : "unknown error"));
      return t;
    }
    t.sgemm = reinterpret_cast<SgemmFn>(dlsym(lib, "cblas_sgemm"));
    t.dgemm = reinterpret_cast<DgemmFn>(dlsym(lib, "cblas_dgemm"));
    if (!t.sgemm || !t.dgemm)
      t.status = Status(StatusCode::kUnavailable,
                        fmt::format("{} lacks cblas_sgemm or cblas_dgemm: it is not a CBLAS library", name));
    return t;
  }();
  return table;
}

// While several CPU runs are in flight (cpu_run_threads.h), BLAS calls are
// single-threaded: OpenBLAS's OpenMP build sizes a call by the calling
// thread's omp_get_max_threads(), and at 1 it neither touches its global
// thread count nor enters its OpenMP server, which in 0.3.21 serves one
// threaded call at a time while the others spin. (A run's lowered budget
// already gives 1 on 2 cores; this covers budgets above 1 on larger machines.)
class SingleThreadedBlasWhenConcurrent {
 public:
  SingleThreadedBlasWhenConcurrent() {
    if (!in_concurrent_cpu_run()) return;
    saved_ = omp_get_max_threads();
    if (saved_ > 1) omp_set_num_threads(1);
  }
  ~SingleThreadedBlasWhenConcurrent() {
    if (saved_ > 1) omp_set_num_threads(saved_);
  }

 private:
  int saved_ = 0;
};

void blas_gemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
               int ldb, float beta, float* c, int ldc) {
  SingleThreadedBlasWhenConcurrent threads;
  blas_table().sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void blas_gemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double* a, int lda,
               const double* b, int ldb, double beta, double* c, int ldc) {
  SingleThreadedBlasWhenConcurrent threads;
  blas_table().dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

Status ensure_blas() { return blas_table().status; }

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc, bool c_col_major) {
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == T(0)) {
    // BLAS may skip C entirely here; do the beta part by hand so that
    // beta == 0 really clears C (PyTorch ignores NaN in C when beta is 0).
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T& x = c_col_major ? c[j * ldc + i] : c[i * ldc + j];
        x = beta == T(0) ? T(0) : beta * x;
      }
    }
    return;
  }
  // Column-major C is row-major C^T = op(B)^T op(A)^T: swap the operands.
  if (c_col_major) {
    blas_gemm(kRowMajor, trans_b ? kNoTrans : kTrans, trans_a ? kNoTrans : kTrans,
              static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), alpha, b, static_cast<int>(ldb),
              a, static_cast<int>(lda), beta, c, static_cast<int>(ldc));
    return;
  }
  blas_gemm(kRowMajor, trans_a ? kTrans : kNoTrans, trans_b ? kTrans : kNoTrans,
            static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b,
            static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
                          int64_t, float, float*, int64_t, bool);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t,
                           const double*, int64_t, double, double*, int64_t, bool);

}  // namespace cpu_ops
}  // namespace aotirt
